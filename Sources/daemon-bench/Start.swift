// The `start` mode: how long a daemon takes from being spawned to answering its first client, and how
// much memory it holds once idle.

#if canImport(Glibc)
    import Glibc
#endif

/// `daemon-bench start SOCKET -- COMMAND...`: prints `start_to_ready_ms`, `idle_rss_kb` and `pid`.
enum StartCommand: BenchCommand {
    static let name = "start"
    static let usage = "daemon-bench start SOCKET -- COMMAND..."
    /// How long the daemon has to answer before the measurement gives up.
    static let readyTimeoutNanoseconds: Int64 = 20_000_000_000

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count >= 3, arguments[1] == "--" else { throw .usage(self.usage) }
        let socketPath = arguments[0]
        let command = Array(arguments[2...])
        let started = monotonicNanoseconds()
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer {
            for argument in argv { free(argument) }
        }
        // The daemon must not hold our stdout: a script reading it through $(...) would wait for the
        // daemon to exit. Its output goes to /dev/null.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else {
            throw .system(SystemCallError(function: "posix_spawn(\(command[0]))", code: spawned))
        }
        var ready: Int64?
        while monotonicNanoseconds() - started < self.readyTimeoutNanoseconds {
            // Until the daemon listens, connecting fails; that is what we are waiting out.
            if let connection = try? Connection(path: socketPath), case .ok = connection.readAnswer() {
                ready = monotonicNanoseconds() - started
                break
            }
            usleep(200)
        }
        guard let ready else { throw .daemon("\(command[0]) did not answer on \(socketPath) within 20 s") }
        print("start_to_ready_ms \(Double(ready) / 1e6)")
        usleep(1_000_000)  // let start-up allocations settle
        do throws(BenchFailure) {
            print("idle_rss_kb \(try ResidentMemory(pid: pid).residentKilobytes)")
        } catch {
            // Keep the line, so that a script's table shows the hole instead of shifting.
            warn("cannot read \(command[0])'s memory: \(error)")
            print("idle_rss_kb -1")
        }
        print("pid \(pid)")
    }
}
