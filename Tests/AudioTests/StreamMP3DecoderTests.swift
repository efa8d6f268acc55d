import FormatTestSupport
import Foundation
import Testing

@testable import Audio

/// MP3 streams made at test time with lame: the shapes radio stations send.
enum StreamMP3Material {
    struct Shape: Sendable, CustomTestStringConvertible {
        let sampleRate: Int
        let mono: Bool
        /// lame's bitrate arguments: `-b 128` (CBR) or `-V 4` (VBR).
        let lame: [String]

        var testDescription: String {
            "\(self.sampleRate) Hz \(self.mono ? "mono" : "stereo") \(self.lame.joined(separator: " "))"
        }
    }

    static let shapes: [Shape] = [
        Shape(sampleRate: 44100, mono: false, lame: ["-b", "128"]),
        Shape(sampleRate: 48000, mono: false, lame: ["-V", "4"]),
        Shape(sampleRate: 32000, mono: true, lame: ["-b", "64"]),
        Shape(sampleRate: 44100, mono: true, lame: ["-V", "2"]),
        Shape(sampleRate: 48000, mono: false, lame: ["-b", "320"]),
        Shape(sampleRate: 32000, mono: false, lame: ["-V", "6"]),
    ]

    /// `name.mp3` of `seconds` of tones in `scratch`.
    static func make(_ shape: Shape, seconds: Double = 2.5, in scratch: ScratchDirectory, name: String) throws
        -> String
    {
        let source = scratch.path(name + ".wav")
        let made = try run(
            "/usr/bin/sox",
            [
                "-R", "-n", "-r", "\(shape.sampleRate)", "-b", "16", "-c", shape.mono ? "1" : "2", source, "synth",
                "\(seconds)", "sine", "440", "pinknoise", "sine", "1234", "gain", "-6",
            ])
        try #require(made.status == 0, "sox: \(made.stderr)")
        let path = scratch.path(name + ".mp3")
        let encoded = try run(
            "/usr/bin/lame", ["--quiet"] + (shape.mono ? ["-m", "m"] : []) + shape.lame + [source, path])
        try #require(encoded.status == 0, "lame: \(encoded.stderr)")
        return path
    }
}

