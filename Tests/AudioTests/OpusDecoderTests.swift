import COpusFile
import Foundation
import MusicTags
import Testing

@testable import Audio

/// Opus material made at test time: sox makes the source, opusenc the file, opusdec the reference PCM.
enum OpusMaterial {
    static let sox = "/usr/bin/sox"
    static let opusenc = "/usr/bin/opusenc"
    static let opusdec = "/usr/bin/opusdec"

    /// A source of `seconds` at `rate` with `channels`: two tones (stereo: one a side) under pink noise,
    /// so every band of the codec has work.
    static func source(
        _ scratch: ScratchDirectory, _ name: String, rate: Int, channels: Int, seconds: Double
    ) throws -> String {
        let path = scratch.path(name)
        var arguments = ["-R", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path, "synth", "\(seconds)"]
        arguments += channels == 1 ? ["sine", "440"] : ["sine", "440", "sine", "660"]
        arguments += ["vol", "0.5"]
        try check(run(Self.sox, arguments))
        let noisy = scratch.path("noisy-" + name)
        try check(
            run(
                Self.sox,
                [
                    "-R", "-m", path,
                    "|sox -R -n -r \(rate) -c \(channels) -b 16 -p synth \(seconds) pinknoise vol 0.2",
                    noisy,
                ]))
        return noisy
    }

    /// Encodes `wav` with opusenc and extra arguments; returns the file's path.
    static func encode(
        _ scratch: ScratchDirectory, _ wav: String, _ name: String, _ arguments: [String] = []
    ) throws -> String {
        let path = scratch.path(name)
        try check(run(Self.opusenc, ["--quiet"] + arguments + [wav, path]))
        return path
    }

    /// A stereo 48 kHz file of `seconds` made from a source of exactly `seconds × 48000` frames.
    static func stereo48(_ scratch: ScratchDirectory, seconds: Double = 3, _ arguments: [String] = []) throws
        -> String
    {
        let wav = try source(scratch, "s48.wav", rate: 48000, channels: 2, seconds: seconds)
        return try encode(scratch, wav, "s48-\(UUID().uuidString).opus", arguments)
    }

    /// `opusdec --rate 48000 --no-dither` of `path`: raw signed 16-bit little-endian (or `--float`).
    static func reference(_ path: String, float: Bool = false) throws -> [UInt8] {
        let out = path + (float ? ".f32" : ".raw")
        var arguments = ["--quiet", "--rate", "48000", "--no-dither"]
        if float { arguments.append("--float") }
        try check(run(Self.opusdec, arguments + [path, out]))
        defer { try? FileManager.default.removeItem(atPath: out) }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    static func check(_ result: ProcessResult) throws {
        if result.status != 0 {
            throw MaterialError(message: result.stderr)
        }
    }

    struct MaterialError: Error, CustomStringConvertible {
        let message: String
        var description: String { self.message }
    }
}

/// Decodes the rest of a song with any decoder, in reads of `chunkFrames` (or of the sizes given in
/// turn).
func decodeRest(_ decoder: any AudioDecoder, chunks: [Int] = [1000]) throws -> [UInt8] {
    var pcm: [UInt8] = []
    let bytesPerFrame = decoder.format.bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: (chunks.max() ?? 1) * bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var turn = 0
    while true {
        let size = chunks[turn % chunks.count]
        turn += 1
        let frames = try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size * bytesPerFrame]))
        #expect(frames <= size)
        if frames == 0 { break }
        pcm += buffer[0..<frames * bytesPerFrame]
    }
    return pcm
}

/// Ogg pages, parsed and written again, to make hostile files from good ones.
struct OggPage {
    var headerType: UInt8
    var granule: UInt64
    var serial: UInt32
    var sequence: UInt32
    var lacing: [UInt8]
    var body: [UInt8]

    /// The pages of `bytes`, as far as they parse.
    static func pages(_ bytes: [UInt8]) -> [OggPage] {
        var pages: [OggPage] = []
        var offset = 0
        func le(_ at: Int, _ count: Int) -> UInt64 {
            (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
        }
        while offset + 27 <= bytes.count, bytes[offset..<offset + 4].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let lacing = Array(bytes[offset + 27..<offset + 27 + segments])
            let size = lacing.reduce(0) { $0 + Int($1) }
            let start = offset + 27 + segments
            guard start + size <= bytes.count else { break }
            pages.append(
                OggPage(
                    headerType: bytes[offset + 5], granule: le(offset + 6, 8), serial: UInt32(le(offset + 14, 4)),
                    sequence: UInt32(le(offset + 18, 4)), lacing: lacing, body: Array(bytes[start..<start + size])))
            offset = start + size
        }
        return pages
    }

