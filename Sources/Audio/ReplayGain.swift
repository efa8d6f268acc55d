import CMPG123

#if canImport(Glibc)
    import Glibc
#endif

/// Which ReplayGain value a decoder applies, and how: MPD's `replay_gain_*` settings for one song.
///
/// libmpg123 does the work: it reads the gains and peaks from ID3v2 `TXXX:replaygain_*` frames (any
/// case), RVA2 frames and the LAME header, applies the chosen one with `MPG123_RVA`, scales by the
/// preamp through `mpg123_volume`, and lowers the gain so that `gain × peak` stays at or below full
/// scale whenever the file names a peak (its `do_rva`). `.off` leaves the PCM bit-identical to
/// `mpg123 -s`.
public struct ReplayGain: Sendable, Equatable {
    /// The stored value to apply.
    public enum Source: String, Sendable, CaseIterable {
        /// None: the samples pass as decoded.
        case off
        /// The track's own gain.
        case track
        /// The album's gain (libmpg123 falls back to the track's when the file names no album gain).
        case album
    }

    /// The stored value to apply.
    public var source: Source
    /// Added to the stored gain, in dB (MPD's `replaygain_preamp`, default 0).
    public var preampDB: Double
    /// The gain applied to a file that stores none, in dB (MPD's `replaygain_missing_preamp`, default 0).
    public var missingPreampDB: Double
    /// Whether the stored peak limits the gain so nothing clips (MPD's `replaygain_limit`, default on).
    public var limitsToPeak: Bool

    /// No ReplayGain: samples pass bit for bit.
    public static let off = ReplayGain(source: .off)

    /// A choice of stored value with the given adjustments.
    public init(source: Source, preampDB: Double = 0, missingPreampDB: Double = 0, limitsToPeak: Bool = true) {
        self.source = source
        self.preampDB = preampDB
        self.missingPreampDB = missingPreampDB
        self.limitsToPeak = limitsToPeak
    }

    /// Sets `handle` up for this choice; call before the first decode. Returns the gain applied in dB
    /// (stored gain, limited by the peak, plus the preamp; or the missing-preamp), 0 for `.off`.
    ///
    /// libmpg123 has no missing-gain preamp and always limits to the peak it knows: a file without a
    /// stored gain gets `missingPreampDB` through `mpg123_volume` here, and with `limitsToPeak` off the
    /// stored gain is read from `mpg123_getvolume` and applied through `mpg123_volume` with RVA off,
    /// so no peak limits it.
    func apply(to handle: OpaquePointer) -> Double {
        guard self.source != .off else { return 0 }
        let rva = self.source == .album ? MPG123_RVA_ALBUM : MPG123_RVA_MIX
        var base = 0.0
        var really = 0.0
        var rvaDB = 0.0
        // The RVA values are known once the ID3v2 tag and the first frame (LAME header) have been read:
        // the caller has called `mpg123_getformat` already.
        let hasStoredGain = Self.storesGain(handle)
        if !hasStoredGain {
            _ = mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(MPG123_RVA_OFF.rawValue), 0)
            _ = mpg123_volume(handle, Self.factor(self.missingPreampDB))
            return self.missingPreampDB
        }
        if !self.limitsToPeak {
            let stored = Self.storedGainDB(handle, album: self.source == .album)
            _ = mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(MPG123_RVA_OFF.rawValue), 0)
            _ = mpg123_volume(handle, Self.factor(stored + self.preampDB))
            return stored + self.preampDB
        }
        _ = mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(rva.rawValue), 0)
        _ = mpg123_volume(handle, Self.factor(self.preampDB))
        _ = mpg123_getvolume(handle, &base, &really, &rvaDB)
        // `really` is the factor in effect: preamp × stored gain, lowered by the peak when it would clip.
        return really > 0 ? 20 * log10(really) : self.preampDB
    }

    static func factor(_ decibels: Double) -> Double { pow(10, decibels / 20) }

    /// Whether the file stores a track or album gain (libmpg123's RVA level is set when one was read).
    private static func storesGain(_ handle: OpaquePointer) -> Bool {
        var base = 0.0
        var really = 0.0
        var rvaDB = 0.0
        for mode in [MPG123_RVA_MIX, MPG123_RVA_ALBUM] {
            _ = mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(mode.rawValue), 0)
            _ = mpg123_volume(handle, 1)
            _ = mpg123_getvolume(handle, &base, &really, &rvaDB)
            if rvaDB != 0 { return true }
        }
        return false
    }

    /// The stored gain in dB, before any peak limit: libmpg123 reports it as `rva_db`.
    private static func storedGainDB(_ handle: OpaquePointer, album: Bool) -> Double {
        var base = 0.0
        var really = 0.0
        var rvaDB = 0.0
        let mode = album ? MPG123_RVA_ALBUM : MPG123_RVA_MIX
        _ = mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(mode.rawValue), 0)
        _ = mpg123_getvolume(handle, &base, &really, &rvaDB)
        return rvaDB
    }
}

