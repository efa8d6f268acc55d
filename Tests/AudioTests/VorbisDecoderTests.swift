import Foundation
import MusicTags
import Testing

@testable import Audio

/// Ogg Vorbis material made at test time: sox makes the sound, oggenc the file, oggdec (the
/// reference, which decodes with the same `ov_read`) the expected PCM.
struct VorbisMaterial: Sendable, CustomTestStringConvertible {
    let sampleRate: Int
    let channels: Int
    let seconds: Double
    let quality: String

    var testDescription: String { "\(self.sampleRate) Hz, \(self.channels) ch, -q \(self.quality)" }

    static let bitExact = [
        VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 3, quality: "5"),
        VorbisMaterial(sampleRate: 48000, channels: 2, seconds: 2, quality: "3"),
        VorbisMaterial(sampleRate: 22050, channels: 1, seconds: 2, quality: "4"),
        VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 2, quality: "-1"),
        VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 2, quality: "10"),
        VorbisMaterial(sampleRate: 96000, channels: 2, seconds: 1.5, quality: "6"),
    ]

    /// Encodes the material into `scratch` as `name` with `comments` (`NAME=value`); returns the path.
    func make(in scratch: ScratchDirectory, name: String = "song.ogg", comments: [String] = [], serial: Int? = nil)
        throws -> String
    {
        let wav = scratch.path("\(name).wav")
        let ogg = scratch.path(name)
        // A tone, another in the second channel.
        let synth =
            self.channels == 1
            ? ["synth", "\(self.seconds)", "sine", "440"]
            : ["synth", "\(self.seconds)", "sine", "440", "sine", "660"]
        let sox = try run(
            "/usr/bin/sox",
            ["-n", "-r", "\(self.sampleRate)", "-c", "\(self.channels)", "-b", "16", wav] + synth
                + ["vol", "0.6"])
        try #require(sox.status == 0, "sox: \(sox.stderr)")
        var arguments = ["-Q", "-q", self.quality, "-o", ogg]
        // Links of a chain need serial numbers of their own: oggenc's default comes from the clock.
        if let serial { arguments += ["-s", "\(serial)"] }
        for comment in comments { arguments += ["-c", comment] }
        let oggenc = try run("/usr/bin/oggenc", arguments + [wav])
        try #require(oggenc.status == 0, "oggenc: \(oggenc.stderr)")
        return ogg
    }
}

/// What `oggdec` writes for `path` (the WAV's data chunk: raw little-endian signed 16-bit).
func oggdecPCM(_ path: String) throws -> [UInt8] {
    let raw = path + ".oggdec.raw"
    defer { try? FileManager.default.removeItem(atPath: raw) }
    let result = try run("/usr/bin/oggdec", ["-Q", "-R", "-o", raw, path])
    try #require(result.status == 0, "oggdec: \(result.stderr)")
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
}

/// Decodes the rest of a song, in reads of `chunkFrames` (cycling through them when several are given).
func vorbisDecodeAll(_ decoder: any AudioDecoder, chunkFrames: [Int] = [1000]) throws -> [UInt8] {
    let bytesPerFrame = decoder.format.bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: (chunkFrames.max() ?? 1) * bytesPerFrame + 3, alignment: 16)
    defer { buffer.deallocate() }
    var pcm: [UInt8] = []
    var turn = 0
    while true {
        // One byte too many, sometimes: a partial frame's room must be left alone.
        let bytes = chunkFrames[turn % chunkFrames.count] * bytesPerFrame + turn % 2
        turn += 1
        let frames = try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes]))
        if frames == 0 { break }
        pcm += buffer[0..<frames * bytesPerFrame]
    }
    return pcm
}

/// Up to `frames` frames from the decoder's position.
func vorbisDecode(_ decoder: any AudioDecoder, frames: Int) throws -> [UInt8] {
    let bytesPerFrame = decoder.format.bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, frames * bytesPerFrame), alignment: 16)
    defer { buffer.deallocate() }
    var filled = 0
    while filled < frames {
        let got = try decoder.read(
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled * bytesPerFrame..<frames * bytesPerFrame]))
        if got == 0 { break }
        filled += got
    }
    return [UInt8](buffer[0..<filled * bytesPerFrame])
}

