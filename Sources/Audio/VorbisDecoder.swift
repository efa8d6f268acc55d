import CVorbisFile
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes Ogg Vorbis files with libvorbisfile, streaming: memory does not grow with the file's length.
///
/// Integers are 16-bit, exactly what `oggdec` writes (both use `ov_read`, little-endian, signed);
/// floats are libvorbis's own (`ov_read_float`). The length is libvorbisfile's `ov_pcm_total`, from the
/// granule positions, so the encoder's padding at the end is cut and playback is gapless; seeks are
/// sample-exact (`ov_pcm_seek`). Chained files (several streams one after another, as radio rips are)
/// play through every link, the first included (which `oggdec` 1.4.2 with libvorbisfile 1.3.7 skips) as long as the rate and channel count stay those of the first; at a link
/// that changes them the song ends with an error, as `oggdec` stops there. A decoder belongs to one
/// thread at a time: it is not `Sendable`.
public final class VorbisDecoder: AudioDecoder {
    /// The path the decoder was opened with, as given.
    public let path: String
    /// The PCM format `read(into:)` produces: 16-bit integers or floats, at the first link's rate and
    /// channel count.
    public let format: AudioFormat
    /// The song's length in frames (`ov_pcm_total`: every link, the last page's trimming honoured).
    public let lengthFrames: Int?
    /// The first link's tags, in MPD's names.
    public let tags: Tags
    /// The ReplayGain applied, in dB (0 when off).
    public let appliedGainDB: Double
    /// The song's MixRamp profile (`MIXRAMP_START` / `MIXRAMP_END` comments).
    public let mixRamp: MixRamp
    /// The next frame `read(into:)` returns, counted from the start of the song.
    public private(set) var position = 0

    private let file: VorbisFile
    private let gainFactor: Double
    private var reachedEnd = false
    /// An error met after some frames were handed over: thrown by the next `read(into:)`.
    private var pendingError: DecoderError?
    private var lastBitrate = 0

    /// Holes (`OV_HOLE`, `OV_EBADLINK`) skipped one after another before the stream is given up as
    /// broken: `oggdec` skips every one, but a file of nothing else must not spin for ever.
    static let holeLimit = 1000

    /// Opens `path`, reads its headers (every link's, for the length) and sets up `replayGain` (off by
    /// default: samples bit-identical to `oggdec`).
    /// - Throws: `DecoderError` naming the file and the reason: missing, unreadable, not a regular
    ///   file, empty, not Vorbis, damaged headers, a format playerd does not play.
    public init(path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.path = path
        let file = try VorbisFile(path: path)
        let info = try file.info()
        let produced: SampleFormat = sampleFormat == .float32 ? .float32 : .signed16
        self.format = AudioFormat(sampleRate: info.rate, channels: info.channels, sampleFormat: produced)
        self.lengthFrames = file.lengthFrames
        let comments = file.comments()
        self.tags = VorbisComments.tags(comments)
        self.mixRamp = VorbisComments.mixRamp(comments)
        let scale = replayGain.scale(for: VorbisComments.storedGain(comments))
        self.gainFactor = scale.factor
        self.appliedGainDB = scale.decibels
        self.file = file
    }

    /// The bitrate of what was decoded since the last call (libvorbisfile's `ov_bitrate_instant`), in
    /// kbit/s; the last such figure when nothing new was decoded; the file's average before the first.
    public var bitrate: Int {
        let instant = ov_bitrate_instant(self.file.handle)
        if instant > 0 {
            self.lastBitrate = (instant + 500) / 1000
        } else if self.lastBitrate == 0 {
            let average = ov_bitrate(self.file.handle, -1)
            return average > 0 ? (average + 500) / 1000 : 0
        }
        return self.lastBitrate
    }

