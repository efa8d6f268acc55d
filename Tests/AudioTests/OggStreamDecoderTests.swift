import Foundation
import MusicTags
import Testing

@testable import Audio

/// A network stream played from memory: bytes handed over in the pieces given, with `.waiting`
/// (nothing has arrived) and `.discontinuity` (a new connection) where the script says, then `.end`.
final class ScriptedStreamSource: StreamByteSource, @unchecked Sendable {
    enum Event {
        case bytes([UInt8])
        case waiting
        case discontinuity
    }

    let url = "http://127.0.0.1:8000/stream.ogg"
    let contentType: String? = "audio/ogg"
    var failure: String? { nil }
    private var events: [Event]
    private var index = 0
    private var offset = 0
    /// How many times `read` was called, and how many bytes it handed over.
    private(set) var reads = 0
    private(set) var delivered = 0

    init(_ events: [Event]) {
        self.events = events
    }

    /// `bytes` in pieces of random sizes (1 to `largest` bytes), a `.waiting` after about half of
    /// them: as a slow connection hands them over.
    static func pieces(_ bytes: [UInt8], seed: UInt64, largest: Int = 6000) -> [Event] {
        var generator = SplitMix64(state: seed)
        var events: [Event] = []
        var start = 0
        while start < bytes.count {
            let size = Int.random(in: 1...largest, using: &generator)
            let end = min(bytes.count, start + size)
            events.append(.bytes(Array(bytes[start..<end])))
            if Bool.random(using: &generator) { events.append(.waiting) }
            start = end
        }
        return events
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        self.reads += 1
        while self.index < self.events.count {
            switch self.events[self.index] {
            case .waiting:
                self.index += 1
                return .waiting
            case .discontinuity:
                self.index += 1
                return .discontinuity
            case .bytes(let bytes):
                guard self.offset < bytes.count else {
                    self.index += 1
                    self.offset = 0
                    continue
                }
                let count = min(buffer.count, bytes.count - self.offset)
                guard count > 0 else { return .waiting }
                bytes.withUnsafeBytes { all in
                    buffer.baseAddress!.copyMemory(from: all.baseAddress! + self.offset, byteCount: count)
                }
                self.offset += count
                self.delivered += count
                return .bytes(count)
            }
        }
        return .end
    }

    func peek(count: Int) -> [UInt8] {
        guard self.index < self.events.count, case .bytes(let bytes) = self.events[self.index] else { return [] }
        return Array(bytes[self.offset..<min(bytes.count, self.offset + count)])
    }
}

/// What decoding a scripted stream gave: the PCM, the error that ended it (if any), each tags version
/// seen with its tags, and how often the decoder said it was waiting.
struct StreamOutcome {
    var pcm: [UInt8] = []
    var error: DecoderError?
    var tags: [(version: Int, tags: Tags)] = []
    var waits = 0
    var format: AudioFormat?
    var position = 0
    var bitrate = 0
}

/// Decodes `source` with an `OggStreamDecoder` to its end (or error), in reads of the sizes given in
/// turn, asking again whenever it waits, as the audio thread would.
func streamDecode(
    _ source: ScriptedStreamSource, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off,
    chunks: [Int] = [1024, 77, 4096, 333]
) throws -> StreamOutcome {
    var outcome = StreamOutcome()
    let decoder = try OggStreamDecoder(source: source, sampleFormat: sampleFormat, replayGain: replayGain)
    #expect(decoder.format == nil)
    func noteTags() {
        if outcome.tags.last?.version != decoder.tagsVersion, decoder.tagsVersion > 0 {
            outcome.tags.append((decoder.tagsVersion, decoder.tags))
        }
    }
    // Bounded: a decoder that spins without progress fails the test instead of hanging it.
    var steps = 0
    let stepLimit = 2_000_000
    do {
        while try !decoder.prepare() {
            outcome.waits += 1
            steps += 1
            guard steps < stepLimit else {
                Issue.record("prepare() never finished")
                return outcome
            }
        }
    } catch {
        outcome.error = error
        return outcome
    }
    outcome.format = decoder.format
    guard let format = decoder.format else {
        Issue.record("prepare() returned true without a format")
        return outcome
    }
    noteTags()
    let bytesPerFrame = format.bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: (chunks.max() ?? 1) * bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var turn = 0
    reading: while steps < stepLimit {
        steps += 1
        let size = chunks[turn % chunks.count]
        turn += 1
        do {
            switch try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size * bytesPerFrame])) {
            case .frames(let frames):
                #expect(frames > 0 && frames <= size)
                outcome.pcm += buffer[0..<frames * bytesPerFrame]
                noteTags()
            case .waiting:
                outcome.waits += 1
            case .ended:
                break reading
            }
        } catch {
            outcome.error = error
            break
        }
    }
    #expect(steps < stepLimit, "read() never ended")
    #expect(decoder.format == format, "the format stays")
    outcome.position = decoder.position
    outcome.bitrate = decoder.bitrate
    return outcome
}

