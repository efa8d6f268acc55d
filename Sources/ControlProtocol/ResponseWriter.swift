/// Builds an answer (one request's, or a whole command list's) as the bytes to write to the socket.
///
/// Everything appends into one buffer that keeps its capacity across `removeAll()`, so answering
/// `status` over and over allocates nothing once the first answer has sized the buffer. The buffer is
/// written through a pointer, a field at a time (one check for room, one copy per piece): appending to
/// an array cost about a hundred instructions a piece, some 3,000 for a `status` answer. Copies of a
/// writer share the buffer until one of them writes.
///
/// Sendable although its buffer is a class (`ManagedBuffer` is not Sendable): a writer writes only to
/// a buffer no other writer holds, copying it first otherwise, so no two threads ever touch one buffer
/// where one of them writes.
public struct ResponseWriter: @unchecked Sendable {
    /// What MPD says on connect. mpc refuses a server below 0.21.
    /// 0.23.5: myMPD refuses servers below it.
    public static let greeting = "OK MPD 0.23.5\n"

    private var buffer: Buffer

    /// Creates an empty writer that can hold `capacity` bytes before it grows (0 allocates nothing).
    public init(capacity: Int = 1024) {
        self.buffer = capacity > 0 ? Buffer.make(capacity: capacity) : Buffer.empty
    }

    /// The answer so far, ready for the socket (a copy).
    public var bytes: [UInt8] {
        self.withUnsafeBytes { Array($0) }
    }

