#if canImport(Glibc)
    import Glibc
#endif

/// The volume a person hears, in percent, from and to a mixer control's range, as alsa-utils'
/// alsamixer maps it (volume_mapping.c): a dB range wider than 24 dB is mapped exponentially,
/// 10^((dB − max)/6000) normalised so the bottom of the range is 0; a narrower one is linear in dB;
/// a control without dB information is linear in its raw steps. dB values are in hundredths of a
/// dB, as alsa-lib gives them. Pure functions, so the mapping is tested without a sound card.
public enum VolumeMapping {
    /// Ranges up to this width (in dB × 100) are mapped linearly in dB.
    public static let maximumLinearDBRange = 2400

    /// The normalised volume (0...1) of `value` in the dB range `min...max` (dB × 100).
    public static func normalized(dB value: Int, min: Int, max: Int) -> Double {
        guard max > min else { return 0 }
        let clamped = Swift.min(Swift.max(value, min), max)
        if max - min <= maximumLinearDBRange {
            return Double(clamped - min) / Double(max - min)
        }
        let normalized = pow(10, Double(clamped - max) / 6000)
        let minimumNorm = pow(10, Double(min - max) / 6000)
        return (normalized - minimumNorm) / (1 - minimumNorm)
    }

    /// The dB value (× 100, rounded to the nearest) for the normalised volume `volume` (0...1).
    public static func dB(normalized volume: Double, min: Int, max: Int) -> Int {
        guard max > min else { return min }
        let volume = Swift.min(Swift.max(volume, 0), 1)
        if max - min <= maximumLinearDBRange {
            return Int((volume * Double(max - min)).rounded()) + min
        }
        let minimumNorm = pow(10, Double(min - max) / 6000)
        let scaled = volume * (1 - minimumNorm) + minimumNorm
        return Swift.max(min, Int((6000 * log10(scaled)).rounded()) + max)
    }

    /// The normalised volume (0...1) of the raw step `value` in `min...max`.
    public static func normalized(raw value: Int, min: Int, max: Int) -> Double {
        guard max > min else { return 0 }
        return Double(Swift.min(Swift.max(value, min), max) - min) / Double(max - min)
    }

    /// The raw step nearest the normalised volume `volume` (0...1).
    public static func raw(normalized volume: Double, min: Int, max: Int) -> Int {
        guard max > min else { return min }
        return Int((Swift.min(Swift.max(volume, 0), 1) * Double(max - min)).rounded()) + min
    }

    /// Percent (0...100, rounded) of a normalised volume.
    public static func percent(_ normalized: Double) -> Int {
        Swift.min(Swift.max(Int((normalized * 100).rounded()), 0), 100)
    }

    /// The normalised volume of a percentage.
    public static func normalized(percent: Int) -> Double {
        Double(Swift.min(Swift.max(percent, 0), 100)) / 100
    }

    /// Percent of a dB value in `min...max` (dB × 100).
    public static func percent(dB value: Int, min: Int, max: Int) -> Int {
        percent(normalized(dB: value, min: min, max: max))
    }

    /// The dB value (× 100) for a percentage in `min...max`.
    public static func dB(percent: Int, min: Int, max: Int) -> Int {
        dB(normalized: normalized(percent: percent), min: min, max: max)
    }

    /// Percent of a raw step in `min...max`.
    public static func percent(raw value: Int, min: Int, max: Int) -> Int {
        percent(normalized(raw: value, min: min, max: max))
    }

    /// The raw step for a percentage in `min...max`.
    public static func raw(percent: Int, min: Int, max: Int) -> Int {
        raw(normalized: normalized(percent: percent), min: min, max: max)
    }
}
