import Dispatch
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

/// The control socket, and the other places clients connect (`--listen`): socket files, abstract
/// sockets, TCP. Every client gets a `ClientSession`; all share one event loop.
public final class ControlServer: Sendable {
    let group: MultiThreadedEventLoopGroup
    private let channels: [Channel]
    /// Socket files this server made, removed when it stops.
    private let socketFiles: [String]
    let state: ServerState
    /// Where clients connect, for the log: the places bound, in order.
    public let places: [String]
    /// What the clients' commands act on, and where their sessions log (for in-process clients).
    let service: PlayerService
    let logger: Logger

    /// Starts accepting clients on the sockets systemd passed (`inherited`; socket activation), or else
    /// on the configured control socket (replacing a stale one, refusing a live one), and on every
    /// `--listen` address.
    /// - Throws: `ControlServerError` naming the place that failed; nothing is left listening then.
    public convenience init(service: PlayerService, inherited: [CInt] = [], logger: Logger) throws {
        let configuration = service.configuration
        let (group, state) = Self.loop(for: service)
        var channels: [Channel] = []
        var socketFiles: [String] = []
        var places: [String] = []
        func bootstrap(_ kind: ListenerKind) -> ServerBootstrap {
            Self.bootstrap(kind, group: group, service: service, state: state, logger: logger)
        }
        do {
            if inherited.isEmpty {
                channels.append(try Self.bindFile(configuration.socketPath, bootstrap(.socketFile), configuration))
                socketFiles.append(configuration.socketPath)
                places.append(configuration.socketPath)
            }
            for descriptor in inherited {
                let kind = ListenerKind(ofBound: descriptor)
                channels.append(try bootstrap(kind).withBoundSocket(descriptor).wait())
                places.append("a socket systemd passed (\(kind))")
            }
            for address in configuration.listenAddresses {
                switch address {
                case .path(let path):
                    channels.append(try Self.bindFile(path, bootstrap(.socketFile), configuration))
                    socketFiles.append(path)
                case .abstract(let name):
                    let descriptor = try Self.bindAbstract(name)
                    do {
                        channels.append(try bootstrap(.abstractSocket).withBoundSocket(descriptor).wait())
                    } catch {
                        close(descriptor)
                        throw ControlServerError.cannotListen(path: address.description, reason: "\(error)")
                    }
                case .tcp(let host, let port):
                    let channel: Channel
                    do {
                        channel = try bootstrap(.network).bind(host: host, port: port).wait()
                    } catch {
                        throw ControlServerError.cannotListen(path: address.description, reason: "\(error)")
                    }
                    channels.append(channel)
                    // The port bound, which port 0 leaves to the kernel.
                    let bound = channel.localAddress?.port ?? port
                    places.append(ListenAddress.tcp(host: host, port: bound).description)
                    continue
                }
                places.append(address.description)
            }
        } catch {
            for channel in channels {
                try? channel.close().wait()
            }
            for path in socketFiles {
                unlink(path)
            }
            try? group.syncShutdownGracefully()
            throw error
        }
        self.init(
            service: service, logger: logger, group: group, state: state, channels: channels, socketFiles: socketFiles,
            places: places)
    }

    /// A server that listens nowhere: its only clients are this process's own, from
    /// `connectInternalClient()`, served as a socket file's clients are. For tools that run whole
    /// requests through the sessions, the command table and the player without a socket file (the
    /// `session` fuzz target).
    public convenience init(inProcessOnly service: PlayerService, logger: Logger) {
        let (group, state) = Self.loop(for: service)
        self.init(
            service: service, logger: logger, group: group, state: state, channels: [], socketFiles: [], places: [])
    }

    private init(
        service: PlayerService, logger: Logger, group: MultiThreadedEventLoopGroup, state: ServerState,
        channels: [Channel], socketFiles: [String], places: [String]
    ) {
        self.service = service
        self.logger = logger
        self.group = group
        self.state = state
        self.channels = channels
        self.socketFiles = socketFiles
        self.places = places
    }

