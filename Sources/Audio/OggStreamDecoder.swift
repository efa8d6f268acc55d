import COpusFile
import CVorbisFile
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes an Ogg Vorbis or Ogg Opus network stream (internet radio) as its bytes arrive, never
/// waiting for them: libogg finds the pages in what has arrived, libvorbis's synthesis API and libopus
/// decode their packets.
///
/// The PCM is the file decoders': Vorbis 16-bit as `oggdec` writes it (libvorbisfile's `ov_read`
/// conversion), Opus 16-bit as `opusdec --rate 48000 --no-dither` writes it, at 48 kHz with the pre-skip
/// cut, the OpusHead's output gain applied and the last page's trimming honoured (as libopusfile does);
/// floats as the libraries give them. Each link of a chained stream (Icecast starts one per song: an
/// end-of-stream page, then new headers) is decoded afresh, and its comments become `tags`; a link of
/// another rate or channel count ends the stream with an error. Vorbis and Opus links may follow each
/// other as long as the format stays. After a `.discontinuity` (a new connection) what was held of a
/// page is dropped and the decoder waits for the next link's headers, which Icecast sends each new
/// listener. A decoder belongs to one thread at a time: it is not `Sendable`.
public final class OggStreamDecoder: StreamDecoder {
    public let source: any StreamByteSource
    public private(set) var format: AudioFormat?
    public private(set) var position = 0
    public private(set) var bitrate = 0
    public private(set) var tags = Tags()
    public private(set) var tagsVersion = 0

    /// Bytes asked of the source at a time.
    static let readSize = 16384
    /// Bytes read without the start of a Vorbis or Opus link (from the stream's start, after a
    /// reconnection or after a link's end) before the stream is given up: a link's first page comes
    /// first, and Ogg pages are at most 64 KiB.
    static let linklessLimit = 256 * 1024
    /// The largest packet taken (a comment header with pictures can be large; audio packets are small):
    /// a stream of endlessly continued pages must not fill memory.
    static let packetLimit = 16 << 20
    /// Opus's longest packet, in samples at 48 kHz (120 ms).
    static let opusMaxFrames = 5760

    private let sampleFormat: SampleFormat
    private let replayGain: ReplayGain
    private let sync: UnsafeMutablePointer<ogg_sync_state>
    private let page: UnsafeMutablePointer<ogg_page>
    /// The logical stream being decoded; nil before the first link's first page and after a
    /// discontinuity, until a link's first page comes.
    private var link: Link?
    /// Whether the last page taken was a beginning-of-stream page: the first pages of a link's
    /// streams come together, and one of another codec among them is passed over.
    private var inBeginning = false
    /// The codec of the last link begun that is neither Vorbis nor Opus ("Ogg FLAC" ...), while no
    /// Vorbis or Opus stream begins beside it.
    private var otherCodec: String?
    /// Bytes read while no link was under way (since the stream's start, a reconnection or a link's
    /// end), or while a link's headers were incomplete: bounded by `linklessLimit` and `packetLimit`.
    private var bytesWithoutLink = 0
    private var sourceEnded = false
    private var finished = false
    /// An error met after some frames were handed over: thrown by the next `read`.
    private var pendingError: DecoderError?

    /// Decoded samples not yet handed over, interleaved floats, with how they become integers and
    /// the ReplayGain factor of the link they came from.
    private var pending: [Float] = []
    private var pendingOffset = 0
    private var pendingCodec = Codec.vorbis
    private var pendingGain = 1.0
    /// What the bitrate is measured on: bytes of packets and the frames they made.
    private var trackedBytes = 0
    private var trackedFrames = 0

    /// The two codecs, which turn floats into 16-bit integers each in their own way.
    enum Codec {
        case vorbis
        case opus

        var displayName: String {
            self == .vorbis ? AudioFileKind.vorbis.displayName : AudioFileKind.opus.displayName
        }
    }

