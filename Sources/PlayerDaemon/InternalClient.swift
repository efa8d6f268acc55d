import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Why an in-process client could not be connected.
public enum InternalClientError: Error, CustomStringConvertible, Sendable {
    /// `socketpair` failed, with its errno.
    case socketPair(Int32)

    public var description: String {
        switch self {
        case .socketPair(let code): "socketpair failed: \(String(cString: strerror(code)))"
        }
    }
}

extension Daemon {
    /// A new client of this daemon inside its own process (the MPRIS bridge): one end of a socketpair
    /// is served like any accepted client, and the other end is returned for the caller to speak the
    /// protocol on (`MPDConnection(descriptor:)`), and to close. It needs no socket path, and since the
    /// peer is this process (SO_PEERCRED), it has a local client's full rights whatever the passwords.
    /// It counts against `--max-clients` like any client.
    public func connectInternalClient() throws -> Int32 {
        try self.server.connectInternalClient(origin: .socketFile)
    }

    /// A new client of this daemon inside its own process that stands for a client on the network at
    /// `host` (the web remote's sessions): it gets what a TCP client from there gets — the default
    /// permissions until a `password`, the backoff after wrong ones, the places of that host, the
    /// silence timeout, and no absolute local paths.
    public func connectNetworkClient(host: String) throws -> Int32 {
        try self.server.connectInternalClient(origin: .network(host: host))
    }
}

extension ControlServer {
    /// See `Daemon.connectInternalClient()`.
    public func connectInternalClient() throws -> Int32 {
        try self.connectInternalClient(origin: .socketFile)
    }

    /// See `Daemon.connectInternalClient()` and `Daemon.connectNetworkClient(host:)`.
    func connectInternalClient(origin: ClientOrigin) throws -> Int32 {
        let service = self.service
        let logger = self.logger
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw InternalClientError.socketPair(errno)
        }
        let state = self.state
        do {
            // The same handler and options as an accepted client, on the server's event loop.
            _ = try ClientBootstrap(group: self.group)
                .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                .channelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ClientSession(service: service, server: state, origin: origin, logger: logger))
                    }
                }
                .withConnectedSocket(ends[0]).wait()
        } catch {
            // NIO owns (and has closed) the end it was given once it took it; ours is closed here.
            close(ends[1])
            throw error
        }
        return ends[1]
    }
}