@Suite("VorbisDecoder against oggdec")
struct VorbisDecoderTests {
    @Test("decodes bit for bit what oggdec writes, with the exact length", arguments: VorbisMaterial.bitExact)
    func matchesOggdec(_ material: VorbisMaterial) throws {
        let scratch = try ScratchDirectory()
        let path = try material.make(in: scratch)
        let reference = try oggdecPCM(path)
        let decoder = try VorbisDecoder(path: path)
        #expect(
            decoder.format
                == AudioFormat(sampleRate: material.sampleRate, channels: material.channels, sampleFormat: .signed16))
        let frames = Int((Double(material.sampleRate) * material.seconds).rounded())
        #expect(decoder.lengthFrames == frames)
        #expect(reference.count == frames * decoder.format.bytesPerFrame)
        expectSamePCM(try vorbisDecodeAll(decoder), reference)
        #expect(decoder.position == frames)
        #expect(try vorbisDecode(decoder, frames: 10).isEmpty)
        #expect(decoder.bitrate > 0)
    }

    @Test("floats are libvorbis's own: oggdec's integers are them rounded, within one step")
    func floats() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[0].make(in: scratch)
        let reference = try oggdecPCM(path)
        let decoder = try VorbisDecoder(path: path, sampleFormat: .float32)
        #expect(decoder.format.sampleFormat == .float32)
        let pcm = try vorbisDecodeAll(decoder, chunkFrames: [777])
        try #require(pcm.count == reference.count * 2)
        var worst: Float = 0
        pcm.withUnsafeBytes { floats in
            reference.withUnsafeBytes { integers in
                for (float, integer) in zip(floats.bindMemory(to: Float.self), integers.bindMemory(to: Int16.self)) {
                    worst = max(worst, abs(float * 32768 - Float(Int16(littleEndian: integer))))
                }
            }
        }
        #expect(worst <= 1)

        // Seeks in floats land as exactly as in integers.
        for target in [0, 12345, 70000, 132_299] {
            try decoder.seek(toFrame: target)
            let after = try vorbisDecode(decoder, frames: 1500)
            let end = min(132_300, target + 1500)
            expectSamePCM(after, Array(pcm[target * 8..<end * 8]), "float seek to \(target)")
        }
        // Vorbis has no bit depth: integers asked at any width are oggdec's 16 bits.
        #expect(try VorbisDecoder(path: path, sampleFormat: .signed24).format.sampleFormat == .signed16)
    }

    @Test("seeks sample-exactly, forwards and backwards; the end reads nothing; past it is refused")
    func seek() throws {
        let scratch = try ScratchDirectory()
        let material = VorbisMaterial.bitExact[0]
        let path = try material.make(in: scratch)
        let reference = try oggdecPCM(path)
        let decoder = try VorbisDecoder(path: path)
        let length = try #require(decoder.lengthFrames)
        let bytesPerFrame = decoder.format.bytesPerFrame
        let targets = [length / 2, 1, 1000, 1024, 4097, length - 1, 0, length - 2000, 12345, 64, 100_000]
        for target in targets {
            try decoder.seek(toFrame: target)
            #expect(decoder.position == target)
            let pcm = try vorbisDecode(decoder, frames: 3000)
            let end = min(length, target + 3000)
            expectSamePCM(pcm, Array(reference[target * bytesPerFrame..<end * bytesPerFrame]), "seek to \(target)")
            #expect(decoder.position == end)
        }
        try decoder.seek(toFrame: length)
        #expect(try vorbisDecode(decoder, frames: 100).isEmpty)
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: length + 1, length: length)) {
            try decoder.seek(toFrame: length + 1)
        }
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: -1, length: length)) {
            try decoder.seek(toFrame: -1)
        }
        // After the refused seeks, it still plays from where it is put.
        try decoder.seek(toFrame: 500)
        expectSamePCM(try vorbisDecodeAll(decoder), Array(reference[(500 * bytesPerFrame)...]))
    }

    @Test("reads of odd sizes, one frame to thousands, give the same PCM")
    func oddBuffers() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[2].make(in: scratch)
        let decoder = try VorbisDecoder(path: path)
        expectSamePCM(try vorbisDecodeAll(decoder, chunkFrames: [1, 7, 333, 1024, 4099, 2]), try oggdecPCM(path))
    }

    @Test("tags in MPD's names, multi-valued; comments in file order; facts without decoding")
    func tagsAndComments() throws {
        let scratch = try ScratchDirectory()
        let material = VorbisMaterial.bitExact[1]
        let path = try material.make(
            in: scratch,
            comments: [
                "ARTIST=First", "TITLE=Song", "artist=Second", "TRACKNUMBER=3/12", "FOO=bar", "Album=Disc",
                "MIXRAMP_START=0.0 -20.0", "mixramp_end=1.0 -15.0", "DATE=2024",
            ])
        let decoder = try VorbisDecoder(path: path)
        #expect(decoder.tags.artist == "First")
        #expect(decoder.tags[.artist] == ["First", "Second"])
        #expect(decoder.tags.title == "Song")
        #expect(decoder.tags.track == "3/12")
        #expect(decoder.tags.album == "Disc")
        #expect(decoder.tags[.date] == ["2024"])
        #expect(decoder.mixRamp == MixRamp(start: "0.0 -20.0", end: "1.0 -15.0"))
        let comments = try VorbisDecoder.comments(path: path)
        #expect(
            comments.map(\.name) == [
                "ARTIST", "TITLE", "artist", "TRACKNUMBER", "FOO", "Album", "MIXRAMP_START", "mixramp_end", "DATE",
            ])
        #expect(comments[4].value == "bar")
        #expect(try AudioDecoders.comments(path: path).count == 9)

        let facts = try AudioDecoders.facts(path: path)
        #expect(facts.sampleRate == 48000)
        #expect(facts.channels == 2)
        #expect(facts.sampleFormat == .float32)
        #expect(facts.duration == 2.0)
        #expect(facts.tags == decoder.tags)
        #expect(try VorbisDecoder.picture(path: path) == nil)
    }

    @Test("ReplayGain: on, the samples scaled by the stored gain; off, bit for bit")
    func replayGain() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[0].make(
            in: scratch,
            comments: [
                "REPLAYGAIN_TRACK_GAIN=-6.00 dB", "REPLAYGAIN_TRACK_PEAK=0.6", "replaygain_album_gain=+2.5 dB",
                "REPLAYGAIN_ALBUM_PEAK=0.9",
            ])
        let reference = try oggdecPCM(path)
        let off = try VorbisDecoder(path: path, replayGain: .off)
        #expect(off.appliedGainDB == 0)
        expectSamePCM(try vorbisDecodeAll(off), reference)

        let track = try VorbisDecoder(path: path, replayGain: ReplayGain(source: .track))
        #expect(abs(track.appliedGainDB - -6) < 1e-9)
        var scaled = reference
        scaled.withUnsafeMutableBytes { PCMGain.apply(pow(10, -6.0 / 20), to: $0, format: .signed16) }
        #expect(scaled != reference)
        expectSamePCM(try vorbisDecodeAll(track, chunkFrames: [999]), scaled)

        // +2.5 dB would clip a peak of 0.9: the peak limits it to 1/0.9.
        let album = try VorbisDecoder(path: path, replayGain: ReplayGain(source: .album))
        #expect(abs(album.appliedGainDB - 20 * log10(1 / 0.9)) < 1e-9)
        let preamped = try VorbisDecoder(path: path, replayGain: ReplayGain(source: .track, preampDB: 3))
        #expect(abs(preamped.appliedGainDB - -3) < 1e-9)
    }

    @Test("the first METADATA_BLOCK_PICTURE that reads, whatever its type, as mpd's readpicture gives it")
    func pictures() throws {
        func block(type: UInt32, mime: String, data: [UInt8]) -> String {
            func be32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).bigEndian, Array.init) }
            var bytes = be32(Int(type)) + be32(mime.utf8.count) + Array(mime.utf8) + be32(4) + Array("desc".utf8)
            bytes += be32(1) + be32(1) + be32(24) + be32(0) + be32(data.count) + data
            return Data(bytes).base64EncodedString()
        }
        let scratch = try ScratchDirectory()
        let back = block(type: 4, mime: "image/png", data: [1, 2, 3, 4])
        let front = block(type: 3, mime: "image/jpeg", data: [0xff, 0xd8, 0xff, 0xe0, 9])
        let material = VorbisMaterial(sampleRate: 44100, channels: 1, seconds: 0.5, quality: "0")
        let both = try material.make(
            in: scratch, name: "both.ogg",
            comments: ["METADATA_BLOCK_PICTURE=\(back)", "TITLE=x", "METADATA_BLOCK_PICTURE=\(front)"])
        // mpd 0.23.12 on this file: `readpicture` gives the PNG (the back cover), not the front cover.
        #expect(try AudioDecoders.picture(path: both) == EmbeddedPicture(mimeType: "image/png", data: [1, 2, 3, 4]))
        let broken = "METADATA_BLOCK_PICTURE=" + Data([0, 0, 0, 3, 0, 0, 0xff, 0xff]).base64EncodedString()
        let brokenFirst = try material.make(
            in: scratch, name: "broken-first.ogg", comments: [broken, "METADATA_BLOCK_PICTURE=\(front)"])
        #expect(
            try VorbisDecoder.picture(path: brokenFirst)
                == EmbeddedPicture(mimeType: "image/jpeg", data: [0xff, 0xd8, 0xff, 0xe0, 9]))
        let backOnly = try material.make(in: scratch, name: "back.ogg", comments: ["METADATA_BLOCK_PICTURE=\(back)"])
        #expect(
            try VorbisDecoder.picture(path: backOnly) == EmbeddedPicture(mimeType: "image/png", data: [1, 2, 3, 4]))
        // readcomments lists the picture comment too, as mpd does.
        #expect(
            try VorbisDecoder.comments(path: both).map(\.name) == [
                "METADATA_BLOCK_PICTURE", "TITLE", "METADATA_BLOCK_PICTURE",
            ])
    }

    @Test("chained streams of one format play through; the length is every link's")
    func chained() throws {
        let scratch = try ScratchDirectory()
        let first = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "2").make(
            in: scratch, name: "a.ogg", comments: ["TITLE=A"], serial: 111)
        let second = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1.5, quality: "6").make(
            in: scratch, name: "b.ogg", comments: ["TITLE=B"], serial: 222)
        let chain = scratch.path("chain.ogg")
        try (Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second)))
            .write(to: URL(fileURLWithPath: chain))
        let decoder = try VorbisDecoder(path: chain)
        #expect(decoder.lengthFrames == 44100 + 66150)
        #expect(decoder.tags.title == "A")
        // oggdec 1.4.2 (libvorbisfile 1.3.7) skips a chain's first link: the reference is each link alone.
        let reference = try oggdecPCM(first) + oggdecPCM(second)
        #expect(reference.count == (44100 + 66150) * 4)
        #expect(try oggdecPCM(chain) == Array(reference[(44100 * 4)...]))
        expectSamePCM(try vorbisDecodeAll(decoder), reference)
        // Seeks into the second link, across the join, and back into the first.
        for target in [50000, 44000, 44100, 100, 110_000] {
            try decoder.seek(toFrame: target)
            let end = min(110_250, target + 2000)
            expectSamePCM(
                try vorbisDecode(decoder, frames: 2000), Array(reference[target * 4..<end * 4]), "seek to \(target)")
        }
    }

    @Test("a chained link of another rate or channel count ends the song there, as oggdec stops, with a reason")
    func chainedFormatChange() throws {
        let scratch = try ScratchDirectory()
        let first = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "2").make(
            in: scratch, name: "a.ogg", serial: 111)
        let second = try VorbisMaterial(sampleRate: 22050, channels: 1, seconds: 1, quality: "2").make(
            in: scratch, name: "b.ogg", serial: 222)
        let chain = scratch.path("chain.ogg")
        try (Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second)))
            .write(to: URL(fileURLWithPath: chain))
        let decoder = try VorbisDecoder(path: chain)
        var pcm: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        // What the read that meets the change decoded is handed over; the next read throws.
        let error = #expect(throws: DecoderError.self) {
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { break }
                pcm += buffer[0..<frames * 4]
            }
        }
        guard case .damaged(_, "Ogg Vorbis", let reason) = error else {
            Issue.record("expected a damaged-stream error, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("1 channels at 22050 Hz after 1.0 s"))
        expectSamePCM(pcm, try oggdecPCM(first))
    }
}

