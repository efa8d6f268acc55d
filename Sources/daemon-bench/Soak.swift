// The `soak` mode: a running daemon against many hostile clients for a while, with observers timing
// what a well-behaved client feels meanwhile; afterwards the daemon must still be alive, greet a new
// client, answer `status` rightly, and have given back the memory the storm took.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The soak's settings, from the command line.
struct SoakOptions {
    var socketPath = ""
    var pid: pid_t = 0
    var musicDirectory = ""
    /// How long the hostile clients run.
    var seconds = 150
    /// How many hostile clients run at once (the observers come on top).
    var clients = 48
    /// The seed of every random choice; printed, so that a run can be repeated.
    var seed = SoakRandom.freshSeed()
    /// How long the hostile clients of the warm-up run, before the baseline is measured.
    var warmUpSeconds = 10
    /// How long the daemon may settle after a storm before its memory is measured.
    var settleSeconds = 5
    /// The daemon's client limit (`--max-clients`): afterwards every place must be free again.
    var maximumClients = 64
    /// How far above its warmed-up size the daemon's RSS may stay, in kB.
    var rssSlackKilobytes = 8 * 1024
    /// The longest round trip an observer may see, in nanoseconds.
    var observerLimitNanoseconds: Int64 = 1_000_000_000

    /// Reads `SOCKET PID MUSIC-DIR [--seconds N] [--clients N] [--seed N] [--warm-up N] [--settle N]
    /// [--max-clients N]`.
    init(_ arguments: [String], usage: String) throws(BenchFailure) {
        guard arguments.count >= 3, arguments.count % 2 == 1 else { throw .usage(usage) }
        self.socketPath = arguments[0]
        self.pid = pid_t(try integerArgument(arguments[1], named: "PID", atLeast: 1, usage: usage))
        self.musicDirectory = arguments[2]
        var index = 3
        while index < arguments.count {
            let value = arguments[index + 1]
            switch arguments[index] {
            case "--seconds": self.seconds = try integerArgument(value, named: "--seconds", atLeast: 1, usage: usage)
            case "--clients": self.clients = try integerArgument(value, named: "--clients", atLeast: 1, usage: usage)
            case "--warm-up":
                self.warmUpSeconds = try integerArgument(value, named: "--warm-up", atLeast: 0, usage: usage)
            case "--max-clients":
                self.maximumClients = try integerArgument(value, named: "--max-clients", atLeast: 1, usage: usage)
            case "--settle":
                self.settleSeconds = try integerArgument(value, named: "--settle", atLeast: 0, usage: usage)
            case "--seed":
                guard let seed = UInt64(value) else { throw .usage("\(usage)\n  --seed takes a whole number") }
                self.seed = seed
            default: throw .usage(usage)
            }
            index += 2
        }
    }
}

/// `daemon-bench soak SOCKET PID MUSIC-DIR [--seconds N] [--clients N] [--seed N] [--warm-up N] [--settle N]`:
/// prints the figures, a PASS or FAIL line per check and `N passed, N failed`; exits 1 if a check failed.
enum SoakCommand: BenchCommand {
    static let name = "soak"
    static let usage =
        "daemon-bench soak SOCKET PID MUSIC-DIR [--seconds 150] [--clients 48] [--seed N] [--warm-up 10] [--settle 5]"
    /// Well-behaved clients beside the hostile ones.
    static let observerCount = 2
    /// The volume the soak leaves the player at before each memory measurement.
    static let restoredVolume = 50
    /// How many more seconds of quiet the RSS check waits, at most, for memory to come back.
    static let extraSettleSeconds = 10

