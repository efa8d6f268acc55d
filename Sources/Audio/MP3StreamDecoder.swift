import CMPG123
import MusicTags

/// An MP3 network stream decoded with libmpg123's feed interface as its bytes arrive, never waiting
/// for them.
///
/// Bytes are read from the source into one fixed scratch buffer and fed to libmpg123 only when it asks
/// for more (`MPG123_NEED_MORE`), so it holds at most one read and a partial frame. An ID3v2 tag at the
/// start of a connection is passed over here, without feeding it (a tag may claim 256 MiB, which
/// libmpg123 would hold whole); one of up to 1 MiB is read for `tags` on the way, as the file decoder
/// reads it. The PCM is that of the file decoder: `mpg123 -s` of the same bytes
/// (16-bit), `mpg123 -e f32 -s` for floats, gapless (a LAME header's delay and padding are cut); damage
/// is resynced over, as `mpg123 --resync-limit -1` does.
///
/// A `.discontinuity` (a new connection) starts a new libmpg123 handle, so no frame is spliced from two
/// connections' bytes; the frames the old connection delivered whole are all decoded before. The format
/// is fixed by the first connection: another one afterwards ends the stream with an error naming both.
public final class MP3StreamDecoder: StreamDecoder {
    /// What it reads.
    public let source: any StreamByteSource
    /// The format of what `read(into:)` writes; nil until `prepare()` has returned true.
    public private(set) var format: AudioFormat?
    /// Frames written so far.
    public private(set) var position = 0
    /// The tags of the ID3v2 tag the stream began with (the last connection's that had one); empty
    /// when none did.
    public private(set) var tags = Tags()
    /// Changes each time `tags` does.
    public private(set) var tagsVersion = 0

    /// How many bytes one read from the source takes at most.
    static let scratchBytes = 16 * 1024
    /// The largest ID3v2 tag read for its tags; a larger one (pictures) is passed over unread.
    static let tagLimit = 1 << 20
    /// How many bytes of a connection (past ID3v2 tags) may pass without libmpg123 finding a frame
    /// before the stream is refused as not MP3.
    static let searchLimit = 512 * 1024

    private let produced: SampleFormat
    private let encoding: Int32
    private let replayGain: ReplayGain
    private let scratch: UnsafeMutableRawBufferPointer
    private var handle: OpaquePointer
    /// The first bytes of the connection, or of what follows an ID3v2 tag: a tag's header, perhaps.
    private var head: [UInt8] = []
    /// The first bytes fed on this connection, for messages.
    private var firstFed: [UInt8] = []
    private var headSettled = false
    /// ID3v2 bytes still to pass over.
    private var skipping = 0
    /// The ID3v2 tag being passed over, when it is read for its tags.
    private var tagBytes: [UInt8]?
    /// Bytes fed to libmpg123 on this connection.
    private var fed = 0
    /// Whether libmpg123 told this connection's format (and it was checked and locked).
    private var connectionReady = false
    /// libmpg123 said MPG123_DONE (a LAME header's length was reached): the connection's further bytes
    /// are dropped until a new connection or the end.
    private var connectionDone = false
    private var ended = false
    /// An error met after decoded PCM was handed over, thrown on the next `read`.
    private var deferredError: DecoderError?