    /// A decoder for `source`, which must hold Ogg Vorbis or Ogg Opus; `sampleFormat` `.float32`
    /// gives floats, anything else 16-bit integers. Nothing is read until `prepare()`.
    /// - Throws: `DecoderError.library` when libogg cannot be set up (out of memory).
    public init(source: any StreamByteSource, sampleFormat: SampleFormat, replayGain: ReplayGain) throws(DecoderError) {
        self.source = source
        self.sampleFormat = sampleFormat == .float32 ? .float32 : .signed16
        self.replayGain = replayGain
        self.sync = .allocate(capacity: 1)
        self.page = .allocate(capacity: 1)
        self.page.initialize(to: ogg_page())
        guard ogg_sync_init(self.sync) == 0 else {
            self.sync.deallocate()
            self.page.deallocate()
            throw .library(path: source.url, call: "ogg_sync_init", reason: "out of memory")
        }
    }

    deinit {
        self.link = nil
        ogg_sync_clear(self.sync)
        self.sync.deallocate()
        self.page.deallocate()
    }

    public func prepare() throws(DecoderError) -> Bool {
        while self.format == nil {
            switch try self.advance() {
            case .progressed: continue
            case .waiting: return false
            case .ended:
                if let other = self.otherCodec { throw self.refusal(other) }
                throw self.damaged(self.link?.codec, "the stream ended before its headers")
            }
        }
        return true
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> StreamDecodeResult {
        if let error = self.pendingError {
            self.pendingError = nil
            self.finished = true
            throw error
        }
        if self.finished { return .ended }
        if self.format == nil {
            do {
                guard try self.prepare() else { return .waiting }
            } catch {
                self.finished = true
                throw error
            }
        }
        guard let format = self.format, let base = buffer.baseAddress else { return .waiting }
        let bytesPerFrame = format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame
        guard capacity > 0 else { return .waiting }
        var filled = 0
        var ended = false
        while filled < capacity {
            let available = (self.pending.count - self.pendingOffset) / format.channels
            if available > 0 {
                let count = min(available, capacity - filled)
                self.hand(count, into: base + filled * bytesPerFrame, format: format)
                filled += count
                continue
            }
            let step: Step
            do {
                step = try self.advance()
            } catch {
                if filled == 0 {
                    self.finished = true
                    throw error
                }
                self.pendingError = error
                break
            }
            if step == .waiting { break }
            if step == .ended {
                ended = true
                break
            }
        }
        self.position += filled
        if filled > 0 { return .frames(filled) }
        if ended {
            self.finished = true
            return .ended
        }
        return .waiting
    }

    // MARK: - Handing samples over

    /// Writes `count` frames of `pending` to `target` in `format`, with the link's ReplayGain.
    private func hand(_ count: Int, into target: UnsafeMutableRawPointer, format: AudioFormat) {
        let samples = count * format.channels
        self.pending.withUnsafeBufferPointer { all in
            let from = all.baseAddress! + self.pendingOffset
            if format.sampleFormat == .float32 {
                target.assumingMemoryBound(to: Float.self).update(from: from, count: samples)
            } else {
                let to = target.assumingMemoryBound(to: Int16.self)
                switch self.pendingCodec {
                case .vorbis:
                    for index in 0..<samples { to[index] = Self.vorbisSample(from[index]) }
                case .opus:
                    for index in 0..<samples { to[index] = Self.opusSample(from[index]) }
                }
            }
        }
        self.pendingOffset += samples
        PCMGain.apply(
            self.pendingGain, to: UnsafeMutableRawBufferPointer(start: target, count: count * format.bytesPerFrame),
            format: format.sampleFormat)
    }

    /// A Vorbis sample as libvorbisfile's `ov_read` makes it 16-bit: `vorbis_ftoi(x * 32768.f)`,
    /// clipped. On x86-64 libvorbis 1.3.7 converts with SSE2's `cvtsd2si` (to nearest, ties to even;
    /// out of range or NaN gives INT_MIN); elsewhere with `floor(f + .5)`.
    @inline(__always)
    static func vorbisSample(_ sample: Float) -> Int16 {
        let scaled = Double(sample * 32768)
        #if arch(x86_64)
            guard scaled > -2_147_483_648.5, scaled < 2_147_483_647.5 else { return Int16.min }
            return Int16(clamping: Int32(scaled.rounded(.toNearestOrEven)))
        #else
            let rounded = (scaled + 0.5).rounded(.down)
            guard rounded.isFinite else { return rounded > 0 ? Int16.max : Int16.min }
            return Int16(clamping: Int64(max(-1e15, min(1e15, rounded))))
        #endif
    }

    /// An Opus sample as `opusdec --no-dither` makes it 16-bit: × 32768, clamped, `lrintf`.
    @inline(__always)
    static func opusSample(_ sample: Float) -> Int16 {
        Int16(clamping: lrintf(fmaxf(-32768, fminf(sample * 32768, 32767))))
    }

    // MARK: - Reading the stream

    private enum Step: Equatable {
        /// Something was done (a packet decoded, a page taken, bytes read): try again.
        case progressed
        /// Nothing more can be done until bytes arrive.
        case waiting
        /// The source has ended and every whole page was decoded.
        case ended
    }

    /// One step: a packet of the current link decoded (only when `pending` is empty), else a page
    /// taken, else bytes read from the source.
    private func advance() throws(DecoderError) -> Step {
        if let link = self.link, !link.isExhausted {
            self.pending.removeAll(keepingCapacity: true)
            self.pendingOffset = 0
            if let headers = try link.next(into: &self.pending) {
                try self.begin(link, headers: headers)
                return .progressed
            }
            if link.tookPacket {
                self.pendingCodec = link.codec
                self.pendingGain = link.gainFactor
                self.track(bytes: link.tookBytes, frames: self.pending.count / max(1, link.channels), link: link)
                link.tookPacket = false
                return .progressed
            }
        }
        let found = ogg_sync_pageout(self.sync, self.page)
        if found == 1 {
            try self.take(self.page)
            return .progressed
        }
        if found < 0 { return .progressed }  // bytes skipped to the next page
        if self.sourceEnded { return .ended }
        guard let buffer = ogg_sync_buffer(self.sync, Self.readSize) else {
            throw .library(path: self.source.url, call: "ogg_sync_buffer", reason: "out of memory")
        }
        switch self.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Self.readSize)) {
        case .bytes(let count):
            let count = min(count, Self.readSize)
            ogg_sync_wrote(self.sync, count)
            // Bytes without a link's start, or within a link's headers, are counted: a stream of pages
            // that never start (or never finish) a link's headers ends.
            let inHeaders = self.link.map { !$0.isFinished && !$0.headersRead } ?? false
            if inHeaders || self.link.map({ $0.isFinished }) ?? true {
                self.bytesWithoutLink += count
                if inHeaders, self.bytesWithoutLink > Self.packetLimit {
                    throw self.damaged(self.link?.codec, "no whole headers in \(Self.packetLimit >> 20) MiB")
                }
                if !inHeaders, self.bytesWithoutLink > Self.linklessLimit { throw self.linkless() }
            }
            return .progressed
        case .waiting:
            return .waiting
        case .discontinuity:
            // A new connection: what was held of a page, and the link, belong to the old one. The next
            // link starts with its first page (Icecast sends each listener the headers first).
            ogg_sync_reset(self.sync)
            self.link = nil
            self.otherCodec = nil
            self.inBeginning = false
            self.bytesWithoutLink = 0
            return .progressed
        case .end:
            self.sourceEnded = true
            return .progressed
        }
    }

    /// Takes one page: the start of a new link, one of the current link's, or one to pass over.
    private func take(_ page: UnsafeMutablePointer<ogg_page>) throws(DecoderError) {
        let serial = ogg_page_serialno(page)
        if ogg_page_bos(page) != 0 {
            defer { self.inBeginning = true }
            // Another stream of the same link (a skeleton, a video) beside the one being decoded.
            if self.inBeginning, let link = self.link, link.serial != serial { return }
            if let link = try Link.start(page: page, url: self.source.url) {
                self.link = link
                self.otherCodec = nil
                self.bytesWithoutLink = 0
            } else {
                if !self.inBeginning {
                    self.link = nil
                    self.otherCodec = nil
                }
                self.otherCodec = self.otherCodec ?? Self.otherCodec(page)
            }
            return
        }
        // The first pages of a link are in, and none of them starts a Vorbis or Opus stream.
        if self.inBeginning, self.link == nil, let other = self.otherCodec { throw self.refusal(other) }
        self.inBeginning = false
        guard let link = self.link, link.serial == serial, !link.isFinished else { return }
        link.take(page)
        if link.bodyBytes > Self.packetLimit {
            throw self.damaged(link.codec, "a packet larger than \(Self.packetLimit >> 20) MiB")
        }
    }

    /// A link's headers have been read: its format is checked against the stream's, its comments
    /// become the tags.
    private func begin(_ link: Link, headers: Link.Headers) throws(DecoderError) {
        let format = AudioFormat(sampleRate: headers.rate, channels: headers.channels, sampleFormat: self.sampleFormat)
        guard (1...8).contains(headers.channels) else {
            throw .unsupported(
                path: self.source.url,
                reason: "\(link.codec.displayName) with \(headers.channels) channels (at most 8 play)")
        }
        guard (1...768_000).contains(headers.rate) else {
            throw .unsupported(path: self.source.url, reason: "\(link.codec.displayName) at \(headers.rate) Hz")
        }
        if let known = self.format, known != format {
            throw self.damaged(link.codec, "the stream changed its format from \(known) to \(format)")
        }
        self.format = format
        link.headersRead = true
        self.bytesWithoutLink = 0
        let comments = headers.comments
        let tags = link.codec == .vorbis ? VorbisComments.tags(comments) : OpusDecoder.tags(comments)
        if tags != self.tags || self.tagsVersion == 0 {
            self.tags = tags
            self.tagsVersion += 1
        }
        link.gainFactor = Self.gain(self.replayGain, codec: link.codec, comments: comments)
        if headers.nominalBitrate > 0, self.bitrate == 0 { self.bitrate = (headers.nominalBitrate + 500) / 1000 }
    }

    /// The ReplayGain factor for a link whose comments store gains (`REPLAYGAIN_*` in Vorbis,
    /// `R128_*` in Opus, read as the file decoders read them); 1 for a link that stores none.
    static func gain(_ replayGain: ReplayGain, codec: Codec, comments: [(name: String, value: String)]) -> Double {
        switch codec {
        case .vorbis:
            guard let stored = VorbisComments.storedGain(comments) else { return 1 }
            return replayGain.scale(for: stored).factor
        case .opus:
            let names = Set(comments.map { $0.name.lowercased() })
            guard names.contains("r128_track_gain") || names.contains("r128_album_gain") else { return 1 }
            return replayGain.scale(for: OpusDecoder.storedGain(comments)).factor
        }
    }

    /// Counts a packet's bytes and frames towards the bitrate, which is set afresh every half second.
    private func track(bytes: Int, frames: Int, link: Link) {
        self.trackedBytes += bytes
        self.trackedFrames += frames
        let rate = link.rate
        guard rate > 0, self.trackedFrames > 0, self.trackedFrames >= rate / 2 else { return }
        self.bitrate = (self.trackedBytes * 8 * rate / self.trackedFrames + 500) / 1000
        self.trackedBytes = 0
        self.trackedFrames = 0
    }

    private func damaged(_ codec: Codec?, _ reason: String) -> DecoderError {
        .damaged(path: self.source.url, format: codec?.displayName ?? "Ogg", reason: reason)
    }

    /// What another codec's first page shows it to be; nil for a skeleton (an index beside the
    /// streams, no codec).
    static func otherCodec(_ page: UnsafeMutablePointer<ogg_page>) -> String? {
        let body = UnsafeRawBufferPointer(start: page.pointee.body, count: max(0, page.pointee.body_len))
        let known: [(magic: [UInt8], name: String?)] = [
            ([0x7f] + Array("FLAC".utf8), "Ogg FLAC"), (Array("Speex   ".utf8), "Ogg Speex"),
            ([0x80] + Array("theora".utf8), "Theora video"), (Array("fishead\0".utf8), nil),
            (Array("fisbone\0".utf8), nil),
        ]
        for (magic, name) in known where body.starts(with: magic) { return name }
        return "an Ogg codec playerd does not know"
    }

    private func refusal(_ codec: String) -> DecoderError {
        .unsupported(path: self.source.url, reason: "\(codec): playerd decodes Ogg Vorbis and Opus streams")
    }

    private func linkless() -> DecoderError {
        let kib = Self.linklessLimit / 1024
        if self.format == nil {
            return .unsupported(
                path: self.source.url, reason: "no Ogg Vorbis or Opus stream begins in its first \(kib) KiB")
        }
        return self.damaged(nil, "no new Ogg Vorbis or Opus stream began within \(kib) KiB")
    }
}

