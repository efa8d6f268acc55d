import Foundation
import MusicTags
import Testing

@testable import Audio

/// FLAC material made at test time: sox makes the signal, `flac` encodes it, `flac -d` decodes the
/// reference PCM.
enum FLACMaterial {
    struct Shape: Sendable, CustomTestStringConvertible {
        let sampleRate: Int
        let channels: Int
        let bits: Int
        let seconds: Double
        var ogg = false

        var testDescription: String {
            "\(self.sampleRate) Hz \(self.channels) ch \(self.bits)-bit\(self.ogg ? " Ogg" : "")"
        }
        var frames: Int { Int((Double(self.sampleRate) * self.seconds).rounded()) }
    }

    /// Encodes a tone over noise of `shape` at `path` with `flac` (extra `flacArguments` such as
    /// `--tag=` or `--picture=`).
    static func make(_ shape: Shape, at path: String, flacArguments: [String] = []) throws {
        let source = path + ".src.wav"
        defer { try? FileManager.default.removeItem(atPath: source) }
        let made = try run(
            "/usr/bin/sox",
            [
                "-n", "-r", "\(shape.sampleRate)", "-b", "\(shape.bits)", "-c", "\(shape.channels)", source, "synth",
                "\(shape.seconds)", "sine", "440", "pinknoise", "sine", "1234", "gain", "-4",
            ])
        try #require(made.status == 0, "sox: \(made.stderr)")
        let encoded = try run(
            "/usr/bin/flac", ["-s", "-f", "-5"] + (shape.ogg ? ["--ogg"] : []) + flacArguments + ["-o", path, source])
        try #require(encoded.status == 0, "flac: \(encoded.stderr)")
    }

    /// What `flac -d` decodes: raw signed little-endian samples at the file's own width (24-bit packed
    /// in three bytes).
    static func reference(_ path: String, ogg: Bool = false) throws -> [UInt8] {
        let result = try run(
            "/usr/bin/flac",
            ["-s", "-d", "-c", "--force-raw-format", "--endian=little", "--sign=signed"] + (ogg ? ["--ogg"] : [])
                + [path])
        try #require(result.status == 0, "flac -d: \(result.stderr)")
        return [UInt8](result.stdout)
    }

    /// Our PCM as `flac -d` writes it: 24-bit samples (Int32 words) packed into their low three bytes.
    static func packed(_ pcm: [UInt8], _ format: SampleFormat) -> [UInt8] {
        guard format == .signed24 else { return pcm }
        var out: [UInt8] = []
        out.reserveCapacity(pcm.count / 4 * 3)
        var index = 0
        while index + 4 <= pcm.count {
            out += pcm[index..<index + 3]
            index += 4
        }
        return out
    }

    /// Decodes the rest of a song, in reads of `chunkFrames`.
    static func decodeAll(_ decoder: any AudioDecoder, chunkFrames: Int = 1000) throws -> [UInt8] {
        try self.decode(decoder, frames: Int.max, chunkFrames: chunkFrames)
    }

    /// Decodes up to `frames` frames from the decoder's position, in reads of `chunkFrames`.
    static func decode(_ decoder: any AudioDecoder, frames: Int, chunkFrames: Int = 1000) throws -> [UInt8] {
        let bytesPerFrame = decoder.format.bytesPerFrame
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        var pcm: [UInt8] = []
        var filled = 0
        while filled < frames {
            let wanted = min(chunkFrames, frames - filled)
            let got = try decoder.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted * bytesPerFrame]))
            if got == 0 { break }
            pcm += buffer[0..<got * bytesPerFrame]
            filled += got
        }
        return pcm
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

@Suite("FLACDecoder against flac -d")
struct FLACDecoderTests {
    static let shapes: [FLACMaterial.Shape] = [
        .init(sampleRate: 44100, channels: 2, bits: 16, seconds: 3),
        .init(sampleRate: 96000, channels: 2, bits: 24, seconds: 2),
        .init(sampleRate: 192_000, channels: 2, bits: 24, seconds: 1),
        .init(sampleRate: 48000, channels: 1, bits: 16, seconds: 2),
        .init(sampleRate: 48000, channels: 6, bits: 16, seconds: 1),
        .init(sampleRate: 48000, channels: 2, bits: 32, seconds: 1),
        .init(sampleRate: 44100, channels: 2, bits: 16, seconds: 1.5, ogg: true),
        .init(sampleRate: 96000, channels: 2, bits: 24, seconds: 1, ogg: true),
    ]

