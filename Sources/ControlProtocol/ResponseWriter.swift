/// Builds an answer (one request's, or a whole command list's) as the bytes to write to the socket.
///
/// Everything appends into one byte array that keeps its capacity across `removeAll()`, so answering
/// `status` over and over allocates nothing once the first answer has sized the buffer.
public struct ResponseWriter: Sendable {
    /// What MPD says on connect. mpc refuses a server below 0.21.
    /// 0.23.5: myMPD refuses servers below it.
    public static let greeting = "OK MPD 0.23.5\n"

    /// The answer so far, ready for the socket.
    public private(set) var bytes: [UInt8]

    /// Creates an empty writer that can hold `capacity` bytes before it grows.
    public init(capacity: Int = 1024) {
        self.bytes = []
        self.bytes.reserveCapacity(capacity)
    }

    /// The answer so far as text, for tests and logs.
    public var text: String { String(decoding: self.bytes, as: UTF8.self) }

    /// Whether nothing has been written since creation or the last `removeAll()`.
    public var isEmpty: Bool { self.bytes.isEmpty }

    /// Forgets the answer but keeps the buffer, ready for the next one.
    public mutating func removeAll() {
        self.bytes.removeAll(keepingCapacity: true)
    }

    /// The greeting line, `OK MPD 0.23.5`.
    public mutating func greet() {
        self.bytes.append(contentsOf: ResponseWriter.greeting.utf8)
    }

    /// `OK`, the end of a successful answer.
    public mutating func ok() {
        self.bytes.append(contentsOf: "OK\n".utf8)
    }

    /// `list_OK`, after each command of a `command_list_ok_begin` list.
    public mutating func listOK() {
        self.bytes.append(contentsOf: "list_OK\n".utf8)
    }

    /// The ACK line that ends a failed answer.
    public mutating func ack(_ ack: Ack) {
        self.bytes.append(contentsOf: "ACK [".utf8)
        self.appendInteger(ack.code.rawValue)
        self.bytes.append(0x40)  // @
        self.appendInteger(ack.listIndex)
        self.bytes.append(contentsOf: "] {".utf8)
        self.appendValue(ack.command)
        self.bytes.append(contentsOf: "} ".utf8)
        self.appendValue(ack.message)
        self.bytes.append(ASCII.newline)
    }

    /// Bytes already in the protocol's form, appended as they are.
    public mutating func appendRaw(bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
    }

    /// Text already in the protocol's form (whole `key: value` lines), appended as it is.
    public mutating func appendRaw(_ text: some StringProtocol) {
        self.bytes.append(contentsOf: text.utf8)
    }

    /// `key: value`. A newline or carriage return in the value becomes a space: clients read one
    /// field per line, and a tag with a newline in it must not forge a second field.
    public mutating func field(_ key: String, _ value: String) {
        self.appendKey(key)
        self.appendValue(value)
        self.bytes.append(ASCII.newline)
    }

    /// `key: 42`.
    public mutating func field(_ key: String, _ value: Int) {
        self.appendKey(key)
        self.appendInteger(value)
        self.bytes.append(ASCII.newline)
    }

    /// `key: 1` or `key: 0`, MPD's booleans (`repeat`, `random`, `consume`).
    public mutating func field(_ key: String, _ value: Bool) {
        self.appendKey(key)
        self.bytes.append(value ? 0x31 : ASCII.zero)
        self.bytes.append(ASCII.newline)
    }

    /// `key: 12.345`: seconds with exactly three decimals, as MPD prints `elapsed` and `duration`.
    public mutating func field(_ key: String, seconds: Double) {
        self.appendKey(key)
        self.appendSeconds(seconds)
        self.bytes.append(ASCII.newline)
    }

    /// `time: 12:180`: elapsed and total in whole seconds, each rounded to the nearest as MPD does (so
    /// 1.6 s shows as 2). A negative total, MPD's "unknown", shows as 0.
    public mutating func time(elapsed: Double, total: Double) {
        self.appendKey("time")
        self.appendInteger(ResponseWriter.wholeSeconds(elapsed))
        self.bytes.append(ASCII.colon)
        self.appendInteger(ResponseWriter.wholeSeconds(total))
        self.bytes.append(ASCII.newline)
    }

    /// `audio: 44100:16:2`. A float stream's `f` is spelled by the caller with `field("audio", ...)`.
    public mutating func audio(sampleRate: Int, bits: Int, channels: Int) {
        self.appendKey("audio")
        self.appendInteger(sampleRate)
        self.bytes.append(ASCII.colon)
        self.appendInteger(bits)
        self.bytes.append(ASCII.colon)
        self.appendInteger(channels)
        self.bytes.append(ASCII.newline)
    }

    /// Seconds rounded to the nearest whole second, never negative: what `time:` and a song's `Time:`
    /// show.
    public static func wholeSeconds(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else {
            return 0
        }
        return Int(min(seconds.rounded(), ResponseWriter.largestSeconds))
    }

    /// Seconds with three decimals, `12.345`, as text: for callers that build a value themselves.
    public static func formatSeconds(_ seconds: Double) -> String {
        var writer = ResponseWriter(capacity: 24)
        writer.appendSeconds(seconds)
        return writer.text
    }

    // Far beyond any song, and far from where converting to Int would trap.
    private static let largestSeconds = 1e12

    private mutating func appendKey(_ key: String) {
        self.bytes.append(contentsOf: key.utf8)
        self.bytes.append(ASCII.colon)
        self.bytes.append(ASCII.space)
    }

    private mutating func appendValue(_ value: String) {
        let start = self.bytes.count
        self.bytes.append(contentsOf: value.utf8)
        // A second pass only over what was just copied; values are short and rarely hold a newline.
        for index in start..<self.bytes.count
        where self.bytes[index] == ASCII.newline || self.bytes[index] == ASCII.carriageReturn {
            self.bytes[index] = ASCII.space
        }
    }

    private mutating func appendInteger(_ value: Int) {
        if value < 0 {
            self.bytes.append(ASCII.minus)
        }
        // Digits from the most significant down, from a fixed-size scratch buffer: reversing a slice of
        // `bytes` in place copied it first (one allocation per number of two digits or more).
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { scratch in
            var magnitude = value.magnitude
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = ASCII.zero + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            self.bytes.append(contentsOf: scratch[index...])
        }
    }

    // A value that is not finite prints as 0.000: clients parse this field as a number, and `nan`
    // would break some of them.
    private mutating func appendSeconds(_ seconds: Double) {
        let clamped =
            seconds.isFinite ? max(-ResponseWriter.largestSeconds, min(seconds, ResponseWriter.largestSeconds)) : 0
        var milliseconds = Int((clamped * 1000).rounded())
        if milliseconds < 0 {
            self.bytes.append(ASCII.minus)
            milliseconds = -milliseconds
        }
        self.appendInteger(milliseconds / 1000)
        self.bytes.append(ASCII.period)
        let fraction = milliseconds % 1000
        self.bytes.append(ASCII.zero + UInt8(fraction / 100))
        self.bytes.append(ASCII.zero + UInt8(fraction / 10 % 10))
        self.bytes.append(ASCII.zero + UInt8(fraction % 10))
    }
}
