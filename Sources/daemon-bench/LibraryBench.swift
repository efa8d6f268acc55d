// The library benchmarks' clients (section G of scripts/bench.sh), the same for playerd and for mpd:
//   library-start SOCKET SONGS [--log FILE] [--timeout SECONDS] -- COMMAND...
//                                             spawn a daemon; time its greeting, its `stats` holding
//                                             SONGS songs, and the end of any update job; its peak RSS
//   library-update SOCKET SONGS               one `update`, timed until its job is over
//   library-query SOCKET ROUNDS COMMAND [ARG...]  ROUNDS round trips of one request, read whole
//   library-query-each SOCKET FILE               each request line of FILE once: first asks, timed
//   library-stream SOCKET PID COMMAND [ARG...]    one long answer, timed, with the daemon's RSS and
//                                                 another client's `status` round trips meanwhile

import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where a chunk of an answer left the reading: the answer is complete, refused, or goes on.
private enum ChunkEnding {
    case ok, ack, more
}

/// What one answer held: its size, lines, and `file:` lines (songs).
struct AnswerTally {
    var bytes = 0
    var lines = 0
    var files = 0
}

extension Connection {
    /// Sends `request` and reads its whole answer from the socket, counting it without keeping it: the
    /// client's cost is a scan of the bytes, the same for any daemon. Must not be mixed with
    /// `readAnswer` on the same connection after the greeting.
    func tally(_ request: String) throws(BenchFailure) -> AnswerTally {
        do throws(SystemCallError) {
            try self.send(request)
        } catch {
            throw .system(error)
        }
        var tally = AnswerTally()
        var line: [UInt8] = []  // the current line's first 100 bytes at most
        var lineLength = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let (count, code) = chunk.withUnsafeMutableBytes {
                let count = read(self.descriptor, $0.baseAddress, $0.count)
                return (count, errno)
            }
            if count == 0 { throw .daemon("\(request.dropLast()): the daemon closed the connection") }
            if count < 0 {
                if code == EINTR { continue }
                throw .daemon("\(request.dropLast()): \(SystemCallError(function: "read", code: code))")
            }
            tally.bytes += count
            // Lines are found with memchr; only each line's first bytes are looked at.
            // The closure cannot throw a typed error through withUnsafeBytes: it says how the chunk ended.
            let ending = chunk.withUnsafeBytes { buffer -> ChunkEnding in
                let base = buffer.baseAddress!
                var position = 0
                while position < count {
                    let newline = memchr(base + position, Int32(UInt8(ascii: "\n")), count - position)
                    let stop = newline.map { base.distance(to: UnsafeRawPointer($0)) } ?? count
                    if line.count < 100 {
                        let taken = min(100 - line.count, stop - position)
                        line += UnsafeRawBufferPointer(start: base + position, count: taken)
                    }
                    lineLength += stop - position
                    guard newline != nil else { break }
                    position = stop + 1
                    tally.lines += 1
                    if lineLength == 2 && line.starts(with: "OK".utf8) {
                        tally.lines -= 1
                        return .ok
                    }
                    if line.starts(with: "ACK ".utf8) { return .ack }
                    if line.starts(with: "file: ".utf8) { tally.files += 1 }
                    line.removeAll(keepingCapacity: true)
                    lineLength = 0
                }
                return .more
            }
            switch ending {
            case .ok: return tally
            case .ack: throw .daemon("\(request.dropLast()) was refused: \(String(decoding: line, as: UTF8.self))")
            case .more: continue
            }
        }
    }

    /// The `key: value` lines of a short answer (`status`, `stats`) as a dictionary.
    func fields(_ request: String) throws(BenchFailure) -> [String: String] {
        guard case .ok(let lines, _) = self.request(request, keepingLines: true) else {
            throw .daemon("\(request.dropLast()) failed")
        }
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[colon...].dropFirst().drop(while: { $0 == " " }))
        }
        return fields
    }
}

