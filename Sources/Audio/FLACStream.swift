import CFLAC
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// One libFLAC stream decoder on one open file, and what its callbacks read from and write into: the
/// file's descriptor, the metadata seen, and the PCM of the block last decoded, converted to the
/// output's sample format, waiting for `FLACDecoder.read` to drain it.
final class FLACStream {
    /// STREAMINFO's figures, checked.
    struct Info {
        var sampleRate: Int
        var channels: Int
        var bitsPerSample: Int
        /// Nil when STREAMINFO records 0 (unknown).
        var totalSamples: Int?
        var minimumBlockSize: Int
        var maximumBlockSize: Int
    }

    /// What decoded blocks are converted to.
    struct Output {
        var format: SampleFormat
        var bitsPerSample: Int
        var channels: Int
    }

    let descriptor: Int32
    let fileSize: UInt64
    let kind: AudioFileKind
    let path: String
    private(set) var decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    private var isClosed = false

    /// Where the next read callback reads from.
    private var offset: UInt64 = 0
    /// STREAMINFO, once read (`open` refuses a stream without one).
    var info = Info(
        sampleRate: 0, channels: 0, bitsPerSample: 0, totalSamples: nil, minimumBlockSize: 0, maximumBlockSize: 0)
    private var hasInfo = false
    /// Every `NAME=value` comment, in file order.
    var comments: [(name: String, value: String)] = []
    /// The first PICTURE block's picture, when pictures are wanted.
    var picture: EmbeddedPicture?
    /// Set when reading the file failed (errno's words).
    var readFailure: String?
    /// Set by the write callback when a block cannot be played as the stream's format.
    var refusal: String?
    /// Damage libFLAC reported and got over (the last one).
    var lastStreamError: String?
    /// Whether libFLAC reported damage after the block last written (at the end: the file was cut
    /// there); damage followed by good blocks was skipped over.
    private(set) var damagedSinceLastBlock = false
    /// The output's format; nil while only metadata is read.
    var output: Output?

    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var pendingEnd = 0
    /// Frames in the block last written.
    private(set) var lastBlockFrames = 0

    private init(
        descriptor: Int32, fileSize: UInt64, kind: AudioFileKind, path: String,
        decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    ) {
        self.descriptor = descriptor
        self.fileSize = fileSize
        self.kind = kind
        self.path = path
        self.decoder = decoder
    }

    /// Frames decoded and not yet drained.
    var pendingFrames: Int {
        guard let output = self.output else { return 0 }
        return (self.pendingEnd - self.pendingStart) / (output.channels * output.format.bytesPerSample)
    }

