import Audio
import CChromaprint

#if canImport(Glibc)
    import Glibc
#endif

/// A song's Chromaprint fingerprint, computed as MPD's `getfingerprint` computes it
/// (src/lib/chromaprint/DecoderClient.cxx): the song decoded at its own rate and channel count, turned
/// into signed 16-bit PCM as MPD's `PcmConvert` turns its decoder's samples (24- and 32-bit ones through
/// MPD's dither, floats multiplied and cut toward zero), fed to libchromaprint's default algorithm until
/// two minutes have gone in (the decoded block that crosses two minutes goes in whole), then the
/// compressed, base64 fingerprint. libchromaprint itself mixes down to mono and resamples to 11025 Hz.
enum Fingerprint {
    /// Why a fingerprint could not be made.
    enum Failure: Error, Equatable {
        /// The decoder refused the file (missing, unreadable, no format playerd decodes ...).
        case decoder(DecoderError)
        /// libchromaprint refused the audio.
        case chromaprint(String)
        /// The client went away.
        case cancelled
    }

    /// The audio MPD feeds libchromaprint: the first two minutes.
    static let seconds = 120

    /// Frames decoded per block: an MPEG-1 Layer III frame's samples, the block MPD's decoders hand over.
    static let blockFrames = 1152

    /// Loads libchromaprint for one fingerprint and hands its calls to `body`; unloads it after. It is not
    /// linked (see CChromaprint's shim.h): loading it costs tens of milliseconds, its 15 MB are held only
    /// while fingerprints are made.
    private static func withLibrary<Result>(_ body: (Library) throws(Failure) -> Result) throws(Failure) -> Result {
        var api = playerd_chromaprint_api()
        guard let handle = playerd_chromaprint_load(&api) else {
            let reason = dlerror().map { String(cString: $0) } ?? "a call is missing"
            throw .chromaprint("libchromaprint cannot be loaded: \(reason)")
        }
        defer { playerd_chromaprint_unload(handle) }
        guard let create = api.create, let destroy = api.destroy, let start = api.start, let feed = api.feed,
            let finish = api.finish, let fingerprint = api.fingerprint, let dealloc = api.dealloc
        else { throw .chromaprint("libchromaprint cannot be loaded: a call is missing") }
        return try body(
            Library(
                create: create, destroy: destroy, start: start, feed: feed, finish: finish, fingerprint: fingerprint,
                dealloc: dealloc))
    }

    /// libchromaprint's calls playerd makes.
    private struct Library {
        let create: @convention(c) (Int32) -> OpaquePointer?
        let destroy: @convention(c) (OpaquePointer?) -> Void
        let start: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
        let feed: @convention(c) (OpaquePointer?, UnsafePointer<Int16>?, Int32) -> Int32
        let finish: @convention(c) (OpaquePointer?) -> Int32
        let fingerprint: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
        let dealloc: @convention(c) (UnsafeMutableRawPointer?) -> Void
    }

    /// The fingerprint of the song at `path`, whatever its format; `isCancelled` is asked between blocks.
    static func compute(path: String, isCancelled: () -> Bool) throws(Failure) -> String {
        let decoder: any AudioDecoder
        do throws(DecoderError) {
            // The samples MPD's decoder would give: floats from Vorbis (its vorbis plugin decodes to
            // floats), integers at the file's resolution from the others.
            let kind = try AudioDecoders.kind(path: path)
            decoder = try kind.decoderType.init(
                path: path, sampleFormat: kind == .vorbis ? .float32 : .signed16, replayGain: .off)
        } catch {
            throw .decoder(error)
        }
        return try Self.withLibrary { chromaprint throws(Failure) in
            try Self.fingerprint(decoder, chromaprint, isCancelled: isCancelled)
        }
    }

    /// The fingerprint of what `decoder` decodes, made with `chromaprint`'s calls.
    private static func fingerprint(_ decoder: any AudioDecoder, _ chromaprint: Library, isCancelled: () -> Bool)
        throws(Failure) -> String
    {
        guard let context = chromaprint.create(Int32(CHROMAPRINT_ALGORITHM_DEFAULT.rawValue)) else {
            throw .chromaprint("chromaprint_new() failed")
        }
        defer { chromaprint.destroy(context) }
        let channels = decoder.format.channels
        guard chromaprint.start(context, Int32(decoder.format.sampleRate), Int32(channels)) == 1 else {
            throw .chromaprint("chromaprint_start() failed")
        }
        var remaining = decoder.format.sampleRate * Self.seconds
        let sampleFormat = decoder.format.sampleFormat
        let samples = Self.blockFrames * channels
        let raw = UnsafeMutableRawBufferPointer.allocate(
            byteCount: samples * sampleFormat.bytesPerSample, alignment: 4)
        defer { raw.deallocate() }
        let block = UnsafeMutableBufferPointer<Int16>.allocate(capacity: samples)
        defer { block.deallocate() }
        var converter = SixteenBitConverter()
        while remaining > 0 {
            guard !isCancelled() else { throw .cancelled }
            let frames: Int
            do throws(DecoderError) {
                frames = try decoder.read(into: raw)
            } catch {
                // Damage past the start ends the song there, as it ends playback.
                break
            }
            guard frames > 0 else { break }
            let count = min(frames, Self.blockFrames) * channels
            converter.convert(raw, format: sampleFormat, count: count, into: block)
            guard chromaprint.feed(context, block.baseAddress, Int32(count)) == 1 else {
                throw .chromaprint("chromaprint_feed() failed")
            }
            remaining -= frames
        }
        guard chromaprint.finish(context) == 1 else { throw .chromaprint("chromaprint_finish() failed") }
        var fingerprint: UnsafeMutablePointer<CChar>?
        guard chromaprint.fingerprint(context, &fingerprint) == 1, let fingerprint else {
            throw .chromaprint("chromaprint_get_fingerprint() failed")
        }
        defer { chromaprint.dealloc(fingerprint) }
        return String(cString: fingerprint)
    }
}