    /// A page holding one whole packet.
    init(headerType: UInt8, granule: UInt64, serial: UInt32, sequence: UInt32, packet: [UInt8]) {
        var lacing = [UInt8](repeating: 255, count: packet.count / 255)
        lacing.append(UInt8(packet.count % 255))
        self.init(
            headerType: headerType, granule: granule, serial: serial, sequence: sequence, lacing: lacing, body: packet)
    }

    init(headerType: UInt8, granule: UInt64, serial: UInt32, sequence: UInt32, lacing: [UInt8], body: [UInt8]) {
        self.headerType = headerType
        self.granule = granule
        self.serial = serial
        self.sequence = sequence
        self.lacing = lacing
        self.body = body
    }

    /// The page's bytes, with its CRC.
    var bytes: [UInt8] {
        func le(_ value: UInt64, _ count: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        var out = Array("OggS".utf8) + [0, self.headerType] + le(self.granule, 8) + le(UInt64(self.serial), 4)
        out += le(UInt64(self.sequence), 4) + [0, 0, 0, 0] + [UInt8(self.lacing.count)] + self.lacing + self.body
        let crc = Self.crc(out)
        out.replaceSubrange(22..<26, with: le(UInt64(crc), 4))
        return out
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04c1_1db7 : crc << 1 }
        }
        return crc
    }

    /// An OpusHead packet.
    static func opusHead(
        channels: UInt8, preSkip: UInt16 = 312, gain: Int16 = 0, family: UInt8 = 0, mapping: [UInt8] = []
    ) -> [UInt8] {
        var packet = Array("OpusHead".utf8) + [1, channels, UInt8(preSkip & 0xff), UInt8(preSkip >> 8)]
        packet += [0x80, 0xbb, 0, 0]  // 48000
        packet += [UInt8(truncatingIfNeeded: gain), UInt8(truncatingIfNeeded: gain >> 8), family] + mapping
        return packet
    }
}