    /// A decoder for `source`; nothing is read until `prepare()`. `sampleFormat` `.float32` gives
    /// floats, anything else 16-bit integers (MP3 has no bit depth). `replayGain` is applied where the
    /// stream carries gains (a LAME header, ID3v2 frames); a stream without gains is left as it is.
    /// - Throws: `DecoderError.library` when libmpg123 cannot make a handle.
    public init(source: any StreamByteSource, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.source = source
        self.produced = sampleFormat == .float32 ? .float32 : .signed16
        self.encoding =
            self.produced == .float32 ? Int32(MPG123_ENC_FLOAT_32.rawValue) : Int32(MPG123_ENC_SIGNED_16.rawValue)
        var gain = replayGain
        gain.missingPreampDB = 0
        self.replayGain = gain
        self.handle = try Self.makeHandle(source.url, encoding: self.encoding)
        self.scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.scratchBytes, alignment: 16)
    }

    deinit {
        mpg123_close(self.handle)
        mpg123_delete(self.handle)
        self.scratch.deallocate()
    }

    /// The bitrate of the frame last decoded, in kbit/s; 0 before the first.
    public var bitrate: Int {
        guard self.connectionReady else { return 0 }
        var info = mpg123_frameinfo2()
        guard mpg123_info2(self.handle, &info) == MPG123_OK.rawValue else { return 0 }
        return Int(info.bitrate)
    }

    /// Reads what has arrived until libmpg123 knows the format; true once `format` is set.
    /// - Throws: `DecoderError.notMP3` for bytes in which libmpg123 finds no MPEG audio (or a stream
    ///   that ends before any).
    public func prepare() throws(DecoderError) -> Bool {
        if self.format != nil { return true }
        return try self.readyConnection()
    }

    /// Decodes what has arrived into `buffer`, as many whole frames as fit.
    /// - Throws: `DecoderError` when libmpg123 cannot go on, or a new connection brings another format.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> StreamDecodeResult {
        guard try self.prepare(), let format = self.format else { return .waiting }
        if let error = self.deferredError {
            self.deferredError = nil
            self.ended = true
            throw error
        }
        if self.ended { return .ended }
        let bytesPerFrame = format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame * bytesPerFrame
        guard capacity > 0, let base = buffer.baseAddress else { return .waiting }
        var filled = 0
        decoding: while filled < capacity {
            if !self.connectionReady || self.connectionDone {
                do {
                    if !(try self.readyConnection()) { break decoding }
                } catch {
                    if filled > 0 {
                        self.deferredError = error
                        break decoding
                    }
                    self.ended = true
                    throw error
                }
                if self.ended { break decoding }
                continue
            }
            var done = 0
            let status = mpg123_read(self.handle, base + filled, capacity - filled, &done)
            filled += done
            switch status {
            case MPG123_OK.rawValue, MPG123_NEW_FORMAT.rawValue:
                continue
            case MPG123_DONE.rawValue:
                self.connectionDone = true
            case MPG123_NEED_MORE.rawValue:
                switch self.pull() {
                case .fed:
                    continue
                case .waiting:
                    break decoding
                case .discontinuity:
                    do { try self.newConnection() } catch {
                        if filled > 0 {
                            self.deferredError = error
                            break decoding
                        }
                        self.ended = true
                        throw error
                    }
                case .end:
                    self.ended = true
                    break decoding
                }
            default:
                let error = DecoderError.corrupt(
                    path: self.source.url, reason: String(cString: mpg123_strerror(self.handle)))
                if filled > 0 {
                    self.deferredError = error
                    break decoding
                }
                self.ended = true
                throw error
            }
        }
        let frames = filled / bytesPerFrame
        self.position += frames
        if frames > 0 { return .frames(frames) }
        return self.ended ? .ended : .waiting
    }

    // MARK: - Connections

    /// Feeds this connection until libmpg123 tells its format, then checks it against the stream's and
    /// locks it; after MPG123_DONE, drops bytes until the next connection. False when more bytes are
    /// needed; true when ready (or `ended` is set: the source ended).
    private func readyConnection() throws(DecoderError) -> Bool {
        while true {
            if self.connectionDone {
                switch self.pull(dropping: true) {
                case .fed: continue
                case .waiting: return false
                case .discontinuity: try self.newConnection()
                case .end:
                    self.ended = true
                    return true
                }
                continue
            }
            if self.connectionReady { return true }
            var rate = 0
            var channels: Int32 = 0
            var actual: Int32 = 0
            let status = mpg123_getformat(self.handle, &rate, &channels, &actual)
            if status == MPG123_OK.rawValue {
                try self.adopt(rate: rate, channels: Int(channels))
                return true
            }
            guard status == MPG123_NEED_MORE.rawValue else {
                throw self.notMP3(String(cString: mpg123_strerror(self.handle)))
            }
            if self.fed > Self.searchLimit {
                throw self.notMP3("no MPEG audio frames in its first \(Self.searchLimit / 1024) KiB")
            }
            switch self.pull() {
            case .fed: continue
            case .waiting: return false
            case .discontinuity: try self.newConnection()
            case .end:
                if self.format == nil {
                    throw self.notMP3(
                        self.fed == 0 ? "it ended before any audio" : "no MPEG audio frames found")
                }
                // A later connection that brought no whole frame: the stream simply ends.
                self.ended = true
                return true
            }
        }
    }

    /// Takes the format libmpg123 found on this connection: the stream's on the first, checked against
    /// it afterwards; then locked so that libmpg123 converts a change of channel count within it.
    private func adopt(rate: Int, channels: Int) throws(DecoderError) {
        let found = AudioFormat(sampleRate: rate, channels: channels, sampleFormat: self.produced)
        if let format = self.format, format != found {
            throw .unsupported(
                path: self.source.url,
                reason: "the stream changed its format from \(format) to \(found)")
        }
        try self.check("mpg123_format_none", mpg123_format_none(self.handle))
        try self.check("mpg123_format", mpg123_format(self.handle, rate, Int32(channels), self.encoding))
        _ = self.replayGain.apply(to: self.handle)
        self.format = found
        self.connectionReady = true
    }

    /// Drops the connection's handle and what it held, and starts afresh for the next one.
    private func newConnection() throws(DecoderError) {
        let handle = try Self.makeHandle(self.source.url, encoding: self.encoding)
        mpg123_close(self.handle)
        mpg123_delete(self.handle)
        self.handle = handle
        self.head.removeAll(keepingCapacity: true)
        self.firstFed.removeAll(keepingCapacity: true)
        self.headSettled = false
        self.skipping = 0
        self.tagBytes = nil
        self.fed = 0
        self.connectionReady = false
        self.connectionDone = false
    }

    private static func makeHandle(_ url: String, encoding: Int32) throws(DecoderError) -> OpaquePointer {
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw .library(path: url, call: "mpg123_new", reason: String(cString: mpg123_plain_strerror(code)))
        }
        var made = false
        defer { if !made { mpg123_delete(handle) } }
        func check(_ call: String, _ status: Int32) throws(DecoderError) {
            guard status == MPG123_OK.rawValue else {
                throw .library(path: url, call: call, reason: String(cString: mpg123_strerror(handle)))
            }
        }
        let flags = Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue | MPG123_SKIP_ID3V2.rawValue)
        try check("mpg123_param2", mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0))
        // A burst of damage in a station's stream is resynced over however long it is (`mpg123
        // --resync-limit -1`), not the end of the station: by default libmpg123 gives up after 1 KiB.
        try check("mpg123_param2", mpg123_param2(handle, Int32(MPG123_RESYNC_LIMIT.rawValue), -1, 0))
        try check("mpg123_format_none", mpg123_format_none(handle))
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        let layouts = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
        for index in 0..<count {
            try check("mpg123_format", mpg123_format(handle, rates![index], layouts, encoding))
        }
        try check("mpg123_open_feed", mpg123_open_feed(handle))
        made = true
        return handle
    }

    // MARK: - Bytes

    private enum Pulled {
        case fed
        case waiting
        case discontinuity
        case end
    }

    /// Reads once from the source and feeds what came to libmpg123 (past ID3v2 tags at the start of the
    /// connection), or drops it.
    private func pull(dropping: Bool = false) -> Pulled {
        switch self.source.read(into: self.scratch) {
        case .waiting: return .waiting
        case .discontinuity: return .discontinuity
        case .end:
            // Bytes held to tell a tag apart go to libmpg123 before the end.
            if !dropping, !self.headSettled, !self.head.isEmpty {
                self.headSettled = true
                if self.skipping == 0 { self.feed(self.head[...]) }
                return .fed
            }
            return .end
        case .bytes(let count):
            if !dropping {
                self.take(UnsafeRawBufferPointer(rebasing: self.scratch[0..<min(count, self.scratch.count)]))
            }
            return .fed
        }
    }

    /// Passes over ID3v2 tags at the start of the connection and feeds the rest.
    private func take(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if self.skipping > 0 {
                let dropped = min(self.skipping, rest.count)
                self.skipping -= dropped
                self.tagBytes? += rest.prefix(dropped)
                rest = rest.dropFirst(dropped)
                if self.skipping == 0, let tag = self.tagBytes {
                    self.tagBytes = nil
                    self.takeTags(tag)
                }
                continue
            }
            if self.headSettled {
                self.feed(UnsafeRawBufferPointer(rebasing: rest))
                return
            }
            let wanted = 10 - self.head.count
            self.head += rest.prefix(wanted)
            rest = rest.dropFirst(wanted)
            if let size = Self.id3v2Size(self.head) {
                // A tag (another may follow): the head starts again after it.
                self.skipping = size - self.head.count
                self.tagBytes = size <= Self.tagLimit ? self.head : nil
                self.head.removeAll(keepingCapacity: true)
            } else if self.head.count == 10 || !Self.mayStartID3(self.head) {
                self.headSettled = true
                self.feed(self.head[...])
            }
        }
    }

    /// The tags of a whole ID3v2 tag, when it holds any.
    private func takeTags(_ tag: [UInt8]) {
        guard let frames = ID3Tags.frames(inRawTag: tag) else { return }
        let tags = ID3Tags.tags(from: frames)
        guard !tags.isEmpty, tags != self.tags else { return }
        self.tags = tags
        self.tagsVersion += 1
    }

    private func feed(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { self.feed($0) }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if self.firstFed.count < 16 { self.firstFed += bytes.prefix(16 - self.firstFed.count) }
        _ = mpg123_feed(self.handle, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        self.fed += bytes.count
    }

    /// The whole size (header and footer included) of the ID3v2 tag whose 10-byte header `head` is.
    static func id3v2Size(_ head: [UInt8]) -> Int? {
        guard head.count >= 10, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33,  // "ID3"
            head[3] != 0xff, head[4] != 0xff, head[6..<10].allSatisfy({ $0 < 0x80 })
        else { return nil }
        let size = head[6..<10].reduce(0) { $0 << 7 | Int($1) }
        let footer = head[5] & 0x10 != 0 ? 10 : 0
        return 10 + size + footer
    }

    private static func mayStartID3(_ head: [UInt8]) -> Bool {
        zip(head, [0x49, 0x44, 0x33] as [UInt8]).allSatisfy { $0 == $1 }
    }

    // MARK: - Errors

    private func notMP3(_ reason: String) -> DecoderError {
        if let container = MP3Decoder.containerName(self.firstFed) {
            return .notMP3(path: self.source.url, reason: "it is \(container)")
        }
        return .notMP3(path: self.source.url, reason: reason)
    }

    private func check(_ call: String, _ status: Int32) throws(DecoderError) {
        guard status == MPG123_OK.rawValue else {
            throw .library(path: self.source.url, call: call, reason: String(cString: mpg123_strerror(self.handle)))
        }
    }
}