@Suite("MP3StreamDecoder: MP3 bytes as they arrive")
struct StreamMP3DecoderTests {
    @Test("decodes the fixtures bit for bit as mpg123 -s, in random chunks", arguments: GoodFixture.all)
    func fixturesMatchMPG123(_ fixture: GoodFixture) throws {
        let source = ChunkedSource([try bytesOfFile(fixture.path)], seed: UInt64(fixture.name.utf8.count))
        let decoder = try StreamDecoders.open(source: source, sampleFormat: .signed16, replayGain: .off)
        #expect(decoder is MP3StreamDecoder)
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        #expect(
            decoder.format
                == AudioFormat(sampleRate: fixture.sampleRate, channels: fixture.channels, sampleFormat: .signed16))
        #expect(decoded.pcm.count == fixture.frames * fixture.channels * 2)
        expectSamePCM(decoded.pcm, try referencePCM(fixture.path))
        #expect(decoder.position == fixture.frames)
        #expect(decoder.bitrate > 0)
        #expect(source.waits > 0)
    }

    @Test(
        "an ID3v2 tag at the start gives the file decoder's tags",
        arguments: ["tagged-id3v23.mp3", "tagged-id3v24.mp3", "big-id3.mp3", "one-second.mp3"])
    func id3v2Tags(_ name: String) throws {
        let decoder = try MP3StreamDecoder(source: ChunkedSource([try bytesOfFile(fixture(name))], seed: 17))
        #expect(try prepareFully(decoder))
        let expected = try MP3Decoder(path: fixture(name)).tags
        #expect(decoder.tags == expected)
        #expect(decoder.tagsVersion == (expected.isEmpty ? 0 : 1))
        if name != "one-second.mp3" { #expect(decoder.tags.title != nil) }
        #expect(drain(decoder).error == nil)
        #expect(decoder.tagsVersion == (expected.isEmpty ? 0 : 1))
    }

    @Test("floats bit for bit as mpg123 -e f32 -s", arguments: GoodFixture.all.prefix(3))
    func floatsMatchMPG123(_ fixture: GoodFixture) throws {
        let source = ChunkedSource([try bytesOfFile(fixture.path)], seed: 7)
        let decoder = try MP3StreamDecoder(source: source, sampleFormat: .float32)
        let decoded = drain(decoder, chunkFrames: 333)
        #expect(decoded.error == nil)
        #expect(decoder.format?.sampleFormat == .float32)
        expectSamePCM(decoded.pcm, try referencePCM(fixture.path, .float32))
    }

    @Test("lame's shapes (mono, stereo, 32/44.1/48 kHz, CBR, VBR) as mpg123 -s", arguments: StreamMP3Material.shapes)
    func lameShapesMatchMPG123(_ shape: StreamMP3Material.Shape) throws {
        let scratch = try ScratchDirectory()
        let path = try StreamMP3Material.make(shape, in: scratch, name: "shape")
        for seed in UInt64(1)...3 {
            let source = ChunkedSource([try bytesOfFile(path)], seed: seed)
            let decoder = try StreamDecoders.open(source: source, sampleFormat: .signed16, replayGain: .off)
            let decoded = drain(decoder)
            #expect(decoded.error == nil)
            #expect(decoder.format?.sampleRate == shape.sampleRate)
            #expect(decoder.format?.channels == (shape.mono ? 1 : 2))
            expectSamePCM(decoded.pcm, try referencePCM(path), "seed \(seed)")
        }
    }

    @Test("a stream joined mid-frame (no LAME header) decodes as mpg123 -s of the same bytes")
    func joinedMidFrame() throws {
        let scratch = try ScratchDirectory()
        let bytes = try bytesOfFile(fixture("stereo-44k-cbr.mp3"))
        for offset in [5001, 20_333] {
            let tail = Array(bytes[offset...])
            let path = scratch.path("tail-\(offset).mp3")
            try Data(tail).write(to: URL(fileURLWithPath: path))
            let source = ChunkedSource([tail], contentType: nil, seed: UInt64(offset))
            let decoded = drain(try StreamDecoders.open(source: source, sampleFormat: .signed16, replayGain: .off))
            #expect(decoded.error == nil)
            #expect(!decoded.pcm.isEmpty)
            expectSamePCM(decoded.pcm, try referencePCM(path), "from byte \(offset)")
        }
    }

    @Test("damage in the middle is resynced over, as mpg123 --resync-limit -1 does")
    func damageIsResyncedOver() throws {
        let path = fixture("garbage-middle.mp3")
        // Through a pipe: written to a regular file, mpg123 1.31 stops at the damage even so.
        let reference = try run("/bin/sh", ["-c", "/usr/bin/mpg123 -q -s --resync-limit -1 \"$0\" | cat", path])
        #expect(reference.status == 0)
        let expected = [UInt8](reference.stdout)
        #expect(expected.count > 132_300 * 4)
        for seed in UInt64(21)...23 {
            let decoded = drain(try MP3StreamDecoder(source: ChunkedSource([try bytesOfFile(path)], seed: seed)))
            #expect(decoded.error == nil)
            // Which junk libmpg123 takes for frames while resyncing depends on how the bytes came in, so
            // the frames made of the damage differ with the chunking; what comes before it (65711
            // frames, where mpg123 stops by default) and the frames after it, once in sync, are the same.
            expectSamePCM(Array(decoded.pcm.prefix(65711 * 4)), Array(expected.prefix(65711 * 4)), "seed \(seed)")
            expectSamePCM(Array(decoded.pcm.suffix(60000 * 4)), Array(expected.suffix(60000 * 4)), "seed \(seed)")
            #expect((132_300 * 4...140_000 * 4).contains(decoded.pcm.count))
        }
    }

    @Test("a stream without stored gains gets no ReplayGain (not the missing-gain preamp)")
    func noStoredGainNoChange() throws {
        let gain = ReplayGain(source: .track, preampDB: 3, missingPreampDB: -9)
        let source = ChunkedSource([try bytesOfFile(fixture("one-second.mp3"))], seed: 4)
        let decoded = drain(try MP3StreamDecoder(source: source, replayGain: gain))
        #expect(decoded.error == nil)
        expectSamePCM(decoded.pcm, try referencePCM(fixture("one-second.mp3")))
    }

    @Test("a discontinuity mid-frame gives A's whole frames, then B, with no junk between")
    func discontinuitySplicesNothing() throws {
        let scratch = try ScratchDirectory()
        let first = try bytesOfFile(fixture("stereo-44k-cbr.mp3"))
        let second = try bytesOfFile(fixture("one-second.mp3"))
        // Cut in the middle of a frame (192 kbit/s frames are 626 or 627 bytes).
        for cut in [first.count / 2 + 101, 40_000, 1_000] {
            let cutPath = scratch.path("cut-\(cut).mp3")
            try Data(first[..<cut]).write(to: URL(fileURLWithPath: cutPath))
            let expected = try referencePCM(cutPath) + referencePCM(fixture("one-second.mp3"))
            let source = ChunkedSource([Array(first[..<cut]), second], seed: UInt64(cut))
            let decoder = try MP3StreamDecoder(source: source)
            let decoded = drain(decoder)
            #expect(decoded.error == nil)
            // The smallest cut holds no whole frame past LAME's header: B alone.
            #expect(try referencePCM(cutPath).isEmpty == (cut == 1_000))
            expectSamePCM(decoded.pcm, expected, "cut at \(cut)")
            #expect(decoder.position * 4 == expected.count)
        }
    }

    @Test("a reconnection that resumes mid-frame: A's whole frames, then what mpg123 makes of the rest")
    func discontinuityToMidFrame() throws {
        let scratch = try ScratchDirectory()
        let bytes = try bytesOfFile(fixture("stereo-44k-cbr.mp3"))
        let first = Array(bytes[..<30_100])
        let second = Array(bytes[31_337...])
        let firstPath = scratch.path("first.mp3")
        let secondPath = scratch.path("second.mp3")
        try Data(first).write(to: URL(fileURLWithPath: firstPath))
        try Data(second).write(to: URL(fileURLWithPath: secondPath))
        let expected = try referencePCM(firstPath) + referencePCM(secondPath)
        for seed in UInt64(41)...43 {
            let decoded = drain(try MP3StreamDecoder(source: ChunkedSource([first, second], seed: seed)))
            #expect(decoded.error == nil)
            expectSamePCM(decoded.pcm, expected, "seed \(seed)")
        }
    }

    @Test("a discontinuity to a stream of another format ends it, naming both formats")
    func discontinuityToAnotherFormatThrows() throws {
        let first = try bytesOfFile(fixture("one-second.mp3"))
        let second = try bytesOfFile(fixture("mono-48k-vbr.mp3"))
        let source = ChunkedSource([Array(first[..<9000]), second], seed: 3)
        let decoder = try MP3StreamDecoder(source: source)
        let decoded = drain(decoder)
        let error = try #require(decoded.error)
        #expect(error.path == source.url)
        #expect(error.description.contains("the stream changed its format from 44100:16:2 to 48000:16:1"))
        let cutScratch = try ScratchDirectory()
        let cutPath = cutScratch.path("cut.mp3")
        try Data(first[..<9000]).write(to: URL(fileURLWithPath: cutPath))
        // What came before the change was played whole.
        expectSamePCM(decoded.pcm, try referencePCM(cutPath))
    }

    @Test("a discontinuity before the first frame is complete starts over")
    func discontinuityBeforeFormat() throws {
        let bytes = try bytesOfFile(fixture("one-second.mp3"))
        let source = ChunkedSource([Array(bytes[..<200]), bytes], seed: 5)
        let decoder = try MP3StreamDecoder(source: source)
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        expectSamePCM(decoded.pcm, try referencePCM(fixture("one-second.mp3")))
    }

    @Test("a stream cut short ends cleanly after its whole frames")
    func truncatedEndsCleanly() throws {
        let scratch = try ScratchDirectory()
        let bytes = try bytesOfFile(fixture("gapless-whole.mp3"))
        let cut = Array(bytes[..<(bytes.count * 2 / 3 + 17)])
        let path = scratch.path("cut.mp3")
        try Data(cut).write(to: URL(fileURLWithPath: path))
        let decoder = try MP3StreamDecoder(source: ChunkedSource([cut], seed: 9))
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        #expect(!decoded.pcm.isEmpty)
        expectSamePCM(decoded.pcm, try referencePCM(path))
    }

    @Test("waiting never throws: a source with nothing yet, or gone quiet mid-stream")
    func waitingNeverThrows() throws {
        let empty = ChunkedSource([], waitsAtEnd: true)
        let decoder = try MP3StreamDecoder(source: empty)
        for _ in 0..<100 {
            #expect(try decoder.prepare() == false)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        #expect(try decoder.read(into: buffer) == .waiting)

        let bytes = try bytesOfFile(fixture("one-second.mp3"))
        let quiet = ChunkedSource([Array(bytes[..<8000])], seed: 2, waitsAtEnd: true)
        let playing = try MP3StreamDecoder(source: quiet)
        var frames = 0
        for _ in 0..<10_000 {
            guard try playing.prepare() else { continue }
            if case .frames(let count) = try playing.read(into: buffer) { frames += count }
        }
        #expect(frames > 0)
        #expect(try playing.read(into: buffer) == .waiting)
        #expect(playing.position == frames)
    }

    @Test("an empty stream is refused: it ended before any audio")
    func emptyIsRefused() throws {
        let decoder = try MP3StreamDecoder(source: ChunkedSource([]))
        let refused = #expect(throws: DecoderError.self) { try prepareFully(decoder) }
        #expect(refused?.description.contains("it ended before any audio") == true)
    }

    @Test("garbage labelled audio/mpeg is refused or ends, and never crashes")
    func garbageIsRefused() throws {
        var generator = SplitMix64(state: 42)
        let text = Array(String(repeating: "no audio here, just words. ", count: 40_000).utf8)
        let decoder = try MP3StreamDecoder(source: ChunkedSource([text]))
        let refused = #expect(throws: DecoderError.self) { try prepareFully(decoder) }
        #expect(refused?.description.contains("not an MP3 stream") == true)
        // 10 MiB of random bytes: libmpg123 may find frame headers in them; whatever it makes of
        // them, it ends or throws.
        let random = (0..<10 << 20).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let noise = try MP3StreamDecoder(source: ChunkedSource([random], seed: 11))
        let decoded = drain(noise, chunkFrames: 4096)
        if let error = decoded.error {
            #expect(error.path == "http://127.0.0.1:1/stream")
        }
        // Random bytes broken into connections, with a format change likely: also no crash.
        let pieces = (0..<8).map { piece in Array(random[piece * 100_000..<(piece + 1) * 100_000]) }
        let split = drain(try MP3StreamDecoder(source: ChunkedSource(pieces, seed: 12)), chunkFrames: 100)
        if let error = split.error { #expect(!error.description.isEmpty) }
    }

    @Test("another format within one connection is converted to the first, as the file decoder does")
    func formatChangeWithinConnection() throws {
        let first = try bytesOfFile(fixture("one-second.mp3"))
        let second = try bytesOfFile(fixture("mono-48k-vbr.mp3"))
        let decoder = try MP3StreamDecoder(source: ChunkedSource([first + second], seed: 31))
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        #expect(decoder.format == AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16))
        // The first song whole, then the second's three seconds at 44.1 kHz stereo.
        expectSamePCM(Array(decoded.pcm.prefix(44100 * 4)), try referencePCM(fixture("one-second.mp3")))
        #expect(decoded.pcm.count > (44100 + 44100 * 5 / 2) * 4)
    }

    @Test("an ID3v2 tag claiming more than the stream holds is passed over, then the stream ends")
    func oversizedTagEnds() throws {
        let decoder = try MP3StreamDecoder(source: ChunkedSource([try bytesOfFile(fixture("id3-beyond-eof.mp3"))]))
        let refused = #expect(throws: DecoderError.self) { try prepareFully(decoder) }
        #expect(refused?.description.contains("not an MP3 stream") == true)
    }
}

@Suite("StreamDecoders: choosing a stream's decoder")
struct StreamDecodersTests {
    private func refusal(_ bytes: [UInt8], _ type: String?) -> String? {
        do {
            _ = try StreamDecoders.open(
                source: ChunkedSource([bytes], contentType: type), sampleFormat: .signed16, replayGain: .off)
            return nil
        } catch {
            #expect(error.path == "http://127.0.0.1:1/stream")
            return error.reason
        }
    }

    @Test("refuses HTML, text, AAC and unknown types with their reasons")
    func refusals() throws {
        let html = Array("<!DOCTYPE html><html><body>Not found</body></html>".utf8)
        let mp3 = try bytesOfFile(fixture("one-second.mp3"))
        #expect(self.refusal(html, "text/html")?.contains("an HTML page, not audio") == true)
        #expect(self.refusal(html, nil)?.contains("an HTML page, not audio") == true)
        #expect(self.refusal(html, "application/octet-stream")?.contains("an HTML page, not audio") == true)
        #expect(self.refusal(html, "audio/mpeg")?.contains("an HTML page, not audio") == true)
        #expect(self.refusal(mp3, "text/plain")?.contains("a text document (text/plain), not audio") == true)
        #expect(self.refusal(mp3, "audio/aac")?.contains("AAC, which playerd does not decode") == true)
        #expect(self.refusal(mp3, "audio/aacp")?.contains("AAC, which playerd does not decode") == true)
        #expect(self.refusal([0xff, 0xf1, 0x50, 0x80, 0, 0x1f, 0xfc], nil)?.contains("AAC (ADTS)") == true)
        #expect(
            self.refusal(Array(repeating: 0x30, count: 100), "audio/x-ms-wma")?
                .contains("audio/x-ms-wma, which playerd does not decode") == true)
        #expect(self.refusal(Array("#EXTM3U\n".utf8), nil)?.contains("a station list") == true)
    }

    @Test("chooses by type, then by the first bytes")
    func choices() throws {
        let mp3 = try bytesOfFile(fixture("one-second.mp3"))
        let tagged = try bytesOfFile(fixture("tagged-id3v24.mp3"))
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: "audio/mpeg")) == .mp3)
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: "Audio/MPEG; charset=x")) == .mp3)
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: nil)) == .mp3)
        #expect(try StreamDecoders.kind(of: ChunkedSource([tagged], contentType: "application/octet-stream")) == .mp3)
        // An unknown type whose bytes are plainly MP3 plays.
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: "audio/x-unheard-of")) == .mp3)
        #expect(try StreamDecoders.kind(of: ChunkedSource([Array("fLaC".utf8)], contentType: nil)) == .flac)
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: "audio/x-flac")) == .flac)
        #expect(try StreamDecoders.kind(of: ChunkedSource([Array("OggS".utf8)], contentType: nil)) == .ogg)
        #expect(try StreamDecoders.kind(of: ChunkedSource([mp3], contentType: "application/ogg")) == .ogg)
        // FLAC after an ID3v2 tag.
        let id3 = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0x10] + Array(repeating: 0, count: 16) + Array("fLaC".utf8)
        #expect(try StreamDecoders.kind(of: ChunkedSource([id3 + mp3], contentType: nil)) == .flac)
    }
}
