import COpusFile
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes one Ogg Opus file to interleaved PCM with libopusfile, streaming: memory does not grow with
/// the file's length.
///
/// Opus always decodes at 48 kHz. libopusfile cuts the pre-skip and trims the end, so a file made from N
/// samples at 48 kHz decodes to exactly N frames, and applies the OpusHead's output gain (as `opusdec`
/// does and RFC 7845 asks). Integers are 16-bit, made from `op_read_float`'s floats as
/// `opusdec --rate 48000 --no-dither` makes them (× 32768, clamped, rounded to nearest), so the PCM is
/// bit-identical to that; floats are `op_read_float`'s own. Mono and stereo files keep their channels;
/// files with more channels, and chained files whose links differ in channel count, are mixed to
/// stereo by libopusfile (`op_read_float_stereo`). A decoder belongs to one thread at a time: it is not
/// `Sendable`.
public final class OpusDecoder: AudioDecoder {
    /// The path the decoder was opened with, as given.
    public let path: String
    /// The PCM format `read(into:)` produces: 48 kHz, 1 or 2 channels, 16-bit or float.
    public let format: AudioFormat
    /// The song's length in frames (pre-skip and end trimming cut: `op_pcm_total`).
    public let lengthFrames: Int?
    /// The first link's tags, in MPD's names.
    public let tags: Tags
    /// The ReplayGain applied, in dB (0 when off).
    public let appliedGainDB: Double
    /// The song's MixRamp profile (`MIXRAMP_START` / `MIXRAMP_END` comments).
    public let mixRamp: MixRamp
    /// The next frame `read(into:)` returns, counted from the start of the song.
    public private(set) var position: Int = 0
    /// The bitrate of what was last decoded, in kbit/s (`op_bitrate_instant`); the file's average
    /// before the first read.
    public private(set) var bitrate: Int

    /// Samples decoded per `op_read_float` call at most: 120 ms, Opus's longest packet.
    static let chunkFrames = 5760
    /// Frames decoded and discarded before a seek's target (4 s). `op_pcm_seek` alone is sample-exact
    /// in position, but it primes the decoder with 80 ms only: CELT's band energies and SILK's filters
    /// then differ from a straight decode's for up to 0.6 s after the target, by up to 850 steps of 16
    /// bits (measured on noise and tones at 16 to 256 kbit/s). Decoded from further back, the state
    /// converges and the samples are a straight decode's bit for bit: 2 s sufficed for noise and music
    /// at every target tried, but a steady tone under noise at 16 kbit/s (SILK's pitch predictor keeps
    /// it long) once needed more than 2 s, so 4 s, about 30 ms of decoding per seek. This is measured,
    /// not guaranteed: Opus promises convergence, not a moment for it. A target within 4 s of the start
    /// is decoded from the start, which is exact.
    static let seekPreroll = 192_000

    private let stream: OpusStream
    private let downmixesToStereo: Bool
    private let gainFactor: Double
    private var scratch: [Float]
    private var reachedEnd = false
    /// A failure met after some frames were handed over: thrown by the next `read`.
    private var pendingError: DecoderError?

    /// Opens `path` and reads its headers, its length and its tags, and sets up `replayGain` (off by
    /// default: samples bit-identical to `opusdec --rate 48000 --no-dither`).
    /// - Throws: `DecoderError` naming the file and the reason: missing, unreadable, not a regular
    ///   file, empty, not Opus, damaged headers.
    public init(path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.path = path
        let stream = try OpusStream(path: path)
        let file = stream.file
        let links = max(1, Int(op_link_count(file)))
        let firstChannels = Int(op_channel_count(file, 0))
        var sameChannels = true
        for link in 1..<max(links, 1) where Int(op_channel_count(file, Int32(link))) != firstChannels {
            sameChannels = false
        }
        self.downmixesToStereo = !sameChannels || firstChannels > 2 || firstChannels < 1
        let channels = self.downmixesToStereo ? 2 : firstChannels
        let produced: SampleFormat = sampleFormat == .float32 ? .float32 : .signed16
        self.format = AudioFormat(sampleRate: OpusStream.sampleRate, channels: channels, sampleFormat: produced)
        let total = op_pcm_total(file, -1)
        self.lengthFrames = total >= 0 ? Int(total) : nil
        let comments = stream.comments()
        self.tags = Self.tags(comments)
        self.mixRamp = VorbisComments.mixRamp(comments)
        let scale = replayGain.scale(for: Self.storedGain(comments))
        self.gainFactor = scale.factor
        self.appliedGainDB = scale.decibels
        let average = op_bitrate(file, -1)
        self.bitrate = average > 0 ? Int((Int64(average) + 500) / 1000) : 0
        self.scratch = [Float](repeating: 0, count: Self.chunkFrames * channels)
        stream.decodePlainly()
        self.stream = stream
    }