    /// Opens `path`, sets up libFLAC on it (native or Ogg FLAC, from its first bytes) and reads its
    /// metadata up to the first audio frame.
    /// - Throws: `DecoderError` for a file that cannot be opened, or whose metadata libFLAC cannot read
    ///   or is not a playable stream.
    static func open(path: String, wantsPictures: Bool) throws(DecoderError) -> FLACStream {
        let descriptor = try MP3Decoder.openFile(path)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else {
            _ = Glibc.close(descriptor)
            throw .readFailed(path: path, reason: "cannot tell the file's size")
        }
        var head = [UInt8](repeating: 0, count: 4)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 4, 0) }
        let kind: AudioFileKind = count == 4 && head == Array("OggS".utf8) ? .oggFLAC : .flac
        guard let decoder = FLAC__stream_decoder_new() else {
            _ = Glibc.close(descriptor)
            throw .library(path: path, call: "FLAC__stream_decoder_new", reason: "out of memory")
        }
        let stream = FLACStream(
            descriptor: descriptor, fileSize: UInt64(info.st_size), kind: kind, path: path, decoder: decoder)
        var opened = false
        defer { if !opened { stream.close() } }
        try stream.start(wantsPictures: wantsPictures)
        opened = true
        return stream
    }

    private func start(wantsPictures: Bool) throws(DecoderError) {
        _ = FLAC__stream_decoder_set_md5_checking(self.decoder, 0)
        _ = FLAC__stream_decoder_set_metadata_respond(self.decoder, FLAC__METADATA_TYPE_VORBIS_COMMENT)
        if wantsPictures {
            _ = FLAC__stream_decoder_set_metadata_respond(self.decoder, FLAC__METADATA_TYPE_PICTURE)
        }
        let client = Unmanaged.passUnretained(self).toOpaque()
        let status =
            self.kind == .oggFLAC
            ? FLAC__stream_decoder_init_ogg_stream(
                self.decoder, flacRead, flacSeek, flacTell, flacLength, flacEOF, flacWrite, flacMetadata, flacError,
                client)
            : FLAC__stream_decoder_init_stream(
                self.decoder, flacRead, flacSeek, flacTell, flacLength, flacEOF, flacWrite, flacMetadata, flacError,
                client)
        if status == FLAC__STREAM_DECODER_INIT_STATUS_UNSUPPORTED_CONTAINER {
            // A libFLAC built without Ogg (FLAC_API_SUPPORTS_OGG_FLAC 0); Debian's has it.
            throw .unsupported(path: self.path, reason: "this libFLAC was built without Ogg FLAC")
        }
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw .library(
                path: self.path, call: "FLAC__stream_decoder_init_stream", reason: "init status \(status.rawValue)")
        }
        let ok = FLAC__stream_decoder_process_until_end_of_metadata(self.decoder) != 0
        if let failure = self.readFailure {
            throw .readFailed(path: self.path, reason: failure)
        }
        if let refusal = self.refusal {
            throw self.damaged(refusal)
        }
        guard self.hasInfo else {
            let state = FLAC__stream_decoder_get_state(self.decoder)
            if state == FLAC__STREAM_DECODER_END_OF_STREAM {
                throw self.damaged("cut short in its metadata, before STREAMINFO")
            }
            throw self.damaged(self.lastStreamError ?? (ok ? "no STREAMINFO block" : Self.describe(state)))
        }
    }

    deinit {
        self.close()
    }

    /// Ends libFLAC's decoder and closes the file; safe to call twice.
    func close() {
        guard !self.isClosed else { return }
        self.isClosed = true
        _ = FLAC__stream_decoder_finish(self.decoder)
        FLAC__stream_decoder_delete(self.decoder)
        _ = Glibc.close(self.descriptor)
    }

    func damaged(_ reason: String) -> DecoderError {
        .damaged(path: self.path, format: self.kind.displayName, reason: reason)
    }

    // MARK: - Pending PCM

    /// Copies pending PCM (whole frames) into `destination`, at most `capacity` bytes; returns the bytes.
    func drain(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        guard let output = self.output else { return 0 }
        let bytesPerFrame = output.channels * output.format.bytesPerSample
        let bytes = min(capacity, self.pendingEnd - self.pendingStart) / bytesPerFrame * bytesPerFrame
        guard bytes > 0 else { return 0 }
        self.pending.withUnsafeBytes { source in
            destination.copyMemory(from: source.baseAddress! + self.pendingStart, byteCount: bytes)
        }
        self.pendingStart += bytes
        return bytes
    }

    func discardPending() {
        self.pendingStart = 0
        self.pendingEnd = 0
    }

    // MARK: - Callbacks

    fileprivate func readBytes(_ buffer: UnsafeMutablePointer<FLAC__byte>, _ wanted: Int) -> (Int, Bool) {
        while true {
            let got = pread(self.descriptor, buffer, wanted, off_t(clamping: self.offset))
            if got >= 0 {
                self.offset += UInt64(got)
                return (got, true)
            }
            if errno == EINTR { continue }
            self.readFailure = String(cString: strerror(errno))
            return (0, false)
        }
    }

    fileprivate func seekTo(_ target: UInt64) -> Bool {
        guard target <= self.fileSize else { return false }
        self.offset = target
        return true
    }

    fileprivate var atEnd: Bool { self.offset >= self.fileSize }
    fileprivate var tell: UInt64 { self.offset }

    fileprivate func take(_ block: UnsafePointer<FLAC__StreamMetadata>) {
        switch block.pointee.type {
        case FLAC__METADATA_TYPE_STREAMINFO:
            guard !self.hasInfo else { return }
            switch Self.info(block.pointee.data.stream_info) {
            case .success(let info):
                self.info = info
                self.hasInfo = true
            case .failure(let refusal):
                self.refusal = refusal.reason
            }
        case FLAC__METADATA_TYPE_VORBIS_COMMENT:
            Self.appendComments(of: block.pointee.data.vorbis_comment, to: &self.comments)
        case FLAC__METADATA_TYPE_PICTURE:
            guard self.picture == nil else { return }
            let block = block.pointee.data.picture
            let mime = block.mime_type.map { String(cString: $0) }
            // MPD passes over a picture given by URL.
            guard mime != "-->", let data = block.data, block.data_length > 0 else { return }
            self.picture = EmbeddedPicture(
                mimeType: mime?.isEmpty == false ? mime : nil,
                data: Array(UnsafeBufferPointer(start: data, count: Int(block.data_length))))
        default:
            return
        }
    }

    fileprivate func write(_ frame: UnsafePointer<FLAC__Frame>, _ channels: UnsafePointer<UnsafePointer<FLAC__int32>?>)
        -> Bool
    {
        guard let output = self.output else { return true }
        let header = frame.pointee.header
        if Int(header.sample_rate) != self.info.sampleRate {
            self.refusal =
                "changes its sample rate mid-stream, from \(self.info.sampleRate) Hz to \(header.sample_rate) Hz"
            return false
        }
        if Int(header.channels) != output.channels {
            self.refusal = "changes its channel count mid-stream, from \(output.channels) to \(header.channels)"
            return false
        }
        if Int(header.bits_per_sample) != output.bitsPerSample {
            self.refusal =
                "changes its bit depth mid-stream, from \(output.bitsPerSample) to \(header.bits_per_sample) bits"
            return false
        }
        let frames = Int(header.blocksize)
        let count = output.channels
        let bytes = frames * count * output.format.bytesPerSample
        if self.pending.count < bytes {
            self.pending = [UInt8](repeating: 0, count: bytes)
        }
        self.pendingStart = 0
        self.pendingEnd = bytes
        self.lastBlockFrames = frames
        self.damagedSinceLastBlock = false
        FLACSamples.interleave(
            channels, frames: frames, channelCount: count, bits: output.bitsPerSample, as: output.format,
            into: &self.pending)
        return true
    }

    fileprivate func noteError(_ status: FLAC__StreamDecoderErrorStatus) {
        self.damagedSinceLastBlock = true
        self.lastStreamError =
            switch status {
            case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync: bytes that are not FLAC"
            case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "a bad frame header"
            case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "a frame whose CRC does not match"
            case FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM: "data libFLAC cannot parse"
            default: "bad metadata"
            }
    }

    // MARK: - Metadata

    /// Why a STREAMINFO block cannot be played.
    struct InfoRefusal: Error {
        var reason: String
    }

    /// STREAMINFO's figures, checked: a rate of 0, more than 8 channels or a depth libFLAC cannot
    /// decode are refused.
    static func info(_ streamInfo: FLAC__StreamMetadata_StreamInfo) -> Result<Info, InfoRefusal> {
        guard streamInfo.sample_rate > 0 else {
            return .failure(InfoRefusal(reason: "bad STREAMINFO: a sample rate of 0 Hz"))
        }
        guard (1...8).contains(streamInfo.channels) else {
            return .failure(InfoRefusal(reason: "bad STREAMINFO: \(streamInfo.channels) channels"))
        }
        guard (4...32).contains(streamInfo.bits_per_sample) else {
            return .failure(InfoRefusal(reason: "bad STREAMINFO: \(streamInfo.bits_per_sample) bits per sample"))
        }
        let total = streamInfo.total_samples
        return .success(
            Info(
                sampleRate: Int(streamInfo.sample_rate), channels: Int(streamInfo.channels),
                bitsPerSample: Int(streamInfo.bits_per_sample),
                totalSamples: total == 0 || total > UInt64(Int.max) ? nil : Int(total),
                minimumBlockSize: Int(streamInfo.min_blocksize), maximumBlockSize: Int(streamInfo.max_blocksize)))
    }

    /// Appends the `NAME=value` comments of a VORBIS_COMMENT block, in file order.
    static func appendComments(
        of block: FLAC__StreamMetadata_VorbisComment, to comments: inout [(name: String, value: String)]
    ) {
        guard let entries = block.comments else { return }
        for index in 0..<Int(block.num_comments) {
            let entry = entries[index]
            guard let bytes = entry.entry else { continue }
            let comment = UnsafeBufferPointer(start: bytes, count: Int(entry.length))
            if let pair = VorbisComments.split(comment) { comments.append(pair) }
        }
    }

    /// STREAMINFO and the comments of a native FLAC file (an ID3v2 tag before `fLaC` passed over),
    /// read with libFLAC's simple metadata iterator: block headers only, and the bodies of STREAMINFO
    /// and VORBIS_COMMENT; no stream decoder is set up. Nil for anything out of the ordinary (not
    /// native FLAC, STREAMINFO missing, not first or refused, a block that does not read, a file that
    /// cannot be opened): `open`, which says why, is then the way.
    static func nativeMetadata(path: String) -> (info: Info, comments: [(name: String, value: String)])? {
        guard let iterator = FLAC__metadata_simple_iterator_new() else { return nil }
        defer { FLAC__metadata_simple_iterator_delete(iterator) }
        let name = PathEscaping.systemPath(path)
        guard FLAC__metadata_simple_iterator_init(iterator, name, 1, 0) != 0,
            FLAC__metadata_simple_iterator_get_block_type(iterator) == FLAC__METADATA_TYPE_STREAMINFO,
            let first = FLAC__metadata_simple_iterator_get_block(iterator)
        else { return nil }
        let checked = Self.info(first.pointee.data.stream_info)
        FLAC__metadata_object_delete(first)
        guard case .success(let info) = checked else { return nil }
        var comments: [(name: String, value: String)] = []
        while FLAC__metadata_simple_iterator_is_last(iterator) == 0 {
            // A block running past the end fails here (its successor's header does not read).
            guard FLAC__metadata_simple_iterator_next(iterator) != 0 else { return nil }
            switch FLAC__metadata_simple_iterator_get_block_type(iterator) {
            case FLAC__METADATA_TYPE_STREAMINFO:
                // A second STREAMINFO: the stream decoder's way decides.
                return nil
            case FLAC__METADATA_TYPE_VORBIS_COMMENT:
                guard let block = FLAC__metadata_simple_iterator_get_block(iterator) else { return nil }
                Self.appendComments(of: block.pointee.data.vorbis_comment, to: &comments)
                FLAC__metadata_object_delete(block)
            default:
                continue
            }
        }
        return (info, comments)
    }

    // MARK: - Helpers

    /// libFLAC's decoder state, in words.
    static func describe(_ state: FLAC__StreamDecoderState) -> String {
        switch state {
        case FLAC__STREAM_DECODER_OGG_ERROR: "a broken Ogg layer"
        case FLAC__STREAM_DECODER_SEEK_ERROR: "a failed seek"
        case FLAC__STREAM_DECODER_ABORTED: "decoding aborted"
        case FLAC__STREAM_DECODER_MEMORY_ALLOCATION_ERROR: "out of memory"
        case FLAC__STREAM_DECODER_END_OF_STREAM: "cut short"
        default: "libFLAC decoder state \(state.rawValue)"
        }
    }

    /// `frames` at `rate` in seconds, one decimal: "1.2".
    static func seconds(_ frames: Int, _ rate: Int) -> String {
        let tenths = rate > 0 ? frames / max(rate / 10, 1) : 0
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The file's bytes over its duration, in kbit/s; 0 when the length is unknown.
    static func averageBitrate(fileSize: UInt64, info: Info) -> Int {
        guard let total = info.totalSamples, total > 0 else { return 0 }
        let kbits = Double(fileSize) * 8 * Double(info.sampleRate) / Double(total) / 1000
        return kbits.isFinite && kbits < 1e9 ? Int(kbits) : 0
    }
}

