import Dispatch
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counts connected clients against the limit, and holds what they share on the event loop.
final class ServerState: Sendable {
    private let clients = Atomic<Int>(0)
    private let trimmer = HeapTrimmer()
    let limit: Int
    /// The turns of clients with more to run than one turn allows.
    let turns: NIOLoopBoundBox<TurnTaker>

    init(limit: Int, eventLoop: EventLoop) {
        self.limit = limit
        self.turns = .makeBoxSendingValue(TurnTaker(eventLoop: eventLoop), eventLoop: eventLoop)
    }

    /// Takes a place if one is free.
    func admit() -> Bool {
        while true {
            let current = self.clients.load(ordering: .relaxed)
            guard current < self.limit else { return false }
            if self.clients.compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged {
                return true
            }
        }
    }

    /// Gives a place back, and the memory the client used to the system soon.
    func leave() {
        self.clients.subtract(1, ordering: .relaxed)
        self.trimmer.clientLeft()
    }

    var connected: Int { self.clients.load(ordering: .relaxed) }
}

/// Why the control socket could not be set up.
public enum ControlServerError: Error, CustomStringConvertible, Sendable {
    /// A live daemon answers on the socket already.
    case alreadyRunning(path: String)
    /// The socket (or its directory) could not be created.
    case cannotListen(path: String, reason: String)

    public var description: String {
        switch self {
        case .alreadyRunning(let path): "another playerd is listening on \(path)"
        case .cannotListen(let path, let reason): "cannot listen on \(path): \(reason)"
        }
    }
}

/// The control socket: a Unix-domain stream socket whose clients each get a `ClientSession`.
public final class ControlServer: Sendable {
    let group: MultiThreadedEventLoopGroup
    private let channel: Channel
    private let path: String?
    let state: ServerState

    /// Creates the socket at the configured path (replacing a stale one, refusing a live one) and
    /// starts accepting clients.
    public init(service: PlayerService, logger: Logger) throws {
        let configuration = service.configuration
        let path = configuration.socketPath
        try Self.prepareSocketPath(path)
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.state = ServerState(limit: configuration.maximumClients, eventLoop: self.group.next())
        let bootstrap = Self.bootstrap(group: self.group, service: service, state: self.state, logger: logger)
        // The socket is created with the umask's mode: a tight umask keeps it private until chmod.
        let oldMask = umask(0o177)
        defer { umask(oldMask) }
        do {
            self.channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).wait()
        } catch {
            try? self.group.syncShutdownGracefully()
            throw ControlServerError.cannotListen(path: path, reason: "\(error)")
        }
        guard chmod(path, mode_t(configuration.socketMode)) == 0 else {
            let reason = String(cString: strerror(errno))
            try? self.channel.close().wait()
            try? self.group.syncShutdownGracefully()
            throw ControlServerError.cannotListen(path: path, reason: "chmod: \(reason)")
        }
        self.path = path
    }

    /// Serves clients on a socket that was already bound and listening (systemd socket activation).
    public init(service: PlayerService, listeningDescriptor: CInt, logger: Logger) throws {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.state = ServerState(limit: service.configuration.maximumClients, eventLoop: self.group.next())
        let bootstrap = Self.bootstrap(group: self.group, service: service, state: self.state, logger: logger)
        self.channel = try bootstrap.withBoundSocket(listeningDescriptor).wait()
        self.path = nil
    }

    /// Whether the control loop runs: it must take a task within `limit`.
    public func isResponsive(within limit: DispatchTimeInterval) -> Bool {
        let answered = DispatchSemaphore(value: 0)
        self.channel.eventLoop.execute { answered.signal() }
        return answered.wait(timeout: .now() + limit) == .success
    }

    /// Clients connected now.
    public var connectedClients: Int { self.state.connected }

    /// Stops accepting, closes every client and removes the socket file (unless systemd owns it).
    public func shutdown() {
        try? self.channel.close().wait()
        try? self.group.syncShutdownGracefully()
        if let path {
            unlink(path)
        }
    }

    private static func bootstrap(
        group: MultiThreadedEventLoopGroup,
        service: PlayerService,
        state: ServerState,
        logger: Logger
    ) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 128)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ClientSession(service: service, server: state, logger: logger))
                }
            }
    }

    /// Makes sure the socket's directory exists and no live daemon owns the path; removes a stale
    /// socket left by a crashed run.
    private static func prepareSocketPath(_ path: String) throws {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty {
            var info = stat()
            if stat(directory, &info) != 0 {
                guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                    throw ControlServerError.cannotListen(
                        path: path, reason: "mkdir \(directory): \(String(cString: strerror(errno)))")
                }
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ControlServerError.cannotListen(path: path, reason: "a file that is not a socket is in the way")
        }
        if Self.someoneListens(at: path) {
            throw ControlServerError.alreadyRunning(path: path)
        }
        unlink(path)
    }

    private static func someoneListens(at path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let result = withUnixAddress(path) { address, length in connect(descriptor, address, length) }
        return result == 0
    }
}

/// Glibc's `struct ucred`, which Swift does not import (it sits behind `_GNU_SOURCE`).
private struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// The connecting process's uid, from SO_PEERCRED; nil if the kernel does not say.
func peerUID(of channel: Channel) -> UInt32? {
    guard let provider = channel as? SocketOptionProvider else { return nil }
    let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
        level: .socket, name: .init(rawValue: SO_PEERCRED))
    // On the channel's own event loop the option is read synchronously: the future is already done.
    var uid: UInt32?
    future.assumeIsolated().whenSuccess { uid = $0.uid }
    return uid
}