/// One request line: the command, then each argument quoted.
func requestLine(_ words: some Collection<String>) -> String {
    guard let command = words.first else { return "\n" }
    return ([command] + words.dropFirst().map(quoted)).joined(separator: " ") + "\n"
}

/// Polls `status` and `stats` every 2 ms until the library holds `songs` songs and no update job runs
/// (or, with `waitingForJob` false, until `stats` holds them); the time it took from `started`.
func waitForLibrary(
    _ connection: Connection, songs: Int, waitingForJob: Bool, started: Int64, timeoutSeconds: Int64 = 300
) throws(BenchFailure) -> Int64 {
    while true {
        let stats = try connection.fields("stats\n")
        if stats["songs"] == String(songs) {
            if !waitingForJob { return monotonicNanoseconds() - started }
            if try connection.fields("status\n")["updating_db"] == nil {
                return monotonicNanoseconds() - started
            }
        }
        if monotonicNanoseconds() - started > timeoutSeconds * 1_000_000_000 {
            throw .daemon("after \(timeoutSeconds) s the library holds \(stats["songs"] ?? "?") songs, not \(songs)")
        }
        usleep(2000)
    }
}

/// `daemon-bench library-start SOCKET SONGS [--log FILE] [--timeout SECONDS] -- COMMAND...`: spawns
/// COMMAND (its stdout and stderr appended to FILE, or to /dev/null); prints `pid`, `ready_ms` (its
/// greeting), `stats_ms` (`stats` says SONGS songs), `idle_ms` (and `status` shows no update job),
/// `rss_kb` and `anon_kb` then, and `rss_peak_kb`, the highest VmRSS from the spawn to then (read every
/// 2 ms: the peak of a scan). It gives up after SECONDS (300) without the greeting or SONGS songs.
enum LibraryStartCommand: BenchCommand {
    static let name = "library-start"
    static let usage = "daemon-bench library-start SOCKET SONGS [--log FILE] [--timeout SECONDS] -- COMMAND..."

