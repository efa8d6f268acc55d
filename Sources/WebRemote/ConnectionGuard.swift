import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// Counts HTTP connections by the address they come from and closes those past `perHost`, so that one
/// host (a flood, or a slow client holding connections open) leaves room for the others; and closes a
/// connection that has not answered a first request within `headDeadline` (Hummingbird's idle timeout
/// only starts once a head has been read). The server's total is bounded apart
/// (`WebRemoteServer.connectionLimit`).
final class ConnectionGuard: Sendable {
    private let connections = Mutex<[String: Int]>([:])
    /// Every connection open, to close them all at once when the server stops.
    private let open = Mutex<[ObjectIdentifier: any Channel]>([:])
    let perHost: Int
    let headDeadline: TimeAmount

    init(perHost: Int, headDeadline: TimeAmount = .seconds(10)) {
        self.perHost = perHost
        self.headDeadline = headDeadline
    }

    /// Set once the server stops: no connection is admitted from then on (a page reconnects at once).
    private let stopping = Atomic<Bool>(false)

    /// Counts `channel` in, until it closes; false when its host has no room left.
    fileprivate func admit(_ channel: any Channel) -> Bool {
        guard !self.stopping.load(ordering: .acquiring) else { return false }
        let host = channel.remoteAddress?.ipAddress ?? "local"
        let admitted = self.connections.withLock { connections -> Bool in
            let count = connections[host, default: 0]
            guard count < self.perHost else { return false }
            connections[host] = count + 1
            return true
        }
        guard admitted else { return false }
        let key = ObjectIdentifier(channel)
        self.open.withLock { $0[key] = channel }
        channel.closeFuture.whenComplete { _ in
            self.connections.withLock { connections in
                let count = (connections[host] ?? 1) - 1
                connections[host] = count > 0 ? count : nil
            }
            _ = self.open.withLock { $0.removeValue(forKey: key) }
        }
        return true
    }

    /// Refuses new connections and closes every open one (pages and kept-alive ones), so that
    /// stopping waits for none.
    func closeAll() {
        self.stopping.store(true, ordering: .releasing)
        for channel in self.open.withLock({ Array($0.values) }) {
            channel.close(promise: nil)
        }
    }

    /// Hummingbird's HTTP/1 server with WebSocket upgrades, each connection first passing this guard.
    func server(
        webSocketRouter: Router<WebContext>, configuration: HTTP1WebSocketUpgradeChannel.Configuration
    ) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        return HTTPServerBuilder { responder in
            GuardedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                connectionGuard: self)
        }
    }
}

/// A server child channel that runs `ConnectionGuard`'s checks before `base`'s set-up.
private struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let connectionGuard: ConnectionGuard

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        guard self.connectionGuard.admit(channel) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        do {
            try channel.pipeline.syncOperations.addHandler(HeadDeadline(deadline: self.connectionGuard.headDeadline))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return self.base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Last: a request the HTTP decoder refuses ends its connection (Hummingbird would hold it).
            try channel.pipeline.syncOperations.addHandler(CloseOnError(), position: .last)
            return value
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await self.base.handle(value: value, logger: logger)
    }
}

/// Closes the connection unless it has answered a first request in time: a head that never ends, or
/// one the HTTP decoder refused (Hummingbird then neither answers nor closes), ends here. Once the
/// first answer is on its way it passes everything through and does nothing more.
private final class HeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        self.timer = context.eventLoop.scheduleTask(in: self.deadline) {
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.cancel()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if let timer = self.timer {
            timer.cancel()
            self.timer = nil
        }
        context.write(data, promise: promise)
    }
}

/// Closes the connection on an error no handler before it took (a request the HTTP decoder refused).
private final class CloseOnError: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
