import CMPG123
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes one MP3 file to interleaved PCM with libmpg123, streaming: memory does not grow with the
/// file's length.
///
/// Gapless decoding is on, so for files with a LAME/Xing header the frames produced are exactly the
/// encoder's input: delay and padding are cut. Output is bit-identical to `mpg123 -s` (signed 16-bit)
/// or `mpg123 -e f32 -s` (float). A decoder belongs to one thread at a time: it is not `Sendable`.
public final class MP3Decoder: AudioDecoder {
    /// The path the decoder was opened with, as given.
    public let path: String
    /// The PCM format `read(into:)` produces.
    public let format: AudioFormat
    /// The song's length in frames (after gapless trimming), measured as `SongReader` measures it (see
    /// `StreamLength`), or nil where libmpg123 cannot tell.
    public let lengthFrames: Int?
    /// The song's tags; empty when the file has none.
    public let tags: Tags
    /// The ReplayGain applied, in dB (0 when off): the stored gain as limited by its peak, plus the preamp.
    public let appliedGainDB: Double
    /// The song's MixRamp profile, for crossfades.
    public let mixRamp: MixRamp
    /// The next frame `read(into:)` returns, counted from the start of the song.
    public private(set) var position: Int = 0

    /// MPEG frames decoded and discarded before a seek target.
    static let seekPreroll = 8

    private let handle: OpaquePointer
    /// What libmpg123 reads the file through; it lives as long as the handle.
    private let reader: BlockReader
    private let fileDescriptor: Int32
    private var reachedEnd = false

