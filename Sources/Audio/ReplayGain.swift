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