    /// Decodes into `buffer` as many whole frames as fit and returns how many it wrote; 0 means the
    /// song has ended. A hole in the data (a lost or damaged page) is passed over, as `opusdec` does.
    /// - Throws: `DecoderError.damaged` when the stream breaks off in a way libopusfile cannot get over;
    ///   frames decoded before it are handed over first.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        if let pendingError = self.pendingError {
            self.pendingError = nil
            self.reachedEnd = true
            throw pendingError
        }
        let channels = self.format.channels
        let capacity = buffer.count / self.format.bytesPerFrame
        guard capacity > 0, !self.reachedEnd, let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < capacity {
            let wanted = min(capacity - filled, Self.chunkFrames)
            let result: Int32
            if self.format.sampleFormat == .float32 {
                let target = base.assumingMemoryBound(to: Float.self) + filled * channels
                result = self.decode(into: target, frames: wanted)
            } else {
                result = self.scratch.withUnsafeMutableBufferPointer { scratch in
                    let count = self.decode(into: scratch.baseAddress!, frames: wanted)
                    guard count > 0 else { return count }
                    let target = base.assumingMemoryBound(to: Int16.self) + filled * channels
                    for index in 0..<Int(count) * channels {
                        // opusdec's conversion without dither.
                        target[index] = Int16(clamping: lrintf(fmaxf(-32768, fminf(scratch[index] * 32768, 32767))))
                    }
                    return count
                }
            }
            if result > 0 {
                filled += Int(result)
                continue
            }
            if result == 0 {
                self.reachedEnd = true
                break
            }
            if result == OP_HOLE { continue }
            let error = DecoderError.damaged(
                path: self.path, format: AudioFileKind.opus.displayName,
                reason: "\(OpusStream.describe(result)) after \(Self.seconds(self.position + filled)) s")
            guard filled > 0 else {
                self.reachedEnd = true
                throw error
            }
            self.pendingError = error
            break
        }
        if filled > 0 {
            let bytes = filled * self.format.bytesPerFrame
            PCMGain.apply(
                self.gainFactor, to: UnsafeMutableRawBufferPointer(start: base, count: bytes),
                format: self.format.sampleFormat)
            let instant = op_bitrate_instant(self.stream.file)
            if instant > 0 { self.bitrate = Int((Int64(instant) + 500) / 1000) }
        }
        self.position += filled
        return filled
    }

    /// Moves to `frame` (0 is the song's first frame after the pre-skip), sample-exactly: what `read`
    /// gives next is a straight decode's PCM from `frame` on, bit for bit (see `seekPreroll`);
    /// `lengthFrames` is the end.
    /// - Throws: `DecoderError.seekOutOfRange` for a frame before the start or past the end.
    public func seek(toFrame frame: Int) throws(DecoderError) {
        if frame < 0 || self.lengthFrames.map({ frame > $0 }) ?? false {
            throw .seekOutOfRange(path: self.path, frame: frame, length: self.lengthFrames)
        }
        self.pendingError = nil
        if let length = self.lengthFrames, frame == length {
            self.position = frame
            self.reachedEnd = true
            return
        }
        // Positioned at `start`, the decoder then decodes its way to `frame`: see `seekPreroll`.
        let start = max(0, frame - Self.seekPreroll)
        var result = op_pcm_seek(self.stream.file, Int64(start))
        var remaining = frame - start
        while result >= 0 || result == OP_HOLE, remaining > 0 {
            let wanted = min(remaining, Self.chunkFrames)
            result = self.scratch.withUnsafeMutableBufferPointer { self.decode(into: $0.baseAddress!, frames: wanted) }
            if result == 0 { break }
            if result > 0 { remaining -= Int(result) }
        }
        guard result >= 0 || result == OP_HOLE else {
            throw .damaged(
                path: self.path, format: AudioFileKind.opus.displayName,
                reason: "cannot seek to \(Self.seconds(frame)) s: \(OpusStream.describe(result))")
        }
        self.position = frame - remaining
        self.reachedEnd = remaining > 0
    }

    private func decode(into target: UnsafeMutablePointer<Float>, frames: Int) -> Int32 {
        if self.downmixesToStereo {
            return op_read_float_stereo(self.stream.file, target, Int32(frames * 2))
        }
        return op_read_float(self.stream.file, target, Int32(frames * self.format.channels), nil)
    }

    static func seconds(_ frames: Int) -> String {
        let tenths = frames / (OpusStream.sampleRate / 10)
        return "\(tenths / 10).\(tenths % 10)"
    }

    // MARK: - Metadata

    /// The tags of `comments`, as MPD's Opus plugin reads them: values of 4096 bytes or more are
    /// passed over, and a name that is one of MPD's tags wins over the Xiph names (so `MOVEMENT` is
    /// Movement here, where Vorbis and FLAC make it MovementNumber).
    static func tags(_ comments: [(name: String, value: String)]) -> Tags {
        var tags = Tags()
        for comment in comments where comment.value.utf8.count < OpusStream.largeValue {
            guard let tag = TagName(name: comment.name.lowercased()) ?? VorbisComments.tagName(comment.name) else {
                continue
            }
            tags[tag] += [comment.value]
        }
        return tags
    }

    /// The stored ReplayGain as MPD's Opus plugin makes it: `R128_TRACK_GAIN` / `R128_ALBUM_GAIN`
    /// (Q7.8 dB, whole integers only, relative to -23 LUFS) plus 5 dB to reach ReplayGain's reference;
    /// a file with neither gets a track gain of 5 dB. MPD adds the OpusHead's output gain too because
    /// it does not apply it to the samples; libopusfile does, so it is not added again. `REPLAYGAIN_*`
    /// comments are not read (MPD reads none in Opus files); there are no peaks.
    static func storedGain(_ comments: [(name: String, value: String)]) -> StoredReplayGain {
        var gain = StoredReplayGain()
        for comment in comments where comment.value.utf8.count < OpusStream.largeValue {
            let name = comment.name.lowercased()
            guard name == "r128_track_gain" || name == "r128_album_gain",
                let q78 = Self.wholeInteger(comment.value)
            else { continue }
            let decibels = Double(Float(q78) / 256) + 5
            if name == "r128_track_gain" { gain.trackGainDB = decibels } else { gain.albumGainDB = decibels }
        }
        if gain.trackGainDB == nil, gain.albumGainDB == nil { gain.trackGainDB = 5 }
        return gain
    }

    /// A decimal integer that is the whole of `text` (an optional sign, then digits), as MPD's
    /// `ParseInt64` with the end checked; nil otherwise or when it does not fit.
    static func wholeInteger(_ text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let magnitude = Int64(digits)
        else { return nil }
        return negative ? -magnitude : magnitude
    }

    /// The tags, format and length of an Opus file, from its headers and its last page (no audio is
    /// decoded). The duration is MPD's: the last granule position (pre-skip included) over 48 kHz, in
    /// whole milliseconds; the format is MPD's `48000:16:channels`, the first link's channels.
    ///
    /// Only the headers are read through libopusfile (`op_test_callbacks`: no seeking, no decoder set
    /// up); the duration comes from the end-of-stream page of the first link's serial number in the
    /// file's last 64 KiB, as MPD's `OggSeekFindEOS` finds it: none when there is no such page or its
    /// granule position is below the pre-skip (MPD then shows no duration either).
    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        let stream = try OpusStream(path: path, headersOnly: true)
        var duration: Double?
        if let head = op_head(stream.file, 0),
            let granule = OggEndOfStream.granule(
                descriptor: stream.descriptor, serial: op_serialno(stream.file, 0)),
            granule >= Int64(head.pointee.pre_skip)
        {
            duration = Double(granule / 48) / 1000
        }
        return SongFacts(
            tags: Self.tags(stream.comments()), sampleRate: OpusStream.sampleRate,
            channels: Int(op_channel_count(stream.file, 0)), duration: duration, sampleFormat: .signed16)
    }

    /// The first picture among the file's `METADATA_BLOCK_PICTURE` comments that reads, whatever its
    /// type: mpd 0.23's `readpicture` gives an Opus file's first picture, not its front cover.
    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        for comment in try OpusStream(path: path).comments()
        where comment.name.lowercased() == "metadata_block_picture" {
            if let bytes = Base64.decode(comment.value), let block = FLACPicture(block: bytes) {
                return block.picture
            }
        }
        return nil
    }

    /// The first link's comments, in file order, as MPD's Opus plugin hands them to `readcomments`:
    /// values of 4096 bytes or more are passed over (covers among them).
    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        try OpusStream(path: path).comments().filter { $0.value.utf8.count < OpusStream.largeValue }
    }
}