/// Ogg pages taken apart and put together again, for hostile files.
enum OggPages {
    struct Page {
        var headerType: UInt8
        var granule: [UInt8]
        var serial: [UInt8]
        var sequence: UInt32
        var lacing: [UInt8]
        var body: [UInt8]
    }

    static func parse(_ bytes: [UInt8]) -> [Page] {
        var pages: [Page] = []
        var offset = 0
        while offset + 27 <= bytes.count, bytes[offset..<offset + 4] == [0x4f, 0x67, 0x67, 0x53] {
            let count = Int(bytes[offset + 26])
            let lacing = Array(bytes[offset + 27..<offset + 27 + count])
            let size = lacing.reduce(0) { $0 + Int($1) }
            let start = offset + 27 + count
            let sequence = bytes[offset + 18..<offset + 22].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            pages.append(
                Page(
                    headerType: bytes[offset + 5], granule: Array(bytes[offset + 6..<offset + 14]),
                    serial: Array(bytes[offset + 14..<offset + 18]), sequence: sequence, lacing: lacing,
                    body: Array(bytes[start..<start + size])))
            offset = start + size
        }
        return pages
    }

    static func write(_ page: Page) -> [UInt8] {
        var bytes = Array("OggS".utf8) + [0, page.headerType] + page.granule + page.serial
        bytes += withUnsafeBytes(of: page.sequence.littleEndian, Array.init) + [0, 0, 0, 0]
        bytes += [UInt8(page.lacing.count)] + page.lacing + page.body
        let crc = Self.crc(bytes)
        for index in 0..<4 { bytes[22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        return bytes
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04c1_1db7 : crc << 1 }
        }
        return crc
    }

