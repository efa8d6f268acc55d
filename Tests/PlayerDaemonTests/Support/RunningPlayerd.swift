import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The real `playerd` binary, started for one test on a socket in a fresh temporary directory, with
/// the fixtures as its music directory. It is killed when dropped, so that a failing test leaves no
/// process behind; a passing test stops it with SIGTERM and checks that it ends cleanly.
final class RunningPlayerd {
    /// How a test wants the daemon started.
    struct Options {
        /// `--output`: `null` plays in real time, `null:unpaced` as fast as it decodes.
        var output = "null"
        /// `--max-clients`, when set.
        var maxClients: Int?
        /// `--socket-mode`, when set.
        var socketMode: String?
        /// The socket's path; nil means `socket` in the daemon's temporary directory.
        var socketPath: String?
        /// Whether to wait for the greeting before returning.
        var waitsForGreeting = true
        /// `--state-file`; nil means `state` in the daemon's temporary directory, so that no test reads
        /// or writes the user's state (`/var/lib/playerd/state` for root).
        var stateFile: String?
        /// Whether the daemon keeps a library of its music directory (in its temporary directory). Off by
        /// default, so that a scan running at start (`updating_db` in `status`) never races a test that is
        /// not about the library.
        var library = false
        /// Whether the daemon keeps play statistics (stickers written as songs play, each sending idle
        /// `sticker`). Off by default: MPD keeps none, and tests compare idle events with its.
        var playStatistics = false
        /// More flags, as they are.
        var extraArguments: [String] = []
        /// Whether the daemon exports MPRIS (`--mpris on`). Off by default, so that no test daemon shows
        /// up on a desktop's session bus; when on, the daemon sees no session bus but the one
        /// `environment` names (`DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`).
        var mpris = false
        /// Variables set in the daemon's environment.
        var environment: [String: String] = [:]
    }

    /// The daemon's private temporary directory (its socket and log live there).
    let directory: String
    let socketPath: String
    private let logPath: String
    private let program: Process
    /// Whether `stop()` or `kill()` has been called.
    private(set) var wasStopped = false