/// An open Ogg Opus file: its descriptor and libopusfile's handle, which reads through it.
final class OpusStream {
    /// Opus's one output rate.
    static let sampleRate = 48000
    /// MPD passes over comment values this long or longer (bytes).
    static let largeValue = 4096

    let file: OpaquePointer
    private let source: Source

    /// What libopusfile's callbacks read: the descriptor.
    final class Source {
        let descriptor: Int32
        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    /// The file's descriptor (libopusfile reads through it).
    var descriptor: Int32 { self.source.descriptor }

    /// Opens `path`; `headersOnly` stops after the first link's headers (`op_test_callbacks`: enough
    /// for `op_head`, `op_tags` and `op_channel_count` of link 0, nothing else).
    init(path: String, headersOnly: Bool = false) throws(DecoderError) {
        let descriptor = try MP3Decoder.openFile(path)
        let source = Source(descriptor: descriptor)
        var callbacks = OpusFileCallbacks(
            read: { stream, buffer, count in
                guard let stream, let buffer, count > 0 else { return 0 }
                let source = Unmanaged<Source>.fromOpaque(stream).takeUnretainedValue()
                while true {
                    let got = Glibc.read(source.descriptor, buffer, Int(count))
                    if got < 0, errno == EINTR { continue }
                    return got < 0 ? -1 : Int32(got)
                }
            },
            seek: { stream, offset, whence in
                guard let stream else { return -1 }
                let source = Unmanaged<Source>.fromOpaque(stream).takeUnretainedValue()
                return lseek(source.descriptor, off_t(offset), whence) < 0 ? -1 : 0
            },
            tell: { stream in
                guard let stream else { return -1 }
                let source = Unmanaged<Source>.fromOpaque(stream).takeUnretainedValue()
                return Int64(lseek(source.descriptor, 0, SEEK_CUR))
            },
            close: nil)
        var code: Int32 = 0
        let opened = withExtendedLifetime(source) {
            let client = Unmanaged.passUnretained(source).toOpaque()
            return headersOnly
                ? op_test_callbacks(client, &callbacks, nil, 0, &code)
                : op_open_callbacks(client, &callbacks, nil, 0, &code)
        }
        guard let opened else {
            _ = Glibc.close(descriptor)
            throw .damaged(path: path, format: AudioFileKind.opus.displayName, reason: Self.describe(code))
        }
        self.file = opened
        self.source = source
    }

