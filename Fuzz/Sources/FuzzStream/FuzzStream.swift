// Fuzzes what a radio station's bytes go through in the daemon: StreamDecoders.open chooses a decoder
// by the announced type and the first bytes (MP3 through libmpg123's feed, FLAC, Ogg Vorbis and Opus),
// which is prepared and read as the bytes arrive in pieces, with waits and reconnections between
// them. Besides the sanitizers' crashes, hangs and leaks, it checks what a stream decoder promises:
// reads never write past the buffer, the position counts the frames read, the format stays, a wait
// is not an error, and errors name the station.

import Audio
import FuzzSupport

/// The station's address in every error.
let stationURL = "http://fuzz.invalid/stream"

/// The content types a server may announce; the input's first byte picks one (or none).
let announcedTypes: [String?] = [
    "audio/mpeg", "audio/ogg", "application/ogg", "audio/flac", "application/octet-stream", nil, "audio/aacp",
    "text/html", "audio/x-mpegurl", "audio/opus",
]

/// The input's bytes handed out in pieces: `.waiting` after each piece until `advance()`, a
/// discontinuity between some, `.end` after the last.
final class PiecewiseSource: StreamByteSource, @unchecked Sendable {
    // @unchecked: one thread (the fuzzer's) uses it.
    let url = stationURL
    let contentType: String?
    let failure: String? = nil
    private let bytes: [UInt8]
    private var random: UInt64
    private var offset = 0
    /// Where the piece handed out now ends.
    private var pieceEnd = 0
    private var discontinuityDue = false

    init(bytes: [UInt8], contentType: String?, seed: UInt8) {
        self.bytes = bytes
        self.contentType = contentType
        self.random = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    }

    /// Whether every byte has arrived (read or not).
    var allArrived: Bool { self.pieceEnd >= self.bytes.count }

    /// Lets the next piece arrive: 1 byte to 8 KiB, sometimes after a reconnection.
    func advance() {
        guard self.pieceEnd < self.bytes.count else { return }
        self.random ^= self.random << 13
        self.random ^= self.random >> 7
        self.random ^= self.random << 17
        let size = Int(self.random % 8192) + 1
        self.discontinuityDue = self.pieceEnd > 0 && self.random % 16 == 0
        self.pieceEnd = min(self.bytes.count, self.pieceEnd + size)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        if self.discontinuityDue {
            self.discontinuityDue = false
            return .discontinuity
        }
        let count = min(buffer.count, self.pieceEnd - self.offset)
        guard count > 0 else { return self.offset >= self.bytes.count ? .end : .waiting }
        self.bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + self.offset, byteCount: count)
        }
        self.offset += count
        return .bytes(count)
    }

    func peek(count: Int) -> [UInt8] {
        Array(self.bytes[self.offset..<min(self.pieceEnd, self.offset + max(0, count))])
    }
}

/// libFuzzer's entry point: a type, a sample format, a seed for the pieces, then the station's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size >= 3, let data else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let type = announcedTypes[Int(input[0]) % announcedTypes.count]
    let sampleFormat: SampleFormat = input[1] % 2 == 0 ? .signed16 : .float32
    let source = PiecewiseSource(bytes: Array(input[3...]), contentType: type, seed: input[2])
    source.advance()
    do {
        try play(source, sampleFormat: sampleFormat)
    } catch {
        require(error.path == stationURL, "an error names another station: \(error)")
        require(!error.reason.isEmpty, "an error without a reason")
    }
    return 0
}

/// Opens, prepares and reads the station to its end, as the engine does, checking as it goes.
func play(_ source: PiecewiseSource, sampleFormat: SampleFormat) throws(DecoderError) {
    // The engine opens once a few bytes are in (and refuses what they show is not audio).
    while source.peek(count: 64).count < 64, !source.allArrived {
        source.advance()
    }
    let decoder = try StreamDecoders.open(source: source, sampleFormat: sampleFormat, replayGain: .off)
    var prepared = false
    for _ in 0..<100_000 {
        if try decoder.prepare() {
            prepared = true
            break
        }
        require(decoder.format == nil, "a format before prepare() says so")
        if source.allArrived { break }
        source.advance()
    }
    guard prepared, let format = decoder.format else { return }
    // FLAC's STREAMINFO holds a rate of up to 2^20 - 1 Hz, which libFLAC decodes; outputs refuse what
    // they cannot play.
    require(format.sampleRate > 0 && format.sampleRate < 1 << 20, "format \(format)")
    require((1...8).contains(format.channels), "format \(format)")

    let frameCapacity = 1200
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: frameCapacity * format.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var decoded = decoder.position
    for _ in 0..<1_000_000 {
        switch try decoder.read(into: buffer) {
        case .frames(let frames):
            require(frames > 0 && frames <= frameCapacity, "read \(frames) frames into a buffer of \(frameCapacity)")
            decoded += frames
            require(decoder.position == decoded, "position \(decoder.position) after \(decoded) frames")
            let now = decoder.format.map(\.description) ?? "none"
            require(decoder.format == format, "the format changed from \(format) to \(now)")
        case .waiting:
            if source.allArrived {
                // Every byte is in and read: a decoder may wait for a partial frame that never comes.
                return
            }
            source.advance()
        case .ended:
            return
        }
    }
}
