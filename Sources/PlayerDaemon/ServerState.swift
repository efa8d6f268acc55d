import ControlProtocol
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a client reached playerd, which decides what it may do before it sends `password`.
enum ClientOrigin: Sendable, Hashable {
    /// A socket file: its mode (and the unit's group) already decided who may connect, so the client
    /// may do everything (the peer-uid rules then guard absolute paths).
    case socketFile
    /// An abstract socket, which any local user can reach: the daemon's own user and root may do
    /// everything, other users what the default permissions allow.
    case abstractSocket
    /// TCP from `host`: the default permissions, and never an absolute local path.
    case network(host: String)

    /// What a client from here may do before any `password`; `uid` is its peer's, for Unix sockets.
    func initialPermission(uid: UInt32?, configuration: DaemonConfiguration) -> Permission {
        switch self {
        case .socketFile:
            return .all
        case .abstractSocket:
            if let uid, uid == 0 || uid == geteuid() {
                return .all
            }
            return configuration.effectiveDefaultPermissions
        case .network:
            return configuration.effectiveDefaultPermissions
        }
    }

    /// The host a network client came from; nil for local clients.
    var remoteHost: String? {
        if case .network(let host) = self { return host }
        return nil
    }
}

/// Counts connected clients against the limits, keeps track of wrong passwords, and holds what clients
/// share on the event loop.
///
/// Local and network clients have separate places, so a flood over TCP never locks out `playerctl`; and
/// one network host may hold at most a quarter of the network places (at least 4), so a flood from one
/// host leaves room for the others.
final class ServerState: Sendable {
    private let localClients = Atomic<Int>(0)
    /// Network clients connected, by host.
    private let networkClients = Mutex<[String: Int]>([:])
    private let trimmer: HeapTrimmer
    private let passwords = Mutex(PasswordGuard())
    /// When a refused client was last logged, and how many were refused since without a line.
    private let refusals = Mutex<(lastLogged: ContinuousClock.Instant?, unlogged: Int)>((nil, 0))

    /// Refusals are logged at most once in this span: a flood of 1,000 connections is one line.
    static let refusalLogInterval = Duration.seconds(10)
    let limit: Int
    /// The turns of clients with more to run than one turn allows.
    let turns: NIOLoopBoundBox<TurnTaker>

    init(limit: Int, eventLoop: EventLoop, releasingMemory: @escaping @Sendable () -> Void = {}) {
        self.limit = limit
        self.trimmer = HeapTrimmer(releasing: releasingMemory)
        self.turns = .makeBoxSendingValue(TurnTaker(eventLoop: eventLoop), eventLoop: eventLoop)
    }

    /// The most network clients one host may have connected at once.
    var limitPerHost: Int { max(4, self.limit / 4) }

    /// Takes a place if one is free; otherwise says why not.
    func admit(_ origin: ClientOrigin) -> String? {
        guard let host = origin.remoteHost else {
            while true {
                let current = self.localClients.load(ordering: .relaxed)
                guard current < self.limit else { return "too many clients: the limit is \(self.limit)" }
                if self.localClients.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
                    .exchanged
                {
                    return nil
                }
            }
        }
        return self.networkClients.withLock { counts -> String? in
            // At most `limit` hosts are in the table, so the sum is a short loop.
            guard counts.values.reduce(0, +) < self.limit else {
                return "too many network clients: the limit is \(self.limit)"
            }
            let fromHost = counts[host, default: 0]
            guard fromHost < self.limitPerHost else {
                return "too many clients from \(host): the limit is \(self.limitPerHost)"
            }
            counts[host] = fromHost + 1
            return nil
        }
    }

    /// Gives a place back, and the memory the client used to the system soon.
    func leave(_ origin: ClientOrigin) {
        if let host = origin.remoteHost {
            self.networkClients.withLock { counts in
                let left = counts[host, default: 1] - 1
                counts[host] = left > 0 ? left : nil
            }
        } else {
            self.localClients.subtract(1, ordering: .relaxed)
        }
        self.trimmer.clientLeft()
    }

    /// A client sent something (the heap is not trimmed while they do).
    func noteActivity() {
        self.trimmer.noteActivity()
    }

    /// Clients connected now, local and network.
    var connected: Int {
        self.localClients.load(ordering: .relaxed) + self.networkClients.withLock { $0.values.reduce(0, +) }
    }

    /// Logs a refused client, unless one was logged within `refusalLogInterval`: then it is counted, and
    /// the next line says how many there were.
    func logRefusal(_ reason: String, logger: Logger) {
        let now = ContinuousClock.now
        let unlogged = self.refusals.withLock { state -> Int? in
            if let last = state.lastLogged, now - last < Self.refusalLogInterval {
                state.unlogged += 1
                return nil
            }
            defer { state = (now, 0) }
            return state.unlogged
        }
        guard let unlogged else { return }
        let more = unlogged > 0 ? " (and \(unlogged) more refused since the last such line)" : ""
        logger.warning("refused a client: \(reason)\(more)")
    }

    /// Notes a wrong password from `source` and says how long to wait before answering; the first time
    /// a source is slowed down to the limit, one line goes to the log.
    func passwordRefused(by source: String, logger: Logger) -> Duration {
        let (delay, tellLog) = self.passwords.withLock { $0.refused(source, at: .now) }
        if tellLog {
            logger.warning(
                "repeated wrong passwords from \(source): its answers are slowed down, its connections closed after \(PasswordGuard.perConnection) wrong passwords"
            )
        }
        return delay
    }
}

/// Wrong passwords by source (a network host, or a local user), across its connections: each one is
/// answered later than the one before, so guessing from many connections at once gains nothing. A right
/// password does not wipe the slate: whoever knows a weak password could otherwise reset it between
/// guesses at a strong one.
struct PasswordGuard {
    /// Wrong passwords one connection may send; the last one's answer is followed by closing it.
    static let perConnection = 3
    /// The wait before answering the first wrong password from a source; it doubles with each one.
    static let firstDelay = Duration.milliseconds(250)
    /// The longest wait.
    static let longestDelay = Duration.seconds(8)
    /// A source with no wrong password for this long starts afresh.
    static let memory = Duration.seconds(600)
    /// Sources remembered at most, so that guessing from many addresses cannot grow memory.
    static let capacity = 4096

    private struct Record {
        var count: Int
        var last: ContinuousClock.Instant
        var logged: Bool
    }

    private var records: [String: Record] = [:]

    /// Counts a wrong password from `source` at `now`: the wait before its answer, and whether this is
    /// the moment to log it (once per source, when it reaches a connection's worth of wrong passwords).
    mutating func refused(_ source: String, at now: ContinuousClock.Instant) -> (Duration, Bool) {
        if self.records.count >= Self.capacity, self.records[source] == nil {
            self.records = self.records.filter { now - $0.value.last < Self.memory }
            if self.records.count >= Self.capacity, let any = self.records.keys.first {
                self.records[any] = nil
            }
        }
        var record = self.records[source] ?? Record(count: 0, last: now, logged: false)
        if now - record.last >= Self.memory {
            record = Record(count: 0, last: now, logged: false)
        }
        record.count += 1
        record.last = now
        let tellLog = !record.logged && record.count >= Self.perConnection
        record.logged = record.logged || tellLog
        self.records[source] = record
        let doublings = min(record.count - 1, 8)
        return (min(Self.firstDelay * (1 << doublings), Self.longestDelay), tellLog)
    }
}

extension TimeAmount {
    /// The same span, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
