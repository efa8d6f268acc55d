import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Where the web remote listens (`--http`, repeatable).
public enum WebAddress: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "http://[\(host)]:\(port)/" : "http://\(host):\(port)/"
        case .unix(let path): "http+unix:\(path)"
        }
    }
}

/// Why the web remote could not start.
public struct WebRemoteError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// The web remote: a page and a JSON API (`/api/...`, described by `/api/openapi.yaml`) over HTTP, and
/// the daemon's change events over a WebSocket (`/api/events`). Every browser session is its own
/// network client of the daemon (`DaemonConnector`), so the daemon's permissions, passwords and limits
/// hold as they do over TCP.
public final class WebRemoteServer: Sendable {
    private let addresses: [WebAddress]
    private let sessions: WebSessionStore
    private let passwordSet: Bool
    private let logger: Logger
    private let running = Mutex<[Task<Void, Never>]>([])
    /// At most a quarter of the connections from one host.
    private let connectionGuard = ConnectionGuard(perHost: WebRemoteServer.connectionLimit / 4)
    /// The addresses bound (port 0 replaced by the port the kernel gave).
    public let boundAddresses = Mutex<[WebAddress]>([])

    /// The largest request body the API reads.
    static let bodyLimit = 64 * 1024
    /// HTTP connections open at once, over all addresses.
    static let connectionLimit = 256

    public init(addresses: [WebAddress], passwordSet: Bool, logger: Logger, connector: @escaping DaemonConnector) {
        self.addresses = addresses
        self.passwordSet = passwordSet
        self.logger = logger
        self.sessions = WebSessionStore(connector: connector)
    }

    /// Binds every address and serves in the background; throws, naming the address, when one cannot
    /// be bound (the ones already bound are stopped again).
    public func start() throws(WebRemoteError) {
        for address in self.addresses {
            let bound = DispatchSemaphore(value: 0)
            let outcome = Mutex<Result<WebAddress, WebRemoteError>?>(nil)
            let onRunning: @Sendable (any Channel) -> Void = { channel in
                var actual = address
                if case .tcp(let host, _) = address, let port = channel.localAddress?.port {
                    actual = .tcp(host: host, port: port)
                }
                outcome.withLock { $0 = .success(actual) }
                bound.signal()
            }
            let logger = self.logger
            let task = Task {
                do {
                    try await self.serve(on: address, onRunning: onRunning)
                } catch {
                    let first = outcome.withLock { current -> Bool in
                        guard current == nil else { return false }
                        current = .failure(
                            WebRemoteError(description: "cannot serve the web remote on \(address): \(error)"))
                        return true
                    }
                    if first {
                        bound.signal()
                    } else {
                        logger.error("the web remote on \(address) stopped: \(error)")
                    }
                }
            }
            bound.wait()
            switch outcome.withLock({ $0 }) {
            case .success(let actual):
                self.running.withLock { $0.append(task) }
                self.boundAddresses.withLock { $0.append(actual) }
                self.logger.info("web remote on \(actual)")
            case .failure(let error):
                self.stop()
                throw error
            case nil:
                self.stop()
                throw WebRemoteError(description: "cannot serve the web remote on \(address)")
            }
        }
    }

    /// Stops serving and closes every session's connection to the daemon.
    public func stop() {
        let tasks = self.running.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        // Pages hold their connections open: closed first, nothing is left to wait for.
        self.connectionGuard.closeAll()
        for task in tasks { task.cancel() }
        let done = DispatchSemaphore(value: 0)
        let sessions = self.sessions
        Task {
            await sessions.closeAll()
            for task in tasks { await task.value }
            done.signal()
        }
        // Hummingbird's graceful end sometimes waits 5 s more for a browser's closed connection; the
        // daemon's shutdown needs none of it (every connection is closed, and with it every session's
        // client of the daemon), so it goes on after a second.
        _ = done.wait(timeout: .now() + 1)
    }

    /// Serves `address` until cancelled. Hummingbird's `Application` is not used: it runs a timer every
    /// second for its `Date` header, which was most of what `--http` cost while no page was open; the
    /// date is made when an answer is (`HTTPDate`).
    private func serve(on address: WebAddress, onRunning: @escaping @Sendable (any Channel) -> Void) async throws {
        let router = Router(context: WebContext.self)
        router.middlewares.add(SecurityHeaders())
        WebAPI(sessions: self.sessions, passwordSet: self.passwordSet, logger: self.logger).register(on: router)
        let bindAddress: BindAddress =
            switch address {
            case .tcp(let host, let port): .hostname(host, port: port)
            case .unix(let path): .unixDomainSocket(path: path)
            }
        // Hummingbird logs each connection a client drops mid-upgrade or mid-request at `error`: a
        // hostile client could fill the journal with them. What matters is logged by this module.
        var quietLogger = self.logger
        quietLogger.logLevel = .critical
        let logger = quietLogger
        let builder = self.connectionGuard.server(
            webSocketRouter: router,
            configuration: .init(
                // A connection that says nothing for this long is closed (a keep-alive left open, or a
                // client that started a request and stalled); headers are bounded.
                http1: .init(
                    idleTimeout: .seconds(30),
                    httpDecoderConfiguration: .init(
                        maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)),
                ws: .init(
                    maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(1))))
        let responder = router.buildResponder()
        let server = try builder.buildServer(
            configuration: ServerConfiguration(
                address: bindAddress, serverName: nil, reuseAddress: true,
                availableConnectionsDelegate: MaximumAvailableConnections(Self.connectionLimit)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger,
            responder: { (request, responseWriter: consuming ResponseWriter, channel) in
                let context = WebContext(source: .init(channel: channel, logger: logger))
                var response: Response
                do {
                    // The router turns HTTPError and its kind into answers itself.
                    response = try await responder.respond(to: request, context: context)
                } catch let error as HTTPParserError {
                    throw error
                } catch {
                    response = WebAPI.failure(WebError(status: .internalServerError, "\(error)"))
                }
                response.headers[.date] = HTTPDate.now()
                try await responseWriter.write(response: response.head, body: response.body)
            },
            onServerRunning: { channel in onRunning(channel) })
        try await server.run()
    }
}

/// The `Date` header's value, RFC 9110's IMF-fixdate, made for each answer.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(Self.days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(Self.months[Int(parts.tm_mon) % 12]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// The request context: Hummingbird's, with the client's address, and what the WebSocket route needs.
struct WebContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<WebContext>
    /// The client's address, as the daemon's per-host places and password backoff count it; `local`
    /// for an HTTP client on a Unix socket (a reverse proxy's).
    let remoteHost: String

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.remoteHost = source.channel.remoteAddress?.ipAddress ?? "local"
    }

    var maxUploadSize: Int { WebRemoteServer.bodyLimit }
}

/// Headers on every answer: the page runs only its own scripts and styles, and is never framed.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebContext

    func handle(
        _ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response
    ) async throws -> Response {
        // A page elsewhere may not drive the player through a visitor's browser: a request that says
        // where it comes from must come from here.
        if let origin = request.headers[.origin], let host = request.head.authority,
            origin != "http://" + host, origin != "https://" + host
        {
            return WebAPI.failure(WebError(status: .forbidden, "requests from other sites (\(origin)) are refused"))
        }
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        return response
    }
}