    /// Decodes mono and stereo links through a plain libopus decoder (see `PlainOpusDecoding`).
    private var plainDecoding: PlainOpusDecoding?

    deinit {
        op_free(self.file)
        _ = Glibc.close(self.source.descriptor)
    }

    /// The packets `decodePlainly` had decoded by a plain decoder so far.
    var plainlyDecodedPackets: Int { self.plainDecoding?.packets ?? 0 }

    /// Has libopusfile hand the packets of its mono and stereo links to a `PlainOpusDecoding` instead
    /// of decoding them with its multistream decoder: the same samples, bit for bit, in less than half
    /// the CPU. Call once, before decoding.
    func decodePlainly() {
        guard self.plainDecoding == nil else { return }
        let decoding = PlainOpusDecoding(file: self.file)
        guard decoding.hasPlainLinks else { return }
        self.plainDecoding = decoding
        op_set_decode_callback(
            self.file,
            { context, theirs, pcm, packet, samples, channels, format, link in
                guard let context else { return OP_DEC_USE_DEFAULT }
                return Unmanaged<PlainOpusDecoding>.fromOpaque(context).takeUnretainedValue().decode(
                    packet: packet, into: pcm, samples: samples, channels: channels, format: format, link: link,
                    theirs: theirs)
            }, Unmanaged.passUnretained(decoding).toOpaque())
    }

    /// The first link's comments, in file order; comments without `=` or with an empty name are left
    /// out (as MPD leaves them).
    func comments() -> [(name: String, value: String)] {
        guard let tags = op_tags(self.file, 0)?.pointee, tags.comments > 0, let strings = tags.user_comments,
            let lengths = tags.comment_lengths
        else { return [] }
        var comments: [(name: String, value: String)] = []
        for index in 0..<Int(tags.comments) {
            guard let text = strings[index], lengths[index] > 0 else { continue }
            let bytes = UnsafeRawBufferPointer(start: text, count: Int(lengths[index]))
            if let comment = VorbisComments.split(bytes) { comments.append(comment) }
        }
        return comments
    }

