#if canImport(Glibc)
    import Glibc
#endif

/// How a mixer control's range maps to a volume in percent, as alsamixer maps it (alsa-utils'
/// `alsamixer/volume_mapping.c`): pure functions, so that every range is tested without a card.
///
/// - A dB range wider than 24 dB follows `10^((dB − max) / 6000)` (dB in hundredths), shifted so that
///   the range's minimum reads 0 unless that minimum is a mute: the loudness a listener hears moves
///   evenly with the percent.
/// - A dB range of 24 dB or less is linear in dB.
/// - A control without dB information is linear in its raw steps.
public enum VolumeMapping: Sendable, Equatable {
    /// A dB range in hundredths of a dB (alsa-lib's unit); `minimum` may be `muteDB`.
    case decibels(minimum: Int, maximum: Int)
    /// A raw range, for controls without dB information.
    case raw(minimum: Int, maximum: Int)

    /// alsa-lib's `SND_CTL_TLV_DB_GAIN_MUTE`: the minimum of a range whose bottom step is silence.
    public static let muteDB = -9_999_999
    /// alsamixer's `MAX_LINEAR_DB_SCALE`: up to this many dB a range is mapped linearly.
    static let maximumLinearDB = 24

    /// The mapping for a control: its dB range when it has a usable one, else its raw range.
    public static func forControl(decibels: (minimum: Int, maximum: Int)?, raw: (minimum: Int, maximum: Int))
        -> VolumeMapping
    {
        if let decibels, decibels.minimum < decibels.maximum {
            return .decibels(minimum: decibels.minimum, maximum: decibels.maximum)
        }
        return .raw(minimum: raw.minimum, maximum: raw.maximum)
    }

    /// The position of `value` (dB hundredths or raw, per the mapping) from 0 to 1.
    public func normalized(_ value: Int) -> Double {
        switch self {
        case .raw(let minimum, let maximum):
            guard maximum > minimum else { return 0 }
            return Self.clamped(Double(value - minimum) / Double(maximum - minimum))
        case .decibels(let minimum, let maximum):
            if maximum - minimum <= Self.maximumLinearDB * 100 {
                return Self.clamped(Double(value - minimum) / Double(maximum - minimum))
            }
            var normalized = pow(10, Double(value - maximum) / 6000)
            if minimum != Self.muteDB {
                let minimumNormalized = pow(10, Double(minimum - maximum) / 6000)
                normalized = (normalized - minimumNormalized) / (1 - minimumNormalized)
            }
            return Self.clamped(normalized)
        }
    }

    /// The value (dB hundredths or raw) for a position from 0 to 1, rounded as `rounding` says
    /// (alsamixer's `dir`: up, down or to nearest).
    public func value(normalized: Double, rounding: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int {
        let volume = Self.clamped(normalized)
        switch self {
        case .raw(let minimum, let maximum):
            return Int((volume * Double(maximum - minimum)).rounded(rounding)) + minimum
        case .decibels(let minimum, let maximum):
            if maximum - minimum <= Self.maximumLinearDB * 100 {
                return Int((volume * Double(maximum - minimum)).rounded(rounding)) + minimum
            }
            var scaled = volume
            if minimum != Self.muteDB {
                let minimumNormalized = pow(10, Double(minimum - maximum) / 6000)
                scaled = volume * (1 - minimumNormalized) + minimumNormalized
            }
            guard scaled > 0 else { return minimum }
            return max(minimum, min(maximum, Int((6000 * log10(scaled)).rounded(rounding)) + maximum))
        }
    }

    /// The volume in percent (0 to 100) that `value` reads as.
    public func percent(_ value: Int) -> Int {
        Int((self.normalized(value) * 100).rounded())
    }

    /// The value to set for `percent`: of the values next to the exact one, the one that reads back as
    /// `percent` when there is one (so that setting 37 reads 37 wherever the range has a step there),
    /// else the nearest.
    public func value(percent: Int) -> Int {
        let wanted = max(0, min(100, percent))
        let exact = Double(wanted) / 100
        let candidates = [
            self.value(normalized: exact), self.value(normalized: exact, rounding: .down),
            self.value(normalized: exact, rounding: .up),
        ]
        return candidates.first { self.percent($0) == wanted } ?? candidates[0]
    }

    private static func clamped(_ value: Double) -> Double {
        value.isNaN ? 0 : max(0, min(1, value))
    }
}