/// The ReplayGain values a file stores (Vorbis comments, Opus's R128 gains ...), in dB relative to
/// ReplayGain's reference, with peaks as linear factors; nil where a value is not stored.
public struct StoredReplayGain: Sendable, Hashable {
    public var trackGainDB: Double?
    public var trackPeak: Double?
    public var albumGainDB: Double?
    public var albumPeak: Double?

    public init(
        trackGainDB: Double? = nil, trackPeak: Double? = nil, albumGainDB: Double? = nil, albumPeak: Double? = nil
    ) {
        self.trackGainDB = trackGainDB
        self.trackPeak = trackPeak
        self.albumGainDB = albumGainDB
        self.albumPeak = albumPeak
    }
}

extension ReplayGain {
    /// The linear factor to scale a song's samples by, and the gain it stands for in dB, for decoders
    /// whose library does not apply ReplayGain itself: MPD's `ReplayGainTuple::CalculateScale`. The
    /// album's gain falls back to the track's (and the track's to the album's) when only one is
    /// stored; the factor is at most 15; with `limitsToPeak`, `factor × peak` stays at or below 1.
    /// A song without a stored gain gets `missingPreampDB`. `.off` gives exactly 1.
    public func scale(for stored: StoredReplayGain?) -> (factor: Double, decibels: Double) {
        guard self.source != .off else { return (1, 0) }
        let album = (stored?.albumGainDB).map { ($0, stored?.albumPeak) }
        let track = (stored?.trackGainDB).map { ($0, stored?.trackPeak) }
        guard let (gain, peak) = self.source == .album ? (album ?? track) : (track ?? album) else {
            return (Self.factor(self.missingPreampDB), self.missingPreampDB)
        }
        var factor = min(15, Self.factor(gain + self.preampDB))
        if self.limitsToPeak, let peak, peak > 0, factor * peak > 1 {
            factor = 1 / peak
        }
        return (factor, 20 * log10(factor))
    }
}

/// Scales PCM by a linear factor, clamping to the sample format's range: software ReplayGain for the
/// decoders whose library does not apply it.
public enum PCMGain {
    /// Scales the interleaved samples in `buffer`, which holds `format` PCM, by `factor`; a factor of
    /// exactly 1 leaves them bit for bit.
    public static func apply(_ factor: Double, to buffer: UnsafeMutableRawBufferPointer, format: SampleFormat) {
        guard factor != 1, let base = buffer.baseAddress else { return }
        switch format {
        case .signed16:
            let samples = base.assumingMemoryBound(to: Int16.self)
            let scale = Float(factor)
            for index in 0..<buffer.count / 2 {
                samples[index] = Int16(max(-32768, min(32767, (Float(samples[index]) * scale).rounded())))
            }
        case .signed24, .signed32:
            let samples = base.assumingMemoryBound(to: Int32.self)
            let limit: Double = format == .signed24 ? 8_388_607 : 2_147_483_647
            for index in 0..<buffer.count / 4 {
                samples[index] = Int32(max(-limit - 1, min(limit, (Double(samples[index]) * factor).rounded())))
            }
        case .float32:
            let samples = base.assumingMemoryBound(to: Float.self)
            let scale = Float(factor)
            for index in 0..<buffer.count / 4 {
                samples[index] *= scale
            }
        }
    }
}