    /// The file with its comment and setup packets (on the second page, as oggenc writes them)
    /// replaced, the pages after renumbered.
    static func replacingHeaders(_ bytes: [UInt8], comment: [UInt8], setup: ([UInt8]) -> [UInt8]) -> [UInt8] {
        let pages = Self.parse(bytes)
        // oggenc puts the comment and setup packets alone on the second page (and the next, when long).
        var headerBody: [UInt8] = []
        var next = 1
        var lacing: [UInt8] = []
        while next < pages.count, pages[next].granule.allSatisfy({ $0 == 0 }) {
            headerBody += pages[next].body
            lacing += pages[next].lacing
            next += 1
        }
        // The first packet's length from the lacing values.
        var commentLength = 0
        for value in lacing {
            commentLength += Int(value)
            if value < 255 { break }
        }
        let oldSetup = Array(headerBody[commentLength...])
        let newSetup = setup(oldSetup)
        var output = Self.write(pages[0])
        var sequence: UInt32 = 1
        // Packets laced onto pages of at most 255 segments.
        var segments: [UInt8] = []
        for packet in [comment, newSetup] {
            var left = packet.count
            while left >= 255 {
                segments.append(255)
                left -= 255
            }
            segments.append(UInt8(left))
        }
        var body = comment + newSetup
        var continued = false
        while !segments.isEmpty {
            let take = Array(segments.prefix(255))
            segments.removeFirst(take.count)
            let size = take.reduce(0) { $0 + Int($1) }
            let page = Page(
                headerType: continued ? 1 : 0, granule: [UInt8](repeating: 0, count: 8), serial: pages[0].serial,
                sequence: sequence, lacing: take, body: Array(body.prefix(size)))
            body.removeFirst(size)
            output += Self.write(page)
            continued = take.last == 255
            sequence += 1
        }
        for var page in pages[next...] {
            page.sequence = sequence
            sequence += 1
            output += Self.write(page)
        }
        return output
    }

