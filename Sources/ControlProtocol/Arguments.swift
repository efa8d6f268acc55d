/// A span of queue positions from `START:END`, `START:` or `N`.
public struct PositionRange: Sendable, Hashable {
    /// The first position.
    public var start: Int
    /// The position after the last; `nil` for "to the end of the queue".
    public var end: Int?

    /// Every position: what `-1`, MPD's old spelling of "the whole list", means.
    public static let all = PositionRange(start: 0, end: nil)

    /// Creates a range; `end`, when given, is not below `start`.
    public init(start: Int, end: Int?) {
        self.start = start
        self.end = end
    }

    /// The positions that exist in a queue of `count` songs, or `nil` when the range starts past the end,
    /// which MPD refuses with `Bad song index`. An end past the queue is cut back, as in MPD.
    public func clipped(to count: Int) -> Range<Int>? {
        guard self.start <= count else {
            return nil
        }
        return self.start..<min(self.end ?? count, count)
    }
}

/// Where `seekcur` goes: a sign makes the time relative to the current position.
public enum SeekTarget: Sendable, Hashable {
    /// `seekcur 12.5`: to this time from the start of the song.
    case absolute(Duration)
    /// `seekcur +5` or `seekcur -5`: this far from the current position, either way.
    case relative(Duration)
}

/// What happens after the current song, the `single` option.
public enum SingleMode: String, Sendable, Hashable, CaseIterable {
    /// Playback goes on to the next song.
    case off = "0"
    /// Playback stops after the current song, or repeats it when `repeat` is on.
    case on = "1"
    /// Like `on` for one song, then the option turns itself off.
    case oneshot
}

/// What `idle` can wait for, with the names MPD prints after `changed:`.
public enum IdleSubsystem: String, Sendable, Hashable, CaseIterable {
    /// The song database changed after an update.
    case database
    /// A stored playlist was created, changed or removed.
    case storedPlaylist = "stored_playlist"
    /// The queue changed.
    case playlist
    /// Playback started, stopped, paused, seeked or moved to another song.
    case player
    /// The volume changed.
    case mixer
    /// An output was enabled, disabled or moved.
    case output
    /// repeat, random, single, consume, crossfade or replay gain changed.
    case options
    /// A sticker changed.
    case sticker
    /// A database update started or finished.
    case update
    /// A client subscribed to or unsubscribed from a channel.
    case subscription
    /// A message arrived on a subscribed channel.
    case message
    /// A neighbor was found or lost.
    case neighbor
    /// The mount list changed.
    case mount
    /// A partition was added, removed or changed.
    case partition
}

/// Argument parsers that accept what MPD accepts and refuse with MPD's words (ACK code 2, from its
/// `ArgParser.cxx`). The ACKs carry no command or index; the dispatcher adds them with
/// `Ack.attributed(to:listIndex:)`.
///
/// Numbers are read as C's `strtol` reads them, because that is what MPD calls: leading whitespace and a
/// `+` are accepted, and a negative number where an unsigned one is expected is "too large" (strtoul
/// wraps it around).
public enum Argument {
    /// A non-negative integer up to `maximum`: `Integer expected: x`, `Number too large: 101`.
    public static func unsigned(_ text: String, maximum: Int = Int(UInt32.max)) throws(Ack) -> Int {
        let bytes = Array(text.utf8)
        let number = CNumber(bytes, from: 0)
        guard number.digits > 0, number.end == bytes.count else {
            throw Ack(.argument, "Integer expected: \(text)")
        }
        guard !number.negative || number.magnitude == 0, number.magnitude <= UInt64(maximum) else {
            throw Ack(.argument, "Number too large: \(text)")
        }
        return Int(number.magnitude)
    }

