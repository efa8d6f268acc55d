import CFLAC
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes one FLAC file (native `fLaC` or Ogg FLAC) to interleaved PCM with libFLAC, streaming: one
/// FLAC block is held at a time, so memory does not grow with the file's length.
///
/// Integers come at the file's own resolution (`SampleFormat.integer(holding:)`: 16-bit as `.signed16`,
/// 24-bit as `.signed24`, 32-bit as `.signed32`; 8- and 12-bit widened to 16, 20-bit to 24 by shifting
/// left, as `flac -d` writes them), bit-identical to `flac -d`; floats are `sample / 2^(bits-1)`.
/// Seeking is sample-exact (`FLAC__stream_decoder_seek_absolute`). A decoder belongs to one thread at
/// a time: it is not `Sendable`.
public final class FLACDecoder: AudioDecoder {
    /// The path the decoder was opened with, as given.
    public let path: String
    /// The PCM format `read(into:)` produces.
    public let format: AudioFormat
    /// STREAMINFO's total samples; nil when the encoder did not record them (a stream piped in).
    public let lengthFrames: Int?
    /// The tags of the VORBIS_COMMENT block, in MPD's names.
    public let tags: Tags
    /// The ReplayGain applied, in dB (0 when off).
    public let appliedGainDB: Double
    /// The MIXRAMP_START and MIXRAMP_END comments.
    public let mixRamp: MixRamp
    /// The next frame `read(into:)` returns, counted from the start of the song.
    public private(set) var position = 0
    /// The bitrate of the FLAC block last decoded, in kbit/s (the file's average for Ogg FLAC).
    public private(set) var bitrate = 0

    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    /// What libFLAC's callbacks read from and write into; it lives as long as the decoder.
    private let stream: FLACStream
    private let gainFactor: Double
    private let averageBitrate: Int
    private var reachedEnd = false
    /// An error met after decoded PCM was handed over, thrown on the next `read`.
    private var deferredError: DecoderError?
    private var lastDecodePosition: UInt64 = 0

    /// Opens `path`, reads its metadata and its first block, and sets up `replayGain` (off by default:
    /// samples bit-identical to `flac -d`).
    /// - Throws: `DecoderError` naming the file and the reason: missing, unreadable, not a regular
    ///   file, empty, damaged (no STREAMINFO, cut short, a format libFLAC refuses).
    public init(path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.path = path
        let stream = try FLACStream.open(path: path, wantsPictures: false)
        var created = false
        defer { if !created { stream.close() } }
        let info = stream.info
        let produced: SampleFormat = sampleFormat == .float32 ? .float32 : .integer(holding: info.bitsPerSample)
        stream.output = FLACStream.Output(format: produced, bitsPerSample: info.bitsPerSample, channels: info.channels)
        self.format = AudioFormat(sampleRate: info.sampleRate, channels: info.channels, sampleFormat: produced)
        self.lengthFrames = info.totalSamples
        self.tags = VorbisComments.tags(stream.comments)
        self.mixRamp = VorbisComments.mixRamp(stream.comments)
        let scale = replayGain.scale(for: VorbisComments.storedGain(stream.comments))
        self.gainFactor = scale.factor
        self.appliedGainDB = scale.decibels
        self.averageBitrate = FLACStream.averageBitrate(fileSize: stream.fileSize, info: info)
        self.bitrate = self.averageBitrate
        self.decoder = stream.decoder
        self.stream = stream
        created = true
        // The first block: a file cut short before its audio is refused here rather than played as silence.
        self.decodeNext(drained: 0)
        if self.reachedEnd, stream.pendingFrames == 0, let length = self.lengthFrames, length > 0 {
            throw .damaged(
                path: path, format: stream.kind.displayName,
                reason:
                    "cut short before its first audio frame (STREAMINFO promises \(FLACStream.seconds(length, info.sampleRate)) s)"
            )
        }
        if let error = self.deferredError, stream.pendingFrames == 0 {
            throw error
        }
    }

    deinit {
        self.stream.close()
    }