    /// The one event loop every client shares, and the state they share on it.
    private static func loop(for service: PlayerService) -> (MultiThreadedEventLoopGroup, ServerState) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = ServerState(
            limit: service.configuration.maximumClients, eventLoop: group.next(),
            releasingMemory: { [library = service.library] in library?.releaseMemory() })
        return (group, state)
    }

    /// Whether the control loop runs: it must take a task within `limit`.
    public func isResponsive(within limit: DispatchTimeInterval) -> Bool {
        let answered = DispatchSemaphore(value: 0)
        self.group.next().execute { answered.signal() }
        return answered.wait(timeout: .now() + limit) == .success
    }

    /// Clients connected now.
    public var connectedClients: Int { self.state.connected }

    /// Stops accepting, closes every client and removes the socket files it made (not systemd's).
    public func shutdown() {
        for channel in self.channels {
            try? channel.close().wait()
        }
        try? self.group.syncShutdownGracefully()
        for path in self.socketFiles {
            unlink(path)
        }
    }

    private static func bootstrap(
        _ kind: ListenerKind,
        group: MultiThreadedEventLoopGroup,
        service: PlayerService,
        state: ServerState,
        logger: Logger
    ) -> ServerBootstrap {
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 128)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024)
            )
        if kind == .network {
            bootstrap = bootstrap.serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                // A phone that walks out of the house leaves its connection open: keepalive ends it.
                .childChannelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
        }
        return bootstrap.childChannelInitializer { channel in
            let origin: ClientOrigin =
                switch kind {
                case .socketFile: .socketFile
                case .abstractSocket: .abstractSocket
                case .network: .network(host: channel.remoteAddress?.ipAddress ?? "an unknown address")
                }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    ClientSession(service: service, server: state, origin: origin, logger: logger))
            }
        }
    }

    /// Binds the socket file at `path`, with the configured mode.
    private static func bindFile(
        _ path: String, _ bootstrap: ServerBootstrap, _ configuration: DaemonConfiguration
    ) throws -> Channel {
        try Self.prepareSocketPath(path)
        // The socket is created with the umask's mode: a tight umask keeps it private until chmod.
        let oldMask = umask(0o177)
        defer { umask(oldMask) }
        let channel: Channel
        do {
            channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).wait()
        } catch {
            throw ControlServerError.cannotListen(path: path, reason: "\(error)")
        }
        guard chmod(path, mode_t(configuration.socketMode)) == 0 else {
            let reason = String(cString: strerror(errno))
            try? channel.close().wait()
            unlink(path)
            throw ControlServerError.cannotListen(path: path, reason: "chmod: \(reason)")
        }
        return channel
    }

    /// A socket bound to the abstract name `name`. NIO's addresses cannot say an abstract name's exact
    /// length, which the kernel matches, so the socket is made here and handed over bound.
    private static func bindAbstract(_ name: String) throws -> CInt {
        let place = "@" + name
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw ControlServerError.cannotListen(path: place, reason: String(cString: strerror(errno)))
        }
        let result = withUnixAddress("\0" + name) { address, length in bind(descriptor, address, length) }
        guard result == 0 else {
            let code = errno
            let reason = result == nil ? "the name is too long" : String(cString: strerror(code))
            close(descriptor)
            if result != nil, code == EADDRINUSE {
                throw ControlServerError.alreadyRunning(path: place)
            }
            throw ControlServerError.cannotListen(path: place, reason: reason)
        }
        return descriptor
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

/// What kind of place a listening socket is, which says where its clients come from.
enum ListenerKind: Sendable, CustomStringConvertible {
    case socketFile
    case abstractSocket
    case network

    /// The kind of an inherited listening socket, from its address family and name.
    init(ofBound descriptor: CInt) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            self = .socketFile
            return
        }
        switch Int32(storage.ss_family) {
        case AF_INET, AF_INET6:
            self = .network
        default:
            // An abstract name starts with a NUL byte, right after the family.
            let offset = MemoryLayout<sa_family_t>.size
            let firstByte = withUnsafeBytes(of: &storage) { $0[offset] }
            self = length > socklen_t(offset) && firstByte == 0 ? .abstractSocket : .socketFile
        }
    }

    var description: String {
        switch self {
        case .socketFile: "a socket file"
        case .abstractSocket: "an abstract socket"
        case .network: "TCP"
        }
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
