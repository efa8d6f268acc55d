// The peer: Debian's mpd, started by scripts/bench-engine.sh with a generated configuration, driven
// here over its Unix socket. With a `fifo` output, the time a command takes to show at the output is
// read off the fifo; with a `null` output (`sync "yes"`), its CPU and memory are read from /proc.

import Audio
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Something about mpd went wrong: the bench reports it and gives up on the peer's figures.
struct PeerError: Error, CustomStringConvertible {
    let description: String
}

/// A client connection to mpd's Unix socket, speaking the protocol one command at a time.
final class MPDConnection {
    private let descriptor: Int32
    private var received: [UInt8] = []

    /// Connects to the socket at `path`, retrying for up to `timeoutSeconds` while mpd starts.
    init(path: String, timeoutSeconds: Int = 10) throws(PeerError) {
        let deadline = monotonic.now() + Int64(timeoutSeconds) * 1_000_000_000
        while true {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw PeerError(description: "socket: \(String(cString: strerror(errno)))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                close(descriptor)
                throw PeerError(description: "socket path too long: \(path)")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
            }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if status == 0 {
                self.descriptor = descriptor
                break
            }
            let code = errno
            close(descriptor)
            if monotonic.now() > deadline {
                throw PeerError(description: "cannot connect to \(path): \(String(cString: strerror(code)))")
            }
            usleep(50_000)
        }
        let greeting = try self.readLine()
        guard greeting.hasPrefix("OK MPD ") else {
            throw PeerError(description: "unexpected greeting: \(greeting)")
        }
    }

    deinit {
        close(self.descriptor)
    }

    /// Sends one command and returns the lines of its answer before `OK`.
    /// - Throws: `PeerError` with mpd's `ACK` line when mpd refuses it.
    @discardableResult
    func command(_ line: String) throws(PeerError) -> [String] {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                write(self.descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw PeerError(description: "writing to mpd: \(String(cString: strerror(errno)))") }
            offset += count
        }
        var lines: [String] = []
        while true {
            let answer = try self.readLine()
            if answer == "OK" { return lines }
            if answer.hasPrefix("ACK") { throw PeerError(description: "mpd refused \(line): \(answer)") }
            lines.append(answer)
        }
    }

    /// The value of `key` in mpd's `status`.
    func status(_ key: String) throws(PeerError) -> String? {
        for line in try self.command("status") where line.hasPrefix(key + ": ") {
            return String(line.dropFirst(key.count + 2))
        }
        return nil
    }

    private func readLine() throws(PeerError) -> String {
        while true {
            if let newline = self.received.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: self.received[..<newline], as: UTF8.self)
                self.received.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw PeerError(description: "mpd closed the connection") }
            self.received += chunk[0..<count]
        }
    }
}

/// Reads a daemon's fifo output on its own thread as fast as it fills, noting when bytes arrive. A
/// burst of bytes after 50 ms of silence may begin with a header (playerd's WAV output writes 44 bytes
/// when it opens): the first `headerBytes` of each burst are not audio and fire nothing.
final class FifoWatcher: Sendable {
    private let descriptor: Int32
    private let probe: Probe
    private let headerBytes: Int
    private let lastArrival = Atomic<Int64>(0)
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)

    /// Opens the fifo (without waiting for a writer) and starts reading it.
    init(path: String, probe: Probe, headerBytes: Int = 0) throws(PeerError) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PeerError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        self.probe = probe
        self.headerBytes = headerBytes
        let thread = startThread { [self] in self.readUntilStopped() }
        self.thread.withLock { $0 = thread }
    }

    /// When the last bytes arrived, monotonic nanoseconds.
    var lastArrivalTime: Int64 { self.lastArrival.load(ordering: .acquiring) }

    /// Stops the reading thread and closes the fifo.
    func stop() {
        self.stopping.store(true, ordering: .releasing)
        if let thread = self.thread.withLock({ $0 }) {
            pthread_join(thread, nil)
        }
        close(self.descriptor)
    }

    private func readUntilStopped() {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
        var burstBytes = 0
        while !self.stopping.load(ordering: .acquiring) {
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                let now = monotonic.now()
                if now - self.lastArrival.load(ordering: .acquiring) > 50_000_000 {
                    burstBytes = 0
                }
                burstBytes += count
                self.lastArrival.store(now, ordering: .releasing)
                if burstBytes > self.headerBytes {
                    self.probe.note(.write, at: now)
                }
            } else if count == 0 {
                // No writer holds the fifo open: poll would report a hang-up at once, again and again.
                usleep(5000)
            }
        }
    }
}

