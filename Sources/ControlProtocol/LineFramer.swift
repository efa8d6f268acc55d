/// Cuts a client's byte stream into request lines, holding at most one line's limit in memory.
///
/// MPD itself gives up on a client whose line outgrows its 8 KiB input buffer and hangs up without a
/// word; playerd's limit is larger and configurable, and the daemon can answer with `ack(for:)`.
public struct LineFramer: Sendable {
    /// What one complete (or abandoned) line turned out to be.
    public enum Frame: Sendable, Hashable {
        /// A complete line, without its `\n` or a `\r` just before it.
        case line(String)
        /// A line went past the limit. It is reported once, as soon as it is seen, and the rest of it up
        /// to the next `\n` is dropped as it arrives.
        case tooLong
        /// A complete line that is not valid UTF-8.
        case invalidUTF8
    }

    /// The default limit, 64 KiB: far above any request mpc or ncmpcpp sends.
    public static let defaultMaximumLineLength = 65536

    /// The most bytes a line may have before its `\n`; a `\r` before the `\n` counts.
    public let maximumLineLength: Int

    /// Whether a line that is not UTF-8 is kept with U+FFFD in place of each bad sequence (a client
    /// reading a server's tags) rather than reported as `invalidUTF8` (the server reading requests).
    public let repairsInvalidUTF8: Bool

    // The start of a line whose end has not arrived yet; never longer than the limit.
    private var partial: [UInt8] = []
    // Set between a too-long line's report and its `\n`.
    private var discarding = false
    // The last short line decoded: the same bytes again (a client polling `status`) give the same
    // string without making one.
    private var lastLine = ""

    /// Creates a framer; `maximumLineLength` must be at least 1.
    public init(maximumLineLength: Int = LineFramer.defaultMaximumLineLength, repairsInvalidUTF8: Bool = false) {
        precondition(maximumLineLength >= 1, "a line limit must allow at least one byte")
        self.maximumLineLength = maximumLineLength
        self.repairsInvalidUTF8 = repairsInvalidUTF8
    }

    /// Bytes held for a line still waiting for its `\n`; never more than `maximumLineLength`.
    public var bufferedByteCount: Int { self.partial.count }

    /// The buffer's allocated size, which growth keeps within the limit.
    var bufferCapacity: Int { self.partial.capacity }

    /// The ACK for a frame that is not a line: `line too long: more than 65536 bytes`,
    /// `invalid UTF-8 in request`.
    public func ack(for frame: Frame) -> Ack? {
        switch frame {
        case .line: nil
        case .tooLong: Ack(.argument, "line too long: more than \(self.maximumLineLength) bytes")
        case .invalidUTF8: Ack(.argument, "invalid UTF-8 in request")
        }
    }

    /// Takes the next bytes from the socket and returns the frames they complete, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [Frame] {
        bytes.withUnsafeBytes { self.feed($0) }
    }

    /// Takes the next bytes from the socket and returns the frames they complete, in order.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Frame] {
        var frames: [Frame] = []
        self.feed(bytes, into: &frames)
        return frames
    }

    /// Takes the next bytes and appends the frames they complete to `frames`, which the caller may
    /// reuse from one read to the next.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, into frames: inout [Frame]) {
        var start = 0
        while start < bytes.count {
            guard let newline = LineFramer.firstNewline(in: bytes, from: start) else {
                self.hold(UnsafeRawBufferPointer(rebasing: bytes[start...]), into: &frames)
                return
            }
            let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            start = newline + 1
            if self.discarding {
                self.discarding = false
            } else if self.partial.isEmpty {
                // The common case: the whole line sits in this read, so it is decoded in place.
                frames.append(piece.count > self.maximumLineLength ? .tooLong : self.decode(piece))
            } else if self.partial.count + piece.count > self.maximumLineLength {
                frames.append(.tooLong)
                self.release()
            } else {
                self.partial.append(contentsOf: piece)
                let line = self.partial
                frames.append(line.withUnsafeBytes { self.decode($0) })
                self.release()
            }
        }
    }

    // Keeps the start of an unfinished line, or reports it as too long and drops it.
    private mutating func hold(_ piece: UnsafeRawBufferPointer, into frames: inout [Frame]) {
        if self.discarding {
            return
        }
        let needed = self.partial.count + piece.count
        guard needed <= self.maximumLineLength else {
            frames.append(.tooLong)
            self.release()
            self.discarding = true
            return
        }
        if needed > self.partial.capacity {
            // Doubling as Array does could reserve twice the limit; stop growing at the limit.
            let grown = max(needed, min(self.partial.capacity * 2, self.maximumLineLength), 256)
            self.partial.reserveCapacity(min(grown, self.maximumLineLength))
        }
        self.partial.append(contentsOf: piece)
    }

    // A long line's buffer is given back rather than kept for a connection that may idle for hours.
    private mutating func release() {
        self.partial.removeAll(keepingCapacity: self.partial.capacity <= 4096)
    }

    // A plain pointer walk: the generic slice search costs a lot per byte in debug builds, and a client
    // streaming a long line makes the framer look at every byte of it.
    private static func firstNewline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else {
            return nil
        }
        let count = bytes.count
        var index = start
        while index < count {
            if base.load(fromByteOffset: index, as: UInt8.self) == ASCII.newline {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Lines up to this long are remembered (see `lastLine`).
    static let longestRememberedLine = 64

    private static func equal(_ line: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard line.utf8.count == bytes.count else { return false }
        let equal = line.utf8.withContiguousStorageIfAvailable { stored in
            // A plain loop: `elementsEqual` cost some two hundred instructions for six bytes.
            var index = 0
            while index < stored.count && stored[index] == bytes[index] {
                index += 1
            }
            return index == stored.count
        }
        return equal ?? false
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for byte in bytes {
            any |= byte
        }
        return any < 0x80
    }

    private mutating func decode(_ piece: UnsafeRawBufferPointer) -> Frame {
        var bytes = piece.assumingMemoryBound(to: UInt8.self)
        if bytes.last == ASCII.carriageReturn {
            bytes = UnsafeBufferPointer(rebasing: bytes.dropLast())
        }
        // Requests are nearly always ASCII, which needs no validating: checking it is a plain loop, where
        // `String(validating:)` cost about a thousand instructions for `status`.
        if LineFramer.isASCII(bytes) {
            if LineFramer.equal(self.lastLine, bytes) {
                return .line(self.lastLine)
            }
            let line = String(decoding: bytes, as: UTF8.self)
            if bytes.count <= LineFramer.longestRememberedLine {
                self.lastLine = line
            }
            return .line(line)
        }
        guard let line = String(validating: bytes, as: UTF8.self) else {
            return self.repairsInvalidUTF8 ? .line(String(decoding: bytes, as: UTF8.self)) : .invalidUTF8
        }
        return .line(line)
    }
}
