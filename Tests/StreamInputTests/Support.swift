import Audio
import Foundation
import Synchronization
import Testing

@testable import StreamInput

/// The loopback server of stream_server.py, started for one test and killed after it. Spawned with
/// posix_spawn rather than Foundation's Process (whose children here inherited a blocked SIGTERM, and
/// whose waitUntilExit then never returned); it exits by itself when its standard input closes, should
/// the test process die first.
final class StreamTestServer: Sendable {
    let port: Int
    /// The port of the same paths over TLS, when the server was given a certificate.
    let tlsPort: Int?
    private let pid: pid_t
    private let input: Int32
    private let output: Int32

    /// - Parameter certificate: a certificate and its key (PEM files) for a TLS port beside the plain one.
    /// - Parameter script: another server to run instead (radio_server.py), with its arguments.
    init(certificate: (cert: String, key: String)? = nil, script other: (path: String, arguments: [String])? = nil)
        throws
    {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "stream_server.py")
        var stdinPipe: [Int32] = [0, 0]
        var stdoutPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0 else {
            throw StreamInputError(description: "pipe: \(errno)")
        }
        for fd in stdinPipe + stdoutPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv = ["/usr/bin/python3", "-u", script.path]
        if let other { argv = ["/usr/bin/python3", "-u", other.path] + other.arguments }
        if let certificate { argv += ["--cert", certificate.cert, "--key", certificate.key] }
        let arguments: [UnsafeMutablePointer<CChar>?] = argv.map {
            $0.withCString { strdup($0) }
        }
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/usr/bin/python3", &actions, &attributes, arguments + [nil], environ)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard result == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw StreamInputError(description: "posix_spawn: \(result)")
        }
        func readLine() -> String {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(stdoutPipe[0], &byte, 1) == 1, byte != 0x0A { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        let text = readLine()
        let tlsText = certificate == nil ? nil : readLine()
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw StreamInputError(description: "the test server did not start: \(text)")
        }
        self.port = port
        tlsPort = tlsText.flatMap { $0.hasPrefix("TLSPORT ") ? Int($0.dropFirst(8)) : nil }
        self.pid = pid
        input = stdinPipe[1]
        output = stdoutPipe[0]
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(input)
        close(output)
    }

    /// Runs `body` with a server, stopped afterwards whatever happens.
    static func with<T>(
        certificate: (cert: String, key: String)? = nil, script: (path: String, arguments: [String])? = nil,
        _ body: (StreamTestServer) async throws -> T
    ) async throws -> T {
        let server = try StreamTestServer(certificate: certificate, script: script)
        defer { server.stop() }
        return try await body(server)
    }
}

/// The server's audio pattern: the byte at offset i of a connection's audio.
func pattern(_ range: Range<Int>) -> [UInt8] { range.map { UInt8($0 % 251) } }

/// A station with every `info` it reported through `onChange`, in order.
final class Listener: @unchecked Sendable {
    let stream: StationStream
    private let box: Box

    private final class Box: @unchecked Sendable {
        weak var stream: StationStream?
        let changes = Mutex<[(at: ContinuousClock.Instant, info: StationInfo)]>([])
    }

    /// When the station was created and started.
    let created = ContinuousClock.now

    init(_ url: String, limits: StreamLimits) {
        let box = Box()
        stream = StationStream(url: url, limits: limits) { [box] in
            guard let stream = box.stream else { return }
            let info = stream.info
            let now = ContinuousClock.now
            box.changes.withLock { $0.append((now, info)) }
        }
        box.stream = stream
        self.box = box
        stream.start()
    }

    var changes: [StationInfo] { box.changes.withLock { $0.map(\.info) } }

    /// When the first change that satisfies `predicate` was reported (on the network's thread).
    func time(of predicate: (StationState) -> Bool) -> ContinuousClock.Instant? {
        box.changes.withLock { $0.first { predicate($0.info.state) }?.at }
    }
    var states: [StationState] { changes.map(\.state) }

