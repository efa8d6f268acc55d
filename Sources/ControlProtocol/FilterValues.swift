// The values inside filters that are more than strings: audio formats (MPD's src/pcm/AudioParser.cxx)
// and time stamps (src/time/ISO8601.cxx), read as MPD reads them, refused with MPD's messages.

extension AudioFormatPattern {
    /// `bits` of a float format, MPD's `f`.
    public static let floatBits = -1
    /// `bits` of a DSD format, MPD's `dsd`.
    public static let dsdBits = -2

    /// Reads MPD's `RATE:BITS:CHANNELS` (`44100:16:2`, `48000:f:1`, `44100:24_3:2`, `44100:dsd:2`,
    /// `dsd64:2`); with `allowingMasks`, any field may be `*` (nil). Bits are 8, 16, 24, 32,
    /// `floatBits` or `dsdBits`. Refusals are ACK 2: `Failed to parse the sample rate`,
    /// `Sample format missing`, `Invalid channel count: 9` ...
    public init(parsing text: String, allowingMasks: Bool) throws(Ack) {
        let bytes = Array(text.utf8)
        var reader = FormatReader(bytes: bytes, mask: allowingMasks)
        if let dsd = reader.dsdShorthand() {
            self.init(sampleRate: dsd, bits: AudioFormatPattern.dsdBits, channels: try reader.channels())
        } else {
            let rate = try reader.sampleRate()
            guard reader.take(ASCII.colon) else {
                throw Ack(.argument, "Sample format missing")
            }
            let bits = try reader.sampleFormat()
            guard reader.take(ASCII.colon) else {
                throw Ack(.argument, "Channel count missing")
            }
            self.init(sampleRate: rate, bits: bits, channels: try reader.channels())
        }
        guard reader.index >= bytes.count else {
            let extra = String(decoding: bytes[reader.index...], as: UTF8.self)
            throw Ack(.argument, "Extra data after channel count: \(extra)")
        }
    }

    /// MPD's notation, `*` for a nil field: `44100:16:2`, `*:f:2`.
    public var mpdNotation: String {
        let bits: String =
            switch self.bits {
            case nil: "*"
            case AudioFormatPattern.floatBits: "f"
            case AudioFormatPattern.dsdBits: "dsd"
            case let bits?: String(bits)
            }
        return "\(self.sampleRate.map(String.init) ?? "*"):\(bits):\(self.channels.map(String.init) ?? "*")"
    }

    /// Whether `format` (a song's, every field set) fits this pattern: each non-nil field equal. MPD's
    /// `AudioFormat::MatchMask`.
    public func matches(_ format: AudioFormatPattern) -> Bool {
        (self.sampleRate == nil || self.sampleRate == format.sampleRate)
            && (self.bits == nil || self.bits == format.bits)
            && (self.channels == nil || self.channels == format.channels)
    }
}

/// The cursor over an audio format's bytes; numbers as `strtoul` reads them (blanks, a sign that
/// wraps around).
private struct FormatReader {
    let bytes: [UInt8]
    let mask: Bool
    var index = 0

    var peek: UInt8 { self.index < self.bytes.count ? self.bytes[self.index] : 0 }

    mutating func take(_ byte: UInt8) -> Bool {
        guard self.peek == byte else {
            return false
        }
        self.index += 1
        return true
    }

    /// `strtoul` at the cursor: the value (wrapped when negative) and whether any digit was read.
    mutating func unsigned() -> UInt64? {
        let number = CNumber(self.bytes, from: self.index)
        guard number.digits > 0 else {
            return nil
        }
        self.index = number.end
        return number.negative ? 0 &- number.magnitude : number.magnitude
    }

    /// `dsd64:` ... `dsd4096:` (even, from 32): the rate it implies, the cursor after the colon.
    mutating func dsdShorthand() -> Int? {
        guard self.bytes.starts(with: Array("dsd".utf8)) else {
            return nil
        }
        var probe = self
        probe.index = 3
        guard let dsd = probe.unsigned(), probe.peek == ASCII.colon, dsd >= 32, dsd <= 4096, dsd % 2 == 0 else {
            return nil
        }
        self.index = probe.index + 1
        return Int(dsd) * 44100 / 8
    }