    static func run(_ arguments: [String]) throws(BenchFailure) {
        let options = try SoakOptions(arguments, usage: self.usage)
        let tree = try MusicTree(root: options.musicDirectory)
        print(
            "seed \(options.seed) (repeat the run with --seed \(options.seed), or SOAK_SEED=\(options.seed) scripts/soak.sh)"
        )
        print(
            "\(options.seconds) s, \(options.clients) hostile clients, \(self.observerCount) observers, "
                + "\(tree.songs.count) songs in \(tree.folders.count) folders")
        fflush(nil)  // the seed first, whatever happens next

        // Start-up and a short warm-up, ordinary then hostile, so that the baseline counts what the
        // daemon sets up once (buffers, caches, a heap per thread); then the same quiet as at the end.
        let requests = SoakRequests(songs: tree.songs, folders: tree.folders)
        try self.waitForGreeting(options.socketPath)
        try self.restore(options.socketPath, tree)
        try self.warmUp(options.socketPath)
        let warmUp = Storm(
            name: "warm-up", options: options, requests: requests, seconds: options.warmUpSeconds,
            seed: options.seed ^ 0x5741_524D)
        if options.warmUpSeconds > 0 {
            _ = warmUp.run()
            guard self.isAlive(options.pid) else {
                var verdicts = SoakVerdicts()
                warmUp.judge(into: &verdicts)
                verdicts.check(false, "playerd (pid \(options.pid)) is still running after the warm-up")
                verdicts.printReport()
                exit(1)
            }
            try self.restore(options.socketPath, tree)
            usleep(UInt32(options.settleSeconds) * 1_000_000)
        }
        let start = try ResidentMemory(pid: options.pid)

        let storm = Storm(
            name: "storm", options: options, requests: requests, seconds: options.seconds, seed: options.seed)
        let peak = storm.run()

        // The clients are gone: the same queue as before, a few seconds of quiet, then the verdicts.
        var verdicts = SoakVerdicts()
        let alive = self.isAlive(options.pid)
        var after: ResidentMemory?
        var settled = options.settleSeconds
        var fresh: (greeted: Bool, problems: [String]) = (false, ["not tried: playerd is gone"])
        var places: [String] = ["not tried: playerd is gone"]
        if alive {
            do throws(BenchFailure) {
                try self.restore(options.socketPath, tree)
            } catch {
                warn("restoring the queue after the storm failed: \(error)")
            }
            usleep(UInt32(options.settleSeconds) * 1_000_000)
            after = try? ResidentMemory(pid: options.pid)
            // The daemon gives memory back once it has been quiet for a while (HeapTrimmer: 2 s of quiet
            // after the last client left, and a trim that may wait for a postponed one); on a loaded
            // machine that can land after the settle. Quiet a little longer before judging.
            var extra = 0
            while let measured = after, extra < Self.extraSettleSeconds,
                measured.residentKilobytes - start.residentKilobytes > options.rssSlackKilobytes
            {
                usleep(1_000_000)
                extra += 1
                after = try? ResidentMemory(pid: options.pid)
            }
            settled = options.settleSeconds + extra
            fresh = self.freshClient(options.socketPath, length: tree.songs.count)
            usleep(500_000)  // for the daemon to see the fresh client go
            places = self.freePlaces(options.socketPath, limit: options.maximumClients)
        }

        storm.printFigures(start: start, peakKilobytes: peak, after: after)
        if options.warmUpSeconds > 0 {
            warmUp.judge(into: &verdicts)
        }
        storm.judge(into: &verdicts)
        verdicts.check(alive, "playerd (pid \(options.pid)) is still running")
        verdicts.check(fresh.greeted, "a fresh client is greeted with OK MPD", details: fresh.problems)
        verdicts.check(
            fresh.greeted && fresh.problems.isEmpty, "its status has every key and the state the soak left",
            details: fresh.problems)
        verdicts.check(
            places.isEmpty,
            "all \(options.maximumClients) client places are free again, and one more client is refused",
            details: places)
        let growth = (after?.residentKilobytes ?? 0) - start.residentKilobytes
        verdicts.check(
            after != nil && growth <= options.rssSlackKilobytes,
            "RSS \(settled) s after the storm is within \(options.rssSlackKilobytes / 1024) MB "
                + "of the warmed-up RSS ("
                + (after == nil ? "unknown" : "\(growth >= 0 ? "+" : "")\(Storm.tenths(Double(growth) / 1024)) MB")
                + ")")
        verdicts.printReport()
        if verdicts.failed > 0 { exit(1) }
    }

    // MARK: - Phases

    /// Polls (up to 20 s) until the daemon greets a client.
    private static func waitForGreeting(_ socketPath: String) throws(BenchFailure) {
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while monotonicNanoseconds() < deadline {
            if let connection = try? Connection(path: socketPath, timeoutSeconds: 5), case .ok = connection.readAnswer()
            {
                return
            }
            usleep(50_000)
        }
        throw .daemon("nothing greets on \(socketPath) within 20 s")
    }