// MARK: - Links

extension OggStreamDecoder {
    /// One logical stream of the Ogg stream: its libogg stream state and its codec's decoder.
    final class Link {
        /// What a link's headers tell.
        struct Headers {
            var rate: Int
            var channels: Int
            var comments: [(name: String, value: String)]
            var nominalBitrate: Int
        }

        let codec: Codec
        let serial: Int32
        /// The stream's address, for messages.
        let url: String
        let stream: UnsafeMutablePointer<ogg_stream_state>
        let packet: UnsafeMutablePointer<ogg_packet>
        private let vorbis: VorbisState?
        private let opus: OpusState?
        /// The ReplayGain factor of this link's samples.
        var gainFactor = 1.0
        /// Whether the last `next` decoded a packet (it may have made no frames), and its size.
        var tookPacket = false
        var tookBytes = 0
        /// Whether the link's headers have all been read (and its format accepted).
        var headersRead = false
        /// Whether the link's end-of-stream page has been taken.
        private(set) var isFinished = false
        /// Whether every packet of the pages taken has been decoded, after the end-of-stream page.
        var isExhausted: Bool { self.isFinished && !self.hasPackets }
        private var hasPackets = false

        var rate: Int { self.vorbis.map { Int($0.info.pointee.rate) } ?? 48000 }
        var channels: Int {
            self.vorbis.map { Int($0.info.pointee.channels) } ?? Int(self.opus?.head.channel_count ?? 1)
        }
        /// The bytes libogg holds of packets not yet taken out.
        var bodyBytes: Int { Int(self.stream.pointee.body_fill - self.stream.pointee.body_returned) }

