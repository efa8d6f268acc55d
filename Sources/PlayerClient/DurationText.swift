/// Why a duration typed by a person could not be read.
public enum DurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing was given.
    case empty
    /// The text is not in any of the accepted forms.
    case malformed(String)
    /// A minutes or seconds field after a colon is 60 or more, `1:75`.
    case fieldTooLarge(String)

    /// A message that shows the accepted forms.
    public var description: String {
        switch self {
        case .empty:
            "a duration is empty: \(DurationError.forms)"
        case .malformed(let text):
            "\"\(text)\" is not a duration: \(DurationError.forms)"
        case .fieldTooLarge(let text):
            "\"\(text)\" is not a duration: minutes and seconds after a colon go up to 59"
        }
    }

    static let forms = "use seconds (90, 2.5), units (30s, 1m30s, 20m, 1h) or a clock (1:30, 1:02:03)"
}

/// Reads a non-negative duration in seconds, the way people type it: `90` and `2.5` (seconds),
/// `30s`, `1m30s`, `20m`, `1h`, `1h2m3.5s` (units in that order, each at most once), or a clock,
/// `1:30` and `1:02:03` (minutes and seconds after a colon below 60; the last field may have a fraction).
public func parseDuration(_ text: String) throws(DurationError) -> Double {
    guard !text.isEmpty else {
        throw .empty
    }
    let seconds: Double?
    if let number = decimal(Substring(text)) {
        seconds = number
    } else if text.contains(":") {
        seconds = try clockSeconds(text)
    } else {
        seconds = unitSeconds(text)
    }
    guard let seconds, seconds.isFinite, seconds < 1e12 else {
        throw .malformed(text)
    }
    return seconds
}

/// A time as a clock shows it: `m:ss` below an hour, `h:mm:ss` from an hour on. Fractions are cut
/// off (0:59.9 is still 0:59, as mpc shows it); a negative or unknown time shows as `0:00`.
public func formatDuration(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds > 0 else {
        return "0:00"
    }
    let whole = Int(min(seconds, 1e12))
    let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
    let paddedSeconds = rest < 10 ? "0\(rest)" : "\(rest)"
    if hours == 0 {
        return "\(minutes):\(paddedSeconds)"
    }
    return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(paddedSeconds)"
}

/// Seconds as the protocol carries them: `90`, `2.5`, `0.333` (at most three decimals, no exponent).
public func protocolSeconds(_ seconds: Double) -> String {
    let milliseconds = Int((seconds * 1000).rounded())
    let sign = milliseconds < 0 ? "-" : ""
    let magnitude = milliseconds.magnitude
    let whole = magnitude / 1000
    var fraction = magnitude % 1000
    guard fraction != 0 else {
        return "\(sign)\(whole)"
    }
    var digits = 3
    while fraction % 10 == 0 {
        fraction /= 10
        digits -= 1
    }
    let text = "\(fraction)"
    return "\(sign)\(whole).\(String(repeating: "0", count: digits - text.count))\(text)"
}

/// Digits with an optional fraction, `12` or `2.5` (also `.5` and `5.`), and nothing else: no sign,
/// no exponent, no spaces, which `Double(_:)` would let through.
private func decimal(_ text: Substring) -> Double? {
    var digits = 0
    var points = 0
    for character in text {
        if character == "." {
            points += 1
        } else if character.isASCII && character.isNumber {
            digits += 1
        } else {
            return nil
        }
    }
    guard digits > 0, points <= 1 else {
        return nil
    }
    return Double(text)
}

// `1:30`, `1:02:03`, `1:30.5`.
private func clockSeconds(_ text: String) throws(DurationError) -> Double? {
    let fields = text.split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count <= 3 else {
        return nil
    }
    var total = 0.0
    for (index, field) in fields.enumerated() {
        let isLast = index == fields.count - 1
        // Only the seconds may have a fraction, and every field is digits.
        guard let value = decimal(field), isLast || !field.contains(".") else {
            return nil
        }
        if index > 0 && value >= 60 {
            throw .fieldTooLarge(text)
        }
        total = total * 60 + value
    }
    return total
}

// `30s`, `1m30s`, `20m`, `1h`, `1h2m3.5s`.
private func unitSeconds(_ text: String) -> Double? {
    let units: [(unit: Character, seconds: Double)] = [("h", 3600), ("m", 60), ("s", 1)]
    var nextUnit = 0
    var total = 0.0
    var rest = Substring(text)
    while !rest.isEmpty {
        guard let unitIndex = rest.firstIndex(where: { character in character.isLetter }),
            let found = units[nextUnit...].firstIndex(where: { entry in entry.unit == rest[unitIndex] }),
            let value = decimal(rest[..<unitIndex])
        else {
            return nil
        }
        total += value * units[found].seconds
        nextUnit = found + 1
        rest = rest[rest.index(after: unitIndex)...]
        if nextUnit == units.count && !rest.isEmpty {
            return nil
        }
    }
    return total
}