    /// Decodes into `buffer` as many whole frames as fit and returns how many it wrote; 0 means the
    /// song has ended. Holes in the data (pages lost or damaged) are skipped, as `oggdec` does.
    /// - Throws: `DecoderError` when the file cannot be read on, or a chained link changes the format;
    ///   what was decoded before is handed over first.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        if let error = self.pendingError {
            self.pendingError = nil
            self.reachedEnd = true
            throw error
        }
        let bytesPerFrame = self.format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame
        guard capacity > 0, !self.reachedEnd, let base = buffer.baseAddress else { return 0 }
        var filled = 0
        var holes = 0
        while filled < capacity {
            var link: Int32 = 0
            let result = self.decode(into: base + filled * bytesPerFrame, frames: capacity - filled, link: &link)
            if result == 0 {
                self.reachedEnd = true
                break
            }
            if result < 0 {
                if result == Int(OV_HOLE) || result == Int(OV_EBADLINK), holes < Self.holeLimit {
                    holes += 1
                    continue
                }
                self.pendingError = self.streamError(result, at: self.position + filled)
                break
            }
            if let changed = self.changedFormat(link: link) {
                // What this call decoded belongs to the new link: it is dropped, as oggdec drops it.
                self.pendingError = .damaged(
                    path: self.path, format: AudioFileKind.vorbis.displayName,
                    reason: "a chained stream changes to \(changed) after \(self.seconds(self.position + filled)); "
                        + "playerd plays only links of the first link's rate and channels")
                break
            }
            holes = 0
            filled += result
        }
        if filled > 0 {
            PCMGain.apply(
                self.gainFactor, to: UnsafeMutableRawBufferPointer(start: base, count: filled * bytesPerFrame),
                format: self.format.sampleFormat)
        } else if let error = self.pendingError {
            self.pendingError = nil
            self.reachedEnd = true
            throw error
        }
        self.position += filled
        return filled
    }

    /// Moves to `frame` (0 is the song's first frame), sample-exactly.
    /// - Throws: `DecoderError.seekOutOfRange` for a frame before the start or past the end.
    public func seek(toFrame frame: Int) throws(DecoderError) {
        guard let length = self.lengthFrames, frame >= 0, frame <= length else {
            throw .seekOutOfRange(path: self.path, frame: frame, length: self.lengthFrames)
        }
        self.pendingError = nil
        if frame == length {
            // The end: nothing more to read, whatever libvorbisfile would make of a seek there.
            self.position = length
            self.reachedEnd = true
            return
        }
        let result = ov_pcm_seek(self.file.handle, ogg_int64_t(frame))
        guard result == 0 else {
            throw self.streamError(Int(result), at: frame)
        }
        self.position = frame
        self.reachedEnd = false
    }

    /// One call of libvorbisfile's decoder: frames written (0 at the end) or its negative error code.
    private func decode(into destination: UnsafeMutableRawPointer, frames: Int, link: inout Int32) -> Int {
        let channels = self.format.channels
        if self.format.sampleFormat == .float32 {
            var planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
            let count = ov_read_float(self.file.handle, &planes, Int32(clamping: frames), &link)
            guard count > 0, let planes else { return Int(count) }
            // A link of another channel count is refused by the caller before its frames are used.
            let available = self.file.channels(link: link)
            guard available == channels else { return count }
            let samples = destination.assumingMemoryBound(to: Float.self)
            for channel in 0..<channels {
                guard let plane = planes[channel] else { continue }
                for index in 0..<count {
                    samples[index &* channels &+ channel] = plane[index]
                }
            }
            return count
        }
        let bytes = ov_read(self.file.handle, destination, Int32(clamping: frames * channels * 2), 0, 2, 1, &link)
        guard bytes > 0 else { return bytes }
        return bytes / (self.file.channels(link: link) * 2)
    }

    /// The new link's format, when a chained link differs in rate or channels from the first. Asked
    /// after every decode, whatever link libvorbisfile names (read as a stream, it names the current one).
    private func changedFormat(link: Int32) -> String? {
        guard let info = ov_info(self.file.handle, link)?.pointee else { return "an unknown format" }
        guard Int(info.rate) != self.format.sampleRate || Int(info.channels) != self.format.channels else {
            return nil
        }
        return "\(info.channels) channels at \(info.rate) Hz"
    }

    private func streamError(_ code: Int, at frame: Int) -> DecoderError {
        if code == Int(OV_EREAD), let reason = self.file.source.failure {
            return .readFailed(path: self.path, reason: reason)
        }
        // Mid-stream, headers that do not read are a new link's: one of another codec, or damaged.
        let what =
            code == Int(OV_ENOTVORBIS) || code == Int(OV_EBADHEADER)
            ? "a link that is not Vorbis, or whose headers are damaged," : VorbisFile.describe(code)
        return .damaged(
            path: self.path, format: AudioFileKind.vorbis.displayName, reason: "\(what) after \(self.seconds(frame))")
    }

    private func seconds(_ frame: Int) -> String {
        let tenths = frame / max(1, self.format.sampleRate / 10)
        return "\(tenths / 10).\(tenths % 10) s"
    }

    // MARK: - Without decoding

    /// The first link's tags and the format MPD shows (floats: MPD's Vorbis plugin decodes to floats),
    /// from the headers alone (`ov_test_callbacks`: no map of the links, no decoder set up); the
    /// duration is MPD's: the granule position of the first link's end-of-stream page among the last
    /// 64 KiB over the rate, in whole milliseconds, none without such a page.
    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        let file = try VorbisFile(path: path, headersOnly: true)
        let info = try file.info()
        var duration: Double?
        if let granule = OggEndOfStream.granule(
            descriptor: file.source.descriptor, serial: UInt32(truncatingIfNeeded: file.handle.pointee.current_serialno)
        ),
            granule >= 0
        {
            let rate = Int64(info.rate)
            let (seconds, overflow) = (granule / rate).multipliedReportingOverflow(by: 1000)
            if !overflow { duration = Double(seconds + granule % rate * 1000 / rate) / 1000 }
        }
        return SongFacts(
            tags: VorbisComments.tags(file.comments()), sampleRate: info.rate, channels: info.channels,
            duration: duration, sampleFormat: .float32)
    }

    /// The first `METADATA_BLOCK_PICTURE` comment that reads, whatever its type: mpd 0.23's
    /// `readpicture` gives an Ogg Vorbis file's first picture, not its front cover (checked: a back
    /// cover before a front cover, mpd gave the back cover).
    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        for comment in try VorbisFile(path: path).comments() where comment.name.lowercased() == "metadata_block_picture"
        {
            if let bytes = Base64.decode(comment.value), let block = FLACPicture(block: bytes) {
                return block.picture
            }
        }
        return nil
    }

    /// The first link's comments, every `NAME=value` pair in file order, as MPD's `readcomments`
    /// lists them (pictures included).
    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        try VorbisFile(path: path).comments()
    }
}