    @Test(
        "decodes bit for bit what flac -d writes, at the file's own resolution, with the exact length",
        arguments: shapes)
    func bitExact(_ shape: FLACMaterial.Shape) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(shape, at: path)
        let decoder = try FLACDecoder(path: path)
        let expected = SampleFormat.integer(holding: shape.bits)
        #expect(
            decoder.format
                == AudioFormat(sampleRate: shape.sampleRate, channels: shape.channels, sampleFormat: expected))
        #expect(decoder.lengthFrames == shape.frames)
        let pcm = try FLACMaterial.decodeAll(decoder, chunkFrames: 997)
        #expect(pcm.count == shape.frames * decoder.format.bytesPerFrame)
        #expect(decoder.position == shape.frames)
        let reference = try FLACMaterial.reference(path, ogg: shape.ogg)
        #expect(reference.count == shape.frames * shape.channels * shape.bits / 8)
        expectSamePCM(FLACMaterial.packed(pcm, expected), reference)
        // The same through the factory, which tells FLAC and Ogg FLAC from the content.
        let opened = try AudioDecoders.open(path: path)
        #expect(opened is FLACDecoder)
        #expect(try AudioDecoders.kind(path: path) == (shape.ogg ? .oggFLAC : .flac))
    }

    @Test("24-bit samples fill the low three bytes of each word, sign-extended")
    func signed24Words() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(.init(sampleRate: 96000, channels: 2, bits: 24, seconds: 0.5), at: path)
        let decoder = try FLACDecoder(path: path)
        let pcm = try FLACMaterial.decodeAll(decoder)
        let words = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(words.allSatisfy { (-8_388_608...8_388_607).contains($0) })
        #expect(words.contains { $0 < -65536 })  // really 24-bit, negative ones sign-extended
    }

    @Test("8-bit samples are widened to 16 bits (<< 8)")
    func eightBit() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(.init(sampleRate: 22050, channels: 1, bits: 8, seconds: 0.5), at: path)
        let decoder = try FLACDecoder(path: path)
        #expect(decoder.format.sampleFormat == .signed16)
        let pcm = try FLACMaterial.decodeAll(decoder)
        let reference = try FLACMaterial.reference(path)
        let widened = reference.flatMap { [UInt8(0), $0] }
        expectSamePCM(pcm, widened)
        #expect(try FLACDecoder.facts(path: path).sampleFormat == .signed16)
    }

    @Test(
        "12- and 20-bit samples are widened to 16 and 24 bits (<< 4): the data chunk flac -d writes",
        arguments: [("flac-12bit.flac", SampleFormat.signed16), ("flac-20bit.flac", .signed24)])
    func oddDepths(_ name: String, _ expected: SampleFormat) throws {
        let decoder = try FLACDecoder(path: fixture(name))
        #expect(decoder.format == AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: expected))
        #expect(decoder.lengthFrames == 4410)
        let pcm = try FLACMaterial.decodeAll(decoder, chunkFrames: 1001)
        let wav = try run("/usr/bin/flac", ["-s", "-d", "-c", fixture(name)])
        try #require(wav.status == 0)
        let data = try #require(wav.stdout.range(of: Data("data".utf8)))
        let chunk = [UInt8](wav.stdout[(data.upperBound + 4)...])
        #expect(chunk.count == 4410 * 2 * (expected == .signed16 ? 2 : 3))
        expectSamePCM(FLACMaterial.packed(pcm, expected), chunk)
        // Really widened: the low four bits are clear in every sample.
        let low = FLACMaterial.packed(pcm, expected)
        let width = expected == .signed16 ? 2 : 3
        #expect(stride(from: 0, to: low.count, by: width).allSatisfy { low[$0] & 0x0f == 0 })
        #expect(stride(from: 0, to: low.count, by: width).contains { low[$0] != 0 })
        #expect(try FLACDecoder.facts(path: fixture(name)).sampleFormat == expected)
    }

    @Test("floats are the integers over 2^(bits-1)", arguments: [16, 24])
    func float32(_ bits: Int) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(.init(sampleRate: 48000, channels: 2, bits: bits, seconds: 0.7), at: path)
        let integers = try FLACMaterial.decodeAll(FLACDecoder(path: path))
        let floats = try FLACDecoder(path: path, sampleFormat: .float32)
        #expect(floats.format.sampleFormat == .float32)
        let pcm = try FLACMaterial.decodeAll(floats, chunkFrames: 333)
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let expected: [Float] =
            bits == 16
            ? integers.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { Float($0) / 32768 } }
            : integers.withUnsafeBytes { $0.bindMemory(to: Int32.self).map { Float($0) / 8_388_608 } }
        #expect(samples == expected)
        #expect(samples.allSatisfy { $0 >= -1 && $0 < 1 })
    }

    @Test(
        "seeks sample-exactly, forwards and backwards, to 0, the last frame and the end",
        arguments: [shapes[0], shapes[1], shapes[5]])
    func seek(_ shape: FLACMaterial.Shape) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(shape, at: path)
        let straight = try FLACMaterial.decodeAll(FLACDecoder(path: path))
        let decoder = try FLACDecoder(path: path)
        let bytesPerFrame = decoder.format.bytesPerFrame
        let frames = shape.frames
        let targets = [frames / 2, 1, 4095, 4096, 4097, 12345, frames - 1, 0, frames - 3000, 7]
        for target in targets {
            try decoder.seek(toFrame: target)
            #expect(decoder.position == target)
            let pcm = try FLACMaterial.decode(decoder, frames: 3000, chunkFrames: 641)
            let end = min(frames, target + 3000)
            expectSamePCM(pcm, Array(straight[target * bytesPerFrame..<end * bytesPerFrame]), "seek to \(target)")
            #expect(decoder.position == end)
        }
        // After a seek, the rest of the song to its end.
        try decoder.seek(toFrame: 1000)
        expectSamePCM(try FLACMaterial.decodeAll(decoder), Array(straight.dropFirst(1000 * bytesPerFrame)))
        try decoder.seek(toFrame: frames)
        #expect(try FLACMaterial.decode(decoder, frames: 100).isEmpty)
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: frames + 1, length: frames)) {
            try decoder.seek(toFrame: frames + 1)
        }
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: -1, length: frames)) {
            try decoder.seek(toFrame: -1)
        }
        // Still usable after a refused seek.
        try decoder.seek(toFrame: 2)
        expectSamePCM(
            try FLACMaterial.decode(decoder, frames: 10), Array(straight[2 * bytesPerFrame..<12 * bytesPerFrame]))
    }

    @Test("reads into odd-sized buffers, even ones smaller than a frame")
    func oddBuffers() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 24, seconds: 0.5)
        try FLACMaterial.make(shape, at: path)
        let decoder = try FLACDecoder(path: path)
        let tooSmall = UnsafeMutableRawBufferPointer.allocate(byteCount: 7, alignment: 16)
        defer { tooSmall.deallocate() }
        #expect(try decoder.read(into: tooSmall) == 0)
        var pcm: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * 4099 + 5, alignment: 16)
        defer { buffer.deallocate() }
        var sizes = [1, 3, 4099, 17, 2]
        while true {
            let frames = sizes.first ?? 1001
            sizes = Array(sizes.dropFirst()) + [frames]
            let got = try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<frames * 8 + 5]))
            if got == 0 { break }
            #expect(got <= frames)
            pcm += buffer[0..<got * 8]
        }
        expectSamePCM(FLACMaterial.packed(pcm, .signed24), try FLACMaterial.reference(path))
    }

    @Test(
        "a file whose STREAMINFO records no length: nil (duration 0 as MPD shows it), played to its end; seeks still work"
    )
    func unknownLength() throws {
        let scratch = try ScratchDirectory()
        let source = scratch.path("song.raw")
        let path = scratch.path("song.flac")
        let made = try run(
            "/usr/bin/sox",
            [
                "-n", "-r", "44100", "-b", "16", "-c", "2", "-e", "signed", "-t", "raw", source, "synth", "1",
                "pinknoise",
            ])
        try #require(made.status == 0)
        // Encoded from a pipe, flac cannot go back to write the total.
        let encoded = try run(
            "/bin/sh",
            [
                "-c",
                "cat '\(source)' | /usr/bin/flac -s -f --force-raw-format --endian=little --sign=signed --channels=2 --bps=16 --sample-rate=44100 -c - > '\(path)'",
            ])
        try #require(encoded.status == 0)
        let decoder = try FLACDecoder(path: path)
        #expect(decoder.lengthFrames == nil)
        // MPD shows such a file as `duration: 0.000`.
        #expect(try FLACDecoder.facts(path: path).duration == 0)
        let pcm = try FLACMaterial.decodeAll(decoder)
        expectSamePCM(pcm, try FLACMaterial.bytes(source))
        try decoder.seek(toFrame: 30000)
        expectSamePCM(try FLACMaterial.decode(decoder, frames: 100), Array(pcm[120_000..<120_400]))
    }

    @Test("tags from VORBIS_COMMENT: multi-valued ARTIST kept, TRACKNUMBER is Track, unknown names ignored")
    func tags() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(
            .init(sampleRate: 44100, channels: 2, bits: 16, seconds: 0.3), at: path,
            flacArguments: [
                "--tag=ARTIST=First", "--tag=TITLE=Süß", "--tag=artist=Second", "--tag=TRACKNUMBER=7",
                "--tag=DISCNUMBER=2", "--tag=FROBNICATE=yes", "--tag=AlbumArtist=Band", "--tag=Date=2024",
                "--tag=MIXRAMP_START=0.0 0.1;-6 0.5", "--tag=mixramp_end=-3 2.0",
            ])
        let decoder = try FLACDecoder(path: path)
        #expect(decoder.tags[.artist] == ["First", "Second"])
        #expect(decoder.tags[.title] == ["Süß"])
        #expect(decoder.tags[.track] == ["7"])
        #expect(decoder.tags[.disc] == ["2"])
        #expect(decoder.tags[.albumArtist] == ["Band"])
        #expect(decoder.tags[.date] == ["2024"])
        #expect(decoder.mixRamp == MixRamp(start: "0.0 0.1;-6 0.5", end: "-3 2.0"))
        let facts = try FLACDecoder.facts(path: path)
        #expect(facts.tags == decoder.tags)
        #expect(facts.sampleRate == 44100)
        #expect(facts.channels == 2)
        #expect(facts.sampleFormat == .signed16)
        #expect(facts.duration == Double(13230) / 44100)
        let comments = try FLACDecoder.comments(path: path)
        #expect(
            comments.map(\.name) == [
                "ARTIST", "TITLE", "artist", "TRACKNUMBER", "DISCNUMBER", "FROBNICATE", "AlbumArtist", "Date",
                "MIXRAMP_START", "mixramp_end",
            ])
        #expect(comments[5].value == "yes")
        #expect(try AudioDecoders.comments(path: path).count == 10)
    }

    @Test(
        "ReplayGain: the chosen gain scales the samples and is reported; limited by the peak; off is bit-exact",
        arguments: [16, 24])
    func replayGain(_ bits: Int) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(
            .init(sampleRate: 44100, channels: 2, bits: bits, seconds: 0.5), at: path,
            flacArguments: [
                "--tag=REPLAYGAIN_TRACK_GAIN=-6.00 dB", "--tag=REPLAYGAIN_TRACK_PEAK=0.5",
                "--tag=replaygain_album_gain=+10 dB", "--tag=REPLAYGAIN_ALBUM_PEAK=0.8",
            ])
        let plain = try FLACMaterial.decodeAll(FLACDecoder(path: path))
        let off = try FLACDecoder(path: path, replayGain: .off)
        #expect(off.appliedGainDB == 0)
        #expect(try FLACMaterial.decodeAll(off) == plain)
        // Track: -6 dB. Album: +10 dB, limited by the peak 0.8 to 1/0.8.
        for (source, factor) in [(ReplayGain.Source.track, pow(10, -6.0 / 20)), (.album, 1 / 0.8)] {
            let decoder = try FLACDecoder(path: path, replayGain: ReplayGain(source: source))
            #expect(abs(decoder.appliedGainDB - 20 * log10(factor)) < 1e-9)
            let scaled = try FLACMaterial.decodeAll(decoder, chunkFrames: 511)
            #expect(scaled.count == plain.count)
            if bits == 16 {
                let before = plain.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                let after = scaled.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                let expected = before.map { Int16(max(-32768, min(32767, (Float($0) * Float(factor)).rounded()))) }
                #expect(after == expected, "\(source)")
            } else {
                let before = plain.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
                let after = scaled.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
                let expected = before.map { Int32(max(-8_388_608, min(8_388_607, (Double($0) * factor).rounded()))) }
                #expect(after == expected, "\(source)")
            }
        }
        // No stored gain: the missing preamp.
        let bare = scratch.path("bare.flac")
        try FLACMaterial.make(.init(sampleRate: 44100, channels: 1, bits: bits, seconds: 0.2), at: bare)
        let missing = try FLACDecoder(path: bare, replayGain: ReplayGain(source: .track, missingPreampDB: -3))
        #expect(missing.appliedGainDB == -3)
    }

    @Test("pictures: the first PICTURE block, as MPD's readpicture takes it; else a METADATA_BLOCK_PICTURE comment")
    func pictures() throws {
        let scratch = try ScratchDirectory()
        let back = scratch.path("back.png")
        let front = scratch.path("front.jpg")
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + Array("BACK".utf8)
        let jpeg: [UInt8] = [0xff, 0xd8, 0xff, 0xe0] + Array("FRONT COVER".utf8)
        try FLACMaterial.write(png, to: back)
        try FLACMaterial.write(jpeg, to: front)
        let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 0.2)
        // MPD 0.23.12 answers readpicture with the first picture in the file, whatever its type.
        let two = scratch.path("two.flac")
        try FLACMaterial.make(
            shape, at: two,
            flacArguments: ["--picture=4|image/png||1x1x24|\(back)", "--picture=3|image/jpeg||1x1x24|\(front)"])
        #expect(try FLACDecoder.picture(path: two) == EmbeddedPicture(mimeType: "image/png", data: png))
        #expect(try AudioDecoders.picture(path: two) == EmbeddedPicture(mimeType: "image/png", data: png))
        let none = scratch.path("none.flac")
        try FLACMaterial.make(shape, at: none)
        #expect(try FLACDecoder.picture(path: none) == nil)
        // A picture block in base64 in a comment, as Ogg files carry covers.
        var block: [UInt8] = [0, 0, 0, 3]
        func field(_ bytes: [UInt8]) { block += withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init) + bytes }
        field(Array("image/jpeg".utf8))
        field([])
        block += [UInt8](repeating: 0, count: 16)
        field(jpeg)
        let commented = scratch.path("commented.flac")
        try FLACMaterial.make(
            shape, at: commented,
            flacArguments: ["--tag=METADATA_BLOCK_PICTURE=\(Data(block).base64EncodedString())"])
        #expect(try FLACDecoder.picture(path: commented) == EmbeddedPicture(mimeType: "image/jpeg", data: jpeg))
    }

    @Test("facts of a 24-bit file say 24 bits, its rate and its exact duration")
    func facts24() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("song.flac")
        try FLACMaterial.make(.init(sampleRate: 96000, channels: 2, bits: 24, seconds: 1.5), at: path)
        let facts = try AudioDecoders.facts(path: path)
        #expect(facts.sampleFormat == .signed24)
        #expect(facts.sampleRate == 96000)
        #expect(facts.duration == 1.5)
    }
}

