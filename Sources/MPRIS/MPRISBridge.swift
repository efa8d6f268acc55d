import Dispatch
import Logging
import PlayerClient
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why MPRIS could not be exported.
public enum MPRISError: Error, CustomStringConvertible, Sendable {
    /// There is no session bus to export on (no `DBUS_SESSION_BUS_ADDRESS`, no `$XDG_RUNTIME_DIR/bus`,
    /// or nothing listens there): the reason sd-bus gave.
    case noSessionBus(String)
    /// An sd-bus call failed: its name and the errno it returned.
    case bus(function: String, errno: Int32)

    public var description: String {
        switch self {
        case .noSessionBus(let reason): "no session bus (\(reason))"
        case .bus(let function, let code): "\(function) failed: \(systemErrorText(code))"
        }
    }
}

/// Exports MPRIS 2.2 (`org.mpris.MediaPlayer2` and `.Player` at `/org/mpris/MediaPlayer2`) on the
/// session bus for an MPD-protocol server — playerd in-process over a socketpair, or any playerd (or
/// MPD) socket — so that the desktop's media keys, widgets and `playerctl` control it. It is a client
/// of the protocol like any other: it sees changes through `idle`, whoever made them.
///
/// All of it runs on one thread of its own (see MPRISExporter.swift). The server may come and go:
/// while it is away the player shows as stopped with nothing to play, and the bridge reconnects.
public final class MPRISBridge: Sendable {
    /// What to export for, and how to reach it.
    public struct Configuration: Sendable {
        /// The well-known name to own; `.instancePID` is appended when another process owns it.
        public var busName = "org.mpris.MediaPlayer2.playerd"
        /// The server in log lines and errors: "playerd at /run/playerd/socket".
        public var serverName: String
        /// Where covers are written for `mpris:artUrl` (`$XDG_RUNTIME_DIR`); nil for no art.
        public var runtimeDirectory: String?
        /// Opens a new connection to the server (called twice per connection: idle and commands).
        public var connect: @Sendable () throws -> MPDConnection

        /// A configuration with the default bus name and the runtime directory from the environment.
        public init(serverName: String, connect: @escaping @Sendable () throws -> MPDConnection) {
            self.serverName = serverName
            self.connect = connect
            self.runtimeDirectory = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        }
    }

    private let configuration: Configuration
    private let logger: Logger
    private let thread = Mutex<pthread_t?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let failure = Mutex<MPRISError?>(nil)
    /// The wake-up pipe's ends: `stop()` writes, the MPRIS thread polls the other end.
    private let wakeUpReader: Int32
    private let wakeUpWriter: Int32

    /// Prepares the bridge; nothing runs before `start()`.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        }
        self.wakeUpReader = ends[0]
        self.wakeUpWriter = ends[1]
    }

    deinit {
        self.stop()
        close(self.wakeUpReader)
        close(self.wakeUpWriter)
    }

    /// Starts the MPRIS thread and returns the bus name it owns once the object is exported. Throws,
    /// with the thread ended, when there is no session bus or the name cannot be had. The server need
    /// not be up yet.
    @discardableResult
    public func start() throws(MPRISError) -> String {
        let opened = Mutex<Result<String, MPRISError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = startThread { [self] in
            let exporter = MPRISExporter(
                configuration: self.configuration, logger: self.logger, wakeUp: self.wakeUpReader)
            do throws(MPRISError) {
                let name = try exporter.openBus()
                opened.withLock { $0 = .success(name) }
                ready.signal()
                let failure = exporter.run { self.stopping.load(ordering: .acquiring) }
                self.failure.withLock { $0 = failure }
            } catch {
                opened.withLock { $0 = .failure(error) }
                ready.signal()
            }
            exporter.close()
            self.finished.signal()
        }
        ready.wait()
        switch opened.withLock({ $0 }) {
        case .success(let name)?:
            self.thread.withLock { $0 = thread }
            return name
        case .failure(let error)?:
            pthread_join(thread, nil)
            throw error
        case nil:
            preconditionFailure("the MPRIS thread signalled without a result")
        }
    }

    /// Stops exporting: the thread releases the bus name and the server connections and ends. Waits
    /// for it; safe to call more than once.
    public func stop() {
        guard !self.stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = write(self.wakeUpWriter, &one, 1)
        if let thread = self.thread.withLock({ $0.take() }) {
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)  // the last reference went on the MPRIS thread: it ends by itself
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Blocks until the thread ends: after `stop()`, or when the bus connection failed (`failure`).
    public func waitUntilFinished() {
        self.finished.wait()
        self.finished.signal()
    }

    /// Why the thread ended on its own (the session bus went away), if it did.
    public var busFailure: MPRISError? { self.failure.withLock { $0 } }
}

/// Starts `body` on a new POSIX thread with the default stack size (Foundation's Thread with a
/// custom stack size corrupted the heap in this project: see the library's threads).
private func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var handle = pthread_t()
    let status = pthread_create(
        &handle, nil,
        { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    return handle
}