/// Waits for the probe to fire, for at most `timeoutMilliseconds`; nil on timeout.
func fired(_ probe: Probe, timeoutMilliseconds: Int) async throws -> Int64? {
    let deadline = monotonic.now() + Int64(timeoutMilliseconds) * 1_000_000
    while monotonic.now() < deadline {
        if let time = probe.firedAt { return time }
        try await Task.sleep(for: .milliseconds(1))
    }
    return probe.firedAt
}

/// mpd's queue holds only `song` (a name in its music directory), once its database has it.
func queueOnly(_ song: String, on mpd: MPDConnection) async throws {
    let deadline = monotonic.now() + 20_000_000_000
    try mpd.command("clear")
    while true {
        do throws(PeerError) {
            try mpd.command("add \"\(song)\"")
            return
        } catch {
            // The database is still being built at startup.
            if monotonic.now() > deadline { throw error }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// mpd's command-to-effect times on its fifo output: `play` on a stopped mpd to the first byte,
/// `pause` while playing to its reply or the last byte, whichever comes later. Prints
/// `latency play ...` and `latency pause ...` lines.
func measurePeerLatency(
    socket: String, fifo: String, song: String, iterations: Int, headerBytes: Int = 0
) async throws {
    let mpd = try MPDConnection(path: socket)
    let probe = Probe()
    let watcher = try FifoWatcher(path: fifo, probe: probe, headerBytes: headerBytes)
    defer { watcher.stop() }
    try await queueOnly(song, on: mpd)
    try mpd.command("single 0")
    try mpd.command("repeat 1")

    var play = Samples()
    var missed = 0
    for _ in 0..<iterations {
        try mpd.command("stop")
        try await waitForQuiet(watcher)
        probe.arm(.write)
        let start = monotonic.now()
        try mpd.command("play")
        guard let time = try await fired(probe, timeoutMilliseconds: 3000) else {
            missed += 1
            continue
        }
        play.append(time - start)
        try await sleepRandomly(milliseconds: 5...30)
    }
    print("latency play \(play.summary)")

    // mpd writes the fifo in chunks of about 23 ms as the time for each comes, so a pause shows as no
    // chunk after the command. Its reply comes once the player and output threads have paused: the
    // effect is the later of that reply and the last byte, never less than the round trip.
    try mpd.command("play")
    try await Task.sleep(for: .milliseconds(500))
    var pause = Samples()
    for _ in 0..<iterations {
        try await sleepRandomly(milliseconds: 10...60)
        let start = monotonic.now()
        try mpd.command("pause 1")
        let replied = monotonic.now()
        try await Task.sleep(for: .milliseconds(100))
        pause.append(max(replied, watcher.lastArrivalTime) - start)
        probe.arm(.write)
        try mpd.command("pause 0")
        if try await fired(probe, timeoutMilliseconds: 3000) == nil {
            missed += 1
        }
    }
    print("latency pause \(pause.summary)")
    try mpd.command("stop")
    if missed > 0 {
        print("missed \(missed)")
    }
}

/// Returns once no byte has come from the fifo for 100 ms (at most 3 s).
private func waitForQuiet(_ watcher: FifoWatcher) async throws {
    let deadline = monotonic.now() + 3_000_000_000
    while monotonic.now() - watcher.lastArrivalTime < 100_000_000 && monotonic.now() < deadline {
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// mpd's CPU while playing `song` in real time on its null output with `sync "yes"`, from
/// /proc/PID/stat over `seconds` of steady playback (after a 5 s start), and its memory idle and while
/// playing `longSong` for 10 s. Prints `cpu WALL USER SYS SWITCHES -` and `memory IDLE PLAYING -`.
func measurePeerUsage(socket: String, pid: String, song: String, seconds: Int, longSong: String) async throws {
    let mpd = try MPDConnection(path: socket)
    try await queueOnly(song, on: mpd)
    try await Task.sleep(for: .milliseconds(500))
    guard let idle = residentKilobytes(pid: pid) else { throw PeerError(description: "no /proc/\(pid)/status") }
    try mpd.command("play")
    try await Task.sleep(for: .seconds(5))
    guard let before = processUsage(pid: pid) else { throw PeerError(description: "no /proc/\(pid)/stat") }
    let start = monotonic.now()
    try await Task.sleep(for: .seconds(seconds))
    guard let after = processUsage(pid: pid) else { throw PeerError(description: "no /proc/\(pid)/stat") }
    let wall = monotonic.now() - start
    if try mpd.status("state") != "play" {
        throw PeerError(description: "mpd stopped playing before the \(seconds) s were up")
    }
    print(cpuLine(wall: wall, before, after) + " -")

    try await queueOnly(longSong, on: mpd)
    try mpd.command("play")
    var playing = 0
    for _ in 0..<10 {
        try await Task.sleep(for: .seconds(1))
        playing = max(playing, residentKilobytes(pid: pid) ?? 0)
    }
    try mpd.command("stop")
    print("memory \(idle) \(playing) -")
}
