import FormatTestSupport
import Foundation
import Testing

@testable import Audio

/// What `flac -d` makes of a file cut short: the frames before the cut that are whole (it exits 1).
private func referenceOfCut(_ path: String) throws -> [UInt8] {
    let result = try run(
        "/usr/bin/flac", ["-s", "-d", "-c", "--force-raw-format", "--endian=little", "--sign=signed", path])
    return [UInt8](result.stdout)
}

@Suite("FLACStreamDecoder: FLAC bytes as they arrive")
struct StreamFLACDecoderTests {
    static let shapes: [FLACMaterial.Shape] = [
        FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 2),
        FLACMaterial.Shape(sampleRate: 96000, channels: 2, bits: 24, seconds: 1.5),
        FLACMaterial.Shape(sampleRate: 48000, channels: 1, bits: 16, seconds: 1.3),
        FLACMaterial.Shape(sampleRate: 44100, channels: 6, bits: 24, seconds: 0.7),
    ]

    @Test("decodes bit for bit as flac -d, in random chunks", arguments: Self.shapes)
    func matchesFlac(_ shape: FLACMaterial.Shape) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        try FLACMaterial.make(shape, at: path, flacArguments: ["--tag=TITLE=Stream test"])
        let reference = try FLACMaterial.reference(path)
        for seed in UInt64(1)...3 {
            let source = ChunkedSource([try bytesOfFile(path)], contentType: "audio/flac", seed: seed)
            let decoder = try StreamDecoders.open(source: source, sampleFormat: .signed16, replayGain: .off)
            #expect(decoder is FLACStreamDecoder)
            let decoded = drain(decoder, chunkFrames: 1000)
            #expect(decoded.error == nil)
            let format = try #require(decoder.format)
            #expect(format.sampleRate == shape.sampleRate)
            #expect(format.channels == shape.channels)
            #expect(format.sampleFormat == .integer(holding: shape.bits))
            expectSamePCM(FLACMaterial.packed(decoded.pcm, format.sampleFormat), reference, "seed \(seed)")
            #expect(decoder.position == shape.frames)
            #expect(decoder.tags.title == "Stream test")
            #expect(decoder.tagsVersion == 1)
            #expect(decoder.bitrate > 0)
        }
    }

    @Test("an ID3v2 tag before fLaC is passed over")
    func id3v2BeforeFLAC() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: path)
        // A 20,000-byte tag (syncsafe size 19,990: 0x4e16 → 1, 28, 22).
        let tag = Array("ID3".utf8) + [3, 0, 0, 0, 1, 28, 22] + [UInt8](repeating: 0, count: 19_990)
        let source = ChunkedSource([tag + (try bytesOfFile(path))], contentType: nil, seed: 12)
        let decoder = try StreamDecoders.open(source: source, sampleFormat: .signed16, replayGain: .off)
        #expect(decoder is FLACStreamDecoder)
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        expectSamePCM(decoded.pcm, try FLACMaterial.reference(path))
    }

    @Test("floats are sample / 2^(bits-1)")
    func floats() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        let shape = FLACMaterial.Shape(sampleRate: 48000, channels: 2, bits: 16, seconds: 1)
        try FLACMaterial.make(shape, at: path)
        let reference = try FLACMaterial.reference(path)
        let decoder = try FLACStreamDecoder(source: ChunkedSource([try bytesOfFile(path)]), sampleFormat: .float32)
        let decoded = drain(decoder, chunkFrames: 999)
        #expect(decoded.error == nil)
        #expect(decoder.format?.sampleFormat == .float32)
        let floats = decoded.pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let integers = reference.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(floats.count == integers.count)
        #expect(zip(floats, integers).allSatisfy { $0 == Float($1) / 32768 })
    }

    @Test("ReplayGain from the Vorbis comments as the file decoder applies it; none without them")
    func replayGain() throws {
        let scratch = try ScratchDirectory()
        let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1)
        let gained = scratch.path("gained.flac")
        let plain = scratch.path("plain.flac")
        try FLACMaterial.make(
            shape, at: gained,
            flacArguments: ["--tag=REPLAYGAIN_TRACK_GAIN=-6.50 dB", "--tag=REPLAYGAIN_TRACK_PEAK=0.9"])
        try FLACMaterial.make(shape, at: plain)
        let gain = ReplayGain(source: .track, preampDB: 1, missingPreampDB: -9)
        let file = try FLACDecoder(path: gained, replayGain: gain)
        var expected: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        while case let frames = try file.read(into: buffer), frames > 0 { expected += buffer[0..<frames * 4] }
        let streamed = drain(try FLACStreamDecoder(source: ChunkedSource([try bytesOfFile(gained)]), replayGain: gain))
        #expect(streamed.error == nil)
        expectSamePCM(streamed.pcm, expected)
        #expect(streamed.pcm != (try FLACMaterial.reference(gained)))
        // No gains stored: nothing applied (not the missing-gain preamp).
        let untouched = drain(try FLACStreamDecoder(source: ChunkedSource([try bytesOfFile(plain)]), replayGain: gain))
        expectSamePCM(untouched.pcm, try FLACMaterial.reference(plain))
    }

    @Test("a discontinuity mid-frame gives A's whole frames, then B", arguments: [0.31, 0.5, 0.77])
    func discontinuitySplicesNothing(_ fraction: Double) throws {
        let scratch = try ScratchDirectory()
        let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 2)
        let pathA = scratch.path("a.flac")
        let pathB = scratch.path("b.flac")
        try FLACMaterial.make(shape, at: pathA)
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: pathB)
        let bytesA = try bytesOfFile(pathA)
        let cut = Array(bytesA[..<Int(Double(bytesA.count) * fraction)])
        let cutPath = scratch.path("cut.flac")
        try Data(cut).write(to: URL(fileURLWithPath: cutPath))
        let wholeA = try referenceOfCut(cutPath)
        #expect(!wholeA.isEmpty)
        #expect(try FLACMaterial.reference(pathA).starts(with: wholeA))
        let expected = wholeA + (try FLACMaterial.reference(pathB))
        let source = ChunkedSource([cut, try bytesOfFile(pathB)], contentType: "audio/x-flac", seed: 4)
        let decoder = try FLACStreamDecoder(source: source)
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        expectSamePCM(decoded.pcm, expected)
        #expect(decoder.position * 4 == expected.count)
    }

    @Test("a connection that begins mid-way is decoded from its first whole frame")
    func connectionBeginningMidway() throws {
        let scratch = try ScratchDirectory()
        let shape = FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 2)
        let path = scratch.path("a.flac")
        try FLACMaterial.make(shape, at: path)
        let bytes = try bytesOfFile(path)
        let first = Array(bytes[..<(bytes.count / 3)])
        let tail = Array(bytes[(bytes.count / 2)...])
        let decoder = try FLACStreamDecoder(source: ChunkedSource([first, tail], seed: 8))
        let decoded = drain(decoder)
        #expect(decoded.error == nil)
        let reference = try FLACMaterial.reference(path)
        let firstPath = scratch.path("first.flac")
        try Data(first).write(to: URL(fileURLWithPath: firstPath))
        let head = try referenceOfCut(firstPath)
        // A's whole frames, then the frames that the tail holds whole: the reference's last frames.
        #expect(decoded.pcm.starts(with: head))
        let rest = Array(decoded.pcm[head.count...])
        #expect(!rest.isEmpty)
        #expect(reference.suffix(rest.count).elementsEqual(rest))
    }

    @Test("a discontinuity to a stream of another format ends it, naming both formats")
    func formatChangeThrows() throws {
        let scratch = try ScratchDirectory()
        let pathA = scratch.path("a.flac")
        let pathB = scratch.path("b.flac")
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: pathA)
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 96000, channels: 2, bits: 24, seconds: 1), at: pathB)
        let source = ChunkedSource([try bytesOfFile(pathA), try bytesOfFile(pathB)], seed: 6)
        let decoded = drain(try FLACStreamDecoder(source: source))
        let error = try #require(decoded.error)
        #expect(error.path == source.url)
        #expect(error.description.contains("the stream changed its format from 44100:16:2 to 96000:24:2"))
        expectSamePCM(decoded.pcm, try FLACMaterial.reference(pathA))
    }

    @Test("empty, truncated and garbage streams are refused or end cleanly")
    func badStreams() throws {
        let empty = try FLACStreamDecoder(source: ChunkedSource([]))
        let emptyRefused = #expect(throws: DecoderError.self) { try prepareFully(empty) }
        #expect(emptyRefused?.description.contains("it ended before any audio") == true)
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: path)
        let bytes = try bytesOfFile(path)
        // Cut in the metadata.
        let inMetadata = try FLACStreamDecoder(source: ChunkedSource([Array(bytes[..<30])]))
        let metadataRefused = #expect(throws: DecoderError.self) { try prepareFully(inMetadata) }
        #expect(metadataRefused?.description.contains("it ended in its metadata") == true)
        // Cut in the audio: whole frames, then the end.
        let cut = Array(bytes[..<(bytes.count * 2 / 3)])
        let cutPath = scratch.path("cut.flac")
        try Data(cut).write(to: URL(fileURLWithPath: cutPath))
        let truncated = drain(try FLACStreamDecoder(source: ChunkedSource([cut], seed: 3)))
        #expect(truncated.error == nil)
        expectSamePCM(truncated.pcm, try referenceOfCut(cutPath))
        // Not FLAC at all.
        let html = Array("<html><body>gone</body></html>".utf8)
        let htmlRefused = #expect(throws: DecoderError.self) {
            try prepareFully(FLACStreamDecoder(source: ChunkedSource([html])))
        }
        #expect(htmlRefused?.description.contains("it does not begin with fLaC") == true)
        // fLaC, then garbage: refused, or ends; never a crash.
        var generator = SplitMix64(state: 99)
        let garbage = Array("fLaC".utf8) + (0..<1 << 20).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let noise = drain(try FLACStreamDecoder(source: ChunkedSource([garbage], seed: 5)))
        #expect(noise.error != nil || noise.pcm.isEmpty)
        // Good metadata, then garbage instead of frames.
        let metadataEnd = bytes.count - (bytes.count * 9 / 10)
        let bad = Array(bytes[..<metadataEnd]) + (0..<1 << 20).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let broken = drain(try FLACStreamDecoder(source: ChunkedSource([bad], seed: 6)))
        if let error = broken.error { #expect(error.path == "http://127.0.0.1:1/stream") }
    }

    @Test("frames longer than STREAMINFO allows end the stream with a reason, never a hang or a crash")
    func framesBeyondStreamInfo() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: path)
        var bytes = try bytesOfFile(path)
        // STREAMINFO (after fLaC and its block header) claims blocks of 16 samples and no frame size.
        bytes.replaceSubrange(8..<18, with: [0, 16, 0, 16, 0, 0, 0, 0, 0, 0])
        let decoded = drain(try FLACStreamDecoder(source: ChunkedSource([bytes], seed: 1)))
        let error = try #require(decoded.error)
        #expect(error.description.contains("no whole frame in"))
        #expect(try FLACMaterial.reference(path).starts(with: decoded.pcm))
    }

    @Test("waiting never throws, and a frame is decoded only once it has arrived whole")
    func waitingNeverThrows() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("a.flac")
        try FLACMaterial.make(FLACMaterial.Shape(sampleRate: 44100, channels: 2, bits: 16, seconds: 1), at: path)
        let bytes = try bytesOfFile(path)
        let quiet = ChunkedSource([Array(bytes[..<(bytes.count / 2)])], seed: 2, waitsAtEnd: true)
        let decoder = try FLACStreamDecoder(source: quiet)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)
        defer { buffer.deallocate() }
        var pcm: [UInt8] = []
        for _ in 0..<20_000 {
            guard try decoder.prepare() else { continue }
            if case .frames(let count) = try decoder.read(into: buffer) { pcm += buffer[0..<count * 4] }
        }
        #expect(try decoder.read(into: buffer) == .waiting)
        #expect(!pcm.isEmpty)
        #expect(try FLACMaterial.reference(path).starts(with: pcm))
    }
}