    /// A Vorbis comment packet: the vendor string, the count (claimed), the comments.
    static func commentPacket(vendor: [UInt8], vendorLength: UInt32? = nil, count: UInt32? = nil, comments: [String])
        -> [UInt8]
    {
        func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        var packet: [UInt8] = [3] + Array("vorbis".utf8) + le32(vendorLength ?? UInt32(vendor.count)) + vendor
        packet += le32(count ?? UInt32(comments.count))
        for comment in comments { packet += le32(UInt32(comment.utf8.count)) + Array(comment.utf8) }
        return packet + [1]
    }
}

@Suite("VorbisDecoder on bad input")
struct VorbisBadInputTests {
    /// Opens and decodes `path` to the end through `AudioDecoders`: the decoded frames, or the error.
    private func play(_ path: String) -> Result<[UInt8], DecoderError> {
        do {
            let decoder = try AudioDecoders.open(path: path)
            #expect(decoder is VorbisDecoder)
            return .success(try vorbisDecodeAll(decoder, chunkFrames: [4096]))
        } catch let error as DecoderError {
            return .failure(error)
        } catch {
            Issue.record("an error not a DecoderError: \(error)")
            return .failure(.unsupported(path: path, reason: "\(error)"))
        }
    }

    private func writeFile(_ bytes: some Sequence<UInt8>, _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("an empty file and random bytes named .ogg are refused, with the file and a reason")
    func refused() throws {
        let scratch = try ScratchDirectory()
        let empty = scratch.path("empty.ogg")
        try self.writeFile([], empty)
        #expect(throws: DecoderError.emptyFile(path: empty)) { try AudioDecoders.open(path: empty) }
        #expect(throws: DecoderError.emptyFile(path: empty)) { try VorbisDecoder(path: empty) }
        var generator = SystemRandomNumberGenerator()
        let random = scratch.path("random.ogg")
        try self.writeFile((0..<20000).map { _ in UInt8.random(in: 0...255, using: &generator) }, random)
        #expect(throws: DecoderError.self) { try AudioDecoders.open(path: random) }
        // Random bytes straight into the Vorbis decoder: its own reason.
        #expect(throws: DecoderError.self) { try VorbisDecoder(path: random) }
        do {
            _ = try VorbisDecoder(path: random)
        } catch {
            #expect(error.reason.contains("Ogg Vorbis"))
            #expect(error.path == random)
        }
        #expect(throws: DecoderError.fileNotFound(path: scratch.path("missing.ogg"))) {
            try VorbisDecoder.facts(path: scratch.path("missing.ogg"))
        }
    }