    /// Puts the player where the soak measures it: the whole tree queued, repeat on, volume 50,
    /// the output on, playing from the first song, no timers. (A hostile `disableoutput -0` is a
    /// valid request, as in MPD, whose `strtoul` reads it as 0.)
    private static func restore(_ socketPath: String, _ tree: MusicTree) throws(BenchFailure) {
        let connection = try openSession(socketPath)
        var list = "command_list_begin\nclear\nrepeat 1\nrandom 0\nsingle 0\nconsume 0\nsleeptimer off\nclearerror\n"
        for song in tree.songs { list += "add \(quoted(song))\n" }
        list += "setvol \(self.restoredVolume)\nenableoutput 0\nplay 0\ncommand_list_end\n"
        if let failure = connection.request(list).failure(of: "setting up the queue") { throw .daemon(failure) }
    }

    /// A few seconds of what ordinary clients do, on a few connections, so that the baseline counts
    /// what the daemon sets up once (buffers, caches) and not only its idle start.
    private static func warmUp(_ socketPath: String) throws(BenchFailure) {
        for round in 0..<8 {
            let connection = try openSession(socketPath)
            for request in ["status", "currentsong", "playlistinfo", "outputs", "commands", "setvol 50"] {
                if let failure = connection.request(request + "\n").failure(of: request) { throw .daemon(failure) }
            }
            if round % 2 == 0 {
                let list = "command_list_ok_begin\n" + String(repeating: "status\n", count: 100) + "command_list_end\n"
                if let failure = connection.request(list).failure(of: "a command list") { throw .daemon(failure) }
            }
            usleep(250_000)
        }
        usleep(2_000_000)
    }

    /// A new client after the storm: greeted, and `status` as `restore` left the player.
    private static func freshClient(_ socketPath: String, length: Int) -> (greeted: Bool, problems: [String]) {
        let connection: Connection
        do throws(SystemCallError) {
            connection = try Connection(path: socketPath, timeoutSeconds: 10)
        } catch {
            return (false, ["cannot connect: \(error)"])
        }
        switch connection.readAnswer() {
        case .ok(_, let greeting) where greeting.hasPrefix("OK MPD "): break
        case .ok(_, let line), .ack(let line): return (false, ["'\(line)' instead of the greeting"])
        case .broken(let reason): return (false, ["no greeting: \(reason)"])
        }
        switch connection.request("status\n", keepingLines: true) {
        case .ok(let lines, _):
            return (true, StatusShape.problems(StatusShape.fields(lines), length: length, volume: self.restoredVolume))
        case .ack(let line): return (true, ["status was refused: \(line)"])
        case .broken(let reason): return (true, ["status got no answer: \(reason)"])
        }
    }

    /// What is wrong with the client places: `limit` clients must be greeted at once (none is held by a
    /// client that has gone), and one more refused with the daemon's ACK.
    private static func freePlaces(_ socketPath: String, limit: Int) -> [String] {
        var connections: [Connection] = []
        for number in 1...limit + 1 {
            let connection: Connection
            do throws(SystemCallError) {
                connection = try Connection(path: socketPath, timeoutSeconds: 10)
            } catch {
                return ["client \(number): cannot connect: \(error)"]
            }
            let answer = connection.readAnswer()
            switch (answer, number <= limit) {
            case (.ok(_, let greeting), true) where greeting.hasPrefix("OK MPD "):
                connections.append(connection)
            case (.ack(let line), false) where line.contains("too many clients"):
                return []
            case (.ok(_, let line), _), (.ack(let line), _):
                return ["client \(number) of \(limit + 1): '\(line)'"]
            case (.broken(let reason), _):
                return ["client \(number) of \(limit + 1): no greeting: \(reason)"]
            }
        }
        return ["unreachable"]
    }

    /// Whether `pid` is a live process (not gone, not a zombie).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // A zombie still takes signals; its state letter in /proc/PID/stat is Z.
        guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
        return !stat[close...].hasPrefix(") Z")
    }

    /// The contents of a small file (`/proc/...`), or nil.
    static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