    /// libopusfile's failure code in words.
    static func describe(_ code: Int32) -> String {
        switch code {
        case OP_EREAD: "the file could not be read"
        case OP_EFAULT: "out of memory or an internal error in libopusfile"
        case OP_EIMPL: "it uses a feature libopusfile does not implement"
        case OP_EINVAL: "libopusfile was asked something invalid"
        case OP_ENOTFORMAT: "no Opus stream found (cut short before its headers, or not Opus)"
        case OP_EBADHEADER: "bad header: the OpusHead or OpusTags packet is malformed"
        case OP_EVERSION: "an Opus version libopusfile does not know"
        case OP_ENOTAUDIO: "the stream is not audio"
        case OP_EBADPACKET: "a damaged audio packet"
        case OP_EBADLINK: "a link of the chained stream is missing or damaged"
        case OP_ENOSEEK: "the stream cannot be positioned"
        case OP_EBADTIMESTAMP: "cut short before its first whole audio page, or bad granule positions"
        case OP_FALSE, OP_EOF: "cut short"
        default: "libopusfile error \(code)"
        }
    }
}

/// Finding pages of an Ogg stream by their header, as libogg's `ogg_sync_pageseek` does (capture
/// pattern, version 0, whole page within the bytes read, CRC checked).
enum OggEndOfStream {
    /// How far from the end MPD looks for the end of a stream.
    static let tailBytes = 65536

    /// The granule position of the first end-of-stream page of `serial` among the last
    /// `tailBytes` of the file; nil when there is none or the file does not read.
    static func granule(descriptor: Int32, serial: UInt32) -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        let start = max(size - Self.tailBytes, 0)
        var bytes = [UInt8](repeating: 0, count: size - start)
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + filled, raw.count - filled, off_t(start + filled))
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return bytes.withUnsafeBytes { raw in
            Self.granule(in: UnsafeRawBufferPointer(rebasing: raw[0..<filled]), serial: serial)
        }
    }

    /// The granule position of the first whole, intact end-of-stream page of `serial` in `bytes`.
    static func granule(in bytes: UnsafeRawBufferPointer, serial: UInt32) -> Int64? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while bytes.count - offset >= 27 {
            guard let found = memchr(base + offset, 0x4f, bytes.count - offset) else { return nil }
            let page = base.distance(to: UnsafeRawPointer(found))
            offset = page + 1
            let remaining = bytes.count - page
            guard remaining >= 27, bytes[page + 1] == 0x67, bytes[page + 2] == 0x67, bytes[page + 3] == 0x53,
                bytes[page + 4] == 0, bytes[page + 5] & 0x04 != 0,
                Self.uint32(bytes, page + 14) == serial
            else { continue }
            let segments = Int(bytes[page + 26])
            guard remaining >= 27 + segments else { continue }
            var length = 27 + segments
            for index in 0..<segments { length += Int(bytes[page + 27 + index]) }
            guard remaining >= length,
                Self.crc(UnsafeRawBufferPointer(rebasing: bytes[page..<page + length])) == Self.uint32(bytes, page + 22)
            else { continue }
            var granule: UInt64 = 0
            for index in (0..<8).reversed() { granule = granule << 8 | UInt64(bytes[page + 6 + index]) }
            return Int64(bitPattern: granule)
        }
        return nil
    }

    private static func uint32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// Ogg's page CRC (polynomial 0x04c11db7, not reflected, starting at 0), the CRC field taken as 0.
    static func crc(_ page: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0
        for (index, byte) in page.enumerated() {
            let value = (22..<26).contains(index) ? 0 : byte
            crc = crc << 8 ^ Self.table[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ value)]
        }
        return crc
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? value << 1 ^ 0x04c1_1db7 : value << 1 }
        return value
    }
}