    mutating func sampleRate() throws(Ack) -> Int? {
        if self.mask && self.take(ASCII.asterisk) {
            return nil
        }
        guard let rate = self.unsigned() else {
            throw Ack(.argument, "Failed to parse the sample rate")
        }
        guard rate > 0, rate < 1 << 30 else {
            throw Ack(.argument, "Invalid sample rate: \(rate)")
        }
        return Int(rate)
    }

    mutating func sampleFormat() throws(Ack) -> Int? {
        if self.mask && self.take(ASCII.asterisk) {
            return nil
        }
        if self.take(UInt8(ascii: "f")) {
            return AudioFormatPattern.floatBits
        }
        if self.bytes[self.index...].starts(with: Array("dsd".utf8)) {
            self.index += 3
            return AudioFormatPattern.dsdBits
        }
        guard let bits = self.unsigned() else {
            throw Ack(.argument, "Failed to parse the sample format")
        }
        switch bits {
        case 8, 16, 32:
            return Int(bits)
        case 24:
            // `24_3`, packed 24-bit samples, is still 24 bits to a filter.
            if self.bytes[self.index...].starts(with: Array("_3".utf8)) {
                self.index += 2
            }
            return 24
        default:
            throw Ack(.argument, "Invalid sample format: \(bits)")
        }
    }

    mutating func channels() throws(Ack) -> Int? {
        if self.mask && self.take(ASCII.asterisk) {
            return nil
        }
        guard let channels = self.unsigned() else {
            throw Ack(.argument, "Failed to parse the channel count")
        }
        guard channels >= 1, channels <= 8 else {
            throw Ack(.argument, "Invalid channel count: \(channels)")
        }
        return Int(channels)
    }
}

/// `modified-since` and `added-since` values: a Unix time as `strtoull` reads it, else ISO 8601 as
/// MPD reads it with glibc's `strptime` (`2023-11-14`, `20231114`, `2023-11-14T22:13:20Z`,
/// `...T22:13+01:00`, `...T2213-0500`).
enum FilterTimestamp {
    static func parse(_ text: String) throws(Ack) -> Int64 {
        let bytes = Array(text.utf8)
        let number = CNumber(bytes, from: 0)
        if number.digits > 0 && number.end == bytes.count {
            // strtoull: a minus wraps around and an overflow saturates; MPD then casts to time_t.
            let value = number.magnitude == .max || !number.negative ? number.magnitude : 0 &- number.magnitude
            return Int64(bitPattern: value)
        }
        return try FilterTimestamp.iso8601(bytes)
    }

    private static func iso8601(_ bytes: [UInt8]) throws(Ack) -> Int64 {
        var reader = TimeReader(bytes: bytes)
        let dateStart = reader.index
        var date = reader.dashedDate()
        if date == nil {
            reader.index = dateStart
            date = reader.compactDate()
        }
        guard let (year, month, day) = date else {
            throw Ack(.argument, "Failed to parse date")
        }
        var seconds = FilterTimestamp.daysFromCivil(year: year, month: month, day: 1) * 86400 + Int64(day - 1) * 86400

        if reader.take(UInt8(ascii: "T")) {
            guard let timeOfDay = reader.timeOfDay() else {
                throw Ack(.argument, "Failed to parse time of day")
            }
            seconds += timeOfDay
        }

        if reader.take(UInt8(ascii: "Z")) {
        } else if reader.peek == ASCII.plus || reader.peek == ASCII.minus {
            seconds -= try reader.timeZoneOffset()
        }
        guard reader.index >= bytes.count else {
            throw Ack(.argument, "Garbage at end of time stamp")
        }
        return seconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }
}

/// The cursor over a time stamp; numbers as glibc's `strptime` reads them (blanks first, at most so
/// many digits, no more once the value would pass the maximum).
private struct TimeReader {
    let bytes: [UInt8]
    var index = 0

    var peek: UInt8 { self.index < self.bytes.count ? self.bytes[self.index] : 0 }

    mutating func take(_ byte: UInt8) -> Bool {
        guard self.peek == byte else {
            return false
        }
        self.index += 1
        return true
    }