    /// An integer within `range` (a 32-bit int by default). Below the range is also "too large", as in
    /// MPD.
    public static func integer(
        _ text: String, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)
    ) throws(Ack) -> Int {
        let bytes = Array(text.utf8)
        let number = CNumber(bytes, from: 0)
        guard number.digits > 0, number.end == bytes.count else {
            throw Ack(.argument, "Integer expected: \(text)")
        }
        guard let value = number.value, range.contains(value) else {
            throw Ack(.argument, "Number too large: \(text)")
        }
        return value
    }

    /// The queue version of `plchanges` and `plchangesposid`, read as MPD reads it: any integer, which
    /// `strtoul` and a cast to 32 bits wrap (`-1` is 4294967295, a version from the future, which lists
    /// every position); only what is no integer is refused, `Integer expected: x`.
    public static func queueVersion(_ text: String) throws(Ack) -> Int {
        let bytes = Array(text.utf8)
        let number = CNumber(bytes, from: 0)
        guard number.digits > 0, number.end == bytes.count else {
            throw Ack(.argument, "Integer expected: \(text)")
        }
        // strtoul: ULONG_MAX past its range, whatever the sign; a minus negates in unsigned arithmetic.
        let long = number.overflowed ? UInt64.max : number.negative ? 0 &- number.magnitude : number.magnitude
        return Int(UInt32(truncatingIfNeeded: long))
    }

    /// `0` or `1` (also `+1`, `01`, `-0`, as strtol reads them): `Boolean (0/1) expected: x`.
    public static func bool(_ text: String) throws(Ack) -> Bool {
        let bytes = Array(text.utf8)
        let number = CNumber(bytes, from: 0)
        guard number.digits > 0, number.end == bytes.count, let value = number.value, value == 0 || value == 1
        else {
            throw Ack(.argument, "Boolean (0/1) expected: \(text)")
        }
        return value == 1
    }

    /// `START:END` (END excluded), `START:` (to the end), `N` (one position) or `-1` (everything).
    public static func range(_ text: String) throws(Ack) -> PositionRange {
        let bytes = Array(text.utf8)
        let expected = Ack(.argument, "Integer or range expected: \(text)")
        let first = CNumber(bytes, from: 0)
        guard first.digits > 0, first.end == bytes.count || bytes[first.end] == ASCII.colon else {
            throw expected
        }
        if first.end == bytes.count && first.value == -1 {
            return .all
        }
        let start = try Argument.rangeBound(first, text)
        if first.end == bytes.count {
            return PositionRange(start: start, end: start + 1)
        }
        let afterColon = first.end + 1
        let second = CNumber(bytes, from: afterColon)
        if second.digits == 0 {
            // strtol found nothing, so only an empty END (an open range) is well formed.
            guard afterColon == bytes.count else {
                throw expected
            }
            return PositionRange(start: start, end: nil)
        }
        guard second.end == bytes.count else {
            throw expected
        }
        let end = try Argument.rangeBound(second, text)
        guard end >= start else {
            throw Ack(.argument, "Malformed range: \(text)")
        }
        return PositionRange(start: start, end: end)
    }

    /// A number with an optional fraction or exponent, as `strtod` reads it: `Float expected: x`.
    public static func float(_ text: String) throws(Ack) -> Double {
        let bytes = text.utf8
        let start = bytes.firstIndex { !ASCII.isCSpace($0) } ?? bytes.endIndex
        guard start != bytes.endIndex, let value = Double(Substring(text.utf8[start...])) else {
            throw Ack(.argument, "Float expected: \(text)")
        }
        return value
    }

    /// A time in a song, in seconds with an optional fraction (`seek`, `seekid`):
    /// `Negative value not allowed: -1`. Infinity and NaN, which MPD would pass on, are refused as
    /// `Float expected`.
    public static func songTime(_ text: String) throws(Ack) -> Duration {
        let seconds = try Argument.float(text)
        if seconds < 0 {
            throw Ack(.argument, "Negative value not allowed: \(text)")
        }
        return try Argument.duration(seconds, text)
    }

    /// `seekcur`'s argument: `N` seeks to N seconds, `+N` and `-N` move from the current position.
    public static func seekTarget(_ text: String) throws(Ack) -> SeekTarget {
        // MPD looks only at the first byte for the sign, before strtod skips any whitespace.
        let relative = text.utf8.first == ASCII.plus || text.utf8.first == ASCII.minus
        let seconds = try Argument.float(text)
        if relative {
            return .relative(try Argument.duration(seconds, text))
        }
        if seconds < 0 {
            throw Ack(.argument, "Negative value not allowed: \(text)")
        }
        return .absolute(try Argument.duration(seconds, text))
    }

    /// `single`'s argument: `0`, `1` or `oneshot`, exactly.
    public static func singleMode(_ text: String) throws(Ack) -> SingleMode {
        guard let mode = SingleMode(rawValue: text) else {
            throw Ack(.argument, "Unrecognized single mode, expected 0, 1, or oneshot")
        }
        return mode
    }

    /// `setvol`'s argument: 0 to 100.
    public static func volume(_ text: String) throws(Ack) -> Int {
        try Argument.unsigned(text, maximum: 100)
    }

    /// `volume`'s argument: a change from -100 to +100.
    public static func volumeChange(_ text: String) throws(Ack) -> Int {
        try Argument.integer(text, in: -100...100)
    }

    /// One subsystem name, in any case as MPD allows: `Unrecognized idle event: x`.
    public static func idleSubsystem(_ text: String) throws(Ack) -> IdleSubsystem {
        for subsystem in IdleSubsystem.allCases where Argument.equalsIgnoringASCIICase(text, subsystem.rawValue) {
            return subsystem
        }
        throw Ack(.argument, "Unrecognized idle event: \(text)")
    }

    /// `idle`'s arguments; none means every subsystem.
    public static func idleSubsystems(_ arguments: [String]) throws(Ack) -> Set<IdleSubsystem> {
        guard !arguments.isEmpty else {
            return Set(IdleSubsystem.allCases)
        }
        var subsystems = Set<IdleSubsystem>()
        for argument in arguments {
            subsystems.insert(try Argument.idleSubsystem(argument))
        }
        return subsystems
    }

    private static func rangeBound(_ number: CNumber, _ text: String) throws(Ack) -> Int {
        guard !number.negative || number.magnitude == 0 else {
            throw Ack(.argument, "Number is negative: \(text)")
        }
        guard number.magnitude <= UInt64(Int32.max) else {
            throw Ack(.argument, "Number too large: \(text)")
        }
        return Int(number.magnitude)
    }

    private static func duration(_ seconds: Double, _ text: String) throws(Ack) -> Duration {
        // Duration(seconds:) traps on infinity and NaN; no song is longer than a few days anyway.
        guard seconds.isFinite, seconds.magnitude < 1e12 else {
            throw Ack(.argument, "Float expected: \(text)")
        }
        return .seconds(seconds)
    }

    private static func equalsIgnoringASCIICase(_ text: String, _ lowercase: String) -> Bool {
        text.utf8.count == lowercase.utf8.count
            && zip(text.utf8, lowercase.utf8).allSatisfy { byte, expected in
                byte == expected || (byte >= 0x41 && byte <= 0x5A && byte + 0x20 == expected)
            }
    }
}