        private init(codec: Codec, serial: Int32, url: String, vorbis: VorbisState?, opus: OpusState?) {
            self.codec = codec
            self.serial = serial
            self.url = url
            self.stream = .allocate(capacity: 1)
            self.packet = .allocate(capacity: 1)
            self.packet.initialize(to: ogg_packet())
            ogg_stream_init(self.stream, serial)
            self.vorbis = vorbis
            self.opus = opus
        }

        deinit {
            ogg_stream_clear(self.stream)
            self.stream.deallocate()
            self.packet.deallocate()
        }

        /// The link a beginning-of-stream page starts, when its first packet is a Vorbis or Opus
        /// identification header; nil for another codec's.
        /// - Throws: `DecoderError.damaged` for a Vorbis or Opus identification header that does not parse.
        static func start(page: UnsafeMutablePointer<ogg_page>, url: String) throws(DecoderError) -> Link? {
            let serial = ogg_page_serialno(page)
            let body = UnsafeRawBufferPointer(start: page.pointee.body, count: max(0, page.pointee.body_len))
            let codec: Codec
            if body.starts(with: [1] + Array("vorbis".utf8)) {
                codec = .vorbis
            } else if body.starts(with: Array("OpusHead".utf8)) {
                codec = .opus
            } else {
                return nil
            }
            let link = Link(
                codec: codec, serial: serial, url: url, vorbis: codec == .vorbis ? VorbisState() : nil,
                opus: codec == .opus ? OpusState() : nil)
            link.take(page)
            guard ogg_stream_packetout(link.stream, link.packet) == 1 else {
                throw .damaged(path: url, format: codec.displayName, reason: "its first page holds no whole header")
            }
            if let vorbis = link.vorbis {
                let code = vorbis_synthesis_headerin(vorbis.info, vorbis.comment, link.packet)
                guard code == 0 else {
                    throw .damaged(path: url, format: codec.displayName, reason: VorbisFile.describe(Int(code)))
                }
                vorbis.headers = 1
            } else if let opus = link.opus {
                let code = opus_head_parse(&opus.head, link.packet.pointee.packet, link.packet.pointee.bytes)
                guard code == 0 else {
                    throw .damaged(path: url, format: codec.displayName, reason: OpusStream.describe(code))
                }
            }
            return link
        }

