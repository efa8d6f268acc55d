import CFLAC
import MusicTags

/// A native FLAC network stream decoded with libFLAC's stream decoder as its bytes arrive, never
/// waiting for them.
///
/// libFLAC pulls bytes through a read callback and cannot be told "not yet": a short read in the middle
/// of a frame would end the stream. So its callbacks are served from bytes already here, and a frame is
/// decoded only when enough are: the whole metadata before it is read, then at least one frame's worth
/// (STREAMINFO's largest frame, or a bound no frame of STREAMINFO's block size can pass when it records
/// none) or the connection's end. The PCM is the file decoder's: the stream's own depth (`flac -d`),
/// floats as `sample / 2^(bits-1)`.
///
/// A `.discontinuity` (a new connection) first decodes the frames the old connection delivered whole,
/// then starts a new libFLAC decoder, expecting `fLaC` and metadata again (a connection that begins
/// mid-way, at a frame, is decoded as the stream's format). A format different from the first
/// connection's ends the stream with an error naming both.
public final class FLACStreamDecoder: StreamDecoder {
    /// What it reads.
    public let source: any StreamByteSource
    /// The format of what `read(into:)` writes; nil until `prepare()` has returned true.
    public private(set) var format: AudioFormat?
    /// Frames written so far.
    public private(set) var position = 0
    /// The bitrate of the frames last decoded, kbit/s; 0 before two.
    public private(set) var bitrate = 0
    /// The tags of the connection's VORBIS_COMMENT block.
    public private(set) var tags = Tags()
    /// Changes each time `tags` does.
    public private(set) var tagsVersion = 0

    /// The most metadata held before the audio: a connection with more is refused.
    static let metadataLimit = 16 << 20
    /// How many bytes one read from the source takes at most.
    static let readBytes = 64 * 1024

    private let requested: SampleFormat
    private let replayGain: ReplayGain
    private var gainFactor = 1.0

    private var decoder: UnsafeMutablePointer<FLAC__StreamDecoder>?
    /// Bytes that have arrived and libFLAC has not taken: `buffer[start..<end]`.
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    /// Bytes handed to libFLAC on this connection (what its tell callback says).
    private var given: UInt64 = 0
    /// Whether this connection's bytes are all here: a discontinuity or the end was read.
    private var connectionClosed = false
    /// Whether the source ended (else a new connection follows the closed one).
    private var sourceEnded = false
    private var ended = false
    /// ID3v2 bytes still to pass over at the start of a connection.
    private var skipping = 0
    /// The connection's metadata was read and its decoder set up.
    private var connectionReady = false
    /// STREAMINFO of the stream, once read.
    private var info: StreamInfo?
    private var frameBound = 0
    /// The STREAMINFO and comments of the connection's metadata, as libFLAC reads them.
    private var newInfo: StreamInfo?
    private var newComments: [(name: String, value: String)] = []
    /// Bytes read from the source on this connection (ID3v2 tags included).
    private var received = 0
    /// Whether the connection's decoder has written no frame yet.
    private var firstFrame = true
    /// Damage libFLAC reported (the last), for messages.
    private var lastStreamError: String?
    /// Set by the read callback when libFLAC wanted bytes that have not arrived.
    private var starved = false
    /// Set by the write callback when a frame is not of the stream's format.
    private var refusal: String?
    private var lastDecodePosition: UInt64 = 0
    private var error: DecoderError?

    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var pendingEnd = 0
    private var lastBlockFrames = 0

    /// A decoder for `source`; nothing is read until `prepare()`. Integers come at the stream's own
    /// depth whatever integer format is asked; `.float32` gives floats. `replayGain` is applied where
    /// the stream's Vorbis comments carry gains, else nothing.
    public init(source: any StreamByteSource, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.source = source
        self.requested = sampleFormat
        self.replayGain = replayGain
    }

    deinit {
        self.dropDecoder()
    }

    /// Reads what has arrived as far as the end of the first connection's metadata; true once
    /// `format` is known.
    /// - Throws: `DecoderError.damaged` for bytes that are not FLAC, metadata libFLAC refuses or that
    ///   ends before any audio.
    public func prepare() throws(DecoderError) -> Bool {
        if self.format != nil { return true }
        return try self.readyConnection()
    }