/// A FLAC file's metadata blocks, found by walking their headers.
struct FLACLayout {
    struct Block {
        var type: UInt8
        /// Where the block's 4-byte header starts.
        var header: Int
        var length: Int
        var body: Int { self.header + 4 }
    }

    var blocks: [Block] = []
    /// Where the first audio frame starts.
    var audio = 4

    init(_ bytes: [UInt8]) {
        var offset = 4
        while offset + 4 <= bytes.count {
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            self.blocks.append(Block(type: bytes[offset] & 0x7f, header: offset, length: length))
            let last = bytes[offset] & 0x80 != 0
            offset += 4 + length
            if last { break }
        }
        self.audio = offset
    }

    func first(_ type: UInt8) -> Block? { self.blocks.first { $0.type == type } }
}

@Suite("FLACDecoder on bad and hostile input")
struct FLACBadInputTests {
    static let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 2)

    /// A good file, its bytes and `flac -d`'s PCM.
    static func good(_ scratch: ScratchDirectory, flacArguments: [String] = []) throws -> (
        path: String, bytes: [UInt8], reference: [UInt8]
    ) {
        let path = scratch.path("good.flac")
        try FLACMaterial.make(Self.shape, at: path, flacArguments: flacArguments)
        return (path, try FLACMaterial.bytes(path), try FLACMaterial.reference(path))
    }

    /// Opens and decodes `path` to its end or its error: the PCM and the error, if any.
    static func play(_ path: String) -> (pcm: [UInt8], error: DecoderError?) {
        do {
            let decoder = try AudioDecoders.open(path: path)
            var pcm: [UInt8] = []
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 8, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { return (pcm, nil) }
                pcm += buffer[0..<frames * decoder.format.bytesPerFrame]
                if pcm.count > 64 << 20 { return (pcm, nil) }
            }
        } catch {
            return ([], error)
        }
    }

    @Test("an empty .flac is refused as empty")
    func empty() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("empty.flac")
        try FLACMaterial.write([], to: path)
        #expect(throws: DecoderError.emptyFile(path: path)) { try FLACDecoder(path: path) }
        #expect(throws: DecoderError.emptyFile(path: path)) { try AudioDecoders.open(path: path) }
    }

    @Test("cut short in its header or STREAMINFO, or before its first frame: refused, saying so")
    func truncatedEarly() throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch)
        let layout = FLACLayout(good.bytes)
        for cut in [4, 6, 20, 41, layout.audio, layout.audio + 9] {
            let path = scratch.path("cut-\(cut).flac")
            try FLACMaterial.write(Array(good.bytes.prefix(cut)), to: path)
            #expect {
                _ = try FLACDecoder(path: path)
            } throws: { error in
                guard case .damaged(_, "FLAC", let reason) = error as? DecoderError else { return false }
                return reason.contains("cut short")
            }
            if cut < 42 {
                #expect(throws: DecoderError.self) { try FLACDecoder.facts(path: path) }
            } else {
                // The metadata is whole: the library lists the song, as MPD does.
                #expect(try FLACDecoder.facts(path: path).duration == 2)
            }
        }
    }

    @Test("cut short in the middle: what is there plays, equal to flac -d's start, then a clear error")
    func truncatedMiddle() throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch)
        for fraction in [0.3, 0.5, 0.9] {
            let path = scratch.path("cut.flac")
            try FLACMaterial.write(Array(good.bytes.prefix(Int(Double(good.bytes.count) * fraction))), to: path)
            let decoder = try FLACDecoder(path: path)
            var pcm: [UInt8] = []
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000 * 4, alignment: 16)
            defer { buffer.deallocate() }
            var failure: DecoderError?
            do {
                while true {
                    let frames = try decoder.read(into: buffer)
                    if frames == 0 { break }
                    pcm += buffer[0..<frames * 4]
                }
            } catch {
                failure = error
            }
            guard case .damaged(_, "FLAC", let reason) = failure else {
                Issue.record("no damage reported for a file cut at \(fraction): \(String(describing: failure))")
                continue
            }
            #expect(reason.hasPrefix("cut short after "))
            #expect(reason.hasSuffix("of 2.0 s"))
            #expect(pcm.count > 0 && pcm.count < good.reference.count)
            expectSamePCM(pcm, Array(good.reference.prefix(pcm.count)), "cut at \(fraction)")
            // After the error: the end.
            #expect(try decoder.read(into: buffer) == 0)
        }
    }

    @Test("a few corrupted bytes in the middle: played through to the end without a crash or a hang")
    func corruptedMiddle() throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch)
        var bytes = good.bytes
        for offset in stride(from: bytes.count / 2, to: bytes.count / 2 + 40, by: 7) { bytes[offset] ^= 0x5a }
        let path = scratch.path("corrupt.flac")
        try FLACMaterial.write(bytes, to: path)
        let (pcm, error) = Self.play(path)
        // libFLAC skips or silences the damaged frame and resyncs: the start is intact, the length near.
        #expect(error == nil)
        #expect(pcm.count > good.reference.count / 2)
        #expect(pcm.count <= good.reference.count)
        expectSamePCM(
            Array(pcm.prefix(good.reference.count / 3)), Array(good.reference.prefix(good.reference.count / 3)))
    }

    @Test("random bytes named .flac are refused; FLACDecoder says it is no FLAC")
    func randomBytes() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("random.flac")
        var generator = SystemRandomNumberGenerator()
        try FLACMaterial.write((0..<20000).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: path)
        #expect(throws: DecoderError.self) { try AudioDecoders.open(path: path) }
        #expect {
            _ = try FLACDecoder(path: path)
        } throws: { error in
            guard case .damaged(_, "FLAC", _) = error as? DecoderError else { return false }
            return true
        }
        #expect(throws: DecoderError.self) { try FLACDecoder.facts(path: path) }
    }

    @Test("an MP3 named .flac plays as MP3; a FLAC named .mp3 plays as FLAC")
    func misnamed() throws {
        let scratch = try ScratchDirectory()
        let mp3 = scratch.path("song.flac")
        try FileManager.default.copyItem(atPath: fixture("one-second.mp3"), toPath: mp3)
        let asMP3 = try AudioDecoders.open(path: mp3)
        #expect(asMP3 is MP3Decoder)
        #expect(try FLACMaterial.decodeAll(asMP3) == (try referencePCM(mp3)))
        let good = try Self.good(scratch)
        let flac = scratch.path("song.mp3")
        try FileManager.default.copyItem(atPath: good.path, toPath: flac)
        let asFLAC = try AudioDecoders.open(path: flac)
        #expect(asFLAC is FLACDecoder)
        expectSamePCM(try FLACMaterial.decodeAll(asFLAC), good.reference)
        #expect(try AudioDecoders.facts(path: flac).sampleRate == 44100)
    }

    @Test("an ID3v2 tag before fLaC is passed over: the file plays bit for bit")
    func id3v2Before() throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch, flacArguments: ["--tag=ARTIST=Behind"])
        let path = scratch.path("id3.flac")
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20)
        try FLACMaterial.write(tag + good.bytes, to: path)
        #expect(try AudioDecoders.kind(path: path) == .flac)
        let (pcm, error) = Self.play(path)
        #expect(error == nil)
        expectSamePCM(pcm, good.reference)
        #expect(try AudioDecoders.facts(path: path).tags[.artist] == ["Behind"])
    }

    @Test("a STREAMINFO rate that the frames contradict (655350 Hz) is refused, not played at the wrong speed")
    func rateContradicted() throws {
        let scratch = try ScratchDirectory()
        var bytes = try Self.good(scratch).bytes
        let info = try #require(FLACLayout(bytes).first(0))
        // Sample rate: 20 bits from byte 10 of STREAMINFO's body. 655350 = 0x9FFF6.
        let body = info.body
        bytes[body + 10] = 0x9f
        bytes[body + 11] = 0xff
        bytes[body + 12] = 0x60 | (bytes[body + 12] & 0x0f)
        let path = scratch.path("rate.flac")
        try FLACMaterial.write(bytes, to: path)
        #expect(try FLACDecoder.facts(path: path).sampleRate == 655350)
        #expect {
            _ = try FLACDecoder(path: path)
        } throws: { error in
            guard case .damaged(_, "FLAC", let reason) = error as? DecoderError else { return false }
            return reason.contains("sample rate") && reason.contains("655350")
        }
    }

    @Test(
        "STREAMINFO's other claims: huge block and frame sizes play; a channel count or depth the frames contradict is refused"
    )
    func streamInfoClaims() throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch)
        let body = try #require(FLACLayout(good.bytes).first(0)).body
        var sizes = good.bytes
        // The largest block size and frame sizes STREAMINFO can state (the smallest block size kept:
        // equal to the largest, it would say every frame holds 65535 samples, which libFLAC believes).
        sizes.replaceSubrange(body + 2..<body + 10, with: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        var channels = good.bytes
        channels[body + 12] |= 0x0e  // channels - 1 = 7: eight channels
        var depth = good.bytes
        depth[body + 12] |= 0x01  // bits - 1 = 0b1_0111: 24 bits
        depth[body + 13] = 0x70 | (depth[body + 13] & 0x0f)
        let path = scratch.path("claims.flac")
        try FLACMaterial.write(sizes, to: path)
        let played = Self.play(path)
        #expect(played.error == nil)
        expectSamePCM(played.pcm, good.reference)
        for (bytes, words) in [
            (channels, "channel count mid-stream, from 8 to 2"), (depth, "bit depth mid-stream, from 24 to 16"),
        ] {
            try FLACMaterial.write(bytes, to: path)
            #expect(try FLACDecoder.facts(path: path).channels == (words.contains("8") ? 8 : 2))
            #expect {
                _ = try FLACDecoder(path: path)
            } throws: { error in
                guard case .damaged(_, "FLAC", let reason) = error as? DecoderError else { return false }
                return reason.contains(words)
            }
        }
    }

    @Test("a file that changes its sample rate mid-stream plays its first part, then is refused as damaged")
    func rateChangesMidStream() throws {
        let scratch = try ScratchDirectory()
        let first = try Self.good(scratch)
        let otherPath = scratch.path("other.flac")
        try FLACMaterial.make(.init(sampleRate: 48000, channels: 2, bits: 16, seconds: 1), at: otherPath)
        let other = try FLACMaterial.bytes(otherPath)
        let path = scratch.path("joined.flac")
        try FLACMaterial.write(first.bytes + other[FLACLayout(other).audio...], to: path)
        let decoder = try FLACDecoder(path: path)
        var pcm: [UInt8] = []
        var failure: DecoderError?
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        do {
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { break }
                pcm += buffer[0..<frames * 4]
            }
        } catch {
            failure = error
        }
        expectSamePCM(pcm, first.reference)
        guard case .damaged(_, "FLAC", let reason) = failure else {
            Issue.record("not refused: \(String(describing: failure))")
            return
        }
        #expect(reason.contains("changes its sample rate mid-stream, from 44100 Hz to 48000 Hz"))
    }

    @Test("hostile metadata lengths: a block running past the file, a huge comment count, a 4 GB picture")
    func hostileMetadata() throws {
        let scratch = try ScratchDirectory()
        let pictureFile = scratch.path("cover.png")
        try FLACMaterial.write(
            [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + [UInt8](repeating: 7, count: 300), to: pictureFile)
        let good = try Self.good(
            scratch, flacArguments: ["--tag=ARTIST=A", "--picture=3|image/png||1x1x24|\(pictureFile)"])
        let layout = FLACLayout(good.bytes)
        let comment = try #require(layout.first(4))
        let picture = try #require(layout.first(6))
        var variants: [(String, [UInt8])] = []
        var longBlock = good.bytes
        longBlock[comment.header + 1...comment.header + 3] = [0xff, 0xff, 0xff]
        variants.append(("block past the end", longBlock))
        var manyComments = good.bytes
        // The body: vendor length (LE), vendor, then the comment count (LE).
        let vendorLength = Int(good.bytes[comment.body]) | Int(good.bytes[comment.body + 1]) << 8
        let count = comment.body + 4 + vendorLength
        manyComments[count..<count + 4] = [0xff, 0xff, 0xff, 0xff]
        variants.append(("huge comment count", manyComments))
        var hugeComment = good.bytes
        hugeComment[count + 4..<count + 8] = [0xff, 0xff, 0xff, 0x7f]
        variants.append(("huge comment length", hugeComment))
        var hugePicture = good.bytes
        // Type, MIME length + MIME, description length + description, four dimensions, then the data length.
        var field = picture.body + 4
        let mimeLength = good.bytes[field..<field + 4].reduce(0) { $0 << 8 | Int($1) }
        field += 4 + mimeLength
        let descriptionLength = good.bytes[field..<field + 4].reduce(0) { $0 << 8 | Int($1) }
        field += 4 + descriptionLength + 16
        hugePicture[field..<field + 4] = [0xff, 0xff, 0xff, 0xff]
        variants.append(("4 GB picture", hugePicture))
        for (name, bytes) in variants {
            let path = scratch.path("hostile.flac")
            try FLACMaterial.write(bytes, to: path)
            // Refused or played; whatever plays is what flac -d gives.
            let (pcm, error) = Self.play(path)
            if let error {
                guard case .damaged(_, "FLAC", let reason) = error else {
                    Issue.record("\(name): refused as \(error)")
                    continue
                }
                #expect(!reason.isEmpty)
            } else {
                expectSamePCM(pcm, good.reference, Comment(rawValue: name))
            }
            _ = try? FLACDecoder.facts(path: path)
            _ = try? FLACDecoder.picture(path: path)
            _ = try? FLACDecoder.comments(path: path)
        }
        #expect(try FLACDecoder.picture(path: good.path)?.data.count == 308)
    }

    @Test("opening and decoding bad and good FLAC files many times leaks neither memory nor descriptors")
    func noLeaks() async throws {
        let scratch = try ScratchDirectory()
        let good = try Self.good(scratch, flacArguments: ["--tag=ARTIST=A"])
        var paths = [good.path]
        for (name, bytes) in [
            ("cut.flac", Array(good.bytes.prefix(good.bytes.count / 2))), ("head.flac", Array(good.bytes.prefix(30))),
            ("noise.flac", Array("fLaC".utf8) + (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }),
        ] {
            try FLACMaterial.write(bytes, to: scratch.path(name))
            paths.append(scratch.path(name))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        func cycle() {
            for path in paths {
                _ = try? FLACDecoder.facts(path: path)
                _ = try? FLACDecoder.picture(path: path)
                guard let decoder = try? FLACDecoder(path: path) else { continue }
                _ = try? decoder.read(into: buffer)
                try? decoder.seek(toFrame: 100)
                _ = try? decoder.read(into: buffer)
            }
        }
        let growth = leakGrowth(rounds: 150, cycle)
        // A libFLAC decoder holds hundreds of KiB: one leaked per open would cost well over 100 MiB.
        #expect(growth.bytes < 16 << 20)
        #expect(growth.descriptors < 200)
    }

}

@Suite("FLACDecoder.facts through libFLAC's metadata iterator")
struct FLACFactsIteratorTests {
    /// `facts` as the stream decoder reads them (the way before the iterator, and still Ogg FLAC's).
    static func streamFacts(_ path: String) throws -> SongFacts {
        let stream = try FLACStream.open(path: path, wantsPictures: false)
        defer { stream.close() }
        let info = stream.info
        return SongFacts(
            tags: VorbisComments.tags(stream.comments), sampleRate: info.sampleRate, channels: info.channels,
            duration: info.totalSamples.map { Double($0) / Double(info.sampleRate) } ?? 0,
            sampleFormat: .integer(holding: info.bitsPerSample))
    }

    @Test("native files: the iterator reads them, and what facts gives is what the stream decoder reads")
    func sameAsStreamDecoder() throws {
        let scratch = try ScratchDirectory()
        let cover = scratch.path("cover.png")
        try FLACMaterial.write([0x89, 0x50, 0x4e, 0x47] + [UInt8](repeating: 1, count: 5000), to: cover)
        let tags = ["--tag=ARTIST=One", "--tag=ARTIST=Two", "--tag=TITLE=Sóng", "--tag=TRACKNUMBER=3/9"]
        let shape = FLACMaterial.Shape(sampleRate: 48000, channels: 2, bits: 24, seconds: 0.5)
        var paths: [String] = []
        for (name, arguments) in [
            ("tagged", tags), ("bare", ["--no-padding"]), ("cover", ["--picture=3|image/png||1x1x24|\(cover)"] + tags),
            ("seektable", ["-S", "10x", "--padding=100000"] + tags),
        ] {
            let path = scratch.path(name + ".flac")
            try FLACMaterial.make(shape, at: path, flacArguments: arguments)
            paths.append(path)
        }
        // An ID3v2 tag before fLaC.
        let id3 = scratch.path("id3.flac")
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20)
        try FLACMaterial.write(tag + (try FLACMaterial.bytes(paths[0])), to: id3)
        paths.append(id3)
        for path in paths {
            let native = try #require(FLACStream.nativeMetadata(path: path), "\(path)")
            #expect(native.info.sampleRate == 48000 && native.info.bitsPerSample == 24)
            let facts = try FLACDecoder.facts(path: path)
            #expect(facts == (try Self.streamFacts(path)), "\(path)")
            #expect(facts.duration == 0.5 && facts.sampleFormat == .signed24)
        }
        let tagged = try FLACDecoder.facts(path: paths[0])
        #expect(tagged.tags[.artist] == ["One", "Two"])
        #expect(tagged.tags[.title] == ["Sóng"])
        #expect(try FLACDecoder.facts(path: paths[2]).tags == tagged.tags)
        #expect(try FLACDecoder.facts(path: paths[1]).tags == Tags())
    }

    @Test("Ogg FLAC and a block running past the end are left to the stream decoder, which reads the same")
    func fallsBack() throws {
        let scratch = try ScratchDirectory()
        let ogg = scratch.path("song.oga")
        var shape = FLACMaterial.Shape(sampleRate: 44100, channels: 1, bits: 16, seconds: 1)
        shape.ogg = true
        try FLACMaterial.make(shape, at: ogg, flacArguments: ["--tag=ARTIST=Ogg"])
        #expect(FLACStream.nativeMetadata(path: ogg) == nil)
        #expect(try FLACDecoder.facts(path: ogg).tags[.artist] == ["Ogg"])
        #expect(try FLACDecoder.facts(path: ogg) == (try Self.streamFacts(ogg)))
        let good = scratch.path("good.flac")
        shape.ogg = false
        try FLACMaterial.make(shape, at: good, flacArguments: ["--tag=ARTIST=Long"])
        let bytes = try FLACMaterial.bytes(good)
        let layout = FLACLayout(bytes)
        // The last block (the padding) claims 16 MB: nothing is read past it, the iterator reads the file.
        var longLast = bytes
        let padding = try #require(layout.blocks.last)
        #expect(padding.type == 1)
        longLast[padding.header + 1...padding.header + 3] = [0xff, 0xff, 0xff]
        let last = scratch.path("last.flac")
        try FLACMaterial.write(longLast, to: last)
        #expect(FLACStream.nativeMetadata(path: last) != nil)
        #expect(try FLACDecoder.facts(path: last) == (try Self.streamFacts(last)))
        #expect(try FLACDecoder.facts(path: last).tags[.artist] == ["Long"])
        // The seek table before the comments claims 16 MB: the iterator cannot go on; the stream decoder
        // reads STREAMINFO and stops there, and facts say what it read.
        var longTable = bytes
        let table = try #require(layout.first(3))
        longTable[table.header + 1...table.header + 3] = [0xff, 0xff, 0xff]
        let early = scratch.path("early.flac")
        try FLACMaterial.write(longTable, to: early)
        #expect(FLACStream.nativeMetadata(path: early) == nil)
        #expect(try FLACDecoder.facts(path: early) == (try Self.streamFacts(early)))
        #expect(try FLACDecoder.facts(path: early).duration == 1)
    }
}