/// Decodes the packets of an Ogg Opus file's mono and stereo links (channel mapping family 0: one
/// Opus stream) with a plain libopus `OpusDecoder`, for libopusfile's decode callback.
///
/// libopusfile decodes through a multistream decoder, which runs libopus's CPU feature check
/// (`cpuid`, which traps to the hypervisor on a virtual machine) on every packet; a plain decoder
/// checks once, when created. libopusfile keeps the rest: the Ogg demuxing, pre-skip, end trimming,
/// seeking, holes. The samples are the multistream decoder's bit for bit (one stream, the same
/// decode), provided this decoder's state follows libopusfile's: it carries the link's output gain
/// (`OPUS_SET_GAIN`, as libopusfile sets on its own, with no gain offset) and is reset whenever
/// libopusfile resets its own, at a seek and at a new link. libopusfile's decoder decodes nothing
/// while this one does, so the duration of its last packet is 0 exactly when it was just created or
/// reset; after each reset this marks it with a 120-sample concealment (silence, overwritten).
/// Links of more channels, and anything unexpected, are left to libopusfile (`OP_DEC_USE_DEFAULT`).
final class PlainOpusDecoding {
    /// What a link needs: whether it is decoded here, its channels, its output gain (Q7.8 dB).
    struct Link {
        let plain: Bool
        let channels: Int32
        let gain: Int32
    }

    /// The smallest Opus frame (2.5 ms at 48 kHz): the marking concealment's length.
    static let markFrames: Int32 = 120

    let links: [Link]
    private var decoder: OpaquePointer?
    private var decoderChannels: Int32 = 0
    private var currentLink: Int32 = -1
    /// Set when marking libopusfile's decoder failed: from then on libopusfile decodes.
    private var givenUp = false
    /// The packets decoded here so far.
    private(set) var packets = 0

    init(file: OpaquePointer) {
        let count = max(1, Int(op_link_count(file)))
        self.links = (0..<count).map { index in
            guard let head = op_head(file, Int32(index))?.pointee else {
                return Link(plain: false, channels: 0, gain: 0)
            }
            let plain = head.mapping_family == 0 && head.stream_count == 1 && (1...2).contains(head.channel_count)
            return Link(plain: plain, channels: head.channel_count, gain: min(max(head.output_gain, -32768), 32767))
        }
    }

    deinit {
        if let decoder = self.decoder { opus_decoder_destroy(decoder) }
    }

    /// Whether any link is decoded here.
    var hasPlainLinks: Bool { self.links.contains { $0.plain } }

    /// libopusfile's decode callback: decodes `packet` into `pcm` (room for `samples` × `channels`
    /// floats) and returns 0, or an Opus error code, or `OP_DEC_USE_DEFAULT` for libopusfile to decode.
    func decode(
        packet: UnsafePointer<ogg_packet>?, into pcm: UnsafeMutableRawPointer?, samples: Int32, channels: Int32,
        format: Int32, link: Int32, theirs: OpaquePointer?
    ) -> Int32 {
        guard !self.givenUp, format == OP_DEC_FORMAT_FLOAT, link >= 0, Int(link) < self.links.count,
            self.links[Int(link)].plain, self.links[Int(link)].channels == channels, samples >= Self.markFrames,
            let packet, let pcm, let theirs
        else { return OP_DEC_USE_DEFAULT }
        let bytes = packet.pointee.bytes
        guard bytes >= 0, bytes <= Int(Int32.max) else { return OPUS_INVALID_PACKET }
        let target = pcm.assumingMemoryBound(to: Float.self)
        let fresh = playerd_opus_ms_last_packet_duration(theirs) == 0
        if fresh {
            // Marks libopusfile's decoder, to see its next reset; `pcm` is overwritten below.
            guard opus_multistream_decode_float(theirs, nil, 0, target, Self.markFrames, 0) == Self.markFrames else {
                self.givenUp = true
                return OP_DEC_USE_DEFAULT
            }
        }
        let decoder: OpaquePointer
        if let existing = self.decoder, self.decoderChannels == channels {
            decoder = existing
            if fresh || link != self.currentLink { _ = playerd_opus_reset(decoder) }
        } else {
            if let existing = self.decoder { opus_decoder_destroy(existing) }
            var error: Int32 = 0
            guard let created = opus_decoder_create(Int32(OpusStream.sampleRate), channels, &error) else {
                self.decoder = nil
                self.givenUp = true
                return OPUS_ALLOC_FAIL
            }
            decoder = created
            self.decoder = created
            self.decoderChannels = channels
            self.currentLink = -1
        }
        if link != self.currentLink {
            _ = playerd_opus_set_gain(decoder, self.links[Int(link)].gain)
            self.currentLink = link
        }
        let decoded = opus_decode_float(decoder, packet.pointee.packet, Int32(bytes), target, samples, 0)
        if decoded < 0 { return decoded }
        guard decoded == samples else { return OPUS_INTERNAL_ERROR }
        self.packets += 1
        return 0
    }
}