// libFLAC's callbacks; `client` is the `FLACStream`, unretained (it outlives its decoder).

private func stream(_ client: UnsafeMutableRawPointer?) -> FLACStream {
    Unmanaged<FLACStream>.fromOpaque(client!).takeUnretainedValue()
}

private let flacRead: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    guard let buffer, let bytes, bytes.pointee > 0 else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    let (got, ok) = stream(client).readBytes(buffer, bytes.pointee)
    bytes.pointee = got
    if !ok { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    return got == 0 ? FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM : FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
}

private let flacSeek: FLAC__StreamDecoderSeekCallback = { _, offset, client in
    stream(client).seekTo(offset) ? FLAC__STREAM_DECODER_SEEK_STATUS_OK : FLAC__STREAM_DECODER_SEEK_STATUS_ERROR
}

private let flacTell: FLAC__StreamDecoderTellCallback = { _, offset, client in
    offset?.pointee = stream(client).tell
    return FLAC__STREAM_DECODER_TELL_STATUS_OK
}

private let flacLength: FLAC__StreamDecoderLengthCallback = { _, length, client in
    length?.pointee = stream(client).fileSize
    return FLAC__STREAM_DECODER_LENGTH_STATUS_OK
}

private let flacEOF: FLAC__StreamDecoderEofCallback = { _, client in
    stream(client).atEnd ? 1 : 0
}

