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
        self.appendText("OK\n")
    }

    /// `list_OK`, after each command of a `command_list_ok_begin` list.
    public mutating func listOK() {
        self.appendText("list_OK\n")
    }

    /// The ACK line that ends a failed answer.
    public mutating func ack(_ ack: Ack) {
        self.appendText("ACK [")
        self.appendInteger(ack.code.rawValue)
        self.bytes.append(0x40)  // @
        self.appendInteger(ack.listIndex)
        self.appendText("] {")
        self.appendValue(ack.command)
        self.appendText("} ")
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

    /// Text already in the protocol's form, appended as it is: a `String` is copied in one piece.
    public mutating func appendRaw(_ text: String) {
        self.appendText(text)
    }

    /// Bytes already in the protocol's form (a kept answer), appended as they are.
    public mutating func appendRaw(bytes: [UInt8]) {
        self.bytes.append(contentsOf: bytes)
    }

    /// Another writer's answer, appended as it is.
    public mutating func append(_ other: ResponseWriter) {
        self.bytes.append(contentsOf: other.bytes)
    }

    /// Forgets what was written after the first `count` bytes (a command that failed half-way through
    /// its answer), keeping the buffer.
    public mutating func removeAll(after count: Int) {
        precondition(count >= 0 && count <= self.bytes.count, "cannot keep more than was written")
        self.bytes.removeSubrange(count...)
    }

    /// Bytes written so far.
    public var count: Int { self.bytes.count }

    /// Calls `body` with the answer's bytes, valid only during the call.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try self.bytes.withUnsafeBytes(body)
    }

    /// Bytes the buffer holds before it must grow.
    public var capacity: Int { self.bytes.capacity }

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

    /// A binary answer's chunk (`albumart`, `readpicture`): `size: TOTAL`, `type: MIME` when given,
    /// `binary: N`, the N bytes as they are (no newline or CR is touched), then a newline, as MPD 0.23
    /// writes it. The client asks again with the next offset until it has `size` bytes.
    public mutating func binary(totalSize: Int, type: String?, chunk: some Collection<UInt8>) {
        self.field("size", totalSize)
        if let type {
            self.field("type", type)
        }
        self.field("binary", chunk.count)
        self.bytes.append(contentsOf: chunk)
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
        self.appendText(key)
        self.bytes.append(ASCII.colon)
        self.bytes.append(ASCII.space)
    }

    private mutating func appendValue(_ value: String) {
        let start = self.bytes.count
        self.appendText(value)
        // A second pass only over what was just copied; values are short and rarely hold a newline.
        self.bytes.withUnsafeMutableBufferPointer { bytes in
            for index in start..<bytes.count
            where bytes[index] == ASCII.newline || bytes[index] == ASCII.carriageReturn {
                bytes[index] = ASCII.space
            }
        }
    }

    /// Appends a string's UTF-8 as one copy of its contiguous bytes (every native string has them):
    /// appending the `utf8` view as a sequence cost about a hundred instructions a key, which adds up
    /// over the two dozen keys and values of a `status` answer.
    private mutating func appendText(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { self.bytes.append(contentsOf: $0) }
        if copied == nil {
            self.bytes.append(contentsOf: text.utf8)
        }
    }

    private mutating func appendInteger(_ value: Int) {
        if value < 0 {
            self.bytes.append(ASCII.minus)
        }
        var magnitude = value.magnitude
        if magnitude < 10 {
            // Most numbers in answers are one digit (flags, positions, ids of a short queue).
            self.bytes.append(ASCII.zero + UInt8(magnitude))
            return
        }
        // Digits from the most significant down: the largest power of ten not above the value first.
        var divisor: UInt = 10
        while magnitude / divisor >= 10 {
            divisor *= 10
        }
        while divisor > 0 {
            self.bytes.append(ASCII.zero + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
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
