import ControlProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to playerd (or any MPD server) over its Unix-domain socket: requests go out one line
/// at a time and each call returns when the answer is complete.
///
/// It is a plain blocking socket with `poll` for timeouts, no event loop: a command-line tool that sends
/// a few lines must start and finish at once. Only the thread that made it may use it.
public final class MPDConnection {
    /// How long a request may wait for the server when no other timeout is given.
    public static let defaultTimeout: Duration = .seconds(5)

    /// The socket this connection talks to.
    public let socketPath: String
    /// How long one send or one wait for the answer may take before `ClientError.timedOut`.
    public let timeout: Duration
    /// The protocol version from the server's greeting: `0.23.5` for `OK MPD 0.23.5`.
    public private(set) var protocolVersion = ""

    /// The socket, for a caller that polls it (after `beginIdle`); reading and writing stay this class's.
    public let descriptor: Int32
    // Answers can carry long tag values; MPD itself caps a line far below this. A tag that is not UTF-8
    // (a server that passes a file's bytes on) reads with U+FFFD rather than failing the whole answer.
    private var framer = LineFramer(maximumLineLength: 1 << 20, repairsInvalidUTF8: true)
    private var frames: [LineFramer.Frame] = []
    private var nextFrame = 0
    private var receiveBuffer = [UInt8](repeating: 0, count: 65536)
    /// Bytes a binary answer's read took past its end: the framer gets them before the socket's next.
    private var leftover: [UInt8] = []

    /// Connects and reads the greeting. A missing socket, or one nobody listens on, is
    /// `ClientError.notRunning` at once; a server that does not greet within `timeout` is `.timedOut`.
    public convenience init(socketPath: String, timeout: Duration = MPDConnection.defaultTimeout) throws(ClientError) {
        let descriptor = try connectUnixSocket(path: socketPath, timeout: timeout)
        try self.init(descriptor: descriptor, socketPath: socketPath, timeout: timeout)
    }

    /// Takes over a connected stream socket (one end of a `socketpair`: the tests', or the one playerd
    /// hands its in-process MPRIS bridge) and reads the greeting. The descriptor is closed when the
    /// connection goes away, also when this init throws. `socketPath` only names the peer in messages.
    public init(descriptor: Int32, socketPath: String, timeout: Duration = MPDConnection.defaultTimeout)
        throws(ClientError)
    {
        self.descriptor = descriptor
        self.socketPath = socketPath
        self.timeout = timeout
        let greeting = try self.readLine(waitingAtMost: timeout)
        guard greeting.hasPrefix("OK MPD ") else {
            throw .notMPD(greeting)
        }
        self.protocolVersion = String(greeting.dropFirst(7))
    }

    deinit {
        Glibc.close(self.descriptor)
    }

    /// Sends one command and returns its answer's `key: value` pairs, in order. An ACK line throws
    /// `ClientError.refused`.
    public func command(
        _ name: String, _ arguments: [String] = []
    ) throws(ClientError) -> [(key: String, value: String)] {
        try self.send(try MPDConnection.requestLine(name, arguments))
        return try self.readAnswer(endingWith: "OK", waitingAtMost: self.timeout)
    }

    /// Sends commands as one `command_list_ok_begin` ... `command_list_end` list: the server runs all
    /// of them or stops at the first failure, which throws. Returns each command's answer.
    public func commandList(
        _ commands: [(String, [String])]
    ) throws(ClientError) -> [[(key: String, value: String)]] {
        guard !commands.isEmpty else {
            return []
        }
        var request = "command_list_ok_begin\n"
        for (name, arguments) in commands {
            request += try MPDConnection.requestLine(name, arguments)
        }
        request += "command_list_end\n"
        // One write: the server starts nothing before `command_list_end` anyway.
        try self.send(request)
        var answers: [[(key: String, value: String)]] = []
        answers.reserveCapacity(commands.count)
        for _ in commands {
            answers.append(try self.readAnswer(endingWith: "list_OK", waitingAtMost: self.timeout))
        }
        let end = try self.readLine(waitingAtMost: self.timeout)
        guard end == "OK" else {
            throw .malformed(end)
        }
        return answers
    }

    /// Waits until one of `subsystems` (all of them when empty) changes and returns the names from its
    /// `changed:` lines. With a `timeout`, gives up after it (ending the wait with `noidle`) and returns
    /// what changed meanwhile, usually nothing.
    public func idle(_ subsystems: [String] = [], timeout: Duration? = nil) throws(ClientError) -> [String] {
        try self.send(try MPDConnection.requestLine("idle", subsystems))
        if let timeout, !self.hasBufferedLine, try !self.waitReadable(at: timeout) {
            // If the answer crossed `noidle` on the way, the server ignores `noidle` and the answer is
            // read below all the same.
            try self.send("noidle\n")
        }
        let fields = try self.readAnswer(endingWith: "OK", waitingAtMost: timeout == nil ? nil : self.timeout)
        return fields.compactMap { field in field.key == "changed" ? field.value : nil }
    }