private let flacWrite: FLAC__StreamDecoderWriteCallback = { _, frame, buffer, client in
    guard let frame, let buffer else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
    return stream(client).write(frame, buffer)
        ? FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE : FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
}

private let flacMetadata: FLAC__StreamDecoderMetadataCallback = { _, block, client in
    guard let block else { return }
    stream(client).take(block)
}

private let flacError: FLAC__StreamDecoderErrorCallback = { _, status, client in
    stream(client).noteError(status)
}

/// libFLAC's decoded block, one array of 32-bit integers per channel at the stream's depth, written
/// interleaved in the sample format asked for: the file's and the stream's decoders both write it so.
enum FLACSamples {
    static func interleave(
        _ channels: UnsafePointer<UnsafePointer<FLAC__int32>?>, frames: Int, channelCount count: Int, bits: Int,
        as format: SampleFormat, into pending: inout [UInt8]
    ) {
        pending.withUnsafeMutableBytes { raw in
            for channel in 0..<count {
                guard let source = channels[channel] else { continue }
                switch format {
                case .signed16:
                    let target = raw.baseAddress!.assumingMemoryBound(to: Int16.self)
                    let shift = Int32(16 - bits)
                    for index in 0..<frames {
                        target[index * count + channel] = Int16(truncatingIfNeeded: source[index] << shift)
                    }
                case .signed24:
                    // Widened to 24 bits, then sign-extended from bit 23 (what the low three bytes hold).
                    let target = raw.baseAddress!.assumingMemoryBound(to: Int32.self)
                    let shift = Int32(24 - bits)
                    for index in 0..<frames {
                        target[index * count + channel] = (source[index] << (shift + 8)) >> 8
                    }
                case .signed32:
                    let target = raw.baseAddress!.assumingMemoryBound(to: Int32.self)
                    let shift = Int32(32 - bits)
                    for index in 0..<frames {
                        target[index * count + channel] = source[index] << shift
                    }
                case .float32:
                    let target = raw.baseAddress!.assumingMemoryBound(to: Float.self)
                    let scale = 1 / Float(sign: .plus, exponent: bits - 1, significand: 1)
                    for index in 0..<frames {
                        target[index * count + channel] = Float(source[index]) * scale
                    }
                }
            }
        }
    }
}