    /// Opens `path` and reads enough of it to know the format, the length and the tags, and sets up
    /// `replayGain` (off by default: samples bit-identical to `mpg123 -s`).
    /// - Throws: `DecoderError` naming the file and the reason: missing, unreadable, not a regular
    ///   file, empty, not MP3.
    public init(path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.path = path
        let descriptor = try Self.openFile(path)
        var created = false
        defer { if !created { _ = Glibc.close(descriptor) } }

        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw .library(path: path, call: "mpg123_new", reason: String(cString: mpg123_plain_strerror(code)))
        }
        // libmpg123 reads through `reader` from `mpg123_open_handle` to `mpg123_close`.
        let reader = BlockReader(descriptor: descriptor)
        var opened = false
        defer {
            if !created {
                withExtendedLifetime(reader) {
                    if opened { mpg123_close(handle) }
                }
                mpg123_delete(handle)
            }
        }
        let flags = Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue)
        // MP3 has no bit depth: integers are 16-bit (as `mpg123 -s` prints them), whatever width is asked.
        let produced: SampleFormat = sampleFormat == .float32 ? .float32 : .signed16
        let encoding: Int32 =
            produced == .float32 ? Int32(MPG123_ENC_FLOAT_32.rawValue) : Int32(MPG123_ENC_SIGNED_16.rawValue)
        try Self.check(path, "mpg123_param2", mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0), handle)
        // After a seek, layer III needs the frames before the target to refill its bit reservoir (up to
        // 511 bytes back: several small VBR frames) and the filter banks' memory. With too few, the
        // first samples after a seek differ from a straight decode; with these, they are identical.
        try Self.check(
            path, "mpg123_param2",
            mpg123_param2(handle, Int32(MPG123_PREFRAMES.rawValue), Self.seekPreroll, 0), handle)
        try Self.check(path, "mpg123_format_none", mpg123_format_none(handle), handle)
        try Self.allowEveryRate(path, handle, encoding: encoding)
        try Self.check(path, "mpg123_open_handle", reader.open(handle), handle)
        opened = true

        var rate = 0
        var channels: Int32 = 0
        var actualEncoding: Int32 = 0
        let formatStatus = mpg123_getformat(handle, &rate, &channels, &actualEncoding)
        guard formatStatus == MPG123_OK.rawValue else {
            throw Self.classifyOpenFailure(path, descriptor: descriptor, handle: handle)
        }
        // Lock the format: a mid-stream change of channel count is converted by libmpg123 rather
        // than surfacing to the outputs.
        try Self.check(path, "mpg123_format_none", mpg123_format_none(handle), handle)
        try Self.check(path, "mpg123_format", mpg123_format(handle, rate, channels, encoding), handle)

        self.appliedGainDB = replayGain.apply(to: handle)
        self.format = AudioFormat(sampleRate: rate, channels: Int(channels), sampleFormat: produced)
        self.lengthFrames = StreamLength.frames(handle, descriptor: descriptor)
        self.tags = ID3Tags.read(handle, descriptor: descriptor)
        self.mixRamp = MixRamp.read(handle)
        self.handle = handle
        self.reader = reader
        self.fileDescriptor = descriptor
        created = true
    }

    deinit {
        mpg123_close(self.handle)
        mpg123_delete(self.handle)
        _ = Glibc.close(self.fileDescriptor)
    }

    /// The bitrate of the frame last decoded, in kbit/s (for VBR files it varies).
    public var bitrate: Int {
        var info = mpg123_frameinfo2()
        guard mpg123_info2(self.handle, &info) == MPG123_OK.rawValue else { return 0 }
        return Int(info.bitrate)
    }

    /// True when the file is variable-bitrate (VBR or ABR).
    public var isVariableBitrate: Bool {
        var info = mpg123_frameinfo2()
        guard mpg123_info2(self.handle, &info) == MPG123_OK.rawValue else { return false }
        return info.vbr != Int32(MPG123_CBR.rawValue)
    }

    /// Decodes into `buffer` as many whole frames as fit and returns how many it wrote; 0 means the
    /// song has ended. Damage that libmpg123 resyncs over is skipped silently, as `mpg123` does.
    /// - Throws: `DecoderError.corrupt` when the stream breaks off in a way libmpg123 cannot resync.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        let bytesPerFrame = self.format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame * bytesPerFrame
        guard capacity > 0, !self.reachedEnd, let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < capacity {
            var done = 0
            let status = mpg123_read(self.handle, base + filled, capacity - filled, &done)
            filled += done
            switch status {
            case MPG123_OK.rawValue, MPG123_NEW_FORMAT.rawValue:
                continue
            case MPG123_DONE.rawValue:
                self.reachedEnd = true
            default:
                if filled > 0 {
                    // Hand over what was decoded; the error repeats on the next call.
                    break
                }
                throw .corrupt(path: self.path, reason: String(cString: mpg123_strerror(self.handle)))
            }
            break
        }
        let frames = filled / bytesPerFrame
        self.position += frames
        return frames
    }

    /// Moves to `frame` (0 is the song's first frame after gapless trimming), sample-exactly.
    /// - Throws: `DecoderError.seekOutOfRange` for a frame before the start or past the end.
    public func seek(toFrame frame: Int) throws(DecoderError) {
        if frame < 0 || self.lengthFrames.map({ frame > $0 }) == true {
            throw .seekOutOfRange(path: self.path, frame: frame, length: self.lengthFrames)
        }
        let result = mpg123_seek(self.handle, off_t(frame), SEEK_SET)
        guard result >= 0 else {
            throw .corrupt(path: self.path, reason: String(cString: mpg123_strerror(self.handle)))
        }
        self.position = Int(result)
        self.reachedEnd = false
    }

    // MARK: - The seek index

    /// Reads every frame header of the file at `path` with a decoder of its own and returns where
    /// the frames start: libmpg123's seek index after a full scan. About 15-20 ms for ten minutes at
    /// 320 kbit/s, so it is for a thread other than the audio thread; `install(_:)` hands the result to
    /// the decoder that plays the file.
    public static func scanIndex(path: String, sampleFormat: SampleFormat = .signed16) throws(DecoderError)
        -> FrameIndex
    {
        let scanner = try MP3Decoder(path: path, sampleFormat: sampleFormat)
        guard mpg123_scan(scanner.handle) == MPG123_OK.rawValue else {
            throw .corrupt(path: path, reason: String(cString: mpg123_strerror(scanner.handle)))
        }
        var offsets: UnsafeMutablePointer<off_t>?
        var step: off_t = 0
        var fill = 0
        guard mpg123_index(scanner.handle, &offsets, &step, &fill) == MPG123_OK.rawValue, let offsets, step > 0
        else {
            throw .corrupt(path: path, reason: String(cString: mpg123_strerror(scanner.handle)))
        }
        return FrameIndex(path: path, offsets: Array(UnsafeBufferPointer(start: offsets, count: fill)), step: step)
    }

    /// Replaces the decoder's seek index with a complete one from `scanIndex(path:)` of the same file.
    /// libmpg123 indexes frames as it reads them, so a seek past what has been played would otherwise
    /// read every frame header on the way (15-20 ms to reach the end of ten minutes); with the whole
    /// index it jumps. What is being decoded is not touched.
    public func install(_ index: FrameIndex) {
        guard index.path == self.path, !index.offsets.isEmpty else { return }
        var offsets = index.offsets
        _ = offsets.withUnsafeMutableBufferPointer {
            mpg123_set_index(self.handle, $0.baseAddress, index.step, $0.count)
        }
    }

    /// How many entries the seek index holds and how many frames apart they are.
    public var indexExtent: (entries: Int, step: Int) {
        var offsets: UnsafeMutablePointer<off_t>?
        var step: off_t = 0
        var fill = 0
        guard mpg123_index(self.handle, &offsets, &step, &fill) == MPG123_OK.rawValue else { return (0, 0) }
        return (fill, Int(step))
    }

    // MARK: - Opening

    /// Opens `path` (escaped, see `PathEscaping`) for reading, refusing what is missing, unreadable, not a
    /// regular file or empty.
    static func openFile(_ path: String) throws(DecoderError) -> Int32 {
        let descriptor = Glibc.open(PathEscaping.systemPath(path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            switch error {
            case ENOENT, ENOTDIR: throw .fileNotFound(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path)
            default: throw .readFailed(path: path, reason: String(cString: strerror(error)))
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(descriptor)
            throw .readFailed(path: path, reason: reason)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw .notARegularFile(path: path)
        }
        guard info.st_size > 0 else {
            _ = Glibc.close(descriptor)
            throw .emptyFile(path: path)
        }
        return descriptor
    }

    private static func allowEveryRate(_ path: String, _ handle: OpaquePointer, encoding: Int32) throws(DecoderError) {
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        guard let rates else { return }
        let layouts = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
        for index in 0..<count {
            try Self.check(path, "mpg123_format", mpg123_format(handle, rates[index], layouts, encoding), handle)
        }
    }

    /// Turns a failed first `mpg123_getformat` into a reason a person can act on.
    static func classifyOpenFailure(_ path: String, descriptor: Int32, handle: OpaquePointer) -> DecoderError {
        var head = [UInt8](repeating: 0, count: 12)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 12, 0) }
        head = Array(head.prefix(max(count, 0)))
        if let container = Self.containerName(head) {
            return .notMP3(path: path, reason: "it is \(container)")
        }
        var info = stat()
        if fstat(descriptor, &info) == 0, let tagSize = Self.id3v2TagSize(head), tagSize > Int(info.st_size) {
            return .notMP3(
                path: path,
                reason: "its ID3v2 tag claims \(tagSize) bytes, more than the file's \(info.st_size)")
        }
        switch mpg123_errcode(handle) {
        case MPG123_ERR_READER.rawValue, MPG123_RESYNC_FAIL.rawValue, MPG123_OK.rawValue:
            // The reader ran off the end, or gave up, while hunting for a frame header.
            return .notMP3(path: path, reason: "no MPEG audio frames found")
        default:
            return .notMP3(path: path, reason: String(cString: mpg123_strerror(handle)))
        }
    }

    /// The total size an ID3v2 header at the start of `head` declares (header included), if any.
    static func id3v2TagSize(_ head: [UInt8]) -> Int? {
        guard head.count >= 10, head[0..<3] == [0x49, 0x44, 0x33] else { return nil }  // "ID3"
        let sizeBytes = head[6..<10]
        guard sizeBytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let size = sizeBytes.reduce(0) { $0 << 7 | Int($1) }
        return size + 10
    }

    /// Names the container format that `head` (the file's first bytes) starts with, if it is a
    /// well-known one that is not MP3.
    static func containerName(_ head: [UInt8]) -> String? {
        func starts(with text: String, at offset: Int = 0) -> Bool {
            let bytes = Array(text.utf8)
            return head.count >= offset + bytes.count && Array(head[offset..<offset + bytes.count]) == bytes
        }
        if starts(with: "RIFF") && starts(with: "WAVE", at: 8) { return "a WAV file" }
        if starts(with: "fLaC") { return "a FLAC file" }
        if starts(with: "OggS") { return "an Ogg file" }
        if starts(with: "FORM") { return "an AIFF file" }
        if starts(with: "ftyp", at: 4) { return "an MP4/M4A file" }
        return nil
    }

    private static func check(
        _ path: String,
        _ call: String,
        _ status: Int32,
        _ handle: OpaquePointer
    ) throws(DecoderError) {
        guard status == MPG123_OK.rawValue else {
            throw .library(path: path, call: call, reason: String(cString: mpg123_strerror(handle)))
        }
    }
}

/// Where the frames of an MP3 file start (byte offsets of every `step`-th frame): libmpg123's seek index,
/// made by `MP3Decoder.scanIndex(path:)` for `MP3Decoder.install(_:)`.
public struct FrameIndex: Sendable {
    /// The file it indexes.
    public let path: String
    let offsets: [off_t]
    let step: off_t
}

extension MP3Decoder {
    /// The tags, format and length of an MP3 file, read from its headers (see `SongReader`).
    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        try SongReader().read(path: path)
    }

    /// The embedded APIC picture of an MP3 file (see `SongReader.picture(path:)`).
    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        try SongReader().picture(path: path)
    }

    /// An MP3 file's APEv2 items and ID3v2 `TXXX` frames (see `SongReader.comments(path:)`).
    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        try SongReader().comments(path: path)
    }
}