        /// Gives one of the link's pages to libogg; its packets are taken out by `next`.
        func take(_ page: UnsafeMutablePointer<ogg_page>) {
            guard ogg_stream_pagein(self.stream, page) == 0 else { return }
            if ogg_page_eos(page) != 0 { self.isFinished = true }
            self.hasPackets = true
            if let opus = self.opus, opus.tagsRead {
                opus.collect(self.stream, packet: self.packet)
            }
        }

        /// Decodes the next packet: appends its samples to `pending` (which is empty) and sets
        /// `tookPacket`, or returns the link's headers once they are all read. Neither when every
        /// packet of the pages taken has been decoded (`hasPackets` then turns false).
        func next(into pending: inout [Float]) throws(DecoderError) -> Headers? {
            self.tookPacket = false
            if let vorbis = self.vorbis {
                return try self.nextVorbis(vorbis, into: &pending)
            }
            if let opus = self.opus {
                return try self.nextOpus(opus, into: &pending)
            }
            return nil
        }

        private func nextVorbis(_ vorbis: VorbisState, into pending: inout [Float]) throws(DecoderError) -> Headers? {
            while true {
                let found = ogg_stream_packetout(self.stream, self.packet)
                if found == 0 {
                    self.hasPackets = false
                    return nil
                }
                // A hole: pages lost (no whole page is lost within a connection, and a reconnection
                // starts a new link), passed over as oggdec passes over it.
                if found < 0 { continue }
                if vorbis.headers < 3 {
                    let code = vorbis_synthesis_headerin(vorbis.info, vorbis.comment, self.packet)
                    guard code == 0 else {
                        throw .damaged(
                            path: self.url, format: self.codec.displayName, reason: VorbisFile.describe(Int(code)))
                    }
                    vorbis.headers += 1
                    guard vorbis.headers == 3 else { continue }
                    guard vorbis.startSynthesis() else {
                        throw .damaged(
                            path: self.url, format: self.codec.displayName, reason: "libvorbis refused its setup header"
                        )
                    }
                    let info = vorbis.info.pointee
                    return Headers(
                        rate: Int(info.rate), channels: Int(info.channels), comments: vorbis.comments(),
                        nominalBitrate: max(0, info.bitrate_nominal))
                }
                self.tookPacket = true
                self.tookBytes = self.packet.pointee.bytes
                if vorbis_synthesis(vorbis.block, self.packet) == 0 {
                    _ = vorbis_synthesis_blockin(vorbis.dsp, vorbis.block)
                }
                vorbis.drain(into: &pending)
                return nil
            }
        }