/// What C's `strtol` reads from the start of a string: optional whitespace and sign, then decimal digits.
struct CNumber {
    /// Whether a `-` came before the digits.
    var negative = false
    /// The digits' value, held at UInt64.max when larger (strtol saturates too).
    var magnitude: UInt64 = 0
    /// Whether the digits' value is larger than UInt64.max.
    var overflowed = false
    /// How many digits were read; none means strtol read nothing.
    var digits = 0
    /// The index after the last digit.
    var end: Int

    init(_ bytes: [UInt8], from start: Int) {
        var index = start
        while index < bytes.count && ASCII.isCSpace(bytes[index]) {
            index += 1
        }
        if index < bytes.count && (bytes[index] == ASCII.plus || bytes[index] == ASCII.minus) {
            self.negative = bytes[index] == ASCII.minus
            index += 1
        }
        self.end = start
        while index < bytes.count && ASCII.isDigit(bytes[index]) {
            let (times10, overflow1) = self.magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - ASCII.zero))
            self.overflowed = self.overflowed || overflow1 || overflow2
            self.magnitude = self.overflowed ? .max : sum
            self.digits += 1
            index += 1
            self.end = index
        }
    }

    /// The signed value, or `nil` beyond what an Int holds.
    var value: Int? {
        guard self.magnitude <= UInt64(Int.max) else {
            return nil
        }
        return self.negative ? -Int(self.magnitude) : Int(self.magnitude)
    }
}