/// A FLAC picture block (as `METADATA_BLOCK_PICTURE` holds it, before base64).
func pictureBlock(type: UInt32, mime: String, data: [UInt8]) -> [UInt8] {
    func be(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    var block = be(type) + be(UInt32(mime.utf8.count)) + Array(mime.utf8) + be(0)
    block += be(1) + be(1) + be(24) + be(0) + be(UInt32(data.count)) + data
    return block
}

@Suite("OpusDecoder against opusdec")
struct OpusDecoderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let rate: Int
        let channels: Int
        let bitrate: Int
        var testDescription: String { "\(self.rate) Hz, \(self.channels) ch, \(self.bitrate) kbit/s" }
    }

    @Test(
        "decodes bit for bit what opusdec --rate 48000 --no-dither writes, with the exact length",
        arguments: [
            Case(rate: 48000, channels: 2, bitrate: 96), Case(rate: 44100, channels: 2, bitrate: 256),
            Case(rate: 48000, channels: 1, bitrate: 16), Case(rate: 44100, channels: 1, bitrate: 64),
            Case(rate: 96000, channels: 2, bitrate: 128),
        ])
    func matchesOpusdec(_ material: Case) throws {
        let scratch = try ScratchDirectory()
        let wav = try OpusMaterial.source(
            scratch, "src.wav", rate: material.rate, channels: material.channels, seconds: 3.3)
        let path = try OpusMaterial.encode(scratch, wav, "a.opus", ["--bitrate", "\(material.bitrate)"])
        let decoder = try OpusDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 48000, channels: material.channels, sampleFormat: .signed16))
        let reference = try OpusMaterial.reference(path)
        let pcm = try decodeRest(decoder, chunks: [4096])
        expectSamePCM(pcm, reference)
        let frames = reference.count / (2 * material.channels)
        #expect(decoder.lengthFrames == frames)
        #expect(decoder.position == frames)
        if material.rate == 48000 {
            // Gapless: exactly the source's frames.
            #expect(frames == 158_400)
        }
        #expect(decoder.bitrate > 0)
    }

    @Test("floats are op_read_float's, bit for bit what opusdec --float writes")
    func floats() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch)
        let decoder = try OpusDecoder(path: path, sampleFormat: .float32)
        #expect(decoder.format == AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .float32))
        let pcm = try decodeRest(decoder, chunks: [777])
        let reference = try OpusMaterial.reference(path, float: true)
        expectSamePCM(pcm, reference)
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(samples.count == 144_000 * 2)
        #expect(samples.allSatisfy { $0.isFinite && abs($0) <= 1.5 })
        #expect(samples.contains { abs($0) > 0.3 })
    }

    @Test("reads in odd-sized buffers give the same PCM")
    func oddBuffers() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 1.5)
        let straight = try decodeRest(try OpusDecoder(path: path))
        let odd = try decodeRest(try OpusDecoder(path: path), chunks: [1, 7, 333, 5761, 10007, 2])
        expectSamePCM(odd, straight)
        #expect(straight.count == 72000 * 4)
    }

    /// libopusfile's own seek primes the decoder with 80 ms only, which leaves samples hundreds of steps
    /// off for half a second after the target: the targets past the first 4 s would fail without the
    /// decoder's longer preroll. The material is sox's repeatable noise, so a run is the same each time.
    @Test(
        "seeks sample-exactly and bit for bit, forwards and backwards, to the last frame and to the end",
        arguments: [Case(rate: 48000, channels: 2, bitrate: 96), Case(rate: 48000, channels: 1, bitrate: 16)])
    func seekIsSampleExact(_ material: Case) throws {
        let scratch = try ScratchDirectory()
        let wav = try OpusMaterial.source(scratch, "src.wav", rate: 48000, channels: material.channels, seconds: 6)
        let path = try OpusMaterial.encode(scratch, wav, "a.opus", ["--bitrate", "\(material.bitrate)"])
        let reference = try OpusMaterial.reference(path)
        let length = 288_000
        let bytesPerFrame = 2 * material.channels
        let decoder = try OpusDecoder(path: path)
        #expect(decoder.lengthFrames == length)
        for target in [length / 2, 1, 311, 312, 959, 960, 48007, length - 1, 0, length - 3000, 200_001, 250_000] {
            try decoder.seek(toFrame: target)
            #expect(decoder.position == target)
            let pcm = try decodeRest(decoder, chunks: [1500])
            expectSamePCM(pcm, Array(reference[(target * bytesPerFrame)...]), "seek to frame \(target)")
        }
        try decoder.seek(toFrame: length)
        #expect(try decodeRest(decoder).isEmpty)
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: length + 1, length: length)) {
            try decoder.seek(toFrame: length + 1)
        }
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: -1, length: length)) {
            try decoder.seek(toFrame: -1)
        }
        // A seek back from the end plays again.
        try decoder.seek(toFrame: 10)
        expectSamePCM(try decodeRest(decoder), Array(reference[(10 * bytesPerFrame)...]))
    }

    @Test("the OpusHead's output gain is applied, as opusdec applies it")
    func headerGain() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 1)
        var pages = OggPage.pages([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(pages.count > 2)
        // -6 dB in Q7.8.
        pages[0].body[16] = UInt8(truncatingIfNeeded: -1536)
        pages[0].body[17] = UInt8(truncatingIfNeeded: -1536 >> 8)
        let gained = scratch.path("gained.opus")
        try Data(pages.flatMap(\.bytes)).write(to: URL(fileURLWithPath: gained))
        let reference = try OpusMaterial.reference(gained)
        let pcm = try decodeRest(try OpusDecoder(path: gained))
        expectSamePCM(pcm, reference)
        let plain = try decodeRest(try OpusDecoder(path: path))
        #expect(pcm.count == plain.count)
        #expect(pcm != plain)
        func peak(_ bytes: [UInt8]) -> Int {
            bytes.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { abs(Int($0)) }.max() ?? 0 }
        }
        // Half the amplitude, near enough.
        #expect(abs(Double(peak(pcm)) / Double(peak(plain)) - 0.5012) < 0.02)
    }

    @Test("tags in MPD's names, multi-valued kept, unknown names passed over; comments in file order")
    func tagsAndComments() throws {
        let scratch = try ScratchDirectory()
        let long = String(repeating: "x", count: 5000)
        let path = try OpusMaterial.stereo48(
            scratch, seconds: 0.5,
            [
                "--artist", "One", "--artist", "Two", "--title", "Song", "--comment", "TRACKNUMBER=7",
                "--comment", "MOVEMENT=Allegro", "--comment", "FROBNICATE=yes", "--comment", "ALBUM=" + long,
                "--comment", "MIXRAMP_START=-17.00 0.00;-12.00 0.02", "--comment", "mixramp_end=-9.00 1.50",
            ])
        let decoder = try OpusDecoder(path: path)
        #expect(decoder.tags[.artist] == ["One", "Two"])
        #expect(decoder.tags[.title] == ["Song"])
        #expect(decoder.tags[.track] == ["7"])
        // MPD's Opus plugin tries its own tag names first: MOVEMENT is Movement.
        #expect(decoder.tags[.movement] == ["Allegro"])
        #expect(decoder.tags[.movementNumber].isEmpty)
        // MPD passes over values of 4096 bytes or more.
        #expect(decoder.tags[.album].isEmpty)
        #expect(decoder.mixRamp == MixRamp(start: "-17.00 0.00;-12.00 0.02", end: "-9.00 1.50"))
        let comments = try OpusDecoder.comments(path: path)
        #expect(comments.map(\.name).contains("ENCODER"))
        let ours = comments.filter { $0.name != "ENCODER" && $0.name != "ENCODER_OPTIONS" }
        #expect(
            ours.map(\.name) == [
                "artist", "artist", "title", "TRACKNUMBER", "MOVEMENT", "FROBNICATE", "MIXRAMP_START", "mixramp_end",
            ])
        #expect(ours.map(\.value).prefix(4) == ["One", "Two", "Song", "7"])
        let facts = try OpusDecoder.facts(path: path)
        #expect(facts.tags == decoder.tags)
        #expect(facts.sampleRate == 48000 && facts.channels == 2 && facts.sampleFormat == .signed16)
        // MPD's duration: the last granule position, pre-skip included, in whole milliseconds.
        #expect(facts.duration == 0.506)
        #expect(try AudioDecoders.facts(path: path) == facts)
    }

    /// mpd 0.23 run by hand on a file with an "other" PNG then a front-cover JPEG: `readpicture` gave the
    /// PNG, and `readcomments` listed only the small picture (its values of 4096 bytes or more are
    /// passed over).
    @Test("the first METADATA_BLOCK_PICTURE that reads, as mpd's readpicture gives it")
    func pictures() throws {
        let scratch = try ScratchDirectory()
        let other = pictureBlock(type: 0, mime: "image/png", data: [1, 2, 3])
        let front = pictureBlock(type: 3, mime: "image/jpeg", data: Array(repeating: 0xab, count: 6000))
        func comment(_ block: [UInt8]) -> String { "METADATA_BLOCK_PICTURE=" + Data(block).base64EncodedString() }
        let both = try OpusMaterial.stereo48(
            scratch, seconds: 0.3,
            ["--comment", "METADATA_BLOCK_PICTURE=!!", "--comment", comment(other), "--comment", comment(front)])
        #expect(try OpusDecoder.picture(path: both) == EmbeddedPicture(mimeType: "image/png", data: [1, 2, 3]))
        #expect(try OpusDecoder.comments(path: both).filter { $0.name == "METADATA_BLOCK_PICTURE" }.count == 2)
        let cover = try OpusMaterial.stereo48(scratch, seconds: 0.3, ["--comment", comment(front)])
        #expect(
            try OpusDecoder.picture(path: cover)
                == EmbeddedPicture(mimeType: "image/jpeg", data: Array(repeating: 0xab, count: 6000)))
        #expect(try OpusDecoder.comments(path: cover).filter { $0.name == "METADATA_BLOCK_PICTURE" }.isEmpty)
        let none = try OpusMaterial.stereo48(scratch, seconds: 0.3)
        #expect(try OpusDecoder.picture(path: none) == nil)
        #expect(try AudioDecoders.picture(path: both) == EmbeddedPicture(mimeType: "image/png", data: [1, 2, 3]))
    }

    @Test("ReplayGain as MPD reads Opus: R128 gains + 5 dB, 5 dB without them; off is bit-exact")
    func replayGain() throws {
        let scratch = try ScratchDirectory()
        let tagged = try OpusMaterial.stereo48(
            scratch, seconds: 1,
            [
                "--comment", "R128_TRACK_GAIN=-1792", "--comment", "R128_ALBUM_GAIN=-512", "--comment",
                "REPLAYGAIN_TRACK_GAIN=+9 dB",
            ])
        let plain = try decodeRest(try OpusDecoder(path: tagged))
        let off = try OpusDecoder(path: tagged, replayGain: .off)
        expectSamePCM(try decodeRest(off), plain)
        #expect(off.appliedGainDB == 0)
        #expect(
            OpusDecoder.storedGain([("R128_TRACK_GAIN", "-1792"), ("r128_album_gain", "-512")])
                == StoredReplayGain(trackGainDB: -2, albumGainDB: 3))
        #expect(OpusDecoder.storedGain([("REPLAYGAIN_TRACK_GAIN", "-3 dB")]) == StoredReplayGain(trackGainDB: 5))
        #expect(OpusDecoder.storedGain([("R128_TRACK_GAIN", "12x")]) == StoredReplayGain(trackGainDB: 5))
        for (mode, decibels) in [(ReplayGain.Source.track, -2.0), (.album, 3.0)] {
            let decoder = try OpusDecoder(path: tagged, replayGain: ReplayGain(source: mode))
            #expect(abs(decoder.appliedGainDB - decibels) < 1e-9)
            var expected = plain
            expected.withUnsafeMutableBytes { PCMGain.apply(pow(10, decibels / 20), to: $0, format: .signed16) }
            expectSamePCM(try decodeRest(decoder), expected, "\(mode)")
        }
        let untagged = try OpusMaterial.stereo48(scratch, seconds: 0.5)
        let decoder = try OpusDecoder(path: untagged, replayGain: ReplayGain(source: .track, preampDB: -1))
        #expect(abs(decoder.appliedGainDB - 4) < 1e-9)
    }

    @Test("a 5.1 file plays as stereo, bit for bit what opusdec --force-stereo writes")
    func surroundToStereo() throws {
        let scratch = try ScratchDirectory()
        let wav = try OpusMaterial.source(scratch, "six.wav", rate: 48000, channels: 6, seconds: 1)
        let path = try OpusMaterial.encode(scratch, wav, "six.opus")
        let decoder = try OpusDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .signed16))
        #expect(decoder.lengthFrames == 48000)
        let out = scratch.path("six.raw")
        try OpusMaterial.check(
            run(OpusMaterial.opusdec, ["--quiet", "--rate", "48000", "--no-dither", "--force-stereo", path, out]))
        expectSamePCM(try decodeRest(decoder), [UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        // The library shows the file's own channels, as mpd does.
        #expect(try OpusDecoder.facts(path: path).channels == 6)
    }

    @Test("the kind comes from the content: Opus named .mp3 plays as Opus, MP3 named .opus as MP3")
    func namesDoNotDecide() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 0.5)
        let disguised = scratch.path("song.mp3")
        try FileManager.default.copyItem(atPath: path, toPath: disguised)
        let decoder = try AudioDecoders.open(path: disguised)
        #expect(decoder is OpusDecoder)
        expectSamePCM(try decodeRest(decoder), try OpusMaterial.reference(path))
        let mp3 = scratch.path("song.opus")
        try FileManager.default.copyItem(atPath: fixture("one-second.mp3"), toPath: mp3)
        let asMP3 = try AudioDecoders.open(path: mp3)
        #expect(asMP3 is MP3Decoder)
        #expect(try decodeRest(asMP3).count == 44100 * 4)
    }
}

