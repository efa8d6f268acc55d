import ControlProtocol
import NIOCore
import Synchronization

/// Fans changes out to every connected client, on each client's own event loop, so that `idle`
/// answers when something it waits for happens. MPD's rule: a client that is not idling keeps the
/// changes it missed and gets them at its next `idle`.
///
/// One delivery per event loop is on its way at a time, and changes that come meanwhile join it. A
/// task per client per change (fifty clients, and the changes busy clients make, hundreds a second)
/// filled ticks of the event loop with up to 10,000 tasks, a second long, and every client waited.
final class ChangeHub: Sendable {
    typealias Listener = @Sendable (Set<IdleSubsystem>) -> Void

    private struct State {
        var listeners: [ObjectIdentifier: (eventLoop: EventLoop, listener: Listener)] = [:]
        /// The changes of the delivery on its way to each event loop, by the loop's identity.
        var undelivered: [ObjectIdentifier: Set<IdleSubsystem>] = [:]
    }

    private let state = Mutex(State())

    /// Registers `listener` under `key`; it runs on `eventLoop`.
    func register(_ key: ObjectIdentifier, on eventLoop: EventLoop, _ listener: @escaping Listener) {
        self.state.withLock { $0.listeners[key] = (eventLoop, listener) }
    }

    /// Forgets the listener under `key`.
    func unregister(_ key: ObjectIdentifier) {
        _ = self.state.withLock { $0.listeners.removeValue(forKey: key) }
    }

    /// The number of registered clients.
    var count: Int { self.state.withLock { $0.listeners.count } }

    /// Tells every client what changed: at once, or with the delivery already on its way.
    func broadcast(_ changes: Set<IdleSubsystem>) {
        guard !changes.isEmpty else { return }
        let starting: [EventLoop] = self.state.withLock { state in
            var starting: [EventLoop] = []
            for (eventLoop, _) in state.listeners.values {
                let loop = ObjectIdentifier(eventLoop)
                if let waiting = state.undelivered[loop] {
                    state.undelivered[loop] = waiting.union(changes)
                } else {
                    state.undelivered[loop] = changes
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
            let changes = state.undelivered.removeValue(forKey: loop) ?? []
            let listeners = state.listeners.values.filter { ObjectIdentifier($0.eventLoop) == loop }.map(\.listener)
            return (changes, listeners)
        }
        for listener in listeners {
            listener(changes)
        }
    }
}
