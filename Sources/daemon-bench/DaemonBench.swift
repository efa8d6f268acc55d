// Measures an MPD-protocol daemon from the outside, the same way for playerd and for mpd:
//   daemon-bench start SOCKET -- COMMAND...   start COMMAND, time until SOCKET answers the greeting,
//                                             then report the process's RSS once it has settled
//   daemon-bench roundtrip SOCKET N           N sequential `status` requests on one connection
// Results are printed as `key value` lines for scripts/bench-daemon.sh to collect.

#if canImport(Glibc)
    import Glibc
#endif

func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func fail(_ message: String) -> Never {
    var line = "daemon-bench: \(message)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}

/// A blocking Unix-socket connection that reads whole answers (up to `OK` or `ACK`).
struct Connection {
    let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 65536)

    init?(path: String) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes.prefix($0.count - 1)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    /// Reads until the answer's last line (`OK...`, `ACK ...`) has arrived.
    mutating func readAnswer() -> Bool {
        var tail: [UInt8] = []
        while true {
            let count = self.buffer.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            tail += self.buffer[0..<count]
            if tail.last == 0x0A {
                // The answer ends with a line starting OK or ACK.
                let lines = tail.split(separator: 0x0A)
                if let last = lines.last, last.starts(with: Array("OK".utf8)) || last.starts(with: Array("ACK".utf8)) {
                    return true
                }
            }
            if tail.count > 1 << 20 { tail.removeFirst(tail.count - 4096) }
        }
    }

    func send(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = write(self.descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if sent <= 0 { fail("write failed: \(String(cString: strerror(errno)))") }
                offset += sent
            }
        }
    }
}

func residentKilobytes(of pid: pid_t) -> Int? {
    guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            return Int(text.split(separator: " ").dropFirst().first ?? "")
        }
    }
    return nil
}

func percentile(_ sorted: [Int64], _ fraction: Double) -> Int64 {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    fail("usage: daemon-bench start SOCKET -- COMMAND... | daemon-bench roundtrip SOCKET N")
}
let socketPath = arguments[2]
switch arguments[1] {
case "start":
    guard let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else {
        fail("start needs -- COMMAND")
    }
    let command = Array(arguments[(separator + 1)...])
    let started = monotonicNanoseconds()
    var pid: pid_t = 0
    var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    // The daemon must not hold our stdout: a script reading it through $(...) would wait for the
    // daemon to exit. Its output goes to /dev/null.
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
    defer { posix_spawn_file_actions_destroy(&actions) }
    guard posix_spawn(&pid, command[0], &actions, nil, &argv, environ) == 0 else {
        fail("cannot start \(command[0])")
    }
    var ready: Int64?
    while monotonicNanoseconds() - started < 20_000_000_000 {
        if var connection = Connection(path: socketPath) {
            if connection.readAnswer() {
                ready = monotonicNanoseconds() - started
                close(connection.descriptor)
                break
            }
            close(connection.descriptor)
        }
        usleep(200)
    }
    guard let ready else { fail("\(command[0]) did not answer on \(socketPath) within 20 s") }
    print("start_to_ready_ms \(Double(ready) / 1e6)")
    usleep(1_000_000)  // let start-up allocations settle
    print("idle_rss_kb \(residentKilobytes(of: pid) ?? -1)")
    print("pid \(pid)")
case "roundtrip":
    guard arguments.count >= 4, let count = Int(arguments[3]), count > 0 else { fail("roundtrip needs N") }
    guard var connection = Connection(path: socketPath) else { fail("cannot connect to \(socketPath)") }
    guard connection.readAnswer() else { fail("no greeting") }
    for _ in 0..<200 {  // warm-up
        connection.send("status\n")
        _ = connection.readAnswer()
    }
    var samples: [Int64] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
        let start = monotonicNanoseconds()
        connection.send("status\n")
        guard connection.readAnswer() else { fail("the connection closed") }
        samples.append(monotonicNanoseconds() - start)
    }
    samples.sort()
    print("roundtrip_p50_us \(Double(percentile(samples, 0.50)) / 1000)")
    print("roundtrip_p99_us \(Double(percentile(samples, 0.99)) / 1000)")
    print("roundtrip_max_us \(Double(samples.last!) / 1000)")
default:
    fail("unknown mode \(arguments[1])")
}