/// Turns decoded samples into signed 16-bit ones as MPD's `PcmConvert` does for libchromaprint
/// (src/pcm/PcmFormat.cxx): 16-bit samples as they are; 24- and 32-bit ones through MPD's `PcmDither`
/// (src/pcm/Dither.cxx: noise shaping from the last three errors, a triangular dither from MPD's
/// linear congruential generator, one state for all channels, started at zero for each song); floats
/// multiplied by 32768, cut toward zero and clamped (`FloatToIntegerSampleConvert`).
struct SixteenBitConverter {
    private var error: (Int32, Int32, Int32) = (0, 0, 0)
    private var random: Int32 = 0

    /// Converts the first `count` samples of `source`, in `format`, into `destination`.
    mutating func convert(
        _ source: UnsafeMutableRawBufferPointer, format: SampleFormat, count: Int,
        into destination: UnsafeMutableBufferPointer<Int16>
    ) {
        switch format {
        case .signed16:
            let samples = source.bindMemory(to: Int16.self)
            for index in 0..<count { destination[index] = samples[index] }
        case .signed24:
            let samples = source.bindMemory(to: Int32.self)
            for index in 0..<count {
                destination[index] = Int16(truncatingIfNeeded: self.dither24(samples[index]))
            }
        case .signed32:
            let samples = source.bindMemory(to: Int32.self)
            for index in 0..<count {
                destination[index] = Int16(truncatingIfNeeded: self.dither32(Int64(samples[index])))
            }
        case .float32:
            let samples = source.bindMemory(to: Float.self)
            for index in 0..<count { destination[index] = Self.sixteenBits(samples[index]) }
        }
    }

    /// MPD's `pcm_prng`: the next state of its linear congruential generator, in 32 bits.
    static func prng(_ state: Int32) -> Int32 {
        // MPD computes in `unsigned long` from the sign-extended state, then keeps the low 32 bits.
        let next = UInt64(bitPattern: Int64(state)) &* 0x0019_660d &+ 0x3c6e_f35f
        return Int32(truncatingIfNeeded: next & 0xffff_ffff)
    }

    /// MPD's `PcmDither::Dither<int32_t, S24 min, S24 max, 8>`.
    mutating func dither24(_ input: Int32) -> Int32 {
        let (minimum, maximum): (Int32, Int32) = (-(1 << 23), (1 << 23) - 1)
        let mask: Int32 = (1 << 8) - 1
        var sample = input &+ self.error.0 &- self.error.1 &+ self.error.2
        self.error.2 = self.error.1
        self.error.1 = self.error.0 / 2
        var output = sample &+ (1 << 7)
        let next = Self.prng(self.random)
        output = output &+ (next & mask) &- (self.random & mask)
        self.random = next
        if output > maximum {
            output = maximum
            if sample > maximum { sample = maximum }
        } else if output < minimum {
            output = minimum
            if sample < minimum { sample = minimum }
        }
        output &= ~mask
        self.error.0 = sample &- output
        return output >> 8
    }

    /// MPD's `PcmDither::Dither<int64_t, S32 min, S32 max, 16>` (its error state stays 32-bit).
    mutating func dither32(_ input: Int64) -> Int64 {
        let (minimum, maximum): (Int64, Int64) = (-(1 << 31), (1 << 31) - 1)
        let mask: Int64 = (1 << 16) - 1
        var sample = input &+ Int64(self.error.0) &- Int64(self.error.1) &+ Int64(self.error.2)
        self.error.2 = self.error.1
        self.error.1 = self.error.0 / 2
        var output = sample &+ (1 << 15)
        let next = Self.prng(self.random)
        output = output &+ (Int64(next) & mask) &- (Int64(self.random) & mask)
        self.random = next
        if output > maximum {
            output = maximum
            if sample > maximum { sample = maximum }
        } else if output < minimum {
            output = minimum
            if sample < minimum { sample = minimum }
        }
        output &= ~mask
        self.error.0 = Int32(truncatingIfNeeded: sample &- output)
        return output >> 16
    }

    /// MPD's float to 16-bit conversion: × 32768, cut toward zero, clamped; NaN is silence.
    static func sixteenBits(_ sample: Float) -> Int16 {
        let scaled = sample * 32768
        guard !scaled.isNaN else { return 0 }
        if scaled <= -32768 { return .min }
        if scaled >= 32767 { return .max }
        return Int16(scaled.rounded(.towardZero))
    }
}