    static func run(_ arguments: [String]) throws(BenchFailure) {
        var arguments = arguments
        var log = "/dev/null"
        var timeout = 300
        while arguments.count >= 4 && ["--log", "--timeout"].contains(arguments[2]) {
            if arguments[2] == "--log" {
                log = arguments[3]
            } else {
                timeout = try integerArgument(arguments[3], named: "SECONDS", atLeast: 1, usage: self.usage)
            }
            arguments.removeSubrange(2...3)
        }
        guard arguments.count >= 4, arguments[2] == "--" else { throw .usage(self.usage) }
        let songs = try integerArgument(arguments[1], named: "SONGS", atLeast: 0, usage: self.usage)
        let socketPath = arguments[0]
        let command = Array(arguments[3...])
        let started = monotonicNanoseconds()
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer {
            for argument in argv { free(argument) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else {
            throw .system(SystemCallError(function: "posix_spawn(\(command[0]))", code: spawned))
        }
        print("pid \(pid)")  // first, so that a script can stop the daemon even if the rest fails
        let sampler = MemorySampler(pid: pid, first: 0)
        defer { _ = sampler.stop() }
        var connection: Connection?
        while connection == nil && monotonicNanoseconds() - started < Int64(timeout) * 1_000_000_000 {
            if let attempt = try? Connection(path: socketPath), case .ok = attempt.readAnswer() {
                connection = attempt
            } else {
                usleep(200)
            }
        }
        guard let connection else {
            throw .daemon("\(command[0]) did not answer on \(socketPath) within \(timeout) s")
        }
        print("ready_ms \(Double(monotonicNanoseconds() - started) / 1e6)")
        let seconds = Int64(timeout)
        let stats = try waitForLibrary(
            connection, songs: songs, waitingForJob: false, started: started, timeoutSeconds: seconds)
        print("stats_ms \(Double(stats) / 1e6)")
        let idle = try waitForLibrary(
            connection, songs: songs, waitingForJob: true, started: started, timeoutSeconds: seconds)
        print("idle_ms \(Double(idle) / 1e6)")
        let memory = try ResidentMemory(pid: pid)
        print("rss_kb \(memory.residentKilobytes)")
        print("anon_kb \(memory.anonymousKilobytes)")
        print("rss_peak_kb \(max(sampler.stop(), memory.residentKilobytes))")
    }
}

/// `daemon-bench library-update SOCKET SONGS`: sends `update` and polls `status` every 2 ms until the
/// job it answered is over (an hour at most); checks that `stats` still says SONGS songs. Prints
/// `update_ms`.
enum LibraryUpdateCommand: BenchCommand {
    static let name = "library-update"
    static let usage = "daemon-bench library-update SOCKET SONGS"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 2 else { throw .usage(self.usage) }
        let songs = try integerArgument(arguments[1], named: "SONGS", atLeast: 0, usage: self.usage)
        let connection = try openSession(arguments[0])
        if let running = try connection.fields("status\n")["updating_db"] {
            throw .daemon("an update job (\(running)) is already running")
        }
        let started = monotonicNanoseconds()
        guard let job = try connection.fields("update\n")["updating_db"].flatMap({ Int($0) }) else {
            throw .daemon("update did not answer updating_db")
        }
        while true {
            let running = try connection.fields("status\n")["updating_db"].flatMap { Int($0) }
            if running == nil || running! > job { break }
            if monotonicNanoseconds() - started > 3_600_000_000_000 { throw .daemon("update \(job) ran over an hour") }
            usleep(2000)
        }
        let elapsed = monotonicNanoseconds() - started
        let held = try connection.fields("stats\n")["songs"] ?? "?"
        guard held == String(songs) else { throw .daemon("after the update the library holds \(held) songs") }
        print("update_ms \(Double(elapsed) / 1e6)")
    }
}

/// `daemon-bench library-query SOCKET ROUNDS COMMAND [ARG...]`: one untimed request, then ROUNDS timed
/// round trips of the same request on one connection, each answer read whole. Prints `p50_us`,
/// `p99_us`, and the first answer's `files`, `lines` and `bytes`.
enum LibraryQueryCommand: BenchCommand {
    static let name = "library-query"
    static let usage = "daemon-bench library-query SOCKET ROUNDS COMMAND [ARG...]"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count >= 3 else { throw .usage(self.usage) }
        let rounds = try integerArgument(arguments[1], named: "ROUNDS", atLeast: 1, usage: self.usage)
        let request = requestLine(arguments[2...])
        let connection = try openSession(arguments[0])
        let first = try connection.tally(request)
        var samples: [Int64] = []
        samples.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let start = monotonicNanoseconds()
            let tally = try connection.tally(request)
            samples.append(monotonicNanoseconds() - start)
            guard tally.bytes == first.bytes else {
                throw .daemon("\(request.dropLast()) answered \(tally.bytes) bytes, then \(first.bytes)")
            }
        }
        printPercentiles(samples)
        print("files \(first.files)")
        print("lines \(first.lines)")
        print("bytes \(first.bytes)")
    }
}

/// `daemon-bench library-query-each SOCKET FILE`: each request line of FILE once, timed, on one
/// connection (after an untimed `ping`): what a client meets the first time it asks, with nothing kept
/// from before. Prints `p50_us`, `p99_us`, `requests` and the `files` of all answers together.
enum LibraryQueryEachCommand: BenchCommand {
    static let name = "library-query-each"
    static let usage = "daemon-bench library-query-each SOCKET FILE"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 2 else { throw .usage(self.usage) }
        guard let file = fopen(arguments[1], "r") else {
            throw .system(SystemCallError(function: "fopen(\(arguments[1]))", code: errno))
        }
        var requests: [String] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            if text.count > 1 { requests.append(text.hasSuffix("\n") ? text : text + "\n") }
        }
        free(line)
        fclose(file)
        guard !requests.isEmpty else { throw .usage("\(arguments[1]) holds no requests") }
        let connection = try openSession(arguments[0])
        _ = try connection.tally("ping\n")
        var samples: [Int64] = []
        var files = 0
        for request in requests {
            let start = monotonicNanoseconds()
            let tally = try connection.tally(request)
            samples.append(monotonicNanoseconds() - start)
            files += tally.files
        }
        printPercentiles(samples)
        print("requests \(requests.count)")
        print("files \(files)")
    }
}