    /// The answer so far as text, for tests and logs.
    public var text: String {
        self.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Bytes written so far.
    public var count: Int { self.buffer.written }

    /// Bytes the buffer holds before it must grow.
    public var capacity: Int { self.buffer.reserved }

    /// Whether nothing has been written since creation or the last `removeAll()`.
    public var isEmpty: Bool { self.count == 0 }

    /// Calls `body` with the answer's bytes, valid only during the call.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try self.buffer.withUnsafeMutablePointerToElements { elements in
            try body(UnsafeRawBufferPointer(start: elements, count: self.buffer.written))
        }
    }

    /// Forgets the answer but keeps the buffer, ready for the next one.
    public mutating func removeAll() {
        if isKnownUniquelyReferenced(&self.buffer) {
            self.buffer.written = 0
        } else {
            self.buffer = self.capacity > 0 ? Buffer.make(capacity: self.capacity) : Buffer.empty
        }
    }

    /// Forgets what was written after the first `count` bytes (a command that failed half-way through
    /// its answer), keeping the buffer.
    public mutating func removeAll(after count: Int) {
        precondition(count >= 0 && count <= self.count, "cannot keep more than was written")
        _ = self.reserve(0)
        self.buffer.written = count
    }

    /// The greeting line, `OK MPD 0.23.5`.
    public mutating func greet() {
        self.appendText(ResponseWriter.greeting)
    }

    /// `OK`, the end of a successful answer.
    public mutating func ok() {
        let at = self.reserve(3)
        at[0] = 0x4F  // O
        at[1] = 0x4B  // K
        at[2] = ASCII.newline
        self.buffer.written += 3
    }

    /// `list_OK`, after each command of a `command_list_ok_begin` list.
    public mutating func listOK() {
        self.appendText("list_OK\n")
    }

    /// The ACK line that ends a failed answer.
    public mutating func ack(_ ack: Ack) {
        self.appendText("ACK [")
        self.appendInteger(ack.code.rawValue)
        self.appendByte(0x40)  // @
        self.appendInteger(ack.listIndex)
        self.appendText("] {")
        self.appendValue(ack.command)
        self.appendText("} ")
        self.appendValue(ack.message)
        self.appendByte(ASCII.newline)
    }

    /// Bytes already in the protocol's form, appended as they are.
    public mutating func appendRaw(bytes: UnsafeRawBufferPointer) {
        self.appendBytes(bytes)
    }

    /// Bytes already in the protocol's form (a kept answer), appended as they are.
    public mutating func appendRaw(bytes: [UInt8]) {
        bytes.withUnsafeBytes { self.appendBytes($0) }
    }

    /// Text already in the protocol's form (whole `key: value` lines), appended as it is.
    public mutating func appendRaw(_ text: some StringProtocol) {
        self.appendText(String(text))
    }

    /// Text already in the protocol's form, appended as it is.
    public mutating func appendRaw(_ text: String) {
        self.appendText(text)
    }

    /// Another writer's answer, appended as it is.
    public mutating func append(_ other: ResponseWriter) {
        other.withUnsafeBytes { self.appendBytes($0) }
    }

    /// `key: value`. A newline or carriage return in the value becomes a space: clients read one
    /// field per line, and a tag with a newline in it must not forge a second field.
    public mutating func field(_ key: String, _ value: String) {
        self.appendKey(key)
        self.appendValue(value)
        self.appendByte(ASCII.newline)
    }

    /// `key: 42`.
    public mutating func field(_ key: String, _ value: Int) {
        let keyCount = key.utf8.count
        var at = self.reserve(keyCount + 2 + ResponseWriter.longestInteger + 1)
        let start = at
        at = ResponseWriter.write(key, count: keyCount, at: at)
        at[0] = ASCII.colon
        at[1] = ASCII.space
        at = ResponseWriter.write(value, at: at + 2)
        at.pointee = ASCII.newline
        self.buffer.written += at + 1 - start
    }

    /// `key: 1` or `key: 0`, MPD's booleans (`repeat`, `random`, `consume`).
    public mutating func field(_ key: String, _ value: Bool) {
        let keyCount = key.utf8.count
        let at = ResponseWriter.write(key, count: keyCount, at: self.reserve(keyCount + 4))
        at[0] = ASCII.colon
        at[1] = ASCII.space
        at[2] = value ? 0x31 : ASCII.zero
        at[3] = ASCII.newline
        self.buffer.written += keyCount + 4
    }

    /// `key: 12.345`: seconds with exactly three decimals, as MPD prints `elapsed` and `duration`.
    public mutating func field(_ key: String, seconds: Double) {
        self.appendKey(key)
        self.appendSeconds(seconds)
        self.appendByte(ASCII.newline)
    }

    /// `time: 12:180`: elapsed and total in whole seconds, each rounded to the nearest as MPD does (so
    /// 1.6 s shows as 2). A negative total, MPD's "unknown", shows as 0.
    public mutating func time(elapsed: Double, total: Double) {
        self.appendKey("time")
        self.appendInteger(ResponseWriter.wholeSeconds(elapsed))
        self.appendByte(ASCII.colon)
        self.appendInteger(ResponseWriter.wholeSeconds(total))
        self.appendByte(ASCII.newline)
    }

    /// `audio: 44100:16:2`. A float stream's `f` is spelled by the caller with `field("audio", ...)`.
    public mutating func audio(sampleRate: Int, bits: Int, channels: Int) {
        self.appendKey("audio")
        self.appendInteger(sampleRate)
        self.appendByte(ASCII.colon)
        self.appendInteger(bits)
        self.appendByte(ASCII.colon)
        self.appendInteger(channels)
        self.appendByte(ASCII.newline)
    }

    /// A binary answer's chunk (`albumart`, `readpicture`): `size: TOTAL`, `type: MIME` when given,
    /// `binary: N`, the N bytes as they are (no newline or CR is touched), then a newline, as MPD 0.23
    /// writes it. The client asks again with the next offset until it has `size` bytes.
    public mutating func binary(totalSize: Int, type: String?, chunk: some Collection<UInt8>) {
        self.field("size", totalSize)
        if let type {
            self.field("type", type)
        }
        let count = chunk.count
        self.field("binary", count)
        let copied: Void? = chunk.withContiguousStorageIfAvailable { self.appendBytes(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            var at = self.reserve(count)
            for byte in chunk {
                at.pointee = byte
                at += 1
            }
            self.buffer.written += count
        }
        self.appendByte(ASCII.newline)
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

    /// The most bytes an `Int` takes in decimal: 19 digits and a sign.
    private static let longestInteger = 20

    // MARK: - The buffer

    /// The bytes and their count, in one allocation.
    private final class Buffer: ManagedBuffer<Header, UInt8> {
        /// The buffer of every writer created without capacity: shared, so never written.
        nonisolated(unsafe) static let empty = Buffer.make(capacity: 0)

        static func make(capacity: Int) -> Buffer {
            let buffer = Buffer.create(minimumCapacity: capacity) { _ in Header(count: 0, capacity: capacity) }
            return unsafeDowncast(buffer, to: Buffer.self)
        }

        // The header through its pointer: `header`, a class's stored property, costs a dynamic
        // exclusivity check at every access (three per field).

        /// Bytes written.
        var written: Int {
            get { self.withUnsafeMutablePointerToHeader { $0.pointee.count } }
            set { self.withUnsafeMutablePointerToHeader { $0.pointee.count = newValue } }
        }

        /// Bytes the buffer holds.
        var reserved: Int { self.withUnsafeMutablePointerToHeader { $0.pointee.capacity } }
    }

    private struct Header {
        var count: Int
        /// What was asked for: `ManagedBuffer.capacity` asks the allocator each time.
        var capacity: Int
    }

    /// Room for `extra` more bytes in a buffer of this writer's own: where to write them. The caller
    /// then adds what it wrote to the count.
    private mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        let count = self.buffer.written
        if !isKnownUniquelyReferenced(&self.buffer) || count + extra > self.buffer.reserved {
            self.grow(toHold: count + extra)
        }
        return self.buffer.withUnsafeMutablePointerToElements { $0 + count }
    }

    /// Moves the answer to a buffer of its own that holds `needed` bytes, doubling as it grows.
    @inline(never)
    private mutating func grow(toHold needed: Int) {
        let old = self.buffer
        let count = old.written
        let capacity = needed <= old.reserved ? old.reserved : max(needed, old.reserved * 2, 64)
        let new = Buffer.make(capacity: capacity)
        new.withUnsafeMutablePointerToElements { target in
            old.withUnsafeMutablePointerToElements { source in target.update(from: source, count: count) }
        }
        new.written = count
        self.buffer = new
    }

    private mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let at = self.reserve(bytes.count)
        UnsafeMutableRawPointer(at).copyMemory(from: source, byteCount: bytes.count)
        self.buffer.written += bytes.count
    }

    private mutating func appendByte(_ byte: UInt8) {
        self.reserve(1).pointee = byte
        self.buffer.written += 1
    }

    private mutating func appendText(_ text: String) {
        let count = text.utf8.count
        _ = ResponseWriter.write(text, count: count, at: self.reserve(count))
        self.buffer.written += count
    }

    private mutating func appendKey(_ key: String) {
        let count = key.utf8.count
        let at = ResponseWriter.write(key, count: count, at: self.reserve(count + 2))
        at[0] = ASCII.colon
        at[1] = ASCII.space
        self.buffer.written += count + 2
    }

    private mutating func appendValue(_ value: String) {
        let count = value.utf8.count
        let start = self.reserve(count)
        _ = ResponseWriter.write(value, count: count, at: start)
        // A second pass only over what was just copied; values are short and rarely hold a newline.
        for index in 0..<count where start[index] == ASCII.newline || start[index] == ASCII.carriageReturn {
            start[index] = ASCII.space
        }
        self.buffer.written += count
    }

    private mutating func appendInteger(_ value: Int) {
        let start = self.reserve(ResponseWriter.longestInteger)
        self.buffer.written += ResponseWriter.write(value, at: start) - start
    }

    /// Copies `text`'s `count` UTF-8 bytes to `at`; returns the end of what it wrote.
    private static func write(_ text: String, count: Int, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<
        UInt8
    > {
        // Every native string has contiguous UTF-8; one that does not is copied byte by byte.
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            if let source = bytes.baseAddress {
                at.update(from: source, count: count)
            }
        }
        if copied == nil {
            var index = 0
            for byte in text.utf8 {
                at[index] = byte
                index += 1
            }
        }
        return at + count
    }

    /// Writes `value` in decimal at `at` (at most `longestInteger` bytes); returns the end.
    private static func write(_ value: Int, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var at = at
        if value < 0 {
            at.pointee = ASCII.minus
            at += 1
        }
        var magnitude = value.magnitude
        if magnitude < 10 {
            // Most numbers in answers are one digit (flags, positions, ids of a short queue).
            at.pointee = ASCII.zero + UInt8(magnitude)
            return at + 1
        }
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        // Least significant first, from the end back.
        let end = at + digits
        var slot = end
        repeat {
            slot -= 1
            slot.pointee = ASCII.zero + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return end
    }

    // A value that is not finite prints as 0.000: clients parse this field as a number, and `nan`
    // would break some of them.
    private mutating func appendSeconds(_ seconds: Double) {
        let clamped =
            seconds.isFinite ? max(-ResponseWriter.largestSeconds, min(seconds, ResponseWriter.largestSeconds)) : 0
        var milliseconds = Int((clamped * 1000).rounded())
        if milliseconds < 0 {
            self.appendByte(ASCII.minus)
            milliseconds = -milliseconds
        }
        self.appendInteger(milliseconds / 1000)
        let fraction = milliseconds % 1000
        let at = self.reserve(4)
        at[0] = ASCII.period
        at[1] = ASCII.zero + UInt8(fraction / 100)
        at[2] = ASCII.zero + UInt8(fraction / 10 % 10)
        at[3] = ASCII.zero + UInt8(fraction % 10)
        self.buffer.written += 4
    }
}