/// What libvorbisfile reads a file through: its descriptor, and the error a read met.
final class VorbisSource {
    let descriptor: Int32
    /// Why the last failed read failed (`strerror`), nil while reads succeed.
    var failure: String?

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// libvorbisfile's callbacks on a `VorbisSource` passed as the data source.
    static let callbacks = ov_callbacks(
        read_func: { buffer, size, count, source in
            guard let buffer, let source, size > 0 else { return 0 }
            let this = Unmanaged<VorbisSource>.fromOpaque(source).takeUnretainedValue()
            let (wanted, overflow) = size.multipliedReportingOverflow(by: count)
            guard !overflow else { return 0 }
            var done = 0
            while done < wanted {
                let got = Glibc.read(this.descriptor, buffer + done, wanted - done)
                if got > 0 {
                    done += got
                } else if got == 0 {
                    break
                } else if errno != EINTR {
                    this.failure = String(cString: strerror(errno))
                    break
                }
            }
            return done / size
        },
        seek_func: { source, offset, whence in
            guard let source else { return -1 }
            let this = Unmanaged<VorbisSource>.fromOpaque(source).takeUnretainedValue()
            return lseek(this.descriptor, off_t(offset), whence) < 0 ? -1 : 0
        },
        close_func: nil,
        tell_func: { source in
            guard let source else { return -1 }
            let this = Unmanaged<VorbisSource>.fromOpaque(source).takeUnretainedValue()
            return Int(lseek(this.descriptor, 0, SEEK_CUR))
        })

    /// The same reads without seeks: libvorbisfile reads the file as a stream, link after link.
    static let streamCallbacks = ov_callbacks(
        read_func: VorbisSource.callbacks.read_func, seek_func: nil, close_func: nil, tell_func: nil)
}

/// An open libvorbisfile handle on one file, closed (with the file) when released.
final class VorbisFile {
    let path: String
    let handle: UnsafeMutablePointer<OggVorbis_File>
    let source: VorbisSource