        private func nextOpus(_ opus: OpusState, into pending: inout [Float]) throws(DecoderError) -> Headers? {
            if !opus.tagsRead {
                let found = ogg_stream_packetout(self.stream, self.packet)
                guard found != 0 else {
                    self.hasPackets = false
                    return nil
                }
                guard found > 0, let comments = OpusState.comments(self.packet.pointee) else {
                    throw .damaged(
                        path: self.url, format: self.codec.displayName, reason: OpusStream.describe(OP_EBADHEADER))
                }
                opus.tagsRead = true
                // A link of more channels than play is refused by the caller.
                if (1...8).contains(opus.head.channel_count) {
                    guard opus.startDecoder() else {
                        throw .damaged(
                            path: self.url, format: self.codec.displayName,
                            reason: "libopus refused its channel mapping")
                    }
                }
                // Audio packets on the pages already taken.
                opus.collect(self.stream, packet: self.packet)
                return Headers(
                    rate: 48000, channels: Int(opus.head.channel_count), comments: comments, nominalBitrate: 0)
            }
            guard let queued = opus.queue.first else {
                self.hasPackets = false
                return nil
            }
            opus.queue.removeFirst()
            self.tookPacket = true
            self.tookBytes = queued.packet.bytes
            opus.decode(queued, into: &pending)
            if opus.queue.isEmpty { self.hasPackets = false }
            return nil
        }
    }

    /// libvorbis's decoder of one link: its headers, then its synthesis state.
    final class VorbisState {
        let info: UnsafeMutablePointer<vorbis_info> = .allocate(capacity: 1)
        let comment: UnsafeMutablePointer<vorbis_comment> = .allocate(capacity: 1)
        let dsp: UnsafeMutablePointer<vorbis_dsp_state> = .allocate(capacity: 1)
        let block: UnsafeMutablePointer<vorbis_block> = .allocate(capacity: 1)
        var headers = 0
        private var synthesizing = false