/// An Ogg Vorbis file of noise under two tones (sox's source for the Opus tests, which fills every
/// band: pages come several a second), encoded by oggenc with `comments` and `serial`.
func noisyVorbis(
    _ scratch: ScratchDirectory, _ name: String, rate: Int = 48000, seconds: Double, serial: Int,
    comments: [String] = []
) throws -> String {
    let wav = try OpusMaterial.source(scratch, name + ".wav", rate: rate, channels: 2, seconds: seconds)
    let path = scratch.path(name)
    let oggenc = try run(
        "/usr/bin/oggenc", ["-Q", "-q", "3", "-s", "\(serial)", "-o", path] + comments.flatMap { ["-c", $0] } + [wav])
    try #require(oggenc.status == 0, "oggenc: \(oggenc.stderr)")
    return path
}

/// Where the page holding byte `at` of an Ogg stream starts and ends (a cut inside a page).
func pageSpan(_ bytes: [UInt8], containing at: Int) -> Range<Int> {
    var offset = 0
    for page in OggPage.pages(bytes) {
        let size = page.bytes.count
        if at < offset + size { return offset..<offset + size }
        offset += size
    }
    return offset..<offset
}

@Suite("OggStreamDecoder: Ogg Vorbis and Opus radio streams decoded as they arrive")
struct OggStreamDecoderTests {
    @Test(
        "Vorbis decodes bit for bit what oggdec writes, whatever pieces the bytes arrive in",
        arguments: [
            VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 3, quality: "5"),
            VorbisMaterial(sampleRate: 48000, channels: 2, seconds: 2, quality: "3"),
            VorbisMaterial(sampleRate: 44100, channels: 1, seconds: 2, quality: "4"),
            VorbisMaterial(sampleRate: 48000, channels: 1, seconds: 2, quality: "-1"),
        ])
    func vorbisMatchesOggdec(_ material: VorbisMaterial) throws {
        let scratch = try ScratchDirectory()
        let path = try material.make(in: scratch, comments: ["TITLE=Stream", "ARTIST=Someone"])
        let reference = try oggdecPCM(path)
        let bytes = try bytesOfFile(path)
        for seed: UInt64 in [1, 2] {
            let source = ScriptedStreamSource(ScriptedStreamSource.pieces(bytes, seed: seed))
            let outcome = try streamDecode(source)
            #expect(outcome.error == nil)
            #expect(source.delivered == bytes.count)
            #expect(
                outcome.format
                    == AudioFormat(
                        sampleRate: material.sampleRate, channels: material.channels, sampleFormat: .signed16))
            expectSamePCM(outcome.pcm, reference, "seed \(seed)")
            #expect(outcome.position == reference.count / (2 * material.channels))
            #expect(outcome.bitrate > 0)
            #expect(outcome.tags.count == 1)
            #expect(outcome.tags.first?.tags[.title] == ["Stream"])
            #expect(outcome.tags.first?.tags[.artist] == ["Someone"])
        }
    }

    @Test("Vorbis floats are libvorbis's own, as VorbisDecoder gives them")
    func vorbisFloats() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 2, quality: "5").make(in: scratch)
        let reference = try vorbisDecodeAll(try VorbisDecoder(path: path, sampleFormat: .float32))
        let source = ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(path), seed: 3))
        let outcome = try streamDecode(source, sampleFormat: .float32)
        #expect(outcome.format == AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .float32))
        expectSamePCM(outcome.pcm, reference)
    }

    @Test(
        "Opus decodes bit for bit what opusdec --rate 48000 --no-dither writes",
        arguments: [(48000, 2, 96), (44100, 1, 64), (44100, 2, 32)])
    func opusMatchesOpusdec(_ rate: Int, _ channels: Int, _ bitrate: Int) throws {
        let scratch = try ScratchDirectory()
        let wav = try OpusMaterial.source(scratch, "src.wav", rate: rate, channels: channels, seconds: 2.5)
        let path = try OpusMaterial.encode(
            scratch, wav, "a.opus", ["--bitrate", "\(bitrate)", "--title", "Opus song"])
        let reference = try OpusMaterial.reference(path)
        let source = ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(path), seed: 4))
        let outcome = try streamDecode(source)
        #expect(outcome.error == nil)
        #expect(outcome.format == AudioFormat(sampleRate: 48000, channels: channels, sampleFormat: .signed16))
        expectSamePCM(outcome.pcm, reference)
        if rate == 48000 {
            // Pre-skip and end trimming: exactly the source's frames.
            #expect(outcome.pcm.count == 120_000 * 2 * channels)
        }
        #expect(outcome.tags.first?.tags[.title] == ["Opus song"])
        #expect(outcome.bitrate > 0)
    }

    @Test("Opus floats are those OpusDecoder gives")
    func opusFloats() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 2)
        let reference = try decodeRest(try OpusDecoder(path: path, sampleFormat: .float32), chunks: [4096])
        let source = ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(path), seed: 5))
        let outcome = try streamDecode(source, sampleFormat: .float32)
        #expect(outcome.format == AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .float32))
        expectSamePCM(outcome.pcm, reference)
    }

    @Test("the OpusHead's output gain is applied, as opusdec applies it")
    func opusOutputGain() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 1)
        var pages = OggPage.pages(try bytesOfFile(path))
        // -6 dB in Q7.8.
        pages[0].body[16] = UInt8(truncatingIfNeeded: -1536)
        pages[0].body[17] = UInt8(truncatingIfNeeded: -1536 >> 8)
        let gained = scratch.path("gained.opus")
        try Data(pages.flatMap(\.bytes)).write(to: URL(fileURLWithPath: gained))
        let reference = try OpusMaterial.reference(gained)
        let plain = try OpusMaterial.reference(path)
        #expect(reference != plain)
        let outcome = try streamDecode(
            ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(gained), seed: 6)))
        expectSamePCM(outcome.pcm, reference)
    }

    @Test("a surround Opus stream keeps its channels, as opusdec writes them")
    func opusSurround() throws {
        let scratch = try ScratchDirectory()
        let wav = scratch.path("six.wav")
        let sox = try run(
            "/usr/bin/sox",
            [
                "-n", "-r", "48000", "-c", "6", "-b", "16", wav, "synth", "1.5", "sine", "300", "sine", "500", "vol",
                "0.4",
            ])
        try #require(sox.status == 0, "sox: \(sox.stderr)")
        let path = try OpusMaterial.encode(scratch, wav, "six.opus")
        let reference = try OpusMaterial.reference(path)
        let outcome = try streamDecode(
            ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(path), seed: 7)))
        #expect(outcome.format == AudioFormat(sampleRate: 48000, channels: 6, sampleFormat: .signed16))
        expectSamePCM(outcome.pcm, reference)
    }

    @Test("a chained Vorbis stream plays both links; the tags change once, to the second link's")
    func vorbisChain() throws {
        let scratch = try ScratchDirectory()
        let material = VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1.5, quality: "4")
        let first = try material.make(in: scratch, name: "a.ogg", comments: ["TITLE=First", "ARTIST=A"], serial: 11)
        let second = try material.make(in: scratch, name: "b.ogg", comments: ["TITLE=Second", "ARTIST=B"], serial: 22)
        let expected = try oggdecPCM(first) + oggdecPCM(second)
        let chain = try bytesOfFile(first) + bytesOfFile(second)
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(chain, seed: 8)))
        #expect(outcome.error == nil)
        expectSamePCM(outcome.pcm, expected)
        #expect(outcome.tags.map(\.version) == [1, 2])
        #expect(outcome.tags.map { $0.tags[.title] } == [["First"], ["Second"]])
        #expect(outcome.tags.last?.tags[.artist] == ["B"])
    }

    @Test("a chained Opus stream plays both links, each with its pre-skip and end; the tags change once")
    func opusChain() throws {
        let scratch = try ScratchDirectory()
        let wav = try OpusMaterial.source(scratch, "src.wav", rate: 48000, channels: 2, seconds: 1.2)
        let first = try OpusMaterial.encode(scratch, wav, "a.opus", ["--title", "One", "--serial", "5"])
        let second = try OpusMaterial.encode(
            scratch, wav, "b.opus", ["--title", "Two", "--serial", "6", "--bitrate", "48"])
        let expected = try OpusMaterial.reference(first) + OpusMaterial.reference(second)
        let chain = try bytesOfFile(first) + bytesOfFile(second)
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(chain, seed: 9)))
        #expect(outcome.error == nil)
        expectSamePCM(outcome.pcm, expected)
        #expect(outcome.pcm.count == 2 * 57_600 * 4)
        #expect(outcome.tags.map { $0.tags[.title] } == [["One"], ["Two"]])
    }

    @Test("a new link without an end to the last (an Icecast source that reconnected) replaces it")
    func linkWithoutEnd() throws {
        let scratch = try ScratchDirectory()
        let first = try noisyVorbis(scratch, "a.ogg", seconds: 1, serial: 31, comments: ["TITLE=Cut"])
        let second = try noisyVorbis(scratch, "b.ogg", seconds: 1, serial: 32, comments: ["TITLE=Next"])
        var pages = OggPage.pages(try bytesOfFile(first))
        try #require(pages[pages.count - 1].headerType & 4 != 0)
        pages[pages.count - 1].headerType &= ~4
        let stream = pages.flatMap(\.bytes) + (try bytesOfFile(second))
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(stream, seed: 22)))
        #expect(outcome.error == nil)
        let firstPCM = try oggdecPCM(first)
        let secondPCM = try oggdecPCM(second)
        // Without its end page the first link's last block is not trimmed: a little more of it plays.
        let extra = outcome.pcm.count - firstPCM.count - secondPCM.count
        try #require(extra >= 0 && extra <= 2048 * 4, "\(extra) bytes more")
        expectSamePCM(Array(outcome.pcm[..<firstPCM.count]), firstPCM)
        expectSamePCM(Array(outcome.pcm[(firstPCM.count + extra)...]), secondPCM)
        #expect(outcome.tags.map { $0.tags[.title] } == [["Cut"], ["Next"]])
    }

    @Test("a link of another format ends the stream with an error naming both, after the first link's frames")
    func formatChange() throws {
        let scratch = try ScratchDirectory()
        let first = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "3")
            .make(in: scratch, name: "a.ogg", serial: 1)
        let second = try VorbisMaterial(sampleRate: 48000, channels: 2, seconds: 1, quality: "3")
            .make(in: scratch, name: "b.ogg", serial: 2)
        let chain = try bytesOfFile(first) + bytesOfFile(second)
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(chain, seed: 10)))
        expectSamePCM(outcome.pcm, try oggdecPCM(first))
        let error = try #require(outcome.error)
        #expect(error.path == "http://127.0.0.1:8000/stream.ogg")
        #expect(error.description.contains("the stream changed its format from 44100:16:2 to 48000:16:2"))
    }

    @Test(
        "a discontinuity mid-page drops what was held; the new connection's stream decodes exactly",
        arguments: ["vorbis", "opus"])
    func discontinuity(_ codec: String) throws {
        let scratch = try ScratchDirectory()
        let first: String
        let second: String
        let reference: (String) throws -> [UInt8]
        if codec == "vorbis" {
            first = try noisyVorbis(scratch, "a.ogg", seconds: 2, serial: 3, comments: ["TITLE=Before"])
            second = try noisyVorbis(scratch, "b.ogg", seconds: 2, serial: 4, comments: ["TITLE=After"])
            reference = oggdecPCM
        } else {
            let wav = try OpusMaterial.source(scratch, "src.wav", rate: 48000, channels: 2, seconds: 2)
            // Pages of 100 ms at most, as a radio's encoder makes them (opusenc's default is a second).
            first = try OpusMaterial.encode(scratch, wav, "a.opus", ["--title", "Before", "--max-delay", "100"])
            second = try OpusMaterial.encode(
                scratch, wav, "b.opus", ["--title", "After", "--bitrate", "40", "--max-delay", "100"])
            reference = { try OpusMaterial.reference($0) }
        }
        let firstBytes = try bytesOfFile(first)
        let secondBytes = try bytesOfFile(second)
        let firstPCM = try reference(first)
        let secondPCM = try reference(second)
        // The cut falls inside a page, well after the headers.
        let span = pageSpan(firstBytes, containing: firstBytes.count / 2)
        #expect(span.count > 10)
        let cut = span.lowerBound + span.count / 2
        // Then a new connection, whose server sends a piece from the middle of a page (no link's
        // start: passed over) before the new stream's headers.
        let stray = Array(firstBytes[(cut + 100)..<(cut + 3000)])
        let events =
            ScriptedStreamSource.pieces(Array(firstBytes[..<cut]), seed: 11) + [.discontinuity]
            + ScriptedStreamSource.pieces(stray + secondBytes, seed: 12)
        let outcome = try streamDecode(ScriptedStreamSource(events))
        #expect(outcome.error == nil)
        let tail = outcome.pcm.count - secondPCM.count
        try #require(tail > 0, "\(outcome.pcm.count) bytes decoded")
        try #require(tail <= firstPCM.count, "\(outcome.pcm.count) bytes decoded")
        expectSamePCM(Array(outcome.pcm[tail...]), secondPCM, "after the discontinuity")
        expectSamePCM(Array(outcome.pcm[..<tail]), Array(firstPCM[..<tail]), "before it")
        // What came before is most of the pages before the cut.
        #expect(tail > firstPCM.count / 3)
        #expect(outcome.tags.map { $0.tags[.title] } == [["Before"], ["After"]])
    }

    @Test(
        "joined mid-stream as Icecast joins a listener (the headers, then the current pages), Vorbis is the whole decode's tail"
    )
    func vorbisJoinedMidStream() throws {
        let scratch = try ScratchDirectory()
        let path = try noisyVorbis(scratch, "live.ogg", seconds: 3, serial: 7, comments: ["TITLE=Live"])
        let reference = try oggdecPCM(path)
        let pages = OggPage.pages(try bytesOfFile(path))
        // The headers' pages have granule position 0; audio pages follow.
        let headers = pages.prefix { $0.granule == 0 }
        try #require(headers.count >= 2 && pages.count > headers.count + 6)
        let join = headers.count + (pages.count - headers.count) / 2
        let joined = headers.flatMap(\.bytes) + pages[join...].flatMap(\.bytes)
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(joined, seed: 20)))
        #expect(outcome.error == nil)
        #expect(outcome.tags.first?.tags[.title] == ["Live"])
        try #require(outcome.pcm.count > reference.count / 4 && outcome.pcm.count < reference.count * 3 / 4)
        expectSamePCM(outcome.pcm, Array(reference[(reference.count - outcome.pcm.count)...]))
    }

    @Test("joined mid-stream, Opus drops its pre-skip from the first pages it gets and ends where the stream ends")
    func opusJoinedMidStream() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 3, ["--max-delay", "100"])
        let frames = try OpusMaterial.reference(path).count / 4
        #expect(frames == 144_000)
        let pages = OggPage.pages(try bytesOfFile(path))
        let headers = pages.prefix { $0.granule == 0 }
        try #require(headers.count == 2 && pages.count > 12)
        let join = pages.count / 2
        let preSkip = Int(pages[0].body[10]) | Int(pages[0].body[11]) << 8
        let joined = headers.flatMap(\.bytes) + pages[join...].flatMap(\.bytes)
        let outcome = try streamDecode(ScriptedStreamSource(ScriptedStreamSource.pieces(joined, seed: 21)))
        #expect(outcome.error == nil)
        // The samples from the end of the page before the join to the end, less the pre-skip.
        let expected = frames + preSkip - Int(pages[join - 1].granule) - preSkip
        #expect(outcome.pcm.count == expected * 4)
        #expect(outcome.position == expected)
    }

    @Test("a stream cut short mid-page ends cleanly, with every whole page before the cut decoded")
    func truncated() throws {
        let scratch = try ScratchDirectory()
        let vorbis = try noisyVorbis(scratch, "cut.ogg", rate: 44100, seconds: 2, serial: 1)
        let opus = try OpusMaterial.stereo48(scratch, seconds: 2, ["--max-delay", "100"])
        for (path, reference) in [(vorbis, try oggdecPCM(vorbis)), (opus, try OpusMaterial.reference(opus))] {
            let bytes = try bytesOfFile(path)
            let cut = bytes.count * 2 / 3 + 17
            let outcome = try streamDecode(
                ScriptedStreamSource(ScriptedStreamSource.pieces(Array(bytes[..<cut]), seed: 13)))
            #expect(outcome.error == nil)
            #expect(outcome.pcm.count > reference.count / 2)
            #expect(outcome.pcm.count < reference.count)
            expectSamePCM(outcome.pcm, Array(reference[..<outcome.pcm.count]), "\(path)")
        }
    }

    @Test("cut short within its headers, a stream is refused with a reason naming the URL")
    func cutInHeaders() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "3").make(in: scratch)
        let bytes = try bytesOfFile(path)
        let outcome = try streamDecode(ScriptedStreamSource([.bytes(Array(bytes[..<200])), .waiting]))
        let error = try #require(outcome.error)
        #expect(error.path == "http://127.0.0.1:8000/stream.ogg")
        #expect(error.description.contains("ended before its headers"))
    }

    @Test("garbage is refused without reading it all, or ends cleanly; damaged streams never crash")
    func garbage() throws {
        var generator = SplitMix64(state: 14)
        // A megabyte of noise: given up after the first 256 KiB.
        let noise = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let source = ScriptedStreamSource(ScriptedStreamSource.pieces(noise, seed: 15, largest: 20000))
        let outcome = try streamDecode(source)
        let error = try #require(outcome.error)
        #expect(error.description.contains("no Ogg Vorbis or Opus stream begins in its first 256 KiB"))
        #expect(source.delivered < 300 * 1024)
        // A little noise, then the end.
        let short = try streamDecode(ScriptedStreamSource([.bytes(Array(noise[..<5000]))]))
        #expect(short.error != nil)
        #expect(short.pcm.isEmpty)
        // Another codec's first page (Ogg FLAC): not taken for Vorbis or Opus.
        let flac = OggPage(
            headerType: 2, granule: 0, serial: 9, sequence: 0, lacing: [51],
            body: [0x7f] + Array("FLAC".utf8) + [1, 0, 0, 1] + Array("fLaC".utf8) + [UInt8](repeating: 0, count: 38))
        let other = try streamDecode(ScriptedStreamSource([.bytes(flac.bytes)]))
        #expect(other.error?.description.contains("Ogg FLAC: playerd decodes Ogg Vorbis and Opus streams") == true)
        // Refused as soon as the link's first pages are in, not after 256 KiB of them.
        let more = OggPage(
            headerType: 0, granule: 0, serial: 9, sequence: 1, lacing: [255, 255, 10], body: Array(noise[..<520]))
        let flacSource = ScriptedStreamSource(
            [.bytes(flac.bytes)] + Array(repeating: .bytes(more.bytes), count: 100))
        let refused = try streamDecode(flacSource)
        #expect(
            refused.error
                == .unsupported(
                    path: flacSource.url, reason: "Ogg FLAC: playerd decodes Ogg Vorbis and Opus streams"))
        #expect(flacSource.delivered < 10_000)

        // A Vorbis link's first page, then pages of another stream for ever: its headers never come.
        let scratch = try ScratchDirectory()
        let vorbis = try bytesOfFile(
            try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "3").make(in: scratch))
        let firstPage = try #require(OggPage.pages(vorbis).first)
        let filler = OggPage(
            headerType: 0, granule: 0, serial: firstPage.serial &+ 1, sequence: 1,
            lacing: [UInt8](repeating: 255, count: 255), body: Array(noise[..<(255 * 255)]))
        let headless = ScriptedStreamSource(
            [.bytes(firstPage.bytes)] + Array(repeating: .bytes(filler.bytes), count: 300))
        let starved = try streamDecode(headless)
        #expect(starved.error?.description.contains("no whole headers in 16 MiB") == true)
        #expect(headless.delivered < 17 << 20)

        // Damaged bytes in real streams: every outcome is an end or an error, never a crash or a hang.
        let opus = try bytesOfFile(try OpusMaterial.stereo48(scratch, seconds: 1))
        for (index, original) in [vorbis, opus, vorbis, opus, vorbis, opus].enumerated() {
            var bytes = original
            for _ in 0..<(20 + index * 30) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[at] = UInt8.random(in: 0...255, using: &generator)
            }
            let damaged = try streamDecode(
                ScriptedStreamSource(ScriptedStreamSource.pieces(bytes, seed: UInt64(16 + index))))
            #expect(damaged.pcm.count <= original.count * 64)
        }
    }

    @Test("with nothing arrived the decoder waits, and starts when the bytes come")
    func waiting() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 1)
        let events: [ScriptedStreamSource.Event] =
            Array(repeating: .waiting, count: 5) + ScriptedStreamSource.pieces(try bytesOfFile(path), seed: 17)
        let source = ScriptedStreamSource(events)
        let decoder = try OggStreamDecoder(source: source, sampleFormat: .signed16, replayGain: .off)
        for _ in 0..<5 { #expect(try decoder.prepare() == false) }
        let outcome = try streamDecode(source)
        expectSamePCM(outcome.pcm, try OpusMaterial.reference(path))
    }

    @Test("ReplayGain stored in the comments is applied as VorbisDecoder applies it; none stored, none applied")
    func replayGain() throws {
        let scratch = try ScratchDirectory()
        let material = VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "4")
        let gained = try material.make(
            in: scratch, name: "g.ogg", comments: ["REPLAYGAIN_TRACK_GAIN=-6.5 dB", "REPLAYGAIN_TRACK_PEAK=0.6"])
        let choice = ReplayGain(source: .track, missingPreampDB: -10)
        let reference = try vorbisDecodeAll(try VorbisDecoder(path: gained, replayGain: choice))
        let outcome = try streamDecode(
            ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(gained), seed: 18)), replayGain: choice)
        expectSamePCM(outcome.pcm, reference)
        #expect(outcome.pcm != (try oggdecPCM(gained)))
        let plain = try material.make(in: scratch, name: "p.ogg")
        let untouched = try streamDecode(
            ScriptedStreamSource(ScriptedStreamSource.pieces(try bytesOfFile(plain), seed: 19)), replayGain: choice)
        expectSamePCM(untouched.pcm, try oggdecPCM(plain))
    }

    @Test("16-bit Vorbis samples are rounded as libvorbis's vorbis_ftoi rounds them")
    func vorbisRounding() {
        #expect(OggStreamDecoder.vorbisSample(0) == 0)
        #expect(OggStreamDecoder.vorbisSample(1) == 32767)
        #expect(OggStreamDecoder.vorbisSample(-1) == -32768)
        #expect(OggStreamDecoder.vorbisSample(3) == 32767)
        #expect(OggStreamDecoder.vorbisSample(-3) == -32768)
        #expect(OggStreamDecoder.vorbisSample(100 / 32768) == 100)
        #if arch(x86_64)
            // cvtsd2si: ties to even.
            #expect(OggStreamDecoder.vorbisSample(2.5 / 32768) == 2)
            #expect(OggStreamDecoder.vorbisSample(-2.5 / 32768) == -2)
            #expect(OggStreamDecoder.vorbisSample(3.5 / 32768) == 4)
            #expect(OggStreamDecoder.vorbisSample(.nan) == -32768)
        #else
            #expect(OggStreamDecoder.vorbisSample(2.5 / 32768) == 3)
            #expect(OggStreamDecoder.vorbisSample(-2.5 / 32768) == -2)
        #endif
        #expect(OggStreamDecoder.opusSample(2.5 / 32768) == 2)
        #expect(OggStreamDecoder.opusSample(1) == 32767)
        #expect(OggStreamDecoder.opusSample(-2) == -32768)
    }
}
