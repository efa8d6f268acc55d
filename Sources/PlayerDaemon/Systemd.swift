import Dispatch
import Logging
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What systemd hands a service through its environment, and the datagrams it expects back:
/// `READY=1` once the socket listens, `WATCHDOG=1` while the daemon is alive, `STATUS=` lines.
/// No libsystemd: the protocol is one datagram to `$NOTIFY_SOCKET`.
public struct Systemd: Sendable {
    /// Where notifications go, when systemd asked for them.
    public let notifySocket: String?
    /// How often systemd wants `WATCHDOG=1`, in microseconds, when it set a watchdog for this process.
    public let watchdogMicroseconds: Int?
    /// Sockets systemd opened and passed (socket activation), from fd 3 on.
    public let listeningDescriptors: [CInt]

    /// Reads the environment systemd set, and unsets the variables meant for this process only, so
    /// that children do not take them for their own.
    public static func fromEnvironment() -> Systemd {
        let pid = getpid()
        func value(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }
        }
        var descriptors: [CInt] = []
        if let listenPID = value("LISTEN_PID").flatMap({ Int32($0) }), listenPID == pid,
            let count = value("LISTEN_FDS").flatMap({ Int32($0) }), count > 0
        {
            descriptors = (0..<count).map { 3 + $0 }
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
        }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        var watchdog: Int?
        if let microseconds = value("WATCHDOG_USEC").flatMap({ Int($0) }), microseconds > 0 {
            let watchdogPID = value("WATCHDOG_PID").flatMap { Int32($0) }
            if watchdogPID == nil || watchdogPID == pid {
                watchdog = microseconds
            }
        }
        return Systemd(
            notifySocket: value("NOTIFY_SOCKET"), watchdogMicroseconds: watchdog, listeningDescriptors: descriptors)
    }

    /// Sends one notification (`READY=1`, `WATCHDOG=1`, `STATUS=...`); false when it could not.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard var path = self.notifySocket, !path.isEmpty else { return false }
        if path.hasPrefix("@") {
            // An abstract socket: its name starts with a NUL byte.
            path = "\0" + path.dropFirst()
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let payload = Array(message.utf8)
        let sent = withUnixAddress(path) { address, length in
            payload.withUnsafeBytes {
                sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length)
            }
        }
        return sent == payload.count
    }
}

/// Pings systemd's watchdog only while both halves of the daemon are alive: the audio thread's loop
/// keeps turning (its heartbeat moves) and the control loop answers. A stuck audio thread stops the
/// pings, and systemd restarts the service.
final class Watchdog: Sendable {
    private let systemd: Systemd
    private let engine: AudioEngine
    private let controlAlive: @Sendable () -> Bool
    private let logger: Logger
    private let queue = DispatchQueue(label: "playerd.watchdog")
    private let interval: DispatchTimeInterval
    private let stopped = Atomic<Bool>(false)
    private let lastBeat: Atomic<UInt64>
    private let warned = Atomic<Bool>(false)

    init?(systemd: Systemd, engine: AudioEngine, logger: Logger, controlAlive: @escaping @Sendable () -> Bool) {
        guard let microseconds = systemd.watchdogMicroseconds else { return nil }
        self.systemd = systemd
        self.engine = engine
        self.controlAlive = controlAlive
        self.logger = logger
        // systemd's advice: ping at half the interval.
        self.interval = .microseconds(max(microseconds / 2, 1000))
        self.lastBeat = Atomic(engine.heartbeat)
        engine.wake()
        self.queue.asyncAfter(deadline: .now() + self.interval) { [self] in self.check() }
    }

    private func check() {
        guard !self.stopped.load(ordering: .relaxed) else { return }
        let beat = self.engine.heartbeat
        let audioAlive = beat != self.lastBeat.exchange(beat, ordering: .relaxed)
        // An idle audio thread sleeps until work comes: give it some, so that a live one has turned
        // its loop by the next check and only a stuck one has not.
        self.engine.wake()
        if audioAlive && self.controlAlive() {
            self.systemd.notify("WATCHDOG=1")
            self.warned.store(false, ordering: .relaxed)
        } else if !self.warned.exchange(true, ordering: .relaxed) {
            let stuck = audioAlive ? "the control loop" : "the audio thread"
            self.logger.error("\(stuck) is stuck: no longer pinging systemd's watchdog")
        }
        self.queue.asyncAfter(deadline: .now() + self.interval) { [self] in self.check() }
    }

    func stop() {
        self.stopped.store(true, ordering: .relaxed)
    }
}
