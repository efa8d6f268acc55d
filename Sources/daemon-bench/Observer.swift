// The well-behaved client beside the hostile ones: what a user's player would feel while they rage.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sends `status` every 100 ms on one connection, and `setvol` every tenth time, timing each round
/// trip and checking each answer, until told to stop.
final class Observer: Sendable {
    /// Time between the starts of two requests.
    static let intervalNanoseconds: Int64 = 100_000_000

    /// What an observer saw.
    struct Record {
        /// Every round trip, in nanoseconds, in the order sent.
        var samples: [Int64] = []
        /// Wrong answers and lost connections, word for word (the first few).
        var failures: [String] = []
        /// The request that took longest, and when (seconds into the soak).
        var worst: (nanoseconds: Int64, request: String, at: Double) = (0, "", 0)
        /// The longest queue `status` showed.
        var longestQueue = 0
    }

    let number: Int
    let socketPath: String
    private let started: Int64
    private let stopping = Atomic<Bool>(false)
    private let connected = Atomic<Bool>(false)
    private let state = Mutex(Record())

    init(number: Int, socketPath: String, started: Int64) {
        self.number = number
        self.socketPath = socketPath
        self.started = started
    }

    /// What the observer has seen so far.
    var record: Record { self.state.withLock { $0 } }

    /// Whether the observer holds a greeted connection (the hostile clients start after that, so that
    /// the client limit never refuses an observer).
    var isConnected: Bool { self.connected.load(ordering: .acquiring) }

    /// Asks `run()` to return after its current request.
    func stop() {
        self.stopping.store(true, ordering: .releasing)
    }

    /// Observes until `stop()`; runs on its own thread.
    func run() {
        var connection = self.connect()
        var tick = 0
        var next = monotonicNanoseconds()
        while !self.stopping.load(ordering: .acquiring) {
            guard let open = connection else {
                usleep(100_000)
                connection = self.connect()
                continue
            }
            tick += 1
            let request = tick % 10 == 0 ? "setvol \(tick % 20 == 0 ? 40 : 60)" : "status"
            let start = monotonicNanoseconds()
            let answer = open.request(request + "\n", keepingLines: true)
            let took = monotonicNanoseconds() - start
            let failure = Self.check(answer, of: request)
            self.state.withLock { record in
                record.samples.append(took)
                if took > record.worst.nanoseconds {
                    record.worst = (took, request, Double(start - self.started) / 1e9)
                }
                if case .ok(let lines, _) = answer, let line = lines.first(where: { $0.hasPrefix("playlistlength: ") }),
                    let length = Int(line.dropFirst("playlistlength: ".count))
                {
                    record.longestQueue = max(record.longestQueue, length)
                }
                if let failure, record.failures.count < 10 {
                    record.failures.append("observer \(self.number): \(failure)")
                }
            }
            if case .broken = answer {
                connection = nil
                continue
            }
            next += Self.intervalNanoseconds
            let now = monotonicNanoseconds()
            if next > now {
                usleep(UInt32((next - now) / 1000))
            } else {
                next = now
            }
        }
    }

    private func connect() -> Connection? {
        let failure: String
        do throws(SystemCallError) {
            let connection = try Connection(path: self.socketPath, timeoutSeconds: 10)
            switch connection.readAnswer() {
            case .ok(_, let greeting) where greeting.hasPrefix("OK MPD "):
                self.connected.store(true, ordering: .releasing)
                return connection
            case .ok(_, let line), .ack(let line): failure = "'\(line)' instead of the greeting"
            case .broken(let reason): failure = "no greeting: \(reason)"
            }
        } catch {
            failure = "cannot connect: \(error)"
        }
        self.state.withLock { record in
            if record.failures.count < 10 { record.failures.append("observer \(self.number): \(failure)") }
        }
        return nil
    }

    /// What is wrong with an answer to `status` or `setvol`, if anything.
    private static func check(_ answer: Answer, of request: String) -> String? {
        switch answer {
        case .ok(let lines, _):
            if request == "status" && !lines.contains(where: { $0.hasPrefix("state: ") }) {
                return "status without a state: \(lines)"
            }
            if request != "status" && !lines.isEmpty {
                return "\(request) answered with \(lines)"
            }
            return nil
        case .ack(let line):
            return "\(request) was refused: \(line)"
        case .broken(let reason):
            return "\(request) got no answer: \(reason)"
        }
    }
}