    /// Opens `path` and reads the headers of every link; with `headersOnly`, of the first link alone
    /// (`ov_test_callbacks`: `info()`, `comments()` and `current_serialno` answer; nothing plays).
    init(path: String, headersOnly: Bool = false) throws(DecoderError) {
        self.path = path
        let descriptor = try MP3Decoder.openFile(path)
        let source = VorbisSource(descriptor: descriptor)
        let handle = UnsafeMutablePointer<OggVorbis_File>.allocate(capacity: 1)
        var status =
            headersOnly
            ? ov_test_callbacks(Unmanaged.passUnretained(source).toOpaque(), handle, nil, 0, VorbisSource.callbacks)
            : ov_open_callbacks(Unmanaged.passUnretained(source).toOpaque(), handle, nil, 0, VorbisSource.callbacks)
        if !headersOnly, status == OV_EREAD, source.failure == nil, lseek(descriptor, 0, SEEK_SET) == 0 {
            // A failed read the system did not fail is libvorbisfile giving up on the map of the links
            // (a chain with a link of another codec, Opus after Vorbis, ends so). Read as a stream instead,
            // as mpd does: the links play in order up to the one that is not Vorbis; with no map, the
            // length is unknown and seeks are refused.
            status = ov_open_callbacks(
                Unmanaged.passUnretained(source).toOpaque(), handle, nil, 0, VorbisSource.streamCallbacks)
        }
        guard status == 0 else {
            // libvorbisfile has cleared the handle itself on failure.
            handle.deallocate()
            _ = Glibc.close(descriptor)
            if status == OV_EREAD, let reason = source.failure {
                throw .readFailed(path: path, reason: reason)
            }
            throw .damaged(path: path, format: AudioFileKind.vorbis.displayName, reason: Self.describe(Int(status)))
        }
        self.handle = handle
        self.source = source
        // libvorbisfile 1.3.7 leaves a chained file positioned at the end of its first link (oggdec
        // then plays only the links after it): back to the start, so that every link plays.
        if !headersOnly, ov_seekable(handle) != 0, ov_pcm_tell(handle) != 0, ov_pcm_seek(handle, 0) != 0 {
            throw .damaged(
                path: path, format: AudioFileKind.vorbis.displayName,
                reason: "its first link cannot be reached (damaged granule positions)")
        }
    }

    deinit {
        withExtendedLifetime(self.source) { _ = ov_clear(self.handle) }
        self.handle.deallocate()
        _ = Glibc.close(self.source.descriptor)
    }

    /// The first link's rate and channel count, checked to be ones playerd plays (MPD's limits:
    /// up to 8 channels, rates up to 768 kHz).
    func info() throws(DecoderError) -> (rate: Int, channels: Int) {
        guard let info = ov_info(self.handle, 0)?.pointee else {
            throw .damaged(path: self.path, format: AudioFileKind.vorbis.displayName, reason: "no stream information")
        }
        guard (1...8).contains(info.channels) else {
            throw .unsupported(path: self.path, reason: "Ogg Vorbis with \(info.channels) channels (at most 8 play)")
        }
        guard (1...768_000).contains(info.rate) else {
            throw .unsupported(path: self.path, reason: "Ogg Vorbis at \(info.rate) Hz")
        }
        return (Int(info.rate), Int(info.channels))
    }

    /// The channel count of `link` (at least 1: a divisor).
    func channels(link: Int32) -> Int {
        max(1, Int(ov_info(self.handle, link)?.pointee.channels ?? 1))
    }

    /// Every link's frames together, or nil when libvorbisfile cannot tell.
    var lengthFrames: Int? {
        let total = ov_pcm_total(self.handle, -1)
        return total >= 0 ? Int(total) : nil
    }

    /// The first link's comments, `NAME=value` split at the first `=`, in file order; a comment with
    /// no `=` or an empty name is passed over.
    func comments() -> [(name: String, value: String)] {
        guard let comment = ov_comment(self.handle, 0)?.pointee else { return [] }
        return VorbisComments.pairs(of: comment)
    }

    /// A reason a person can act on for one of libvorbisfile's error codes.
    static func describe(_ code: Int) -> String {
        switch Int32(clamping: code) {
        case OV_ENOTVORBIS: "no Vorbis stream found: not Ogg Vorbis, or cut short before its first header"
        case OV_EBADHEADER: "bad header: the Vorbis headers are damaged or cut short"
        case OV_EVERSION: "a Vorbis version playerd does not know"
        case OV_EREAD: "the file cannot be read on"
        case OV_EBADLINK: "a damaged link in the stream"
        case OV_HOLE: "too many damaged pages"
        case OV_ENOSEEK: "the stream cannot be positioned"
        case OV_EBADPACKET: "a damaged packet"
        case OV_EINVAL: "damaged granule positions"
        default: "libvorbisfile error \(code)"
        }
    }
}