    /// Sends `idle` and returns at once, for a caller that waits in its own `poll` on `descriptor`
    /// (with other descriptors) and then calls `finishIdle()`. Nothing else may be sent in between.
    public func beginIdle(_ subsystems: [String] = []) throws(ClientError) {
        try self.send(try MPDConnection.requestLine("idle", subsystems))
    }

    /// Reads the answer to `beginIdle` once `descriptor` is readable (or `hasBufferedInput`): the
    /// subsystems that changed.
    public func finishIdle() throws(ClientError) -> [String] {
        let fields = try self.readAnswer(endingWith: "OK", waitingAtMost: self.timeout)
        return fields.compactMap { field in field.key == "changed" ? field.value : nil }
    }

    /// Whether whole lines already read from the socket wait to be taken (a poll on `descriptor` would
    /// not say so).
    public var hasBufferedInput: Bool { self.hasBufferedLine || self.leftover.contains(0x0A) }

    /// `status`, decoded.
    public func status() throws(ClientError) -> Status {
        try Status(fields: try self.command("status"))
    }

    /// `currentsong`, decoded; `nil` when there is no current song.
    public func currentSong() throws(ClientError) -> Song? {
        try Song.list(from: try self.command("currentsong")).first
    }

    /// `playlistinfo`, decoded: the queue in order.
    public func playlistInfo() throws(ClientError) -> [Song] {
        try Song.list(from: try self.command("playlistinfo"))
    }

    /// Sends a command with a binary answer (`albumart`, `readpicture`) and returns its one chunk:
    /// the `key: value` fields before `binary:`, and the bytes. nil when the answer has no `binary:`
    /// (`readpicture` of a song without a picture). An ACK throws `ClientError.refused`.
    public func binaryCommand(_ name: String, _ arguments: [String]) throws(ClientError) -> BinaryChunk? {
        // The bytes are read here, past the line framer, which would cut them into lines: nothing of an
        // earlier answer may be left in it (the server sends nothing unasked).
        guard !self.hasBufferedLine, self.framer.bufferedByteCount == 0 else {
            throw .invalidRequest("unread lines are waiting before a binary answer")
        }
        try self.send(try MPDConnection.requestLine(name, arguments))
        var pending = self.leftover
        // What is left when the answer has been read (bytes of a later one) is kept for the next read.
        defer { self.leftover = pending }
        var fields: [(key: String, value: String)] = []
        var count: Int?
        while count == nil {
            let line = try self.readRawLine(&pending)
            if line == "OK" {
                return nil
            }
            if line.hasPrefix("ACK ") {
                guard let ack = AckLine(parsing: line) else { throw .malformed(line) }
                throw ack.error
            }
            guard let colon = line.firstIndex(of: ":") else { throw .malformed(line) }
            let key = String(line[..<colon])
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            if key == "binary" {
                guard let size = Int(value), size >= 0 else { throw .malformed(line) }
                count = size
            } else {
                fields.append((key: key, value: String(value)))
            }
        }
        let size = count ?? 0
        while pending.count < size + 1 {
            try self.receiveRaw(into: &pending)
        }
        guard pending[size] == 0x0A else {
            throw .malformed("binary data not followed by a newline")
        }
        let data = Array(pending[0..<size])
        pending.removeFirst(size + 1)
        let end = try self.readRawLine(&pending)
        guard end == "OK" else {
            throw .malformed(end)
        }
        return BinaryChunk(fields: fields, data: data)
    }

    /// The request line for a command: its name, then each argument quoted.
    static func requestLine(_ name: String, _ arguments: [String]) throws(ClientError) -> String {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first >= 0x61 && first <= 0x7A,
            bytes.allSatisfy({ byte in
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x5F
            })
        else {
            throw .invalidRequest("\"\(name)\" is not a command name")
        }
        return Request(name: name, arguments: arguments).line
    }

    // MARK: - Reading answers

    private var hasBufferedLine: Bool { self.nextFrame < self.frames.count }