@Suite("OpusDecoder on bad input")
struct OpusBadInputTests {
    func expectRefusedOrPlayed(_ path: String, within length: Int = 1 << 40) {
        do {
            let decoder = try OpusDecoder(path: path)
            var pcm: [UInt8] = []
            do { pcm = try decodeRest(decoder, chunks: [3000]) } catch { pcm = [] }
            #expect(pcm.count / decoder.format.bytesPerFrame <= length)
        } catch {
            #expect(!error.reason.isEmpty)
        }
        _ = try? OpusDecoder.facts(path: path)
        _ = try? OpusDecoder.picture(path: path)
        _ = try? OpusDecoder.comments(path: path)
    }

    @Test("empty, missing and random files are refused with the reason")
    func refused() throws {
        let scratch = try ScratchDirectory()
        let empty = scratch.path("empty.opus")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: DecoderError.emptyFile(path: empty)) { try OpusDecoder(path: empty) }
        #expect(throws: DecoderError.fileNotFound(path: scratch.path("none.opus"))) {
            try OpusDecoder(path: scratch.path("none.opus"))
        }
        var generator = SystemRandomNumberGenerator()
        let random = scratch.path("random.opus")
        try Data((0..<20000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            .write(to: URL(fileURLWithPath: random))
        do {
            _ = try OpusDecoder(path: random)
            Issue.record("random bytes opened")
        } catch {
            guard case .damaged(_, let format, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(format == "Ogg Opus")
            #expect(reason.contains("no Opus stream"))
        }
        // Through the factory: no Ogg magic, so libmpg123's to refuse.
        #expect(throws: DecoderError.self) { try AudioDecoders.open(path: random) }
    }

    @Test("a file cut short plays what it holds, sample for sample; cut in its headers it is refused")
    func truncated() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 4)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let full = try decodeRest(try OpusDecoder(path: path))
        let pages = OggPage.pages(bytes)
        let headers = pages[0].bytes.count + pages[1].bytes.count
        for cut in [10, 30, headers - 5, headers + 40, headers + 700, bytes.count / 2, bytes.count - 100] {
            let cutPath = scratch.path("cut-\(cut).opus")
            try Data(bytes.prefix(cut)).write(to: URL(fileURLWithPath: cutPath))
            if cut < headers {
                do {
                    _ = try OpusDecoder(path: cutPath)
                    Issue.record("cut at \(cut), in the headers, opened")
                } catch {
                    guard case .damaged = error else {
                        Issue.record("unexpected \(error)")
                        continue
                    }
                }
                continue
            }
            do {
                let decoder = try OpusDecoder(path: cutPath)
                let pcm = try decodeRest(decoder)
                #expect(pcm.count < full.count, "cut at \(cut)")
                #expect(Array(full.prefix(pcm.count)) == pcm, "cut at \(cut)")
                #expect(pcm.count > 0, "cut at \(cut)")
                #expect(decoder.lengthFrames.map { $0 * 4 == pcm.count } ?? false, "cut at \(cut)")
            } catch let error as DecoderError {
                // libopusfile needs one whole audio page (opusenc's hold up to a second): before it, the
                // file is refused as cut short.
                #expect(cut < pages[2].bytes.count + headers, "cut at \(cut): \(error)")
                #expect(error.reason.contains("cut short"), "cut at \(cut): \(error)")
            }
        }
    }

    @Test("corrupted bytes in the middle are passed over, without a crash or a hang")
    func corrupted() throws {
        let scratch = try ScratchDirectory()
        let path = try OpusMaterial.stereo48(scratch, seconds: 4)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for offset in stride(from: bytes.count / 3, to: bytes.count / 3 + 40, by: 3) { bytes[offset] ^= 0x5a }
        let damaged = scratch.path("damaged.opus")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let decoder = try OpusDecoder(path: damaged)
        let pcm = try decodeRest(decoder)
        // The damaged page is lost (a hole); the rest plays.
        #expect(pcm.count > 96000 * 4)
        #expect(pcm.count <= 192_000 * 4)
    }

    /// A good file whose first page (the OpusHead) is replaced by `head`, and whose comment header is
    /// replaced by `tags` when given.
    func rebuilt(_ scratch: ScratchDirectory, _ name: String, head: [UInt8], tags: [UInt8]? = nil) throws -> String {
        let path = try OpusMaterial.stereo48(scratch, seconds: 0.5)
        var pages = OggPage.pages([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        pages[0] = OggPage(headerType: 2, granule: 0, serial: pages[0].serial, sequence: 0, packet: head)
        if let tags {
            pages[1] = OggPage(headerType: 0, granule: 0, serial: pages[0].serial, sequence: 1, packet: tags)
        }
        let out = scratch.path(name)
        try Data(pages.flatMap(\.bytes)).write(to: URL(fileURLWithPath: out))
        return out
    }

    @Test("hostile headers: 0 or 255 channels, mapping family 255, comment counts and lengths past the end")
    func hostileHeaders() throws {
        let scratch = try ScratchDirectory()
        for (name, head) in [
            ("zero.opus", OggPage.opusHead(channels: 0)),
            ("many.opus", OggPage.opusHead(channels: 255)),
            ("family255.opus", OggPage.opusHead(channels: 2, family: 255, mapping: [1, 1, 0, 1])),
            ("family1-bad.opus", OggPage.opusHead(channels: 8, family: 1, mapping: [200, 200] + Array(0..<8))),
            ("short.opus", Array(OggPage.opusHead(channels: 2).prefix(12))),
        ] {
            let path = try self.rebuilt(scratch, name, head: head)
            self.expectRefusedOrPlayed(path, within: 24000)
        }
        func le(_ value: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let vendor = Array("v".utf8)
        let head = OggPage.opusHead(channels: 2)
        for (name, tags) in [
            ("count.opus", Array("OpusTags".utf8) + le(1) + vendor + le(0xffff_fff0)),
            ("length.opus", Array("OpusTags".utf8) + le(1) + vendor + le(1) + le(0x7fff_ffff) + Array("A=b".utf8)),
            ("vendor.opus", Array("OpusTags".utf8) + le(0xffff_ffff) + vendor),
        ] {
            let path = try self.rebuilt(scratch, name, head: head, tags: tags)
            do {
                _ = try OpusDecoder(path: path)
                Issue.record("\(name) opened")
            } catch {
                guard case .damaged(_, _, let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(reason.contains("bad header"), "\(name): \(reason)")
            }
            self.expectRefusedOrPlayed(path)
        }
    }

    @Test("chained links with other channel counts play through, mixed to stereo")
    func chained() throws {
        let scratch = try ScratchDirectory()
        let monoWAV = try OpusMaterial.source(scratch, "m.wav", rate: 48000, channels: 1, seconds: 0.5)
        let mono = try OpusMaterial.encode(scratch, monoWAV, "m.opus")
        let stereo = try OpusMaterial.stereo48(scratch, seconds: 0.7)
        let chained = scratch.path("chained.opus")
        try Data(
            try Data(contentsOf: URL(fileURLWithPath: mono)) + Data(contentsOf: URL(fileURLWithPath: stereo))
        ).write(to: URL(fileURLWithPath: chained))
        let decoder = try OpusDecoder(path: chained)
        #expect(decoder.format.channels == 2)
        #expect(decoder.lengthFrames == 24000 + 33600)
        let pcm = try decodeRest(decoder)
        #expect(pcm.count == (24000 + 33600) * 4)
        // The stereo link comes through as it is.
        expectSamePCM(Array(pcm.suffix(33600 * 4)), try OpusMaterial.reference(stereo))
        try decoder.seek(toFrame: 30000)
        expectSamePCM(try decodeRest(decoder), Array(pcm[(30000 * 4)...]))
        #expect(try OpusDecoder.facts(path: chained).channels == 1)
    }

    /// The plain decoder (`PlainOpusDecoding`) against libopusfile's own multistream decoder, through
    /// libopusfile without this decoder's seek preroll: after each `op_pcm_seek` (80 ms of preroll only)
    /// the samples match bit for bit only if the plain decoder is reset exactly when libopusfile resets
    /// its own, and across links only if it takes each link's output gain.
    @Test("mono and stereo packets go to a plain libopus decoder: the same floats, seeks and links included")
    func plainDecoderMatchesMultistream() throws {
        let scratch = try ScratchDirectory()
        let first = try OpusMaterial.stereo48(scratch, seconds: 2, ["--bitrate", "96"])
        let second = try OpusMaterial.stereo48(scratch, seconds: 1.5, ["--bitrate", "24"])
        let monoWAV = try OpusMaterial.source(scratch, "m.wav", rate: 48000, channels: 1, seconds: 1)
        let mono = try OpusMaterial.encode(scratch, monoWAV, "m.opus")
        let last = try OpusMaterial.stereo48(scratch, seconds: 2, ["--bitrate", "160"])
        var gained = OggPage.pages([UInt8](try Data(contentsOf: URL(fileURLWithPath: second))))
        // -3 dB in Q7.8 in the second link's OpusHead.
        gained[0].body[16] = UInt8(truncatingIfNeeded: -768)
        gained[0].body[17] = UInt8(truncatingIfNeeded: -768 >> 8)
        let path = scratch.path("chain.opus")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: first)))
        bytes += gained.flatMap(\.bytes)
        bytes += [UInt8](try Data(contentsOf: URL(fileURLWithPath: mono)))
        bytes += [UInt8](try Data(contentsOf: URL(fileURLWithPath: last)))
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let plain = try OpusStream(path: path)
        plain.decodePlainly()
        let multistream = try OpusStream(path: path)
        #expect(op_link_count(plain.file) == 4)
        let total = Int(op_pcm_total(plain.file, -1))
        #expect(total == 96000 + 72000 + 48000 + 96000)
        // Up to `frames` frames from where the stream is, as floats' bits, links' channels as they come.
        func read(_ stream: OpusStream, frames: Int) -> [UInt32] {
            var out: [UInt32] = []
            var buffer = [Float](repeating: 0, count: 5760 * 2)
            var done = 0
            while done < frames {
                let got = buffer.withUnsafeMutableBufferPointer {
                    op_read_float(stream.file, $0.baseAddress, Int32($0.count), nil)
                }
                if got == OP_HOLE { continue }
                guard got > 0 else { break }
                let channels = Int(op_channel_count(stream.file, -1))
                out += buffer[0..<Int(got) * channels].map(\.bitPattern)
                done += Int(got)
            }
            return out
        }
        // Compared whole, with the first difference named (an #expect of the arrays would print them).
        func expectSameBits(_ mine: [UInt32], _ theirs: [UInt32], _ what: String) {
            let first = zip(mine, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(mine.count == theirs.count && first == nil, "\(what): first difference at sample \(first ?? -1)")
        }
        let whole = read(plain, frames: total)
        #expect(whole.count == (96000 + 72000 + 96000) * 2 + 48000)
        expectSameBits(whole, read(multistream, frames: total), "straight through")
        #expect(plain.plainlyDecodedPackets >= total / 960)
        #expect(multistream.plainlyDecodedPackets == 0)
        for target in [0, 1000, 50_000, 95_000, 96_500, 150_000, 170_000, 200_000, 30_000, 260_000, total - 100] {
            #expect(op_pcm_seek(plain.file, Int64(target)) == 0)
            #expect(op_pcm_seek(multistream.file, Int64(target)) == 0)
            let mine = read(plain, frames: 20000)
            #expect(!mine.isEmpty)
            expectSameBits(mine, read(multistream, frames: 20000), "seek to \(target)")
        }

        // More channels than two: libopusfile's multistream decoder does it all.
        let wav = try OpusMaterial.source(scratch, "six.wav", rate: 48000, channels: 6, seconds: 0.5)
        let six = try OpusStream(path: try OpusMaterial.encode(scratch, wav, "six.opus"))
        six.decodePlainly()
        #expect(read(six, frames: 24000).count == 24000 * 6)
        #expect(six.plainlyDecodedPackets == 0)
    }

    @Test("opening and decoding bad and good Opus files many times leaks neither memory nor descriptors")
    func noLeaks() async throws {
        let scratch = try ScratchDirectory()
        let good = try OpusMaterial.stereo48(scratch, seconds: 0.5)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let cut = scratch.path("cut.opus")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: cut))
        let header = scratch.path("header.opus")
        try Data(bytes.prefix(60)).write(to: URL(fileURLWithPath: header))
        let names = [good, cut, header, scratch.path("missing.opus")]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        func cycle() {
            for name in names {
                _ = try? OpusDecoder.facts(path: name)
                guard let decoder = try? OpusDecoder(path: name) else { continue }
                _ = try? decoder.read(into: buffer)
            }
        }
        let growth = leakGrowth(rounds: 150, cycle)
        // An open libopusfile handle with its decoder holds tens of KiB: leaking one per open (900 opens)
        // would cost far more than this.
        #expect(growth.bytes < 16 << 20)
        #expect(growth.descriptors < 200)
    }

}