        init() {
            vorbis_info_init(self.info)
            vorbis_comment_init(self.comment)
        }

        deinit {
            if self.synthesizing {
                vorbis_block_clear(self.block)
                vorbis_dsp_clear(self.dsp)
            }
            vorbis_comment_clear(self.comment)
            vorbis_info_clear(self.info)
            self.info.deallocate()
            self.comment.deallocate()
            self.dsp.deallocate()
            self.block.deallocate()
        }

        /// Sets the synthesis up once the three headers are in; false when libvorbis refuses.
        func startSynthesis() -> Bool {
            guard vorbis_synthesis_init(self.dsp, self.info) == 0 else { return false }
            guard vorbis_block_init(self.dsp, self.block) == 0 else {
                vorbis_dsp_clear(self.dsp)
                return false
            }
            self.synthesizing = true
            return true
        }

        /// Appends every sample the synthesis has ready to `pending`, interleaved.
        func drain(into pending: inout [Float]) {
            var planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
            let count = Int(vorbis_synthesis_pcmout(self.dsp, &planes))
            guard count > 0, let planes else { return }
            let channels = Int(self.info.pointee.channels)
            let start = pending.count
            pending.append(contentsOf: repeatElement(0, count: count * channels))
            pending.withUnsafeMutableBufferPointer { all in
                let target = all.baseAddress! + start
                for channel in 0..<channels {
                    guard let plane = planes[channel] else { continue }
                    for index in 0..<count { target[index &* channels &+ channel] = plane[index] }
                }
            }
            _ = vorbis_synthesis_read(self.dsp, Int32(count))
        }

        /// The comments, `NAME=value` split at the first `=`, in stream order.
        func comments() -> [(name: String, value: String)] {
            VorbisComments.pairs(of: self.comment.pointee)
        }
    }

    /// libopus's decoder of one link, with libopusfile's timekeeping: the pre-skip discarded, the
    /// last page's granule position trimming its end.
    final class OpusState {
        /// An audio packet, as libogg handed it out (its bytes stay valid until the next page goes
        /// in, and no page goes in while packets are queued), with the frames of it to keep.
        struct Queued {
            var packet: ogg_packet
            var frames: Int
            var kept: Int
        }

        var head = OpusHead()
        var tagsRead = false
        var queue: [Queued] = []
        /// Samples still to drop at the start (the pre-skip).
        private var discard = 0
        /// The granule position at the end of the last page's packets; nil before the first audio page.
        private var granule: Int64?
        private var plain: OpaquePointer?
        private var multistream: OpaquePointer?
        private var scratch = [Float](repeating: 0, count: OggStreamDecoder.opusMaxFrames * 8)

        deinit {
            if let plain = self.plain { opus_decoder_destroy(plain) }
            if let multistream = self.multistream { opus_multistream_decoder_destroy(multistream) }
        }

        /// Creates the decoder for the head: a plain one for one stream of one or two channels (the
        /// same samples as the multistream decoder libopusfile uses, for less work), else a multistream
        /// one; the output gain set on it as libopusfile sets it.
        func startDecoder() -> Bool {
            let channels = self.head.channel_count
            let gain = Int32(min(max(self.head.output_gain, -32768), 32767))
            var error: Int32 = 0
            if self.head.mapping_family == 0, self.head.stream_count == 1, (1...2).contains(channels) {
                guard let decoder = opus_decoder_create(48000, channels, &error) else { return false }
                self.plain = decoder
                _ = playerd_opus_set_gain(decoder, gain)
            } else {
                let (streams, coupled, mapping) = (self.head.stream_count, self.head.coupled_count, self.head.mapping)
                let created = withUnsafeBytes(of: mapping) { mapping in
                    opus_multistream_decoder_create(
                        48000, channels, streams, coupled, mapping.bindMemory(to: UInt8.self).baseAddress!, &error)
                }
                guard let decoder = created else { return false }
                self.multistream = decoder
                _ = playerd_opus_ms_set_gain(decoder, gain)
            }
            self.discard = Int(self.head.pre_skip)
            return true
        }