/// Prints `p50_us` and `p99_us` of round trips timed in nanoseconds.
private func printPercentiles(_ samples: [Int64]) {
    let sorted = samples.sorted()
    print("p50_us \(Double(sorted[sorted.count / 2]) / 1000)")
    print("p99_us \(Double(sorted[min(sorted.count - 1, sorted.count * 99 / 100)]) / 1000)")
}

/// `daemon-bench library-stream SOCKET PID COMMAND [ARG...]`: one request, its answer read whole and
/// timed, while another thread reads the daemon's VmRSS every 2 ms and another client sends `status`
/// round trips, timing each. Prints `wall_ms`, `files`, `lines`, `bytes`, `rss_before_kb`,
/// `rss_peak_kb`, `rss_after_kb`, and the other client's `others_requests` and `others_max_us` (its
/// longest wait: the whole answer's time with a daemon that serves one client at a time).
enum LibraryStreamCommand: BenchCommand {
    static let name = "library-stream"
    static let usage = "daemon-bench library-stream SOCKET PID COMMAND [ARG...]"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count >= 3 else { throw .usage(self.usage) }
        let pid = pid_t(try integerArgument(arguments[1], named: "PID", atLeast: 1, usage: self.usage))
        let request = requestLine(arguments[2...])
        let connection = try openSession(arguments[0])
        let before = try ResidentMemory(pid: pid).residentKilobytes
        let other = try OtherClient(socket: arguments[0], requests: ["status\n"])
        let sampler = MemorySampler(pid: pid, first: before)
        let started = monotonicNanoseconds()
        let tally: AnswerTally
        do throws(BenchFailure) {
            tally = try connection.tally(request)
        } catch {
            _ = sampler.stop()
            _ = try? other.stop()
            throw error
        }
        let elapsed = monotonicNanoseconds() - started
        other.finish()
        let peak = sampler.stop()
        let waits = try other.stop()
        print("wall_ms \(Double(elapsed) / 1e6)")
        print("files \(tally.files)")
        print("lines \(tally.lines)")
        print("bytes \(tally.bytes)")
        print("rss_before_kb \(before)")
        print("rss_peak_kb \(peak)")
        print("rss_after_kb \(try ResidentMemory(pid: pid).residentKilobytes)")
        print("others_requests \(waits.count)")
        print("others_max_us \(Double(waits.last!) / 1000)")
    }
}

/// A thread that reads a process's VmRSS every 2 ms and keeps the highest.
final class MemorySampler: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let peak: Mutex<Int>
    private let finished = DispatchSemaphore(value: 0)

    init(pid: pid_t, first: Int) {
        self.peak = Mutex(first)
        DispatchQueue.global().async {
            defer { self.finished.signal() }
            while !self.stopping.load(ordering: .relaxed) {
                if let memory = try? ResidentMemory(pid: pid) {
                    self.peak.withLock { $0 = max($0, memory.residentKilobytes) }
                }
                usleep(2000)
            }
        }
    }

    /// Stops sampling and returns the highest VmRSS seen, in kB; again, the same.
    func stop() -> Int {
        self.stopping.store(true, ordering: .relaxed)
        self.finished.wait()
        self.finished.signal()  // for the next call
        return self.peak.withLock { $0 }
    }
}