@Suite("OpusDecoder.facts: headers and the end-of-stream page, as mpd scans them")
struct OpusFactsTests {
    @Test("a chained file's duration is its first link's; cut short or with junk after its end, none (mpd's figures)")
    func durations() throws {
        let scratch = try ScratchDirectory()
        let monoWAV = try OpusMaterial.source(scratch, "m.wav", rate: 48000, channels: 1, seconds: 0.5)
        let mono = try OpusMaterial.encode(scratch, monoWAV, "m.opus")
        let stereo = try OpusMaterial.stereo48(scratch, seconds: 0.7)
        let monoBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mono)))
        let stereoBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stereo)))
        // mpd 0.23.12 on such files: 0.506, 0.706, the chain 0.506 (its first link's end-of-stream
        // page), and no duration for one cut short or with junk after its end.
        #expect(try OpusDecoder.facts(path: mono).duration == 0.506)
        #expect(try OpusDecoder.facts(path: stereo).duration == 0.706)
        let chained = scratch.path("chained.opus")
        try Data(monoBytes + stereoBytes).write(to: URL(fileURLWithPath: chained))
        let chain = try OpusDecoder.facts(path: chained)
        #expect(chain.duration == 0.506 && chain.channels == 1)
        // Cut short after some whole audio pages (a file whose first audio page is cut is refused, as
        // libopusfile refuses it).
        let long = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try OpusMaterial.stereo48(scratch, seconds: 3))))
        let cut = scratch.path("cut.opus")
        try Data(long.prefix(long.count * 2 / 3)).write(to: URL(fileURLWithPath: cut))
        let cutFacts = try OpusDecoder.facts(path: cut)
        #expect(cutFacts.duration == nil && cutFacts.channels == 2)
        let trailing = scratch.path("trailing.opus")
        try Data(stereoBytes + [UInt8](repeating: 0, count: OggEndOfStream.tailBytes + 10)).write(
            to: URL(fileURLWithPath: trailing))
        #expect(try OpusDecoder.facts(path: trailing).duration == nil)
        // A damaged end-of-stream page (its CRC no longer matches) is not believed.
        var damaged = long
        damaged[damaged.count - 1] ^= 0xff
        let damagedPath = scratch.path("damaged.opus")
        try Data(damaged).write(to: URL(fileURLWithPath: damagedPath))
        #expect(try OpusDecoder.facts(path: damagedPath).duration == nil)
        // The tags and channels read from the headers are the decoder's.
        let decoder = try OpusDecoder(path: stereo)
        #expect(try OpusDecoder.facts(path: stereo).tags == decoder.tags)
    }

    @Test("the page CRC is Ogg's: the pages opusenc writes check")
    func pageCRC() throws {
        let scratch = try ScratchDirectory()
        let bytes = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try OpusMaterial.stereo48(scratch, seconds: 0.2))))
        // The first page: 27 bytes of header, its segment table, then its body.
        let segments = Int(bytes[26])
        let length = 27 + segments + bytes[27..<27 + segments].reduce(0) { $0 + Int($1) }
        let stored = UInt32(bytes[22]) | UInt32(bytes[23]) << 8 | UInt32(bytes[24]) << 16 | UInt32(bytes[25]) << 24
        #expect(
            bytes.withUnsafeBytes { OggEndOfStream.crc(UnsafeRawBufferPointer(rebasing: $0[0..<length])) } == stored)
    }
}
