import Foundation
import MusicTags
import Testing

@testable import Audio

/// The pieces every decoder shares: content sniffing, song suffixes, Vorbis comments, FLAC pictures,
/// software ReplayGain and 24-bit samples in the WAV output.
@Suite("Formats: sniffing, comments, gains, 24-bit WAV")
struct FormatPlumbingTests {
    // MARK: - Telling the format from the content

    /// The first page of an Ogg stream whose first packet starts with `signature`.
    static func oggPage(_ signature: [UInt8]) -> [UInt8] {
        var page = Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20)
        page.append(1)  // one segment
        page.append(UInt8(signature.count))
        return page + signature
    }

    @Test("the first bytes name FLAC, Ogg Vorbis, Ogg Opus and Ogg FLAC; anything else is not told")
    func detect() {
        #expect(AudioFileKind.detect(head: Array("fLaC".utf8) + [0, 0, 0, 34]) == .flac)
        #expect(AudioFileKind.detect(head: Self.oggPage([1] + Array("vorbis".utf8))) == .vorbis)
        #expect(AudioFileKind.detect(head: Self.oggPage(Array("OpusHead".utf8))) == .opus)
        #expect(AudioFileKind.detect(head: Self.oggPage([0x7f] + Array("FLAC".utf8))) == .oggFLAC)
        #expect(AudioFileKind.detect(head: Self.oggPage(Array("Speex   ".utf8))) == nil)
        #expect(AudioFileKind.detect(head: [0xff, 0xfb, 0x90, 0x64]) == nil)
        #expect(AudioFileKind.detect(head: Array("OggS".utf8)) == nil)  // cut short
        #expect(AudioFileKind.detect(head: []) == nil)
    }

    @Test("a file's kind comes from its content: past an ID3v2 tag, whatever its name; unknown Ogg is refused")
    func kindOfFiles() throws {
        let scratch = try ScratchDirectory()
        let flacNamedMP3 = scratch.path("really-flac.mp3")
        try Data(Array("fLaC".utf8) + [UInt8](repeating: 0, count: 40)).write(to: URL(fileURLWithPath: flacNamedMP3))
        #expect(try AudioDecoders.kind(path: flacNamedMP3) == .flac)

        // An ID3v2 tag of 20 bytes (size 10, synchsafe) before fLaC.
        let tagged = scratch.path("tagged.flac")
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10)
        try Data(tag + Array("fLaC".utf8) + [UInt8](repeating: 0, count: 40)).write(to: URL(fileURLWithPath: tagged))
        #expect(try AudioDecoders.kind(path: tagged) == .flac)

        #expect(try AudioDecoders.kind(path: fixture("stereo-44k-cbr.mp3")) == .mp3)
        #expect(try AudioDecoders.kind(path: fixture("random.mp3")) == .mp3)

        let speex = scratch.path("speech.ogg")
        try Data(Self.oggPage(Array("Speex   ".utf8))).write(to: URL(fileURLWithPath: speex))
        #expect(throws: DecoderError.self) { try AudioDecoders.kind(path: speex) }
        do {
            _ = try AudioDecoders.kind(path: speex)
        } catch {
            guard case .unsupported(let path, _) = error else {
                Issue.record("expected unsupported, got \(error)")
                return
            }
            #expect(path == speex)
        }
        #expect(throws: DecoderError.fileNotFound(path: scratch.path("missing.flac"))) {
            try AudioDecoders.kind(path: scratch.path("missing.flac"))
        }
        // An MP3 named .flac plays as the MP3 it is.
        let mp3NamedFLAC = scratch.path("really-mp3.flac")
        try FileManager.default.copyItem(atPath: fixture("one-second.mp3"), toPath: mp3NamedFLAC)
        let decoder = try AudioDecoders.open(path: mp3NamedFLAC)
        #expect(decoder is MP3Decoder)
        #expect(decoder.lengthFrames == 44100)
    }

    @Test("bytes of no format named .flac are refused as none of the formats; named .mp3, as no MP3")
    func noFormatAtAll() throws {
        let scratch = try ScratchDirectory()
        let garbage = scratch.path("noise.flac")
        try Data(repeating: 0x47, count: 800).write(to: URL(fileURLWithPath: garbage))
        func expectRefused(_ error: DecoderError?) {
            #expect(error?.path == garbage)
            #expect(
                error?.description.hasPrefix(garbage + ": not a format playerd decodes (none of FLAC") == true,
                "\(String(describing: error))")
        }
        do {
            _ = try AudioDecoders.open(path: garbage)
            expectRefused(nil)
        } catch {
            expectRefused(error)
        }
        do {
            _ = try AudioDecoders.facts(path: garbage)
            expectRefused(nil)
        } catch {
            expectRefused(error)
        }
        #expect(throws: DecoderError.notMP3(path: fixture("random.mp3"), reason: "no MPEG audio frames found")) {
            try AudioDecoders.facts(path: fixture("random.mp3"))
        }
    }

    @Test("song suffixes: mp3, flac, ogg, oga, opus in any case; nothing else")
    func suffixes() {
        for name in ["a.mp3", "B.FLAC", "c.Ogg", "d.oga", "e.opus", "dir.x/f.OPUS"] {
            #expect(AudioFileKind.hasSongSuffix(name), "\(name)")
        }
        for name in ["a.mp4", "flac", ".flac.txt", "a.m3u", "a.wav", "a.", "noextension", "a.opusx", "a.fla"] {
            #expect(!AudioFileKind.hasSongSuffix(name), "\(name)")
        }
    }

    // MARK: - Vorbis comments

    @Test("Vorbis comments become MPD's tags: Xiph names, any case, several values kept in order")
    func commentsToTags() {
        let comments: [(name: String, value: String)] = [
            ("ARTIST", "First"), ("artist", "Second"), ("TRACKNUMBER", "3/12"), ("DiscNumber", "1"),
            ("DESCRIPTION", "liner"), ("ALBUMARTIST", "Band"), ("MUSICBRAINZ_TRACKID", "abc"),
            ("UNKNOWNTHING", "x"), ("TITLE", ""), ("MOVEMENTNAME", "Allegro"), ("MOVEMENT", "2"),
        ]
        let tags = VorbisComments.tags(comments)
        #expect(tags[.artist] == ["First", "Second"])
        #expect(tags[.track] == ["3/12"])
        #expect(tags[.disc] == ["1"])
        #expect(tags[.comment] == ["liner"])
        #expect(tags[.albumArtist] == ["Band"])
        #expect(tags[.musicBrainzTrackID] == ["abc"])
        #expect(tags[.movement] == ["Allegro"])
        #expect(tags[.movementNumber] == ["2"])
        #expect(tags[.title].isEmpty)
        #expect(tags.names.count == 8)
    }

    @Test("a comment splits at its first =; no = or an empty name is no comment")
    func split() {
        #expect(VorbisComments.split(Array("TITLE=a=b".utf8))! == ("TITLE", "a=b"))
        #expect(VorbisComments.split(Array("TITLE=".utf8))! == ("TITLE", ""))
        #expect(VorbisComments.split(Array("=value".utf8)) == nil)
        #expect(VorbisComments.split(Array("novalue".utf8)) == nil)
    }

    @Test("ReplayGain comments are read as strtod reads them, in any case")
    func storedGain() {
        let stored = VorbisComments.storedGain([
            ("REPLAYGAIN_TRACK_GAIN", "-6.50 dB"), ("replaygain_track_peak", "0.987"),
            ("ReplayGain_Album_Gain", "+1.5"), ("REPLAYGAIN_ALBUM_PEAK", "junk"),
        ])
        #expect(stored == StoredReplayGain(trackGainDB: -6.5, trackPeak: 0.987, albumGainDB: 1.5, albumPeak: 0))
        #expect(VorbisComments.storedGain([("ARTIST", "x")]) == nil)
        #expect(VorbisComments.leadingNumber("1e999") == 0)
        #expect(VorbisComments.leadingNumber("  -3") == -3)
    }

    /// A FLAC picture block of `type` with `mime` and `data`, as `metaflac` writes it.
    static func pictureBlock(type: UInt32, mime: String, data: [UInt8]) -> [UInt8] {
        func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (24 - 8 * UInt32($0)) & 0xff) } }
        let description = Array("cover".utf8)
        return u32(type) + u32(UInt32(mime.utf8.count)) + Array(mime.utf8) + u32(UInt32(description.count))
            + description + u32(1) + u32(1) + u32(24) + u32(0) + u32(UInt32(data.count)) + data
    }

    @Test("METADATA_BLOCK_PICTURE: the front cover among several, else the first; damaged blocks passed over")
    func pictures() {
        let back = Self.pictureBlock(type: 4, mime: "image/png", data: [1, 2, 3])
        let front = Self.pictureBlock(type: 3, mime: "image/jpeg", data: [9, 8, 7, 6])
        let encode = { (bytes: [UInt8]) in Data(bytes).base64EncodedString() }
        let picture = VorbisComments.picture([
            ("METADATA_BLOCK_PICTURE", encode(back)), ("metadata_block_picture", encode(front)),
        ])
        #expect(picture == EmbeddedPicture(mimeType: "image/jpeg", data: [9, 8, 7, 6]))
        #expect(
            VorbisComments.picture([("METADATA_BLOCK_PICTURE", encode(back))])
                == EmbeddedPicture(mimeType: "image/png", data: [1, 2, 3]))
        // Lengths past the block's end, text that is not base64, an empty picture: none of them.
        var hostile = front
        hostile[4..<8] = [0xff, 0xff, 0xff, 0xff]
        #expect(FLACPicture(block: hostile) == nil)
        #expect(FLACPicture(block: Array(front.prefix(front.count - 1))) == nil)
        #expect(FLACPicture(block: Self.pictureBlock(type: 3, mime: "image/png", data: [])) == nil)
        #expect(VorbisComments.picture([("METADATA_BLOCK_PICTURE", "not*base64")]) == nil)
        #expect(VorbisComments.picture([("METADATA_BLOCK_PICTURE", encode(hostile))]) == nil)
    }

    @Test("base64 as RFC 4648 writes it, padding and line breaks allowed")
    func base64() {
        for length in 0..<10 {
            let bytes = (0..<length).map { UInt8($0 * 37 & 0xff) }
            #expect(Base64.decode(Data(bytes).base64EncodedString()) == bytes)
        }
        #expect(Base64.decode("aGVs\nbG8=") == Array("hello".utf8))
        #expect(Base64.decode("a-b") == nil)
    }

    // MARK: - Software ReplayGain

    @Test("ReplayGain's scale as MPD computes it: peak limit, album falling back to track, at most 15")
    func replayGainScale() {
        let stored = StoredReplayGain(trackGainDB: -6, trackPeak: 0.5)
        #expect(ReplayGain.off.scale(for: stored) == (1, 0))
        let track = ReplayGain(source: .track).scale(for: stored)
        #expect(abs(track.factor - pow(10, -6.0 / 20)) < 1e-12)
        // +12 dB would put a peak of 0.5 at 2: limited to 1 / 0.5.
        let loud = ReplayGain(source: .track, preampDB: 18).scale(for: stored)
        #expect(abs(loud.factor - 2) < 1e-12)
        #expect(abs(loud.decibels - 20 * log10(2.0)) < 1e-9)
        let unlimited = ReplayGain(source: .track, preampDB: 18, limitsToPeak: false).scale(for: stored)
        #expect(abs(unlimited.factor - pow(10, 12.0 / 20)) < 1e-9)
        // Album asked, only a track gain stored: the track's.
        #expect(ReplayGain(source: .album).scale(for: stored).factor == track.factor)
        #expect(ReplayGain(source: .track).scale(for: StoredReplayGain(albumGainDB: 40)).factor == 15)
        let missing = ReplayGain(source: .track, missingPreampDB: -3).scale(for: nil)
        #expect(abs(missing.factor - pow(10, -3.0 / 20)) < 1e-12)
        #expect(missing.decibels == -3)
    }

    @Test("PCMGain scales and clamps each sample format; a factor of 1 leaves samples bit for bit")
    func pcmGain() {
        var s16: [Int16] = [1000, -1000, 30000, -30000]
        s16.withUnsafeMutableBytes { PCMGain.apply(2, to: $0, format: .signed16) }
        #expect(s16 == [2000, -2000, 32767, -32768])
        var s24: [Int32] = [1000, -1000, 8_000_000, -8_000_000]
        s24.withUnsafeMutableBytes { PCMGain.apply(2, to: $0, format: .signed24) }
        #expect(s24 == [2000, -2000, 8_388_607, -8_388_608])
        var s32: [Int32] = [1 << 30, -(1 << 30) - 5]
        s32.withUnsafeMutableBytes { PCMGain.apply(4, to: $0, format: .signed32) }
        #expect(s32 == [Int32.max, Int32.min])
        var untouched: [Int16] = [1, -1, 12345]
        untouched.withUnsafeMutableBytes { PCMGain.apply(1, to: $0, format: .signed16) }
        #expect(untouched == [1, -1, 12345])
        var floats: [Float] = [0.25, -0.5]
        floats.withUnsafeMutableBytes { PCMGain.apply(0.5, to: $0, format: .float32) }
        #expect(floats == [0.125, -0.25])
    }

    // MARK: - 24-bit and 32-bit samples

    @Test("formats print as MPD prints them: 96000:24:2, 44100:32:1, 48000:f:2")
    func formatNotation() {
        #expect(AudioFormat(sampleRate: 96000, channels: 2, sampleFormat: .signed24).description == "96000:24:2")
        #expect(AudioFormat(sampleRate: 44100, channels: 1, sampleFormat: .signed32).description == "44100:32:1")
        #expect(AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .float32).description == "48000:f:2")
        #expect(SampleFormat.integer(holding: 8) == .signed16)
        #expect(SampleFormat.integer(holding: 20) == .signed24)
        #expect(SampleFormat.integer(holding: 24) == .signed24)
        #expect(SampleFormat.integer(holding: 32) == .signed32)
        #expect(SampleFormat.signed24.bytesPerSample == 4)
    }

    @Test("the WAV output keeps 24-bit samples whole, three bytes each, and sox reads them back")
    func wav24() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("hires.wav")
        let output = WAVOutput(path: path)
        let format = AudioFormat(sampleRate: 96000, channels: 2, sampleFormat: .signed24)
        try output.open(format: format)
        let samples: [Int32] = [8_388_607, -8_388_608, 1, -1, 0x123456, -0x123456, 0, 42]
        try samples.withUnsafeBytes { try output.write($0) }
        try samples.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<8])) }
        output.close()
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = WAVOutput.header(format: format, dataBytes: 30)
        #expect(Array(file.prefix(header.count)) == header)
        #expect(Array(header[32..<36]) == [6, 0, 24, 0])  // block align 6, 24 bits
        let packed = (samples + samples.prefix(2)).flatMap { value in
            (0..<3).map { UInt8(truncatingIfNeeded: value >> (8 * Int32($0))) }
        }
        #expect(Array(file.dropFirst(header.count)) == packed)
        // sox agrees: 24 bits, 96 kHz, 5 frames, and the samples back as 32-bit values shifted by 8.
        #expect(String(decoding: try run("/usr/bin/soxi", ["-b", path]).stdout, as: UTF8.self) == "24\n")
        #expect(String(decoding: try run("/usr/bin/soxi", ["-s", path]).stdout, as: UTF8.self) == "5\n")
        let raw = try run("/usr/bin/sox", [path, "-t", "raw", "-e", "signed", "-b", "32", "-"]).stdout
        let back = raw.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }.map { $0 >> 8 }
        #expect(back == samples + samples.prefix(2))
    }

    @Test("the FIFO keeps 24-bit songs whole for a 24-bit snapserver, and rounds them for a 16-bit one")
    func fifo24() throws {
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .signed24)
        let samples: [Int32] = [8_388_607, -8_388_608, 1, -1, 0x123456, -0x123457, 0, 128]
        let wide = try Resampler(input: format, output: FIFOFormat(parsing: "48000:24:2"))
        #expect(samples.withUnsafeBytes { wide.process($0) } == samples.withUnsafeBytes { Array($0) })
        let narrow = try Resampler(input: format, output: .standard)
        let bytes = samples.withUnsafeBytes { narrow.process($0) }
        let shorts = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(shorts == [32767, -32768, 0, 0, 0x1234, -0x1234, 0, 1])
    }

    @Test(
        "a card without 24-bit words gets 24-bit songs as 32-bit words, packed in three bytes, or rounded to 16",
        arguments: [
            ([DeviceSampleFormat.s24InWord], DeviceSampleFormat.s32),
            ([.s24InWord, .s32], .s24Packed),
            ([.s24InWord, .s32, .s24Packed], .s16),
            ([], .s24InWord),
        ])
    func alsaFallback(refused: [DeviceSampleFormat], expected: DeviceSampleFormat) throws {
        let scratch = try ScratchDirectory()
        let capture = scratch.path("capture.raw")
        let configuration = "pcm.tap { type file; slave.pcm { type null }; file \"\(capture)\"; format \"raw\" }"
        let output = ALSAOutput(device: "tap", configuration: configuration, refusedDeviceFormats: refused)
        let samples: [Int32] = [8_388_607, -8_388_608, 1, -1, 0x123456, -0x123457, 0, 128]
        try output.open(format: AudioFormat(sampleRate: 96000, channels: 2, sampleFormat: .signed24))
        #expect(output.deviceFormat == expected)
        try samples.withUnsafeBytes { try output.write($0) }
        try samples.withUnsafeBytes { try output.write($0) }
        output.close()
        let captured = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        let once: [UInt8]
        switch expected {
        case .s24InWord: once = samples.withUnsafeBytes { Array($0) }
        case .s32: once = samples.map { $0 << 8 }.withUnsafeBytes { Array($0) }
        case .s24Packed:
            once = samples.flatMap { value in (0..<3).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        case .s16:
            let rounded: [Int16] = [32767, -32768, 0, 0, 0x1234, -0x1234, 0, 1]
            once = rounded.withUnsafeBytes { Array($0) }
        case .float: once = []
        }
        #expect(captured == once + once)
    }
}
