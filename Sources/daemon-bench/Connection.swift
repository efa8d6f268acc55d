// The client side of the MPD protocol, as little of it as the measurements need: a blocking Unix
// socket that sends a request and reads its whole answer, up to the `OK` or `ACK` line.

#if canImport(Glibc)
    import Glibc
#endif

/// A failed C call: the function's name and the `errno` it left behind.
struct SystemCallError: Error, CustomStringConvertible {
    /// The C function (or, for a file, the function and the path) that failed.
    let function: String
    /// The `errno` value it set.
    let code: Int32

    var description: String { "\(self.function): \(String(cString: strerror(self.code)))" }
}

/// Returns `result`, or throws with the function's name when it is negative (C's way to say it failed).
@discardableResult
func check(_ function: String, _ result: Int32) throws(SystemCallError) -> Int32 {
    guard result >= 0 else { throw SystemCallError(function: function, code: errno) }
    return result
}

/// How a daemon's answer to one request ended.
enum Answer {
    /// The answer ended with `OK` (`OK MPD version` for the greeting): the lines before it, when they were
    /// asked for, and the `OK` line itself.
    case ok(lines: [String], last: String)
    /// The daemon refused the request: its whole `ACK [code@index] {command} message` line.
    case ack(String)
    /// The connection closed, failed or timed out before the answer was complete: why.
    case broken(String)
}

/// A blocking Unix-socket connection to an MPD-protocol daemon. Its descriptor is closed when the last
/// reference goes away; only one thread ever uses it.
final class Connection {
    /// How long a connect, a send or the wait for an answer may block: a daemon that does not accept or
    /// answer shows up as a broken connection, not as a benchmark that never ends.
    static let timeoutSeconds = 30

    let descriptor: Int32
    /// This connection's limit on a connect, a send or the wait for an answer, in seconds.
    let timeoutSeconds: Int
    /// Bytes received but not yet consumed by an answer; a daemon could send more than one answer at once.
    private var received: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65536)
    /// The lines before the last answer's `ACK` line, when `readAnswer` was asked to keep lines: a
    /// command list's `list_OK`s, say.
    private(set) var linesBeforeAck: [String] = []

    /// Connects to the socket at `path`; the greeting is left to read with `readAnswer()`. Each connect,
    /// send and wait for an answer may block up to `timeoutSeconds`.
    init(path: String, timeoutSeconds: Int = Connection.timeoutSeconds) throws(SystemCallError) {
        let descriptor = try check("socket", socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0))
        do throws(SystemCallError) {
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            let size = socklen_t(MemoryLayout<timeval>.size)
            // On Linux a Unix-socket connect waits for room in the listen backlog up to SO_SNDTIMEO.
            try check("setsockopt(SO_RCVTIMEO)", setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, size))
            try check("setsockopt(SO_SNDTIMEO)", setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, size))
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                throw SystemCallError(function: "connect(\(path))", code: ENAMETOOLONG)
            }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try check("connect(\(path))", connected)
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.timeoutSeconds = timeoutSeconds
    }

    deinit {
        close(self.descriptor)
    }

    /// Sends `text` and reads the answer; `keepingLines` keeps the lines before `OK` (they cost time).
    func request(_ text: String, keepingLines: Bool = false) -> Answer {
        do throws(SystemCallError) {
            try self.send(text)
        } catch {
            return .broken(error.description)
        }
        return self.readAnswer(keepingLines: keepingLines)
    }

    /// Sends all of `text`. A daemon that has closed the connection gives an error, not SIGPIPE.
    func send(_ text: String) throws(SystemCallError) {
        var text = text
        let failure: Int32? = text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = Glibc.send(
                    self.descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += sent
            }
            return nil
        }
        if let failure { throw SystemCallError(function: "send", code: failure) }
    }

    /// Reads until the answer's last line (`OK...` or `ACK ...`) has arrived.
    func readAnswer(keepingLines: Bool = false) -> Answer {
        var lines: [String] = []
        var lineStart = 0
        while true {
            if let newline = self.received[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = self.received[lineStart..<newline]
                lineStart = newline + 1
                if Self.isOK(line) {
                    let last = String(decoding: line, as: UTF8.self)
                    self.received.removeSubrange(0..<lineStart)
                    return .ok(lines: lines, last: last)
                }
                if line.starts(with: "ACK ".utf8) {
                    let last = String(decoding: line, as: UTF8.self)
                    self.received.removeSubrange(0..<lineStart)
                    self.linesBeforeAck = lines
                    return .ack(last)
                }
                if keepingLines { lines.append(String(decoding: line, as: UTF8.self)) }
                continue
            }
            // Every whole line is consumed: keep only the partial one, then wait for more.
            self.received.removeSubrange(0..<lineStart)
            lineStart = 0
            let (count, code) = self.chunk.withUnsafeMutableBytes {
                let count = read(self.descriptor, $0.baseAddress, $0.count)
                return (count, errno)
            }
            if count > 0 {
                self.received += self.chunk[0..<count]
            } else if count == 0 {
                return .broken("the daemon closed the connection")
            } else if code == EAGAIN || code == EWOULDBLOCK {
                return .broken("no answer within \(self.timeoutSeconds) s")
            } else if code != EINTR {
                return .broken(SystemCallError(function: "read", code: code).description)
            }
        }
    }

    /// Whether `line` ends an answer successfully: `OK`, or the greeting `OK MPD version`.
    private static func isOK(_ line: ArraySlice<UInt8>) -> Bool {
        line.elementsEqual("OK".utf8) || line.starts(with: "OK MPD ".utf8)
    }
}

extension Answer {
    /// Nothing when the answer is `OK`, or what went wrong, naming `request` (for messages).
    func failure(of request: String) -> String? {
        switch self {
        case .ok: nil
        case .ack(let line): "\(request) was refused: \(line)"
        case .broken(let reason): "\(request) got no answer: \(reason)"
        }
    }
}

/// Connects to `path` and reads the greeting; the connection is ready for requests.
func openSession(_ path: String) throws(BenchFailure) -> Connection {
    let connection: Connection
    do throws(SystemCallError) {
        connection = try Connection(path: path)
    } catch {
        throw .system(error)
    }
    if let failure = connection.readAnswer().failure(of: "the greeting") { throw .daemon(failure) }
    return connection
}

/// `text` as one MPD argument: in double quotes, with `"` and `\` escaped by a backslash.
func quoted(_ text: String) -> String {
    var result = "\""
    for character in text {
        if character == "\"" || character == "\\" { result.append("\\") }
        result.append(character)
    }
    result.append("\"")
    return result
}