    /// Starts playerd and, unless told otherwise, waits (up to `readiness`) until its socket answers
    /// with the greeting.
    init(_ options: Options = Options(), readiness: Duration = .seconds(10)) throws {
        _ = Self.leftoversSwept
        self.directory = try Paths.makeTemporaryDirectory()
        self.socketPath = options.socketPath ?? self.directory + "/socket"
        self.logPath = self.directory + "/playerd.log"
        _ = FileManager.default.createFile(atPath: self.logPath, contents: nil)
        var arguments = [
            "--socket", self.socketPath, "--output", options.output, "--music-dir", Paths.fixtures,
            "--state-file", options.stateFile ?? self.directory + "/state", "--log-level", "debug",
            // The library and stored playlists of this daemon alone, never the user's.
            "--library", options.library ? self.directory + "/library.db" : "none",
            "--playlist-dir", self.directory + "/playlists",
        ]
        if let limit = options.maxClients {
            arguments += ["--max-clients", String(limit)]
        }
        if let mode = options.socketMode {
            arguments += ["--socket-mode", mode]
        }
        if !options.playStatistics {
            arguments.append("--no-play-statistics")
        }
        arguments += options.extraArguments
        arguments += ["--mpris", options.mpris ? "on" : "off"]
        self.program = Process()
        self.program.executableURL = URL(fileURLWithPath: Paths.playerd)
        self.program.arguments = arguments
        // Nothing from the environment may reach a test's daemon: no PLAYERD_ setting, and no systemd
        // handover (a test run from a unit must not pass its notify socket or journal on).
        var environment = ProcessInfo.processInfo.environment
        let systemd: Set = [
            "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM", "WATCHDOG_USEC",
        ]
        for key in environment.keys where key.hasPrefix("PLAYERD_") || systemd.contains(key) {
            environment[key] = nil
        }
        if options.mpris {
            environment["DBUS_SESSION_BUS_ADDRESS"] = nil
            environment["XDG_RUNTIME_DIR"] = nil
        }
        environment.merge(options.environment) { _, given in given }
        self.program.environment = environment
        self.program.standardInput = FileHandle.nullDevice
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: self.logPath))
        self.program.standardOutput = log
        self.program.standardError = log
        // The daemon has its own copy once started; ours would outlive the test (see BackgroundProgram).
        defer { try? log.close() }
        do {
            try self.program.run()
            // Who started whom, for the sweep after a crashed test run.
            try "\(getpid()) \(self.program.processIdentifier)\n".write(
                toFile: self.directory + "/" + Self.ownerFileName, atomically: true, encoding: .utf8)
            if options.waitsForGreeting {
                try self.waitUntilReady(within: readiness)
            }
        } catch {
            self.kill()
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
    }

    /// The file in a daemon's directory naming the test process and the daemon: `TESTPID DAEMONPID`.
    private static let ownerFileName = "owner"

    /// A test run that crashed (rather than failed) could not kill its daemons: the first daemon of
    /// the next run kills those whose test process is gone, and removes their directories. A daemon
    /// of a test run still going (another one, run at the same time) is left alone.
    private static let leftoversSwept: Void = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("playerd-test-") {
            let directory = "/tmp/" + name
            guard let owner = try? String(contentsOfFile: directory + "/" + ownerFileName, encoding: .utf8) else {
                continue
            }
            let pids = owner.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
            guard pids.count == 2, Glibc.kill(pids[0], 0) != 0, errno == ESRCH else { continue }
            // Only if that pid is still this directory's playerd, not a recycled number.
            let commandLine = (try? String(contentsOfFile: "/proc/\(pids[1])/cmdline", encoding: .utf8)) ?? ""
            if commandLine.contains(directory + "/") {
                Glibc.kill(pids[1], SIGKILL)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }()

    deinit {
        self.kill()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    var processIdentifier: Int32 { self.program.processIdentifier }

    var isRunning: Bool { self.program.isRunning }

    /// Everything the daemon has logged (stdout and stderr).
    var log: String { (try? String(contentsOfFile: self.logPath, encoding: .utf8)) ?? "" }

    /// The last lines of the log, for failure messages.
    var logTail: String {
        self.log.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
    }

    /// A new connection whose greeting has been checked.
    func connect() throws -> LineClient {
        try LineClient.greeted(self.socketPath)
    }

    /// Polls until a fresh connection is greeted; the daemon must not exit meanwhile.
    func waitUntilReady(within limit: Duration) throws {
        let deadline = ContinuousClock.now + limit
        var lastProblem = "nothing tried yet"
        while ContinuousClock.now < deadline {
            guard self.program.isRunning else {
                throw HarnessError(
                    "playerd exited (status \(self.program.terminationStatus)) before it answered\n\(self.logTail)")
            }
            do {
                _ = try LineClient.greeted(self.socketPath, timeout: .seconds(1))
                return
            } catch {
                lastProblem = "\(error)"
            }
            usleep(20_000)
        }
        throw HarnessError("playerd did not answer within \(limit): \(lastProblem)\n\(self.logTail)")
    }

    /// Sends SIGTERM and waits (up to `limit`) for the daemon to end; returns how long that took. It
    /// must exit with status 0 and remove its socket file.
    @discardableResult
    func stop(within limit: Duration = .seconds(5)) throws -> Duration {
        guard !self.wasStopped else { return .zero }
        self.wasStopped = true
        let start = ContinuousClock.now
        Glibc.kill(self.program.processIdentifier, SIGTERM)
        guard self.waitForExit(within: limit) else {
            self.kill()
            throw HarnessError("playerd did not exit within \(limit) of SIGTERM\n\(self.logTail)")
        }
        let took = ContinuousClock.now - start
        guard self.program.terminationReason == .exit, self.program.terminationStatus == 0 else {
            throw HarnessError(
                "playerd ended with \(self.program.terminationReason == .exit ? "status" : "signal") "
                    + "\(self.program.terminationStatus) after SIGTERM\n\(self.logTail)")
        }
        guard !FileManager.default.fileExists(atPath: self.socketPath) else {
            throw HarnessError("playerd left its socket file \(self.socketPath) behind")
        }
        return took
    }

    /// Kills the daemon with SIGKILL (a crash, as far as the socket file is concerned) and waits for it.
    func kill() {
        self.wasStopped = true
        if self.program.isRunning {
            Glibc.kill(self.program.processIdentifier, SIGKILL)
            self.program.waitUntilExit()
        }
    }

    /// Waits up to `limit` for the process to end on its own; true if it has.
    func waitForExit(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while self.program.isRunning {
            if ContinuousClock.now >= deadline {
                return false
            }
            usleep(5000)
        }
        return true
    }

    /// The exit status once the process has ended.
    var terminationStatus: Int32 { self.program.terminationStatus }

    /// The daemon's resident memory in KiB, from /proc.
    func residentKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(self.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else {
            throw HarnessError("no VmRSS in /proc/\(self.processIdentifier)/status")
        }
        return value
    }
}

/// Runs `body` against a fresh playerd, then stops it with SIGTERM and checks a clean exit (status 0,
/// socket removed). If `body` throws, the daemon is killed and its log is added to the error, so
/// that no process outlives a failed test.
func withPlayerd<Result>(
    _ options: RunningPlayerd.Options = RunningPlayerd.Options(),
    _ body: (RunningPlayerd) throws -> Result
) throws -> Result {
    let daemon = try RunningPlayerd(options)
    let result: Result
    do {
        result = try body(daemon)
    } catch {
        daemon.kill()
        throw HarnessError("\(error)\n--- playerd's log (last lines):\n\(daemon.logTail)")
    }
    if daemon.wasStopped {
        return result
    }
    guard daemon.isRunning else {
        throw HarnessError("playerd is no longer running at the end of the test\n\(daemon.logTail)")
    }
    try daemon.stop()
    return result
}