    /// Decodes what has arrived into `buffer`, as many whole frames as fit.
    /// - Throws: `DecoderError` when libFLAC cannot go on, or a new connection brings another format.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> StreamDecodeResult {
        guard try self.prepare(), let format = self.format else { return .waiting }
        let bytesPerFrame = format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame * bytesPerFrame
        guard capacity > 0, let base = buffer.baseAddress else { return .waiting }
        var filled = 0
        decoding: while filled < capacity {
            if self.pendingEnd > self.pendingStart {
                let bytes = min(capacity - filled, self.pendingEnd - self.pendingStart) / bytesPerFrame * bytesPerFrame
                self.pending.withUnsafeBytes { source in
                    (base + filled).copyMemory(from: source.baseAddress! + self.pendingStart, byteCount: bytes)
                }
                self.pendingStart += bytes
                filled += bytes
                continue
            }
            if let error = self.error {
                if filled > 0 { break decoding }
                self.error = nil
                self.ended = true
                throw error
            }
            if self.ended { break decoding }
            do {
                if !(try self.decodeNext()) { break decoding }
            } catch {
                self.error = error
            }
        }
        PCMGain.apply(
            self.gainFactor, to: UnsafeMutableRawBufferPointer(start: base, count: filled),
            format: format.sampleFormat)
        let frames = filled / bytesPerFrame
        self.position += frames
        if frames > 0 { return .frames(frames) }
        return self.ended ? .ended : .waiting
    }

    // MARK: - Decoding

    /// Decodes one frame into `pending` when a whole one has surely arrived, or moves to the next
    /// connection, or notes the end. False when more bytes are needed first.
    private func decodeNext() throws(DecoderError) -> Bool {
        if !self.connectionReady {
            guard try self.readyConnection() else { return false }
            return true
        }
        guard let decoder = self.decoder else { return false }
        // A connection's first frame may follow part of one (a connection that begins mid-way).
        let needed = self.firstFrame ? 2 * self.frameBound : self.frameBound
        while !self.connectionClosed, self.available(decoder) < needed {
            guard self.pull() == .bytes else { break }
        }
        if !self.connectionClosed, self.available(decoder) < needed { return false }
        self.starved = false
        let ok = FLAC__stream_decoder_process_single(decoder) != 0
        let state = FLAC__stream_decoder_get_state(decoder)
        if let refusal = self.refusal {
            self.pendingStart = 0
            self.pendingEnd = 0
            throw self.damaged(refusal)
        }
        if self.starved {
            throw self.damaged("no whole frame in \(needed) bytes: damaged, or bytes that are not FLAC")
        }
        if state == FLAC__STREAM_DECODER_END_OF_STREAM {
            // The connection's bytes are used up; a partial frame at its end is dropped with the decoder.
            self.dropDecoder()
            if self.sourceEnded {
                self.ended = true
            } else {
                self.startConnection()
            }
            return true
        }
        guard ok else {
            throw self.damaged(FLACStream.describe(state))
        }
        self.updateBitrate(decoder)
        return true
    }

    /// Bytes here for libFLAC: the buffer's and those its own reader holds.
    private func available(_ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>) -> Int {
        var position: UInt64 = 0
        let held =
            FLAC__stream_decoder_get_decode_position(decoder, &position) != 0 && position <= self.given
            ? Int(self.given - position) : 0
        return self.end - self.start + held
    }

    /// Reads this connection's metadata when it has all arrived, and sets its decoder up. False when
    /// more bytes are needed.
    private func readyConnection() throws(DecoderError) -> Bool {
        while !self.connectionReady {
            if self.connectionClosed, self.end == self.start {
                // Nothing (more) from this connection.
                guard self.sourceEnded else {
                    self.startConnection()
                    continue
                }
                guard self.format != nil else {
                    throw self.damaged(self.received == 0 ? "it ended before any audio" : "it ended in its metadata")
                }
                self.ended = true
                return true
            }
            let metadata = self.metadataLength()
            if case .length(let length) = metadata, length > Self.metadataLimit {
                throw self.damaged("more than \(Self.metadataLimit >> 20) MiB of metadata before its audio")
            }
            switch metadata {
            case .length(let length) where self.end - self.start >= length:
                try self.setUp(expectingMetadata: true)
            case .frames:
                guard self.info != nil else {
                    let head = Array(self.buffer[self.start..<min(self.end, self.start + 12)])
                    let seen = MP3Decoder.containerName(head).map { ": it is \($0)" } ?? ""
                    throw self.damaged("it does not begin with fLaC\(seen)")
                }
                try self.setUp(expectingMetadata: false)
            case .need, .length:
                switch self.pull() {
                case .bytes:
                    continue
                case .waiting:
                    return false
                case .closed:
                    guard self.format != nil else {
                        if self.received == 0, self.sourceEnded { throw self.damaged("it ended before any audio") }
                        throw self.damaged(
                            self.sourceEnded ? "it ended in its metadata" : "its connection broke off in its metadata")
                    }
                    // A later connection cut off in its metadata brings nothing.
                    self.start = self.end
                    self.skipping = 0
                }
            }
        }
        return true
    }

    private enum Metadata {
        /// More bytes are needed to tell.
        case need
        /// `fLaC` and every metadata block take this many bytes.
        case length(Int)
        /// The connection does not begin with `fLaC`.
        case frames
    }

    /// How much metadata the connection's first bytes hold. An ID3v2 tag first is passed over.
    private func metadataLength() -> Metadata {
        let count = self.end - self.start
        let first = self.start
        let id3: [UInt8] = [0x49, 0x44, 0x33]
        if zip(self.buffer[first..<self.end], id3).allSatisfy({ $0 == $1 }) {
            if count < 10 { return self.connectionClosed ? .frames : .need }
            if let size = MP3StreamDecoder.id3v2Size(Array(self.buffer[first..<first + 10])) {
                let dropped = min(size, count)
                self.start += dropped
                self.skipping = size - dropped
                return .need
            }
        }
        if count < 4 { return self.connectionClosed ? .frames : .need }
        guard self.buffer[first..<first + 4].elementsEqual("fLaC".utf8) else { return .frames }
        var offset = 4
        while true {
            guard count >= offset + 4 else { return .need }
            let header = first + offset
            let last = self.buffer[header] & 0x80 != 0
            let length =
                Int(self.buffer[header + 1]) << 16 | Int(self.buffer[header + 2]) << 8 | Int(self.buffer[header + 3])
            offset += 4 + length
            if last || offset > Self.metadataLimit { return .length(offset) }
        }
    }

    /// Starts libFLAC on this connection's bytes; with metadata, reads it and takes (or checks) the
    /// stream's format from its STREAMINFO.
    private func setUp(expectingMetadata: Bool) throws(DecoderError) {
        guard let decoder = FLAC__stream_decoder_new() else {
            throw .library(path: self.source.url, call: "FLAC__stream_decoder_new", reason: "out of memory")
        }
        self.decoder = decoder
        _ = FLAC__stream_decoder_set_md5_checking(decoder, 0)
        _ = FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_VORBIS_COMMENT)
        self.newInfo = nil
        self.newComments = []
        self.refusal = nil
        self.starved = false
        self.firstFrame = true
        let client = Unmanaged.passUnretained(self).toOpaque()
        let status = FLAC__stream_decoder_init_stream(
            decoder, streamRead, nil, streamTell, nil, streamEOF, streamWrite, streamMetadata, streamError, client)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw .library(
                path: self.source.url, call: "FLAC__stream_decoder_init_stream",
                reason: "init status \(status.rawValue)")
        }
        if expectingMetadata {
            let ok = FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0
            if let refusal = self.refusal { throw self.damaged(refusal) }
            guard ok, !self.starved, let info = self.newInfo else {
                throw self.damaged(
                    self.lastStreamError ?? (self.newInfo == nil ? "no STREAMINFO block" : "its metadata does not read")
                )
            }
            try self.take(info)
        }
        self.connectionReady = true
    }

    /// Takes the connection's STREAMINFO and comments: the stream's format on the first, checked
    /// against it afterwards.
    private func take(_ info: StreamInfo) throws(DecoderError) {
        let produced: SampleFormat = self.requested == .float32 ? .float32 : .integer(holding: info.bitsPerSample)
        if let old = self.info,
            old.sampleRate != info.sampleRate || old.channels != info.channels
                || old.bitsPerSample != info.bitsPerSample
        {
            throw .unsupported(
                path: self.source.url,
                reason: "the stream changed its format from \(old.description) to \(info.description)")
        }
        self.info = info
        self.format = AudioFormat(sampleRate: info.sampleRate, channels: info.channels, sampleFormat: produced)
        self.frameBound = info.frameBound
        let tags = VorbisComments.tags(self.newComments)
        if tags != self.tags {
            self.tags = tags
            self.tagsVersion += 1
        }
        if let stored = VorbisComments.storedGain(self.newComments) {
            self.gainFactor = self.replayGain.scale(for: stored).factor
        } else {
            self.gainFactor = 1
        }
    }

    private func startConnection() {
        self.dropDecoder()
        self.connectionClosed = false
        self.connectionReady = false
        self.given = 0
        self.lastDecodePosition = 0
        self.start = 0
        self.end = 0
        self.skipping = 0
    }

    private func dropDecoder() {
        guard let decoder = self.decoder else { return }
        _ = FLAC__stream_decoder_finish(decoder)
        FLAC__stream_decoder_delete(decoder)
        self.decoder = nil
    }

    // MARK: - Bytes

    private enum Pulled {
        case bytes
        case waiting
        /// The connection's bytes are all here (a discontinuity or the end was read).
        case closed
    }

    /// Reads once from the source into the buffer.
    private func pull() -> Pulled {
        if self.connectionClosed { return .closed }
        if self.buffer.count - self.end < Self.readBytes {
            if self.start > 0 {
                let count = self.end - self.start
                self.buffer.withUnsafeMutableBytes { raw in
                    let base = raw.baseAddress!
                    base.copyMemory(from: base + self.start, byteCount: count)
                }
                self.start = 0
                self.end = count
            }
            if self.buffer.count - self.end < Self.readBytes {
                self.buffer += [UInt8](repeating: 0, count: self.end + Self.readBytes - self.buffer.count)
            }
        }
        let end = self.end
        let result = self.buffer.withUnsafeMutableBytes { raw in
            self.source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[end..<end + Self.readBytes]))
        }
        switch result {
        case .bytes(let got):
            var count = min(got, Self.readBytes)
            self.received += count
            if self.skipping > 0 {
                let dropped = min(self.skipping, count)
                self.skipping -= dropped
                count -= dropped
                self.buffer.withUnsafeMutableBytes { raw in
                    let base = raw.baseAddress! + end
                    base.copyMemory(from: base + dropped, byteCount: count)
                }
            }
            self.end += count
            return .bytes
        case .waiting:
            return .waiting
        case .discontinuity:
            self.connectionClosed = true
            return .closed
        case .end:
            self.connectionClosed = true
            self.sourceEnded = true
            return .closed
        }
    }

    // MARK: - Callbacks

    fileprivate func readBytes(_ destination: UnsafeMutablePointer<FLAC__byte>, _ wanted: Int)
        -> (Int, FLAC__StreamDecoderReadStatus)
    {
        let count = min(wanted, self.end - self.start)
        guard count > 0 else {
            if self.connectionClosed { return (0, FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM) }
            // libFLAC cannot be told to wait: the frame was longer than the bound.
            self.starved = true
            return (0, FLAC__STREAM_DECODER_READ_STATUS_ABORT)
        }
        self.buffer.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(destination).copyMemory(from: raw.baseAddress! + self.start, byteCount: count)
        }
        self.start += count
        self.given += UInt64(count)
        return (count, FLAC__STREAM_DECODER_READ_STATUS_CONTINUE)
    }

    fileprivate var tell: UInt64 { self.given }
    fileprivate var atEnd: Bool { self.connectionClosed && self.start == self.end }

    fileprivate func takeMetadata(_ block: UnsafePointer<FLAC__StreamMetadata>) {
        switch block.pointee.type {
        case FLAC__METADATA_TYPE_STREAMINFO:
            guard self.newInfo == nil else { return }
            let raw = block.pointee.data.stream_info
            switch FLACStream.info(raw) {
            case .success(let info):
                self.newInfo = StreamInfo(
                    sampleRate: info.sampleRate, channels: info.channels, bitsPerSample: info.bitsPerSample,
                    maximumBlockSize: info.maximumBlockSize, maximumFrameSize: Int(raw.max_framesize))
            case .failure(let refusal):
                self.refusal = refusal.reason
            }
        case FLAC__METADATA_TYPE_VORBIS_COMMENT:
            FLACStream.appendComments(of: block.pointee.data.vorbis_comment, to: &self.newComments)
        default:
            return
        }
    }

    fileprivate func write(_ frame: UnsafePointer<FLAC__Frame>, _ channels: UnsafePointer<UnsafePointer<FLAC__int32>?>)
        -> Bool
    {
        guard let info = self.info, let format = self.format else { return false }
        let header = frame.pointee.header
        let found = StreamInfo(
            sampleRate: Int(header.sample_rate), channels: Int(header.channels),
            bitsPerSample: Int(header.bits_per_sample), maximumBlockSize: 0, maximumFrameSize: 0)
        if found.sampleRate != info.sampleRate || found.channels != info.channels
            || found.bitsPerSample != info.bitsPerSample
        {
            self.refusal = "the stream changed its format from \(info.description) to \(found.description)"
            return false
        }
        self.firstFrame = false
        let frames = Int(header.blocksize)
        let count = info.channels
        let bytes = frames * count * format.sampleFormat.bytesPerSample
        if self.pending.count < bytes {
            self.pending = [UInt8](repeating: 0, count: bytes)
        }
        self.pendingStart = 0
        self.pendingEnd = bytes
        self.lastBlockFrames = frames
        FLACSamples.interleave(
            channels, frames: frames, channelCount: count, bits: info.bitsPerSample, as: format.sampleFormat,
            into: &self.pending)
        return true
    }

    fileprivate func noteError(_ status: FLAC__StreamDecoderErrorStatus) {
        self.lastStreamError =
            switch status {
            case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync: bytes that are not FLAC"
            case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "a bad frame header"
            case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "a frame whose CRC does not match"
            case FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM: "data libFLAC cannot parse"
            default: "bad metadata"
            }
    }

    private func updateBitrate(_ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>) {
        var now: UInt64 = 0
        guard FLAC__stream_decoder_get_decode_position(decoder, &now) != 0, let format = self.format else { return }
        defer { self.lastDecodePosition = now }
        let frames = self.lastBlockFrames
        guard self.lastDecodePosition > 0, now > self.lastDecodePosition, frames > 0 else { return }
        let kbits = Double(now - self.lastDecodePosition) * 8 * Double(format.sampleRate) / Double(frames) / 1000
        if kbits.isFinite, kbits >= 0, kbits < 1e9 { self.bitrate = Int(kbits) }
    }

    private func damaged(_ reason: String) -> DecoderError {
        .damaged(path: self.source.url, format: "FLAC", reason: reason)
    }
}

