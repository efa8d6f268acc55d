import Foundation
import Testing

@testable import Audio

/// A fixture and the frames `mpg123 -s` decodes from it (Fixtures/README.md).
struct DurationCase: Sendable, CustomTestStringConvertible {
    let name: String
    let sampleRate: Int
    let frames: Int

    var testDescription: String { self.name }
    var seconds: Double { Double(self.frames) / Double(self.sampleRate) }

    static let all: [DurationCase] = [
        // No Info frame (too small at 32 kbit/s) behind a 264-byte ID3v2 tag: the estimate says 0.434 s.
        DurationCase(name: "short-22k-no-info.mp3", sampleRate: 22050, frames: 8064),
        // CBR, no Info frame, behind a 4096-byte ID3v2 tag: the estimate says 2.299 s.
        DurationCase(name: "cbr-id3v2-no-info.mp3", sampleRate: 44100, frames: 89856),
        // VBR with a Xing/Info + LAME header: exact after gapless trimming.
        DurationCase(name: "mono-48k-vbr.mp3", sampleRate: 48000, frames: 144_000),
        // VBR without a Xing frame, whose first frame is 320 kbit/s: the estimate says 1.622 s.
        DurationCase(name: "vbr-no-xing.mp3", sampleRate: 44100, frames: 133_632),
    ]
}

@Suite("Durations: the library's, the decoder's and what is decoded agree")
struct DurationTests {
    @Test("SongReader's duration is the length mpg123 decodes", arguments: DurationCase.all)
    func songReader(_ song: DurationCase) throws {
        let facts = try SongReader().read(path: fixture(song.name))
        #expect(facts.sampleRate == song.sampleRate)
        #expect(facts.duration == song.seconds)
    }

    @Test("MP3Decoder's length is what it then decodes, and what mpg123 decodes", arguments: DurationCase.all)
    func decoder(_ song: DurationCase) throws {
        let decoder = try MP3Decoder(path: fixture(song.name))
        #expect(decoder.lengthFrames == song.frames)
        let pcm = try decodeAll(decoder)
        #expect(pcm.count == song.frames * decoder.format.bytesPerFrame)
        expectSamePCM(pcm, try referencePCM(fixture(song.name)))
    }

    @Test("an APEv2 tag and an ID3v1 tag after the audio are not counted as audio")
    func trailingTags() throws {
        let audio = [UInt8](FileManager.default.contents(atPath: fixture("cbr-id3v2-no-info.mp3"))!)
        let directory = try ScratchDirectory()
        let path = directory.path("ape.mp3")
        let ape = apeTag(items: ["Title": "Trailing", "Comment": String(repeating: "x", count: 6000)])
        _ = FileManager.default.createFile(atPath: path, contents: Data(audio + ape + id3v1(title: "V1")))
        let facts = try SongReader().read(path: path)
        #expect(facts.duration == 89856.0 / 44100)
        #expect(try MP3Decoder(path: path).lengthFrames == 89856)
    }

    @Test("one-second.mp3 without its Info frame: 40 MPEG frames, decoded whole")
    func droppedInfoFrame() throws {
        // The Info frame is the first, 417 bytes at 128 kbit/s: without it nothing says how many frames
        // follow, nor the encoder's delay and padding.
        let directory = try ScratchDirectory()
        let path = directory.path("no-info.mp3")
        _ = FileManager.default.createFile(atPath: path, contents: Data(oneSecondAudio.dropFirst(417)))
        let decoder = try MP3Decoder(path: path)
        let decoded = try decodeAll(decoder).count / decoder.format.bytesPerFrame
        #expect(decoded == 40 * 1152)
        #expect(decoder.lengthFrames == decoded)
        #expect(try SongReader().read(path: path).duration == Double(decoded) / 44100)
    }

    @Test("an Info header claiming a billion frames in a small file is not believed, and seeking stays quick")
    func impossibleFrameCount() throws {
        // one-second.mp3's Info frame (MPEG-1 stereo: the tag 36 bytes in) says 40 frames; it is made to
        // say 2^30. The fuzzer found such a file: a seek to its claimed middle took ten seconds.
        var bytes = oneSecondAudio
        #expect(Array(bytes[36..<40]) == Array("Info".utf8))
        bytes.replaceSubrange(44..<48, with: [0x40, 0, 0, 0])
        let directory = try ScratchDirectory()
        let path = directory.path("lying-info.mp3")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let decoder = try MP3Decoder(path: path)
        let length = try #require(decoder.lengthFrames)
        #expect(length <= StreamLength.mostSamples(inBytes: bytes.count))
        #expect(length >= 44100)
        let started = ContinuousClock.now
        try decoder.seek(toFrame: length / 2)
        _ = try decode(decoder, frames: 1000)
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(try SongReader().read(path: path).duration == Double(length) / 44100)
    }