        /// The comments of an OpusTags packet; nil when it does not parse.
        static func comments(_ packet: ogg_packet) -> [(name: String, value: String)]? {
            var tags = OpusTags()
            guard opus_tags_parse(&tags, packet.packet, packet.bytes) == 0 else { return nil }
            defer { opus_tags_clear(&tags) }
            var comments: [(name: String, value: String)] = []
            guard tags.comments > 0, let strings = tags.user_comments, let lengths = tags.comment_lengths else {
                return comments
            }
            for index in 0..<Int(tags.comments) {
                guard let text = strings[index], lengths[index] > 0 else { continue }
                let bytes = UnsafeRawBufferPointer(start: text, count: Int(lengths[index]))
                if let comment = VorbisComments.split(bytes) { comments.append(comment) }
            }
            return comments
        }

        /// Takes every packet of the page just given to `stream` into the queue, with the frames of
        /// each to keep, as libopusfile's `op_fetch_and_process_page` times them: packets whose
        /// duration does not read are passed over, and on the end-of-stream page the packets beyond
        /// the page's granule position are cut.
        func collect(_ stream: UnsafeMutablePointer<ogg_stream_state>, packet: UnsafeMutablePointer<ogg_packet>) {
            var collected: [Queued] = []
            var pageGranule: Int64 = -1
            var endOfStream = false
            while true {
                let found = ogg_stream_packetout(stream, packet)
                if found == 0 { break }
                if found < 0 {
                    // A hole: the timekeeping starts again from the next page's granule position.
                    self.granule = nil
                    continue
                }
                let duration = Self.duration(packet.pointee)
                if duration > 0 {
                    collected.append(Queued(packet: packet.pointee, frames: duration, kept: duration))
                }
                if packet.pointee.granulepos != -1 { pageGranule = packet.pointee.granulepos }
                if packet.pointee.e_o_s != 0 { endOfStream = true }
            }
            guard !collected.isEmpty else { return }
            let total = Int64(collected.reduce(0) { $0 + $1.frames })
            let start: Int64
            if let granule = self.granule {
                start = granule
            } else {
                start = pageGranule == -1 ? 0 : max(0, pageGranule &- total)
            }
            let end = pageGranule == -1 ? start &+ total : pageGranule
            if endOfStream, end &- start < total {
                var remaining = max(0, end &- start)
                for index in collected.indices {
                    let kept = Int(min(Int64(collected[index].frames), remaining))
                    collected[index].kept = kept
                    remaining -= Int64(kept)
                }
                while let last = collected.last, last.kept == 0 { collected.removeLast() }
            }
            self.granule = end
            self.queue += collected
        }

        /// A packet's duration at 48 kHz, 0 when its table of contents does not read or it is longer
        /// than Opus allows.
        static func duration(_ packet: ogg_packet) -> Int {
            guard packet.bytes > 0, packet.bytes <= Int(Int32.max), let data = packet.packet else { return 0 }
            let samples = opus_packet_get_nb_samples(data, Int32(packet.bytes), 48000)
            return samples > 0 && samples <= Int32(OggStreamDecoder.opusMaxFrames) ? Int(samples) : 0
        }

        /// Decodes a queued packet and appends the frames kept (less the pre-skip still to drop) to
        /// `pending`. A packet libopus refuses is passed over.
        func decode(_ queued: Queued, into pending: inout [Float]) {
            let channels = Int(self.head.channel_count)
            let decoded = self.scratch.withUnsafeMutableBufferPointer { scratch -> Int32 in
                let bytes = Int32(queued.packet.bytes)
                let frames = Int32(queued.frames)
                if let plain = self.plain {
                    return opus_decode_float(plain, queued.packet.packet, bytes, scratch.baseAddress!, frames, 0)
                }
                if let multistream = self.multistream {
                    return opus_multistream_decode_float(
                        multistream, queued.packet.packet, bytes, scratch.baseAddress!, frames, 0)
                }
                return -1
            }
            guard decoded == Int32(queued.frames) else { return }
            let skipped = min(queued.kept, self.discard)
            self.discard -= skipped
            guard queued.kept > skipped else { return }
            pending.append(contentsOf: self.scratch[skipped * channels..<queued.kept * channels])
        }
    }
}
