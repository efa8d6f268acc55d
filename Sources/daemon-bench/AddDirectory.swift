// The `add-dir` mode: how long a daemon takes to answer `add DIRECTORY` for a large tree, and how long
// another client waits for its own commands meanwhile: a walk must hold nobody else up.

import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `daemon-bench add-dir SOCKET URI EXPECTED`: clears the queue and adds URI with one `add`, twice:
/// first with no other client, then while a second client sends `repeat 0` and `status` in turn; each
/// time checks that the queue then holds EXPECTED songs. Prints `alone_ms`, `add_ms` (the add beside
/// the other client), and the other client's `others_requests`, `others_p50_us` and `others_max_us`
/// during it.
///
/// Both, because they measure different things: a daemon that serves one client at a time (mpd) makes
/// the other client wait out the add and has both cores for it, while one that goes on serving it
/// (playerd) shares them with it.
enum AddDirectoryCommand: BenchCommand {
    static let name = "add-dir"
    static let usage = "daemon-bench add-dir SOCKET URI EXPECTED"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 3 else { throw .usage(self.usage) }
        let expected = try integerArgument(arguments[2], named: "EXPECTED", atLeast: 0, usage: self.usage)
        let adder = try openSession(arguments[0])

        let alone = try self.timedAdd(adder, uri: arguments[1], expected: expected, beside: nil)
        let other = try OtherClient(socket: arguments[0], requests: ["repeat 0\n", "status\n"])
        let elapsed = try self.timedAdd(adder, uri: arguments[1], expected: expected, beside: other)
        let waits = try other.stop()

        print("alone_ms \(Double(alone) / 1e6)")
        print("add_ms \(Double(elapsed) / 1e6)")
        print("others_requests \(waits.count)")
        print("others_p50_us \(Double(waits[waits.count / 2]) / 1000)")
        print("others_max_us \(Double(waits.last!) / 1000)")
    }

    /// Clears the queue, then times one `add` of `uri` to its answer (stopping `other` as it comes) and
    /// checks the queue's length; returns the nanoseconds.
    private static func timedAdd(
        _ adder: Connection, uri: String, expected: Int, beside other: OtherClient?
    ) throws(BenchFailure) -> Int64 {
        if let failure = adder.request("clear\n").failure(of: "clear") { throw .daemon(failure) }
        let started = monotonicNanoseconds()
        let answer = adder.request("add \(quoted(uri))\n")
        let elapsed = monotonicNanoseconds() - started
        other?.finish()
        if let failure = answer.failure(of: "add") { throw .daemon(failure) }
        guard case .ok(let lines, _) = adder.request("status\n", keepingLines: true),
            let line = lines.first(where: { $0.hasPrefix("playlistlength: ") }),
            let length = Int(line.dropFirst("playlistlength: ".count))
        else {
            throw .daemon("status after the add has no playlistlength")
        }
        guard length == expected else { throw .daemon("the add queued \(length) songs, not \(expected)") }
        return elapsed
    }
}

/// A client on a thread of its own that sends its requests (`repeat 0` and `status`, say) in turn,
/// timing each, until stopped.
final class OtherClient: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let waits = Mutex<[Int64]>([])
    private let problem = Mutex<String?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Connects and starts sending; returns once the first answer came, so the add starts beside it.
    init(socket: String, requests: [String]) throws(BenchFailure) {
        let ready = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            defer { self.finished.signal() }
            let connection: Connection
            do throws(BenchFailure) {
                connection = try openSession(socket)
            } catch {
                self.problem.withLock { $0 = error.description }
                ready.signal()
                return
            }
            var first = true
            var samples: [Int64] = []
            while !self.stopping.load(ordering: .relaxed) {
                for request in requests {
                    let start = monotonicNanoseconds()
                    let answer = connection.request(request)
                    samples.append(monotonicNanoseconds() - start)
                    if let failure = answer.failure(of: request) {
                        self.problem.withLock { $0 = failure }
                        self.stopping.store(true, ordering: .relaxed)
                    }
                }
                if first {
                    first = false
                    ready.signal()
                }
            }
            let taken = samples
            self.waits.withLock { $0 = taken }
        }
        ready.wait()
        if let problem = self.problem.withLock({ $0 }) {
            throw .daemon("the other client: \(problem)")
        }
    }

    /// Tells the client to stop after its round trip under way.
    func finish() {
        self.stopping.store(true, ordering: .relaxed)
    }

    /// Stops the client and returns its round trips, in nanoseconds, shortest first.
    func stop() throws(BenchFailure) -> [Int64] {
        self.finish()
        self.finished.wait()
        if let problem = self.problem.withLock({ $0 }) {
            throw .daemon("the other client: \(problem)")
        }
        let sorted = self.waits.withLock { $0.sorted() }
        guard !sorted.isEmpty else { throw .daemon("the other client sent nothing") }
        return sorted
    }
}