    @Test(
        "MPEG frame headers: version, layer, bitrate, rate and length",
        arguments: [
            // MPEG-1 layer III, 128 kbit/s, 44.1 kHz, without and with padding.
            HeaderCase(
                bytes: [0xFF, 0xFB, 0x90, 0x64], version: 1, layer: 3, bitrate: 128_000, rate: 44100, length: 417,
                samples: 1152),
            HeaderCase(
                bytes: [0xFF, 0xFB, 0x92, 0x64], version: 1, layer: 3, bitrate: 128_000, rate: 44100, length: 418,
                samples: 1152),
            // MPEG-2 layer III, 32 kbit/s, 22.05 kHz mono (the short fixture's frames).
            HeaderCase(
                bytes: [0xFF, 0xF3, 0x40, 0xC4], version: 2, layer: 3, bitrate: 32000, rate: 22050, length: 104,
                samples: 576),
            // MPEG-2.5 layer III, 8 kbit/s, 8 kHz.
            HeaderCase(
                bytes: [0xFF, 0xE3, 0x18, 0xC4], version: 25, layer: 3, bitrate: 8000, rate: 8000, length: 72,
                samples: 576),
            // MPEG-1 layer II, 192 kbit/s, 48 kHz; layer I, 384 kbit/s, 32 kHz.
            HeaderCase(
                bytes: [0xFF, 0xFD, 0xA4, 0x04], version: 1, layer: 2, bitrate: 192_000, rate: 48000, length: 576,
                samples: 1152),
            HeaderCase(
                bytes: [0xFF, 0xFF, 0xC8, 0x04], version: 1, layer: 1, bitrate: 384_000, rate: 32000, length: 576,
                samples: 384),
        ])
    func frameHeader(_ expected: HeaderCase) throws {
        let header = try #require(MPEGFrameHeader(expected.bytes, at: 0))
        #expect(header.version == expected.version)
        #expect(header.layer == expected.layer)
        #expect(header.bitrate == expected.bitrate)
        #expect(header.sampleRate == expected.rate)
        #expect(header.length == expected.length)
        #expect(header.samplesPerFrame == expected.samples)
    }

    @Test(
        "no header where the sync is missing or a field is reserved",
        arguments: [
            [0xFF, 0x1B, 0x90, 0x64],  // no sync
            [0xFF, 0xEB, 0x90, 0x64],  // version bits 01: reserved
            [0xFF, 0xF9, 0x90, 0x64],  // layer bits 00: reserved
            [0xFF, 0xFB, 0xF0, 0x64],  // bitrate index 15
            [0xFF, 0xFB, 0x9C, 0x64],  // sample-rate index 3
            [0xFF, 0xFB, 0x90],  // too short
        ] as [[UInt8]])
    func notAHeader(_ bytes: [UInt8]) {
        #expect(MPEGFrameHeader(bytes, at: 0) == nil)
    }
}

/// Four header bytes and what they say.
struct HeaderCase: Sendable {
    let bytes: [UInt8]
    let version: Int
    let layer: Int
    let bitrate: Int
    let rate: Int
    let length: Int
    let samples: Int
}

/// An APEv2 tag with a header and a footer (32 bytes each) around text items.
func apeTag(items: [String: String]) -> [UInt8] {
    func little(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    var body: [UInt8] = []
    for (key, value) in items.sorted(by: { $0.key < $1.key }) {
        body += little(value.utf8.count) + little(0) + Array(key.utf8) + [0] + Array(value.utf8)
    }
    func frame(isHeader: Bool) -> [UInt8] {
        let flags = 0x8000_0000 | (isHeader ? 0x2000_0000 : 0)
        return Array("APETAGEX".utf8) + little(2000) + little(body.count + 32) + little(items.count) + little(flags)
            + [UInt8](repeating: 0, count: 8)
    }
    return frame(isHeader: true) + body + frame(isHeader: false)
}
