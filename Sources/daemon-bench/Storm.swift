// The storm: hostile clients and observers on their own threads, while the soak's main thread watches
// the daemon's memory and life, and reports progress every 30 s.

#if canImport(Glibc)
    import Glibc
#endif

/// One run of hostile clients beside observers, and what it added up to.
final class Storm {
    /// Hostile threads run at this niceness (the lowest priority), the observers at the soak's own:
    /// the observers measure the daemon, not a machine whose CPUs the soak itself keeps busy.
    static let hostileNiceness: Int32 = 19
    /// Seconds between progress lines on stderr.
    static let progressSeconds: Int64 = 30

    /// What the storm is called in its checks: `warm-up` or `storm`.
    let name: String
    let options: SoakOptions
    let requests: SoakRequests
    /// How long the hostile clients start new connections.
    let seconds: Int
    /// The seed of the hostile clients' choices.
    let seed: UInt64
    let tally = SoakTally()
    private(set) var observers: [Observer] = []
    /// How long the hostile clients ran, to the last one's end.
    private(set) var ranSeconds = 0.0

    init(name: String, options: SoakOptions, requests: SoakRequests, seconds: Int, seed: UInt64) {
        self.name = name
        self.options = options
        self.requests = requests
        self.seconds = seconds
        self.seed = seed
    }

    /// Runs the storm to its end; returns the highest RSS seen (kB).
    func run() -> Int {
        let started = monotonicNanoseconds()
        let socketPath = self.options.socketPath
        self.observers = (1...SoakCommand.observerCount).map {
            Observer(number: $0, socketPath: socketPath, started: started)
        }
        let observerThreads = self.observers.map { observer in SoakThread { observer.run() } }
        let connectDeadline = monotonicNanoseconds() + 10_000_000_000
        while !self.observers.allSatisfy(\.isConnected) && monotonicNanoseconds() < connectDeadline {
            usleep(10_000)
        }

        let deadline = started + Int64(self.seconds) * 1_000_000_000
        let tally = self.tally
        let requests = self.requests
        let seed = self.seed
        let workers = (1...self.options.clients).map { number in
            SoakThread(niceness: Self.hostileNiceness) {
                var client = HostileClient(
                    number: number, socketPath: socketPath, deadline: deadline, tally: tally, requests: requests,
                    seed: seed)
                client.run()
                tally.finishedClients.add(1, ordering: .releasing)
            }
        }

        var peak = 0
        var nextReport = started + Self.progressSeconds * 1_000_000_000
        while tally.finishedClients.load(ordering: .acquiring) < self.options.clients {
            usleep(250_000)
            if let memory = try? ResidentMemory(pid: self.options.pid) {
                peak = max(peak, memory.residentKilobytes)
            }
            if !SoakCommand.isAlive(self.options.pid) {
                tally.stopEarly.store(true, ordering: .relaxed)
            }
            if monotonicNanoseconds() >= nextReport {
                nextReport += Self.progressSeconds * 1_000_000_000
                self.reportProgress(since: started, rssKilobytes: peak)
            }
        }
        for worker in workers { worker.join() }
        self.ranSeconds = Double(monotonicNanoseconds() - started) / 1e9
        for observer in self.observers { observer.stop() }
        for thread in observerThreads { thread.join() }
        return peak
    }

    /// The observers' round trips, shortest first.
    private var roundTrips: [Int64] {
        self.observers.flatMap(\.record.samples).sorted()
    }

    /// One line on stderr: how far the storm is, and how it goes.
    private func reportProgress(since started: Int64, rssKilobytes: Int) {
        let worst = self.roundTrips.last ?? 0
        var line =
            "soak: \(self.name) \((monotonicNanoseconds() - started) / 1_000_000_000) s: "
            + "\(self.tally.commands.load(ordering: .relaxed)) commands, "
            + "\(self.tally.connections.load(ordering: .relaxed)) connections, "
            + "\(self.tally.problems.count) problems, worst observer round trip \(Self.milliseconds(worst)), "
            + "peak RSS \(rssKilobytes / 1024) MB\n"
        line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Prints the figures of the run.
    func printFigures(start: ResidentMemory, peakKilobytes: Int, after: ResidentMemory?) {
        let samples = self.roundTrips
        let tally = self.tally
        print("hostile clients ran \(Self.tenths(self.ranSeconds)) s")
        print("commands sent       \(tally.commands.load(ordering: .relaxed))")
        print(
            "connections made    \(tally.connections.load(ordering: .relaxed)) "
                + "(\(tally.refusals.load(ordering: .relaxed)) refused at the client limit)")
        print("bytes sent          \(Self.tenths(Double(tally.bytesSent.load(ordering: .relaxed)) / 1e6)) MB")
        print("answers checked     \(tally.answers.load(ordering: .relaxed))")
        print("longest queue       \(self.observers.map(\.record.longestQueue).max() ?? 0) songs")
        print("flood push-backs    \(tally.pushBacks.load(ordering: .relaxed)) (the daemon stopped reading a flooder)")
        if samples.isEmpty {
            print("observer round trips: none")
        } else {
            let worst = self.observers.map(\.record.worst).max { $0.nanoseconds < $1.nanoseconds }!
            print(
                "observer round trips \(samples.count): p50 \(Self.milliseconds(Self.percentile(samples, 0.5))), "
                    + "p99 \(Self.milliseconds(Self.percentile(samples, 0.99))), "
                    + "worst \(Self.milliseconds(worst.nanoseconds)) (\(worst.request) at \(Self.tenths(worst.at)) s)")
        }
        let afterText = after.map { Self.megabytes($0) } ?? "unknown"
        print(
            "RSS                 start \(Self.megabytes(start)), peak \(Self.tenths(Double(peakKilobytes) / 1024)) MB, "
                + "after \(afterText)")
    }

    /// Adds the storm's own checks: the observers' round trips and answers, the hostile clients' answers.
    func judge(into verdicts: inout SoakVerdicts) {
        let worst = self.roundTrips.last ?? 0
        let failures = self.observers.flatMap(\.record.failures)
        verdicts.check(
            !self.roundTrips.isEmpty && worst <= self.options.observerLimitNanoseconds && failures.isEmpty,
            "\(self.name): every observer round trip took at most "
                + "\(Self.milliseconds(self.options.observerLimitNanoseconds)) and was answered rightly "
                + "(worst \(Self.milliseconds(worst)))", details: failures)
        let problems = self.tally.problems
        verdicts.check(
            problems.count == 0,
            "\(self.name): hostile clients got every answer they were owed, in step and in time "
                + "(\(problems.count) problems)", details: problems.kept)
    }

    private static func percentile(_ sorted: [Int64], _ fraction: Double) -> Int64 {
        sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    private static func milliseconds(_ nanoseconds: Int64) -> String {
        "\(self.tenths(Double(nanoseconds) / 1e6)) ms"
    }

    /// `12.3 MB (anon 4.5)`: the RSS and the anonymous part of it.
    private static func megabytes(_ memory: ResidentMemory) -> String {
        "\(self.tenths(Double(memory.residentKilobytes) / 1024)) MB "
            + "(anon \(self.tenths(Double(memory.anonymousKilobytes) / 1024)))"
    }

    /// `value` with one decimal: `12.3`, `-0.5`.
    static func tenths(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }
}
