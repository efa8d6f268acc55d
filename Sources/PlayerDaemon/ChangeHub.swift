import ControlProtocol
import NIOCore
import Synchronization

/// Fans changes out to the connected clients, on each client's own event loop, so that `idle`
/// answers when something it waits for happens: the daemon's changes (database, update, stored
/// playlists, partitions) to every client, a partition's (its player, mixer, queue, options, outputs)
/// to the clients in it. MPD's rule: a client that is not idling keeps the changes it missed and gets
/// them at its next `idle`.
///
/// One delivery per event loop is on its way at a time, and changes that come meanwhile join it. A
/// task per client per change (fifty clients, and the changes busy clients make, hundreds a second)
/// filled ticks of the event loop with up to 10,000 tasks, a second long, and every client waited.
final class ChangeHub: Sendable {
    typealias Listener = @Sendable (Set<IdleSubsystem>) -> Void

    private struct State {
        var listeners: [ObjectIdentifier: (eventLoop: EventLoop, partition: String, listener: Listener)] = [:]
        /// The changes of the delivery on its way to each event loop, by the loop's identity: the
        /// daemon's (under nil) and each partition's.
        var undelivered: [ObjectIdentifier: [String?: Set<IdleSubsystem>]] = [:]
    }

    private let state = Mutex(State())

    /// Registers `listener` under `key`, a client of `partition`; it runs on `eventLoop`.
    func register(
        _ key: ObjectIdentifier, on eventLoop: EventLoop, partition: String = PartitionRegistry.defaultName,
        _ listener: @escaping Listener
    ) {
        self.state.withLock { $0.listeners[key] = (eventLoop, partition, listener) }
    }

    /// From now on, the listener under `key` hears of `partition`'s changes instead of its old one's.
    func move(_ key: ObjectIdentifier, to partition: String) {
        self.state.withLock { $0.listeners[key]?.partition = partition }
    }

    /// The number of clients in `partition`.
    func count(in partition: String) -> Int {
        self.state.withLock { $0.listeners.values.count { $0.partition == partition } }
    }

    /// Forgets the listener under `key`.
    func unregister(_ key: ObjectIdentifier) {
        _ = self.state.withLock { $0.listeners.removeValue(forKey: key) }
    }

    /// The number of registered clients.
    var count: Int { self.state.withLock { $0.listeners.count } }

    /// Tells every client what changed (or, given a `partition`, the clients in it): at once, or with
    /// the delivery already on its way.
    func broadcast(_ changes: Set<IdleSubsystem>, partition: String? = nil) {
        guard !changes.isEmpty else { return }
        let starting: [EventLoop] = self.state.withLock { state in
            var starting: [EventLoop] = []
            for (eventLoop, listening, _) in state.listeners.values where partition == nil || partition == listening {
                let loop = ObjectIdentifier(eventLoop)
                if let waiting = state.undelivered[loop] {
                    state.undelivered[loop] = waiting.merging([partition: changes]) { $0.union($1) }
                } else {
                    state.undelivered[loop] = [partition: changes]
                    starting.append(eventLoop)
                }
            }
            return starting
        }
        for eventLoop in starting {
            eventLoop.execute { self.deliver(on: eventLoop) }
        }
    }

    /// Hands the changes gathered for `eventLoop` to its clients; runs on that loop.
    private func deliver(on eventLoop: EventLoop) {
        let loop = ObjectIdentifier(eventLoop)
        let (changes, listeners) = self.state.withLock { state in
            let changes = state.undelivered.removeValue(forKey: loop) ?? [:]
            let listeners = state.listeners.values.filter { ObjectIdentifier($0.eventLoop) == loop }.map {
                ($0.partition, $0.listener)
            }
            return (changes, listeners)
        }
        let everyone = changes[String?.none] ?? []
        for (partition, listener) in listeners {
            let heard = everyone.union(changes[partition] ?? [])
            if !heard.isEmpty {
                listener(heard)
            }
        }
    }
}
