import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small blocking client of a Unix-domain socket, written for the tests so that they do not depend
/// on the client library under test: it sends raw bytes or lines and reads lines, each read bounded by
/// a timeout (`poll`), so a daemon that never answers fails a test instead of hanging it.
final class LineClient {
    /// The longest a single read waits unless told otherwise.
    static let defaultTimeout: Duration = .seconds(5)

    let socketPath: String
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var sawEnd = false

    /// Connects to `socketPath` without reading anything.
    init(socketPath: String) throws {
        self.socketPath = socketPath
        self.descriptor = try Self.connect(socketPath)
    }

    /// Connects over TCP to `host` (an IPv4 or IPv6 literal) and `port`, from the address `source` when
    /// given (any of 127.0.0.0/8 is this machine, so tests can be several hosts), reading nothing.
    init(host: String, port: Int, from source: String? = nil) throws {
        self.socketPath = "\(host):\(port)"
        self.descriptor = try Self.connectTCP(host, port, from: source)
    }

    /// Connects to the abstract socket `@name`, reading nothing.
    init(abstract name: String) throws {
        self.socketPath = "@" + name
        self.descriptor = try Self.connect("\0" + name, exactLength: true)
    }

    /// Connects and checks the greeting: `OK MPD 0.23.5`.
    static func greeted(_ socketPath: String, timeout: Duration = LineClient.defaultTimeout) throws -> LineClient {
        try LineClient(socketPath: socketPath).checkingGreeting(timeout: timeout)
    }