    // `nil` waits as long as it takes.
    private func readAnswer(
        endingWith terminator: String, waitingAtMost wait: Duration?
    ) throws(ClientError) -> [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = []
        while true {
            let line = try self.readLine(waitingAtMost: wait)
            if line == terminator {
                return fields
            }
            if line.hasPrefix("ACK ") {
                guard let ack = AckLine(parsing: line) else {
                    throw .malformed(line)
                }
                throw ack.error
            }
            guard let colon = line.firstIndex(of: ":") else {
                throw .malformed(line)
            }
            var value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") {
                value = value.dropFirst()
            }
            fields.append((key: String(line[..<colon]), value: String(value)))
        }
    }

    // `nil` waits as long as it takes.
    private func readLine(waitingAtMost wait: Duration?) throws(ClientError) -> String {
        while true {
            if self.nextFrame < self.frames.count {
                let frame = self.frames[self.nextFrame]
                self.nextFrame += 1
                switch frame {
                case .line(let line): return line
                case .tooLong: throw .malformed("a line longer than \(self.framer.maximumLineLength) bytes")
                case .invalidUTF8: throw .malformed("a line that is not UTF-8")
                }
            }
            self.frames.removeAll(keepingCapacity: true)
            self.nextFrame = 0
            if !self.leftover.isEmpty {
                self.leftover.withUnsafeBytes { bytes in self.framer.feed(bytes, into: &self.frames) }
                self.leftover = []
                continue
            }
            if let wait {
                guard try self.waitReadable(at: wait) else {
                    throw .timedOut
                }
            }
            let count = self.receiveBuffer.withUnsafeMutableBytes { buffer in
                recv(self.descriptor, buffer.baseAddress, buffer.count, 0)
            }
            if count == 0 {
                throw .closed
            }
            if count < 0 {
                let code = errno
                switch code {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: throw .timedOut
                case ECONNRESET: throw .closed
                default: throw .system(function: "recv", errno: code)
                }
            }
            self.receiveBuffer.withUnsafeBytes { buffer in
                self.framer.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), into: &self.frames)
            }
        }
    }

    // One line of a binary answer's head, from `pending` and the socket.
    private func readRawLine(_ pending: inout [UInt8]) throws(ClientError) -> String {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[0..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            guard pending.count <= self.framer.maximumLineLength else {
                throw .malformed("a line longer than \(self.framer.maximumLineLength) bytes")
            }
            try self.receiveRaw(into: &pending)
        }
    }

    // Appends what the socket has (waiting up to the timeout) to `pending`.
    private func receiveRaw(into pending: inout [UInt8]) throws(ClientError) {
        while true {
            guard try self.waitReadable(at: self.timeout) else {
                throw .timedOut
            }
            let count = self.receiveBuffer.withUnsafeMutableBytes { buffer in
                recv(self.descriptor, buffer.baseAddress, buffer.count, 0)
            }
            if count > 0 {
                pending.append(contentsOf: self.receiveBuffer[0..<count])
                return
            }
            if count == 0 {
                throw .closed
            }
            let code = errno
            switch code {
            case EINTR, EAGAIN, EWOULDBLOCK: continue
            case ECONNRESET: throw .closed
            default: throw .system(function: "recv", errno: code)
            }
        }
    }

    // Whether the socket has something to read (or has been closed) within `wait`.
    private func waitReadable(at wait: Duration) throws(ClientError) -> Bool {
        let deadline = ContinuousClock.now + wait
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            var request = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, milliseconds(left))
            if ready > 0 {
                return true
            }
            if ready == 0 {
                return false
            }
            let code = errno
            guard code == EINTR else {
                throw .system(function: "poll", errno: code)
            }
        }
    }

    // MARK: - Sending

    private func send(_ text: String) throws(ClientError) {
        var text = text
        let failure: ClientError? = text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                // MSG_NOSIGNAL: a server that hung up is an error to report, not a SIGPIPE that kills us.
                let sent = Glibc.send(
                    self.descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent >= 0 {
                    offset += sent
                    continue
                }
                let code = errno
                switch code {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .timedOut
                case EPIPE, ECONNRESET: return .closed
                default: return .system(function: "send", errno: code)
                }
            }
            return nil
        }
        if let failure {
            throw failure
        }
    }
}

/// Opens a stream socket to `path`. The send timeout also bounds `connect`, which on a Unix socket
/// only blocks while the server's backlog is full.
private func connectUnixSocket(path: String, timeout: Duration) throws(ClientError) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    let pathBytes = Array(path.utf8)
    guard !pathBytes.isEmpty else {
        throw .invalidRequest("the socket path is empty")
    }
    guard pathBytes.count < capacity, !pathBytes.contains(0) else {
        throw .invalidRequest("the socket path is too long for a Unix socket (at most \(capacity - 1) bytes): \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: pathBytes)
    }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
        throw .system(function: "socket", errno: errno)
    }
    var limit = timeval(
        tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
    if limit.tv_sec == 0 && limit.tv_usec == 0 {
        // A zero timeval means "no timeout" to the kernel; a zero timeout means "do not wait".
        limit.tv_usec = 1
    }
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    let result = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            connect(descriptor, socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let code = errno
        Glibc.close(descriptor)
        switch code {
        case ENOENT, ECONNREFUSED, ENOTDIR: throw .notRunning(path)
        case EAGAIN, EWOULDBLOCK, ETIMEDOUT: throw .timedOut
        default: throw .system(function: "connect", errno: code)
        }
    }
    return descriptor
}

/// A duration as `poll`'s timeout: whole milliseconds, rounded up so that a short wait still waits.
private func milliseconds(_ duration: Duration) -> Int32 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 && attoseconds >= 0 else {
        return 0
    }
    let total = seconds.multipliedReportingOverflow(by: 1000)
    guard !total.overflow else {
        return Int32.max
    }
    let rounded = total.partialValue + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return Int32(clamping: rounded)
}

/// `strerror`'s text for an `errno`.
func systemErrorMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else {
        return "error \(code)"
    }
    return String(cString: text)
}
