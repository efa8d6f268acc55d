import ControlProtocol
import NIOCore
import Synchronization

/// Fans changes out to every connected client, on each client's own event loop, so that `idle`
/// answers when something it waits for happens. MPD's rule: a client that is not idling keeps the
/// changes it missed and gets them at its next `idle`.
final class ChangeHub: Sendable {
    typealias Listener = @Sendable (Set<IdleSubsystem>) -> Void

    private let listeners = Mutex<[ObjectIdentifier: (EventLoop, Listener)]>([:])

    /// Registers `listener` under `key`; it runs on `eventLoop`.
    func register(_ key: ObjectIdentifier, on eventLoop: EventLoop, _ listener: @escaping Listener) {
        self.listeners.withLock { $0[key] = (eventLoop, listener) }
    }

    /// Forgets the listener under `key`.
    func unregister(_ key: ObjectIdentifier) {
        _ = self.listeners.withLock { $0.removeValue(forKey: key) }
    }

    /// The number of registered clients.
    var count: Int { self.listeners.withLock { $0.count } }

    /// Tells every client what changed.
    func broadcast(_ changes: Set<IdleSubsystem>) {
        guard !changes.isEmpty else { return }
        for (eventLoop, listener) in self.listeners.withLock({ Array($0.values) }) {
            eventLoop.execute { listener(changes) }
        }
    }
}