    /// Reads the greeting and checks it is `OK MPD 0.23.5`.
    func checkingGreeting(timeout: Duration = LineClient.defaultTimeout) throws -> LineClient {
        let client = self
        let greeting = try client.readLine(timeout: timeout)
        guard greeting == "OK MPD 0.23.5" else {
            throw HarnessError("expected the greeting OK MPD 0.23.5, got \(greeting.map { "\"\($0)\"" } ?? "EOF")")
        }
        return client
    }

    deinit {
        self.close()
    }

    /// Closes the connection (at once; no `close` command).
    func close() {
        if self.descriptor >= 0 {
            Glibc.close(self.descriptor)
            self.descriptor = -1
        }
    }

    /// Half-closes: the daemon sees the end of the input but can still answer.
    func shutdownWrite() throws {
        guard shutdown(self.descriptor, Int32(SHUT_WR)) == 0 else {
            throw HarnessError.system("shutdown", errno)
        }
    }

    // MARK: - Sending

    /// Sends `line` and a newline.
    func send(line: String) throws {
        try self.send(bytes: Array((line + "\n").utf8))
    }

    /// Sends bytes as they are; throws if the daemon takes none of them for `timeout` (it stopped
    /// reading) or has hung up.
    func send(bytes: [UInt8], timeout: Duration = LineClient.defaultTimeout) throws {
        var offset = 0
        while offset < bytes.count {
            guard try self.poll(for: Int16(POLLOUT), until: ContinuousClock.now + timeout) else {
                throw HarnessError("the daemon took no bytes for \(timeout) (\(offset) of \(bytes.count) sent)")
            }
            let sent = bytes.withUnsafeBytes { raw in
                Glibc.send(
                    self.descriptor, raw.baseAddress! + offset, raw.count - offset,
                    Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw HarnessError.system("send", errno)
            }
            offset += sent
        }
    }

    // MARK: - Receiving

    /// The next line without its newline, or nil when the daemon closed the connection first.
    func readLine(timeout: Duration = LineClient.defaultTimeout) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = self.buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: self.buffer[..<newline], as: UTF8.self)
                self.buffer.removeSubrange(...newline)
                return line
            }
            if self.sawEnd {
                guard self.buffer.isEmpty else {
                    throw HarnessError(
                        "the connection ended inside a line: \(String(decoding: self.buffer, as: UTF8.self))")
                }
                return nil
            }
            try self.receive(until: deadline)
        }
    }

    /// Exactly `count` bytes, whatever they hold (binary data, newlines included); throws when the
    /// daemon closes the connection before or sends too few within `timeout`.
    func readBytes(_ count: Int, timeout: Duration = LineClient.defaultTimeout) throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while self.buffer.count < count {
            guard !self.sawEnd else {
                throw HarnessError("the connection ended after \(self.buffer.count) of \(count) bytes")
            }
            try self.receive(until: deadline)
        }
        let bytes = Array(self.buffer[..<count])
        self.buffer.removeSubrange(..<count)
        return bytes
    }

    /// Sends `line` and returns the answer's lines, the final `OK` or `ACK ...` line included.
    @discardableResult
    func command(_ line: String, timeout: Duration = LineClient.defaultTimeout) throws -> [String] {
        try self.send(line: line)
        return try self.readAnswer(timeout: timeout)
    }

    /// Reads lines up to and including the next `OK` or `ACK ...` line.
    func readAnswer(timeout: Duration = LineClient.defaultTimeout) throws -> [String] {
        var lines: [String] = []
        while true {
            guard let line = try self.readLine(timeout: timeout) else {
                throw HarnessError("the connection ended in the middle of an answer after \(lines)")
            }
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") {
                return lines
            }
        }
    }

    /// Sends `line` and returns the answer's `key: value` fields (everything before `OK`); an ACK throws.
    func fields(_ line: String) throws -> [String: String] {
        let answer = try self.command(line)
        guard answer.last == "OK" else {
            throw HarnessError("\(line) was refused: \(answer.last ?? "")")
        }
        var fields: [String: String] = [:]
        for entry in answer.dropLast() {
            guard let colon = entry.range(of: ": ") else { continue }
            fields[String(entry[..<colon.lowerBound])] = String(entry[colon.upperBound...])
        }
        return fields
    }

    /// Everything the daemon sends until it closes the connection.
    func readToEnd(timeout: Duration = LineClient.defaultTimeout) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while !self.sawEnd {
            try self.receive(until: deadline)
        }
        let text = String(decoding: self.buffer, as: UTF8.self)
        self.buffer.removeAll()
        return text
    }

    /// Whether bytes (or the end of the connection) arrive within `wait`, without consuming them.
    func hasInput(within wait: Duration) throws -> Bool {
        if !self.buffer.isEmpty || self.sawEnd {
            return true
        }
        return try self.poll(until: ContinuousClock.now + wait)
    }

    /// Whether the daemon has closed the connection: waits up to `timeout` for the end, dropping any
    /// bytes before it.
    func isClosedByPeer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !self.sawEnd {
            do {
                try self.receive(until: deadline)
            } catch {
                return false
            }
        }
        return true
    }

    private func receive(until deadline: ContinuousClock.Instant) throws {
        guard try self.poll(until: deadline) else {
            let partial = String(decoding: self.buffer, as: UTF8.self)
            throw HarnessError("no answer from the daemon in time; received so far: \"\(partial)\"")
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { raw in recv(self.descriptor, raw.baseAddress, raw.count, 0) }
        if count < 0 {
            let code = errno
            if code == EINTR || code == EAGAIN { return }
            if code == ECONNRESET {
                self.sawEnd = true
                return
            }
            throw HarnessError.system("recv", code)
        }
        if count == 0 {
            self.sawEnd = true
        } else {
            self.buffer.append(contentsOf: chunk[..<count])
        }
    }

    private func poll(for events: Int16 = Int16(POLLIN), until deadline: ContinuousClock.Instant) throws -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = max(
                0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            var request = pollfd(fd: self.descriptor, events: events, revents: 0)
            let ready = Glibc.poll(&request, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 { return false }
            guard errno == EINTR else {
                throw HarnessError.system("poll", errno)
            }
        }
    }

    // MARK: - Connecting

    private static func connectTCP(_ host: String, _ port: Int, from source: String?) throws -> Int32 {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HarnessError.system("socket", errno)
        }
        func withAddress<R>(_ text: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws -> R {
            if family == AF_INET6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = in_port_t(UInt16(port).bigEndian)
                guard inet_pton(AF_INET6, text, &address.sin6_addr) == 1 else {
                    throw HarnessError("bad address \(text)")
                }
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { throw HarnessError("bad address \(text)") }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        do {
            if let source {
                guard try withAddress(source, port: 0, { Glibc.bind(descriptor, $0, $1) }) == 0 else {
                    throw HarnessError.system("bind to \(source)", errno)
                }
            }
            guard try withAddress(host, port: port, { Glibc.connect(descriptor, $0, $1) }) == 0 else {
                throw HarnessError.system("connect to \(host):\(port)", errno)
            }
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        return descriptor
    }

    private static func connect(_ path: String, exactLength: Bool = false) throws -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw HarnessError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        // CLOEXEC: the tests start programs (mpc, python, playerd), which must not inherit connections.
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HarnessError.system("socket", errno)
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                // An abstract name is matched with its length, which must be exact.
                let length = exactLength ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
                return Glibc.connect(descriptor, $0, socklen_t(length))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw HarnessError.system("connect to \(path)", code)
        }
        return descriptor
    }
}
