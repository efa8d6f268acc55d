// What every hostile client adds up while the soak runs, shared by all their threads.

import Synchronization

/// The soak's counters and the problems clients saw, safe to update from any thread.
final class SoakTally: Sendable {
    /// Request lines sent (each line of a command list counts).
    let commands = Atomic<Int>(0)
    /// Connections opened, refused ones included.
    let connections = Atomic<Int>(0)
    /// Connections the daemon refused for its client limit.
    let refusals = Atomic<Int>(0)
    /// Bytes sent to the daemon.
    let bytesSent = Atomic<Int>(0)
    /// Answers read to the end (`OK` or `ACK`).
    let answers = Atomic<Int>(0)
    /// Writes that stalled because the daemon stopped reading (what a flooding client expects).
    let pushBacks = Atomic<Int>(0)
    /// Hostile clients that have finished.
    let finishedClients = Atomic<Int>(0)
    /// Set when the daemon is gone: the clients stop before the deadline.
    let stopEarly = Atomic<Bool>(false)

    /// The most problems kept word for word; beyond it they are only counted.
    static let keptProblems = 20

    private let problemLog = Mutex<(count: Int, kept: [String])>((0, []))

    /// Counts one line of `bytes` bytes (or a batch of `lines` lines) as sent.
    func sent(bytes: Int, lines: Int = 1) {
        self.bytesSent.add(bytes, ordering: .relaxed)
        self.commands.add(lines, ordering: .relaxed)
    }

    /// Notes something the daemon did wrong: no answer in time, an unexpected hang-up, a wrong answer.
    func problem(_ message: String) {
        self.problemLog.withLock { log in
            log.count += 1
            if log.kept.count < Self.keptProblems {
                log.kept.append(message)
            }
        }
    }

    /// How many problems were noted, and the first of them.
    var problems: (count: Int, kept: [String]) {
        self.problemLog.withLock { $0 }
    }
}
