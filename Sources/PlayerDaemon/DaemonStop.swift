import Synchronization

/// How MPD's `kill` reaches the daemon: `Daemon.runUntilSignalled` installs what stops it (the same
/// orderly end as SIGTERM: the state saved, the socket removed); a daemon run another way (embedded in
/// a test) has none, and `kill` then only closes the client's connection.
enum DaemonStop {
    private static let stopper = Mutex<(@Sendable () -> Void)?>(nil)

    /// Sets what `request` runs; nil removes it.
    static func install(_ stopper: (@Sendable () -> Void)?) {
        Self.stopper.withLock { $0 = stopper }
    }

    /// Asks the daemon to stop; false when nothing was installed to stop it.
    @discardableResult
    static func request() -> Bool {
        guard let stop = Self.stopper.withLock({ $0 }) else { return false }
        stop()
        return true
    }
}