    /// Decodes into `buffer` as many whole frames as fit and returns how many it wrote; 0 means the
    /// song has ended. Frames libFLAC finds damaged (bad CRC) come as silence and bad headers are
    /// skipped, as MPD and `flac -d --decode-through-errors` play them.
    /// - Throws: `DecoderError.damaged` for a file cut short (after handing over what was decoded), a
    ///   change of format mid-stream, or a read error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        let bytesPerFrame = self.format.bytesPerFrame
        let capacity = buffer.count / bytesPerFrame * bytesPerFrame
        guard capacity > 0, let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < capacity {
            if self.stream.pendingFrames > 0 {
                filled += self.stream.drain(into: base + filled, capacity: capacity - filled)
                continue
            }
            if let error = self.deferredError {
                if filled > 0 { break }
                self.deferredError = nil
                self.reachedEnd = true
                throw error
            }
            if self.reachedEnd { break }
            self.decodeNext(drained: filled / bytesPerFrame)
        }
        PCMGain.apply(
            self.gainFactor, to: UnsafeMutableRawBufferPointer(start: base, count: filled),
            format: self.format.sampleFormat)
        let frames = filled / bytesPerFrame
        self.position += frames
        return frames
    }

    /// Moves to `frame` (0 is the song's first frame), sample-exactly.
    /// - Throws: `DecoderError.seekOutOfRange` for a frame before the start or past the end.
    public func seek(toFrame frame: Int) throws(DecoderError) {
        if frame < 0 || self.lengthFrames.map({ frame > $0 }) == true {
            throw .seekOutOfRange(path: self.path, frame: frame, length: self.lengthFrames)
        }
        self.stream.discardPending()
        self.stream.refusal = nil
        self.deferredError = nil
        if frame == self.lengthFrames {
            self.position = frame
            self.reachedEnd = true
            return
        }
        if FLAC__stream_decoder_get_state(self.decoder) == FLAC__STREAM_DECODER_SEEK_ERROR {
            _ = FLAC__stream_decoder_flush(self.decoder)
        }
        let sought = FLAC__stream_decoder_seek_absolute(self.decoder, UInt64(frame)) != 0
        if let refusal = self.stream.refusal {
            self.stream.discardPending()
            throw self.damaged(refusal)
        }
        guard sought else {
            self.stream.discardPending()
            _ = FLAC__stream_decoder_flush(self.decoder)
            if self.lengthFrames == nil {
                throw .seekOutOfRange(path: self.path, frame: frame, length: nil)
            }
            throw self.damaged("cannot seek to \(FLACStream.seconds(frame, self.format.sampleRate)) s")
        }
        self.position = frame
        self.reachedEnd = false
        self.lastDecodePosition = 0
    }

    /// Decodes one FLAC block into the stream's pending PCM, or notes the end or the error met;
    /// `drained` frames have been read since `position` was last counted.
    private func decodeNext(drained: Int) {
        let ok = FLAC__stream_decoder_process_single(self.decoder) != 0
        let state = FLAC__stream_decoder_get_state(self.decoder)
        if let failure = self.stream.readFailure {
            self.stream.readFailure = nil
            self.deferredError = .readFailed(path: self.path, reason: failure)
            return
        }
        if let refusal = self.stream.refusal {
            self.stream.discardPending()
            self.deferredError = self.damaged(refusal)
            return
        }
        if state == FLAC__STREAM_DECODER_END_OF_STREAM {
            self.reachedEnd = true
            // Cut short: fewer frames than STREAMINFO promises, and no good block since libFLAC last
            // reported damage (if any). Frames it skipped in the middle (damage, then good blocks to the
            // end) leave the song short too: it plays through, as in MPD.
            let decoded = self.position + drained + self.stream.pendingFrames
            let skippedInMiddle = self.stream.lastStreamError != nil && !self.stream.damagedSinceLastBlock
            if let length = self.lengthFrames, decoded < length, !skippedInMiddle {
                let rate = self.format.sampleRate
                self.deferredError = self.damaged(
                    "cut short after \(FLACStream.seconds(decoded, rate)) s of \(FLACStream.seconds(length, rate)) s")
            }
            return
        }
        guard ok else {
            self.deferredError = self.damaged(FLACStream.describe(state))
            return
        }
        self.updateBitrate()
    }

    /// MPD's figure: the bytes of the block just decoded over its duration.
    private func updateBitrate() {
        var now: UInt64 = 0
        guard self.stream.kind == .flac, FLAC__stream_decoder_get_decode_position(self.decoder, &now) != 0 else {
            return
        }
        defer { self.lastDecodePosition = now }
        let frames = self.stream.lastBlockFrames
        guard self.lastDecodePosition > 0, now > self.lastDecodePosition, frames > 0 else { return }
        let bits = Double(now - self.lastDecodePosition) * 8
        let kbits = bits * Double(self.format.sampleRate) / Double(frames) / 1000
        if kbits.isFinite, kbits >= 0, kbits < 1e9 { self.bitrate = Int(kbits) }
    }

    private func damaged(_ reason: String) -> DecoderError {
        .damaged(path: self.path, format: self.stream.kind.displayName, reason: reason)
    }
}

extension FLACDecoder {
    /// The tags, format and length of a FLAC file, from its STREAMINFO and VORBIS_COMMENT blocks,
    /// without decoding audio. `duration` is 0 when STREAMINFO records no total, as MPD shows it
    /// (`duration: 0.000`).
    ///
    /// Native FLAC is read with libFLAC's metadata iterator (cheap: what a library scan calls once per
    /// file); Ogg FLAC, and any file that iterator does not read cleanly, through a stream decoder,
    /// which says what is wrong.
    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        let info: FLACStream.Info
        let comments: [(name: String, value: String)]
        if let native = FLACStream.nativeMetadata(path: path) {
            (info, comments) = native
        } else {
            let stream = try FLACStream.open(path: path, wantsPictures: false)
            defer { stream.close() }
            (info, comments) = (stream.info, stream.comments)
        }
        return SongFacts(
            tags: VorbisComments.tags(comments), sampleRate: info.sampleRate, channels: info.channels,
            duration: info.totalSamples.map { Double($0) / Double(info.sampleRate) } ?? 0,
            sampleFormat: .integer(holding: info.bitsPerSample))
    }

    /// The first PICTURE block, in file order, as MPD's `readpicture` takes it (whatever its type; a
    /// picture given by URL, MIME type `-->`, is passed over); when there is none, the front cover
    /// (else the first) among METADATA_BLOCK_PICTURE comments.
    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        let stream = try FLACStream.open(path: path, wantsPictures: true)
        defer { stream.close() }
        return stream.picture ?? VorbisComments.picture(stream.comments)
    }

    /// Every `NAME=value` comment of the VORBIS_COMMENT block, in file order, as MPD's `readcomments`
    /// lists them (names as written).
    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        let stream = try FLACStream.open(path: path, wantsPictures: false)
        defer { stream.close() }
        return stream.comments
    }
}