    @Test("cut short in the headers, the first audio or the middle: refused with a reason, or played as far as it goes")
    func truncated() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[0].make(in: scratch)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let full = try oggdecPCM(path)
        let headerEnd = OggPages.parse(whole).prefix(3).reduce(0) { $0 + 27 + $1.lacing.count + $1.body.count }
        for cut in [20, 58, 200, 3000, headerEnd - 100, headerEnd + 100, whole.count / 2, whole.count - 10] {
            let name = scratch.path("cut-\(cut).ogg")
            try self.writeFile(whole.prefix(cut), name)
            switch self.play(name) {
            case .success(let pcm):
                #expect(cut > headerEnd - 1000, "cut at \(cut) opened")
                #expect(pcm.count <= full.count)
                #expect(Array(full.prefix(pcm.count)) == pcm, "cut at \(cut)")
            case .failure(let error):
                #expect(cut < headerEnd + 200, "cut at \(cut): \(error)")
                #expect(error.path == name)
                // Too short to show its codec, it is refused as an Ogg stream of no codec playerd knows.
                let unknownOgg = DecoderError.unsupported(
                    path: name, reason: "an Ogg stream of a codec other than Vorbis, Opus or FLAC")
                #expect(error.reason.contains("Ogg Vorbis") || (cut < 58 && error == unknownOgg), "\(error)")
            }
        }
    }

    @Test("bytes damaged in the middle (a page's CRC then fails): skipped, as oggdec skips them")
    func damagedMiddle() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[0].make(in: scratch)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for offset in stride(from: bytes.count / 2, to: bytes.count / 2 + 40, by: 4) { bytes[offset] ^= 0x5a }
        let damaged = scratch.path("damaged.ogg")
        try self.writeFile(bytes, damaged)
        let reference = try oggdecPCM(damaged)
        let pcm = try self.play(damaged).get()
        expectSamePCM(pcm, reference)
        #expect(pcm.count < (try oggdecPCM(path)).count)
        #expect(pcm.count > 0)
    }

    @Test("an MP3 named .ogg plays as MP3; Ogg Vorbis named .mp3 plays as Vorbis")
    func misnamed() throws {
        let scratch = try ScratchDirectory()
        let mp3 = scratch.path("really-mp3.ogg")
        try FileManager.default.copyItem(atPath: fixture("one-second.mp3"), toPath: mp3)
        let asMP3 = try AudioDecoders.open(path: mp3)
        #expect(asMP3 is MP3Decoder)
        #expect(asMP3.lengthFrames == 44100)
        let ogg = try VorbisMaterial.bitExact[2].make(in: scratch)
        let named = scratch.path("really-vorbis.mp3")
        try FileManager.default.copyItem(atPath: ogg, toPath: named)
        let decoder = try AudioDecoders.open(path: named)
        #expect(decoder is VorbisDecoder)
        expectSamePCM(try vorbisDecodeAll(decoder), try oggdecPCM(ogg))
        #expect(try AudioDecoders.facts(path: named).sampleFormat == .float32)
    }

    @Test("hostile comment headers: a count of 2^31, a vendor string longer than the file, a setup cut short")
    func hostileHeaders() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial.bitExact[2].make(in: scratch, comments: ["TITLE=t"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let vendor = Array("Xiph.Org libVorbis I 20200704 (Reducing Environment)".utf8)

        // The rebuilding itself is sound: an honest comment header plays as before.
        let honest = scratch.path("honest.ogg")
        try self.writeFile(
            OggPages.replacingHeaders(
                bytes, comment: OggPages.commentPacket(vendor: vendor, comments: ["TITLE=rebuilt", "ARTIST=a"]),
                setup: { $0 }), honest)
        let rebuilt = try VorbisDecoder(path: honest)
        #expect(rebuilt.tags.title == "rebuilt")
        expectSamePCM(try vorbisDecodeAll(rebuilt), try oggdecPCM(path))

        let hostile: [(String, [UInt8], ([UInt8]) -> [UInt8])] = [
            ("count", OggPages.commentPacket(vendor: vendor, count: 0x8000_0000, comments: ["A=b"]), { $0 }),
            ("count-max", OggPages.commentPacket(vendor: vendor, count: 0x7fff_ffff, comments: ["A=b"]), { $0 }),
            ("vendor", OggPages.commentPacket(vendor: vendor, vendorLength: 0xffff_fff0, comments: []), { $0 }),
            (
                "length",
                [3] + Array("vorbis".utf8) + [4, 0, 0, 0] + Array("abcd".utf8) + [1, 0, 0, 0]
                    + [0xf0, 0xff, 0xff, 0x7f] + Array("A=b".utf8) + [1], { $0 }
            ),
            ("setup", OggPages.commentPacket(vendor: vendor, comments: []), { Array($0.prefix($0.count / 2)) }),
        ]
        for (name, comment, setup) in hostile {
            let file = scratch.path("hostile-\(name).ogg")
            try self.writeFile(OggPages.replacingHeaders(bytes, comment: comment, setup: setup), file)
            switch self.play(file) {
            case .success(let pcm):
                Issue.record("\(name): played \(pcm.count) bytes")
            case .failure(let error):
                print("hostile header \(name): \(error.reason)")
                #expect(error.path == file)
                #expect(error.reason.contains("Ogg Vorbis"), "\(name): \(error)")
            }
            #expect(throws: DecoderError.self) { try VorbisDecoder.facts(path: file) }
            #expect(throws: DecoderError.self) { try VorbisDecoder.comments(path: file) }
        }
    }

    @Test("a stream whose first link is Vorbis and a later one Opus: the Vorbis plays, then the song ends saying why")
    func vorbisThenOpus() throws {
        let scratch = try ScratchDirectory()
        let vorbis = try VorbisMaterial(sampleRate: 48000, channels: 2, seconds: 1, quality: "3").make(in: scratch)
        let wav = scratch.path("song.ogg.wav")
        let opus = scratch.path("b.opus")
        let opusenc = try run("/usr/bin/opusenc", ["--quiet", wav, opus])
        try #require(opusenc.status == 0, "opusenc: \(opusenc.stderr)")
        let chain = scratch.path("chain.ogg")
        try (Data(contentsOf: URL(fileURLWithPath: vorbis)) + Data(contentsOf: URL(fileURLWithPath: opus)))
            .write(to: URL(fileURLWithPath: chain))
        // As mpd: the Vorbis link plays, then the song ends with the reason. libvorbisfile cannot map
        // such a chain, so it is read as a stream: no length, no seeking.
        let decoder = try AudioDecoders.open(path: chain)
        #expect(decoder is VorbisDecoder)
        #expect(decoder.lengthFrames == nil)
        #expect(throws: DecoderError.seekOutOfRange(path: chain, frame: 0, length: nil)) {
            try decoder.seek(toFrame: 0)
        }
        var pcm: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        let error = #expect(throws: DecoderError.self) {
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { break }
                pcm += buffer[0..<frames * 4]
            }
        }
        print("a Vorbis-then-Opus chain: \(pcm.count) bytes, then \(String(describing: error))")
        #expect(error?.reason.contains("a link that is not Vorbis, or whose headers are damaged, after 1.0 s") == true)
        expectSamePCM(pcm, try oggdecPCM(vorbis))
        // The library's duration is mpd's (checked with mpd 0.23.12: 1.000): the first link's
        // end-of-stream page.
        let facts = try AudioDecoders.facts(path: chain)
        #expect(facts.duration == 1 && facts.sampleRate == 48000)
    }

    @Test("read as a stream (an Opus link at the end), a Vorbis link changing the format still ends the song")
    func streamedFormatChange() throws {
        let scratch = try ScratchDirectory()
        let first = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 1, quality: "2").make(
            in: scratch, name: "a.ogg", serial: 111)
        let second = try VorbisMaterial(sampleRate: 22050, channels: 1, seconds: 1, quality: "2").make(
            in: scratch, name: "b.ogg", serial: 222)
        let opus = scratch.path("c.opus")
        let opusenc = try run("/usr/bin/opusenc", ["--quiet", "--serial", "333", first + ".wav", opus])
        try #require(opusenc.status == 0, "opusenc: \(opusenc.stderr)")
        let chain = scratch.path("chain.ogg")
        try [first, second, opus].reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))) }
            .write(to: URL(fileURLWithPath: chain))
        let decoder = try VorbisDecoder(path: chain)
        #expect(decoder.lengthFrames == nil)
        var pcm: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000 * 4, alignment: 16)
        defer { buffer.deallocate() }
        let error = #expect(throws: DecoderError.self) {
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { break }
                pcm += buffer[0..<frames * 4]
            }
        }
        #expect(
            error?.reason.contains("changes to 1 channels at 22050 Hz after 1.0 s") == true,
            "\(String(describing: error))")
        expectSamePCM(pcm, try oggdecPCM(first))
    }

    @Test("opening and decoding bad and good Vorbis files many times leaks neither memory nor descriptors")
    func noLeaks() async throws {
        let scratch = try ScratchDirectory()
        let good = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 0.5, quality: "1").make(in: scratch)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let cut = scratch.path("cut.ogg")
        try self.writeFile(bytes.prefix(bytes.count / 2), cut)
        let header = scratch.path("header.ogg")
        try self.writeFile(bytes.prefix(300), header)
        let paths = [good, cut, header]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        func cycle() {
            for path in paths {
                _ = try? VorbisDecoder.facts(path: path)
                _ = try? VorbisDecoder.comments(path: path)
                guard let decoder = try? VorbisDecoder(path: path) else { continue }
                while let frames = try? decoder.read(into: buffer), frames > 0 {}
                try? decoder.seek(toFrame: 100)
            }
        }
        let growth = leakGrowth(rounds: 150, cycle)
        // An open OggVorbis_File with its decoder holds tens of KiB: a leak per open shows as many MiB.
        #expect(growth.bytes < 16 << 20)
        #expect(growth.descriptors < 200)
    }

}