/// What of STREAMINFO a stream decoder needs.
struct StreamInfo {
    var sampleRate: Int
    var channels: Int
    var bitsPerSample: Int
    /// 0 when unknown.
    var maximumBlockSize: Int
    /// 0 when unknown (a live encoder cannot know it).
    var maximumFrameSize: Int

    /// `rate:bits:channels`.
    var description: String { "\(self.sampleRate):\(self.bitsPerSample):\(self.channels)" }

    /// The most bytes a frame can take: STREAMINFO's largest frame, and at least what the largest
    /// block stored verbatim takes (a side channel has one bit more), with its headers and CRC.
    var frameBound: Int {
        let block = self.maximumBlockSize > 0 ? self.maximumBlockSize : 65535
        let verbatim = 18 + self.channels * (2 + (block * (self.bitsPerSample + 1) + 7) / 8) + 2 + 64
        return max(verbatim, self.maximumFrameSize)
    }
}

// libFLAC's callbacks; `client` is the `FLACStreamDecoder`, unretained (it outlives its decoder).

private func streamDecoder(_ client: UnsafeMutableRawPointer?) -> FLACStreamDecoder {
    Unmanaged<FLACStreamDecoder>.fromOpaque(client!).takeUnretainedValue()
}

private let streamRead: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    guard let buffer, let bytes, bytes.pointee > 0 else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    let (got, status) = streamDecoder(client).readBytes(buffer, bytes.pointee)
    bytes.pointee = got
    return status
}

private let streamTell: FLAC__StreamDecoderTellCallback = { _, offset, client in
    offset?.pointee = streamDecoder(client).tell
    return FLAC__STREAM_DECODER_TELL_STATUS_OK
}

private let streamEOF: FLAC__StreamDecoderEofCallback = { _, client in
    streamDecoder(client).atEnd ? 1 : 0
}

private let streamWrite: FLAC__StreamDecoderWriteCallback = { _, frame, buffer, client in
    guard let frame, let buffer else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
    return streamDecoder(client).write(frame, buffer)
        ? FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE : FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
}

private let streamMetadata: FLAC__StreamDecoderMetadataCallback = { _, block, client in
    guard let block else { return }
    streamDecoder(client).takeMetadata(block)
}

private let streamError: FLAC__StreamDecoderErrorCallback = { _, status, client in
    streamDecoder(client).noteError(status)
}