    /// glibc's `get_number(from, to, n)`.
    mutating func number(_ range: ClosedRange<Int>, digits: Int) -> Int? {
        while ASCII.isCSpace(self.peek) && self.index < self.bytes.count {
            self.index += 1
        }
        guard ASCII.isDigit(self.peek) else {
            return nil
        }
        var value = 0
        var left = digits
        repeat {
            value = value * 10 + Int(self.peek - ASCII.zero)
            self.index += 1
            left -= 1
        } while left > 0 && value * 10 <= range.upperBound && ASCII.isDigit(self.peek)
        return range.contains(value) ? value : nil
    }

    /// `%F`: `%Y-%m-%d`.
    mutating func dashedDate() -> (Int, Int, Int)? {
        guard let year = self.number(0...9999, digits: 4), self.take(ASCII.minus),
            let month = self.number(1...12, digits: 2), self.take(ASCII.minus),
            let day = self.number(1...31, digits: 2)
        else {
            return nil
        }
        return (year, month, day)
    }

    /// `%Y%m%d`.
    mutating func compactDate() -> (Int, Int, Int)? {
        guard let year = self.number(0...9999, digits: 4), let month = self.number(1...12, digits: 2),
            let day = self.number(1...31, digits: 2)
        else {
            return nil
        }
        return (year, month, day)
    }

    /// MPD's `ParseTimeOfDay`: `HH`, `HH:MM`, `HH:MM:SS`, `HHMM`, `HHMMSS`; seconds since midnight.
    mutating func timeOfDay() -> Int64? {
        guard let hours = self.number(0...23, digits: 2) else {
            return nil
        }
        var seconds = Int64(hours) * 3600
        if self.take(ASCII.colon) {
            guard let minutes = self.number(0...59, digits: 2) else {
                return nil
            }
            seconds += Int64(minutes) * 60
            guard self.take(ASCII.colon) else {
                return seconds
            }
            guard let secs = self.number(0...61, digits: 2) else {
                return nil
            }
            return seconds + Int64(secs)
        }
        // Without separators minutes and seconds are optional, and a failed try reads nothing.
        let beforeMinutes = self.index
        guard let minutes = self.number(0...59, digits: 2) else {
            self.index = beforeMinutes
            return seconds
        }
        seconds += Int64(minutes) * 60
        let beforeSeconds = self.index
        guard let secs = self.number(0...61, digits: 2) else {
            self.index = beforeSeconds
            return seconds
        }
        return seconds + Int64(secs)
    }

    /// MPD's `ParseTimeZoneOffset` at a `+` or `-`: `HHMM`, `HH` or `HH:MM`, at most 13 hours; the
    /// offset east of UTC in seconds.
    mutating func timeZoneOffset() throws(Ack) -> Int64 {
        let negative = self.peek == ASCII.minus
        self.index += 1
        let failed = Ack(.argument, "Failed to parse time zone offset")
        let start = self.index
        let number = CNumber(self.bytes, from: start)
        // strtoul: a sign wraps the value around.
        var value = number.negative ? 0 &- number.magnitude : number.magnitude
        let length = number.digits > 0 ? number.end - start : 0
        if length == 4 {
            self.index = number.end
        } else if length == 2 {
            self.index = number.end
            value = value &* 100
            if self.take(ASCII.colon) {
                let minutesStart = self.index
                let minutes = CNumber(self.bytes, from: minutesStart)
                guard minutes.digits > 0, minutes.end - minutesStart == 2 else {
                    throw failed
                }
                self.index = minutes.end
                value = value &+ (minutes.negative ? 0 &- minutes.magnitude : minutes.magnitude)
            }
        } else {
            throw failed
        }
        let hours = value / 100
        let minutes = value % 100
        guard hours <= 13 else {
            throw Ack(.argument, "Time offset hours out of range")
        }
        guard minutes < 60 else {
            throw Ack(.argument, "Time offset minutes out of range")
        }
        let offset = Int64(hours * 3600 + minutes * 60)
        return negative ? -offset : offset
    }
}

extension ASCII {
    static let asterisk: UInt8 = 0x2A
}