@Suite("VorbisDecoder.facts: headers and the end-of-stream page, as mpd scans them")
struct VorbisFactsTests {
    @Test("the duration is mpd's: whole milliseconds; none for a file cut short or with junk after its end")
    func durations() throws {
        let scratch = try ScratchDirectory()
        let path = try VorbisMaterial(sampleRate: 44100, channels: 2, seconds: 4.5678, quality: "3").make(
            in: scratch, name: "frac.ogg", comments: ["ARTIST=Frac"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // mpd 0.23.12 on such files: 4.567 (201,440 frames at 44.1 kHz, cut to the millisecond), and
        // no duration for the other two.
        let facts = try VorbisDecoder.facts(path: path)
        #expect(facts.duration == 4.567)
        #expect(facts.tags[.artist] == ["Frac"])
        #expect(facts.tags == (try VorbisDecoder(path: path)).tags)
        let cut = scratch.path("cut.ogg")
        try Data(bytes.prefix(bytes.count * 2 / 3)).write(to: URL(fileURLWithPath: cut))
        let cutFacts = try VorbisDecoder.facts(path: cut)
        #expect(cutFacts.duration == nil && cutFacts.sampleRate == 44100 && cutFacts.channels == 2)
        let trailing = scratch.path("trailing.ogg")
        try Data(bytes + [UInt8](repeating: 0, count: OggEndOfStream.tailBytes + 10)).write(
            to: URL(fileURLWithPath: trailing))
        #expect(try VorbisDecoder.facts(path: trailing).duration == nil)
    }
}