    /// What was read: the bytes between discontinuities, and whether `.end` came.
    var segments: [[UInt8]] = [[]]
    var ended = false
    /// The ICY title after each read, as it changed (a title takes effect as its audio is read).
    var titlesRead: [String?] = []
    /// The most one `read` asks for.
    var readSize = 64 * 1024
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Reads what has arrived (at most `limit` bytes).
    @discardableResult
    func drain(limit: Int = .max) -> Int {
        var total = 0
        while total < limit {
            let want = min(readSize, buffer.count, limit - total)
            let result = buffer.withUnsafeMutableBytes {
                stream.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]))
            }
            switch result {
            case .bytes(let count):
                segments[segments.count - 1] += buffer[0..<count]
                total += count
                let title = stream.info.title
                if titlesRead.last != .some(title) { titlesRead.append(title) }
            case .discontinuity:
                segments.append([])
            case .end:
                ended = true
                return total
            case .waiting:
                return total
            }
        }
        return total
    }

    /// Reads until `condition` holds, or fails the test after `timeout` seconds.
    func read(
        until condition: (Listener) -> Bool, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition(self) {
            if ContinuousClock.now > deadline {
                Issue.record(
                    "timed out; states \(states), segments \(segments.map(\.count))", sourceLocation: sourceLocation)
                return
            }
            if drain() == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    /// Waits (without reading) until `condition` holds, or fails the test after `timeout` seconds.
    func wait(
        until condition: (Listener) -> Bool, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition(self) {
            if ContinuousClock.now > deadline {
                Issue.record("timed out; states \(states)", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// From the station's creation to its failure (as reported on the network's thread).
    var timeToFailure: Duration? { time(of: { if case .failed = $0 { true } else { false } }).map { $0 - created } }

    /// Whether the failure was reported through `onChange` (not only seen in `info`).
    var isFailed: Bool { failureMessage != nil }

    var failureMessage: String? {
        for state in states {
            if case .failed(let message) = state { return message }
        }
        return nil
    }
}

/// Short limits for tests.
func testLimits(
    buffer: Int = 256 * 1024, prebuffer: Int = 8 * 1024, connect: Double = 2, firstAudio: Double = 4,
    stall: Double = 1, reconnect: Double = 3
) -> StreamLimits {
    var limits = StreamLimits()
    limits.bufferBytes = buffer
    limits.prebufferBytes = prebuffer
    limits.connectSeconds = connect
    limits.firstAudioSeconds = firstAudio
    limits.stallSeconds = stall
    limits.reconnectSeconds = reconnect
    limits.backoffSeconds = 0.05
    return limits
}

/// This process's sockets connected to `port` on loopback (from /proc/net/tcp and /proc/self/fd).
func socketsConnected(toPort port: Int) -> Int {
    var inodes = Set<String>()
    for file in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, let remote = fields[2].split(separator: ":").last,
                Int(remote, radix: 16) == port
            else { continue }
            inodes.insert(String(fields[9]))
        }
    }
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.filter { fd in
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
            link.hasPrefix("socket:[")
        else { return false }
        return inodes.contains(String(link.dropFirst(8).dropLast()))
    }.count
}

/// The names of this process's threads that are NIO event loops.
func eventLoopThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return name.hasPrefix("NIO-ELT")
    }.count
}

/// Runs a program to its end, its output discarded or written to `output`; its exit status (-1 when it
/// could not start).
func runProgram(_ argv: [String], output: String = "/dev/null") -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let arguments: [UnsafeMutablePointer<CChar>?] = argv.map { $0.withCString { strdup($0) } }
    defer {
        for argument in arguments { free(argument) }
    }
    var pid: pid_t = 0
    guard posix_spawn(&pid, argv[0], &actions, nil, arguments + [nil], environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (status >> 8) & 0xFF
}
