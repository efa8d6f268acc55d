import NIOCore

/// Takes turns between the clients that have more to run than one turn allows
/// (`ClientSession.commandsPerTurn`), and between them and the event loop's sockets.
///
/// NIO runs every task that is ready before it polls its sockets again. A client that put its next
/// turn in a task of its own would come straight back, and two busy clients (each pipelining a
/// megabyte of `ping`s) would keep the loop from reading anyone else's request for as long as they
/// last. Here the waiting turns run together in one task, one turn each, and that task comes back
/// only after a pause, once the loop has polled its sockets. Lives on the event loop.
final class TurnTaker {
    /// The pause between two rounds, in which the loop polls its sockets.
    static let pause = TimeAmount.microseconds(500)

    private let eventLoop: EventLoop
    private var waiting: [() -> Void] = []
    private var isScheduled = false
    private var isRunning = false

    init(eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `turn` in the next round.
    func enqueue(_ turn: @escaping () -> Void) {
        self.waiting.append(turn)
        if !self.isRunning {
            self.scheduleRound()
        }
    }

    private func scheduleRound() {
        guard !self.isScheduled else { return }
        self.isScheduled = true
        self.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) { self.runRound() }
    }

    private func runRound() {
        self.isScheduled = false
        self.isRunning = true
        let turns = self.waiting
        self.waiting.removeAll(keepingCapacity: true)
        for turn in turns {
            turn()
        }
        self.isRunning = false
        // The next round is timed from the end of this one, however long it took, so that the loop
        // always polls its sockets in between.
        if !self.waiting.isEmpty {
            self.scheduleRound()
        }
    }
}
