import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A station's connections, on its event loop: connecting (and following redirects), the prebuffer,
/// reconnection with backoff, the stall watchdog, back-pressure, the ICY metadata. Every property is
/// touched only on `loop`, which is what makes it safe to send there.
final class StationDriver: @unchecked Sendable {
    let url: String
    let limits: StreamLimits
    let loop: any EventLoop
    private let onChange: @Sendable () -> Void
    private let origin: StreamURL?
    weak var stream: StationStream?

    private var dead = false
    private var started = false
    /// Each attempt's number: what an earlier attempt reports later is ignored.
    private var attemptID = 0
    private var channels: [any Channel] = []
    private var handler: HTTPConnectionHandler?
    private var current: StreamURL?
    private var redirects = 0
    private var demuxer = ICYDemuxer(metaint: 0)
    /// Audio bytes from this connection.
    private var connectionBytes = 0
    /// Whether an earlier connection gave audio bytes (the next one's first byte is a discontinuity).
    private var deliveredBefore = false
    private var everPlayed = false
    private var startTime = NIODeadline.now()
    /// The reconnection episode under way: when it began, and the attempt.
    private var episode: (start: NIODeadline, attempt: Int)?
    private var backoff: Double
    private var lastReason = ""
    private var attemptTimer: Scheduled<Void>?
    private var retryTimer: Scheduled<Void>?
    private var deadlineTimer: Scheduled<Void>?
    private var watchTimer: Scheduled<Void>?
    /// Watchdog ticks in a row that found the buffer still full.
    private var fullTicks = 0

    private var prebufferTarget: Int { max(1, min(limits.prebufferBytes, limits.bufferBytes)) }
    private var resumeThreshold: Int { max(1, min(limits.bufferBytes / 4, 32 * 1024)) }

    init(url: String, limits: StreamLimits, onChange: @escaping @Sendable () -> Void) {
        self.url = url
        self.limits = limits
        self.onChange = onChange
        origin = StreamURL(url)
        loop = StreamNetwork.group.next()
        backoff = limits.backoffSeconds
    }

    // MARK: - State shared with the reader

    /// Changes the shared state; `onChange` afterwards (outside the lock) when `info` changed.
    private func update(_ body: (inout StationShared) -> Void) {
        guard !dead, let stream else { return }
        let changed = stream.shared.withLock { shared in
            let before = shared.info
            body(&shared)
            return shared.info != before
        }
        if changed, !dead { onChange() }
    }

    private var state: StationState { stream?.shared.withLock { $0.info.state } ?? .failed("") }

    // MARK: - Lifecycle

    func begin() {
        guard !dead, !started else { return }
        started = true
        startTime = .now()
        guard origin != nil else {
            giveUp("not an http or https URL")
            return
        }
        deadlineTimer = loop.scheduleTask(in: StreamNetwork.amount(limits.firstAudioSeconds)) { [self] in
            guard !dead, state == .connecting else { return }
            let waited = "no audio within \(StreamNetwork.format(limits.firstAudioSeconds)) s"
            giveUp(lastReason.isEmpty ? waited : "\(waited) (\(lastReason))")
        }
        connect(to: origin!)
    }

    /// Stops everything; returns when the sockets closed.
    func shutdown() -> [EventLoopFuture<Void>] {
        let closing = channels.map(\.closeFuture)
        dead = true
        closeAttempt()
        for timer in [retryTimer, deadlineTimer] { timer?.cancel() }
        return closing
    }

    // MARK: - Connecting

    private func connect(to target: StreamURL) {
        closeAttempt()
        attemptID += 1
        let id = attemptID
        current = target
        let request = StreamNetwork.request(for: target, icy: true)
        let proxy = AttemptDelegate(driver: self, id: id)
        attemptTimer = loop.scheduleTask(in: StreamNetwork.amount(limits.connectSeconds)) { [self] in
            guard id == attemptID, !dead else { return }
            attemptTimedOut()
        }
        let maxHeaderBytes = limits.maxHeaderBytes
        let future = Self.bootstrap(
            for: target, loop: loop, connectSeconds: limits.connectSeconds
        ) { [self] channel in
            guard id == attemptID, !dead else { return nil }
            channels.append(channel)
            return HTTPConnectionHandler(request: request, maxHeaderBytes: maxHeaderBytes, delegate: proxy)
        }
        future.whenComplete { [self] result in
            switch result {
            case .success(let channel):
                guard id == attemptID, !dead else {
                    channel.close(promise: nil)
                    return
                }
                handler = try? channel.pipeline.syncOperations.handler(type: HTTPConnectionHandler.self)
                if !channels.contains(where: { $0 === channel }) { channels.append(channel) }
                scheduleWatch()
            case .failure(let error):
                guard id == attemptID, !dead else { return }
                attemptFailed(describe(error), retryable: true)
            }
        }
    }

    /// A connection to `target` with its TLS (https) and the handler `makeHandler` makes, on `loop`;
    /// `makeHandler` runs on the loop for each channel tried.
    static func bootstrap(
        for target: StreamURL, loop: any EventLoop, connectSeconds: Double,
        makeHandler: @escaping @Sendable (any Channel) -> HTTPConnectionHandler?
    ) -> EventLoopFuture<any Channel> {
        let tls: NIOSSLContext?
        if target.secure {
            switch TLS.context {
            case .success(let context): tls = context
            case .failure(let error):
                return loop.makeFailedFuture(StreamInputError(description: "TLS is not available: \(error)"))
            }
        } else {
            tls = nil
        }
        let host = target.host
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(StreamNetwork.amount(connectSeconds))
            .channelOption(.autoRead, value: false)
            .channelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 65536)
            )
            .channelInitializer { channel in
                do {
                    if let tls {
                        let serverName = TLS.isIPAddress(host) ? nil : host
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: serverName)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    // No handler: the attempt was given up meanwhile.
                    guard let handler = makeHandler(channel) else { throw ChannelError.ioOnClosedChannel }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        // An address needs no resolving (nor Happy Eyeballs): connected at once.
        if let address = try? SocketAddress(ipAddress: host, port: target.port) {
            return bootstrap.connect(to: address)
        }
        return bootstrap.connect(host: host, port: target.port)
    }

    /// Closes the attempt's connection, and forgets it.
    private func closeAttempt() {
        attemptID += 1
        attemptTimer?.cancel()
        attemptTimer = nil
        watchTimer?.cancel()
        watchTimer = nil
        handler?.stop()
        handler = nil
        for channel in channels { channel.close(promise: nil) }
        channels = []
    }

    private func attemptTimedOut() {
        let connected = channels.contains { $0.isActive }
        let seconds = StreamNetwork.format(limits.connectSeconds)
        if connected {
            // The server accepted and said nothing (or too little) in time: not worth waiting for again
            // on a first connection.
            let reason = "no response within \(seconds) s"
            if everPlayed { attemptFailed(reason, retryable: true) } else { giveUp(reason) }
        } else {
            attemptFailed("connection timed out after \(seconds) s", retryable: true)
        }
    }

    // MARK: - What a connection reports

    fileprivate func didReceive(head: HTTPResponseHead) -> Bool {
        attemptTimer?.cancel()
        attemptTimer = nil
        if (300..<400).contains(head.status) && head.status != 304 {
            guard let location = head["location"] else {
                refuse("HTTP \(head.statusText) without a Location")
                return false
            }
            redirects += 1
            guard redirects <= limits.maxRedirects else {
                giveUp("too many redirects (more than \(limits.maxRedirects))")
                return false
            }
            guard let next = current?.resolving(location) else {
                giveUp("redirected to an address playerd cannot play (\(location))")
                return false
            }
            connect(to: next)
            return false
        }
        guard (200..<300).contains(head.status) else {
            refuse("HTTP \(head.statusText)")
            return false
        }
        let type = head["content-type"].map(mediaType)
        if let type, type.hasPrefix("text/") {
            refuse(type == "text/html" ? "an HTML page, not audio" : "a text document (\(type)), not audio")
            return false
        }
        var metaint = head["icy-metaint"].flatMap { Int($0.trimmingWhitespace()) } ?? 0
        if metaint < 0 || metaint > 1 << 24 { metaint = 0 }
        demuxer = ICYDemuxer(metaint: metaint)
        connectionBytes = 0
        redirects = 0
        let name = head["icy-name"] ?? head["ice-name"]
        let genre = head["icy-genre"] ?? head["ice-genre"]
        update { shared in
            shared.contentType = type?.isEmpty == false ? type : nil
            if let name, !name.isEmpty { shared.info.name = name }
            if let genre, !genre.isEmpty { shared.info.genre = genre }
        }
        return true
    }

    /// A response that is not audio: fatal on the first connection, tried again when reconnecting.
    private func refuse(_ reason: String) {
        if everPlayed { attemptFailed(reason, retryable: true) } else { giveUp(reason) }
    }

    fileprivate func didReceive(body: UnsafeRawBufferPointer) -> Int {
        guard let stream else { return body.count }
        let room = stream.shared.withLock { $0.free }
        let consumed = demuxer.process(
            body, room: room,
            audio: { bytes in
                let markFirst = connectionBytes == 0 && deliveredBefore
                let written = stream.shared.withLock { $0.write(bytes, markFirst: markFirst) }
                connectionBytes += written
            },
            metadata: { block in
                // Each title is reported, even when several blocks arrive at once.
                if case .some(let found) = ICYMetadata.streamTitle(in: block) {
                    let value = found.flatMap { $0.isEmpty ? nil : $0 }
                    // On air once the audio before it has been read (`StationShared.announce`).
                    update { $0.announce(value) }
                }
            })
        if connectionBytes > 0 { deliveredBefore = true }
        // The buffer is full: the connection waits; look for room soon rather than at the stall check.
        if consumed < body.count { scheduleWatch(paused: true) }
        if state != .playing, !isFinished,
            connectionBytes >= prebufferTarget || stream.shared.withLock({ $0.free == 0 })
        {
            enterPlaying()
        }
        return consumed
    }

    private var isFinished: Bool {
        switch state {
        case .failed, .ended: true
        default: false
        }
    }

    fileprivate func didEnd(_ end: ConnectionEnd) {
        let reason: String
        switch end {
        case .complete:
            closeAttempt()
            for timer in [retryTimer, deadlineTimer] { timer?.cancel() }
            if state != .playing { enterPlaying() }
            update { shared in
                shared.info.state = .ended
                shared.finished = true
            }
            return
        case .closed: reason = "the server ended the stream"
        case .broken(let why): reason = why
        case .invalid(let why):
            if !everPlayed {
                giveUp(why)
                return
            }
            reason = why
        }
        if state == .playing {
            beginReconnect(reason)
        } else {
            attemptFailed(reason, retryable: true)
        }
    }

    // MARK: - States

    private func enterPlaying() {
        if let episode {
            let seconds = StreamNetwork.format(StreamNetwork.seconds(from: episode.start))
            StreamNetwork.logger.notice("station \(url): playing again after \(seconds) s")
            self.episode = nil
        }
        everPlayed = true
        lastReason = ""
        backoff = limits.backoffSeconds
        deadlineTimer?.cancel()
        deadlineTimer = nil
        update { $0.info.state = .playing }
    }

    private func beginReconnect(_ reason: String) {
        closeAttempt()
        lastReason = reason
        episode = (.now(), 1)
        backoff = limits.backoffSeconds
        StreamNetwork.logger.warning("station \(url): connection lost (\(reason)), reconnecting")
        update { $0.info.state = .reconnecting(attempt: 1, reason: reason) }
        deadlineTimer?.cancel()
        deadlineTimer = loop.scheduleTask(in: StreamNetwork.amount(limits.reconnectSeconds)) { [self] in
            guard !dead, episode != nil else { return }
            giveUp(lastReason)
        }
        scheduleRetry()
    }

    private func scheduleRetry() {
        retryTimer?.cancel()
        let wait = backoff
        backoff = min(backoff * 2, max(8, limits.backoffSeconds))
        retryTimer = loop.scheduleTask(in: StreamNetwork.amount(wait)) { [self] in
            guard !dead, let origin else { return }
            connect(to: origin)
        }
    }

    /// An attempt failed: tried again after the backoff while time is left, else given up.
    private func attemptFailed(_ reason: String, retryable: Bool) {
        closeAttempt()
        lastReason = reason
        guard retryable else {
            giveUp(reason)
            return
        }
        let deadline: NIODeadline
        if let episode {
            deadline = episode.start + StreamNetwork.amount(limits.reconnectSeconds)
        } else if everPlayed {
            // A drop before the reconnection episode began (cannot happen: kept for safety).
            beginReconnect(reason)
            return
        } else {
            deadline = startTime + StreamNetwork.amount(limits.firstAudioSeconds)
        }
        guard NIODeadline.now() + StreamNetwork.amount(backoff) < deadline else {
            giveUp(reason)
            return
        }
        if let current = episode {
            episode = (current.start, current.attempt + 1)
            update { $0.info.state = .reconnecting(attempt: current.attempt + 1, reason: reason) }
        }
        scheduleRetry()
    }

    private func giveUp(_ reason: String) {
        guard !dead, !isFinished else { return }
        closeAttempt()
        for timer in [retryTimer, deadlineTimer] { timer?.cancel() }
        let since = episode?.start ?? startTime
        let seconds = StreamNetwork.format(StreamNetwork.seconds(from: since))
        StreamNetwork.logger.error("station \(url): given up after \(seconds) s: \(reason)")
        let message = "\(url): \(reason)"
        episode = nil
        update { shared in
            shared.info.state = .failed(message)
            shared.failure = message
            shared.finished = true
        }
    }

    // MARK: - The watchdog: stalls, and reading again once the buffer has room

    private func scheduleWatch(paused pausing: Bool = false) {
        watchTimer?.cancel()
        let paused = pausing || handler?.paused == true
        if !paused { fullTicks = 0 }
        // Held back by a full buffer: looked at every 50 ms, every 250 ms once it has stayed full for a
        // second (a paused player); else the stall check, four times per stallSeconds (at most 1 s apart).
        let interval =
            paused
            ? (fullTicks < 20 ? 0.05 : 0.25) : min(max(StreamNetwork.clamp(limits.stallSeconds) / 4, 0.01), 1)
        let id = attemptID
        watchTimer = loop.scheduleTask(in: StreamNetwork.amount(interval)) { [self] in
            guard id == attemptID, !dead else { return }
            watch()
        }
    }

    private func watch() {
        guard let handler, let stream else { return }
        if handler.paused {
            if stream.shared.withLock({ $0.free }) >= resumeThreshold {
                fullTicks = 0
                handler.resume()
            } else {
                fullTicks += 1
            }
        } else if handler.inBody,
            StreamNetwork.seconds(from: handler.lastActivity) > limits.stallSeconds
        {
            let id = attemptID
            handler.stop()
            guard id == attemptID else { return }
            didEnd(.broken("no data for \(StreamNetwork.format(limits.stallSeconds)) s"))
            return
        }
        if self.handler != nil { scheduleWatch() }
    }
}

/// Passes one attempt's reports to the driver, unless a newer attempt began since.
private final class AttemptDelegate: HTTPConnectionDelegate, @unchecked Sendable {
    let driver: StationDriver
    let id: Int

    init(driver: StationDriver, id: Int) {
        self.driver = driver
        self.id = id
    }

    func connectionDidReceive(head: HTTPResponseHead) -> Bool {
        driver.isCurrent(id) ? driver.didReceive(head: head) : false
    }

    func connectionDidReceive(body: UnsafeRawBufferPointer) -> Int {
        driver.isCurrent(id) ? driver.didReceive(body: body) : body.count
    }

    func connectionDidEnd(_ end: ConnectionEnd) {
        if driver.isCurrent(id) { driver.didEnd(end) }
    }
}

extension StationDriver {
    fileprivate func isCurrent(_ id: Int) -> Bool { id == attemptID && !dead }
}

/// The client TLS context: the system's trust roots, made once.
enum TLS {
    private static let systemContext = Result { () throws -> NIOSSLContext in try makeContext(trusting: []) }
    private static let replacement = NIOLockedValueBox<NIOSSLContext?>(nil)

    static var context: Result<NIOSSLContext, any Error> {
        replacement.withLockedValue { $0 }.map { .success($0) } ?? systemContext
    }

    /// A client context trusting the system's roots and `additional` ones. A connection closed is closed
    /// at once, without waiting for the server's close_notify (by default NIOSSL waits up to 5 s, and a
    /// server busy writing never answers): nothing is lost for a stream we are done with.
    static func makeContext(trusting additional: [NIOSSLAdditionalTrustRoots]) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.additionalTrustRoots = additional
        configuration.shutdownTimeout = .zero
        return try NIOSSLContext(configuration: configuration)
    }

    /// Tests: connections made from now on use `context` (nil: the system's trust roots again).
    static func replaceContext(with context: NIOSSLContext?) {
        replacement.withLockedValue { $0 = context }
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}

/// Why a fetch failed: the message names the URL.
public struct StreamInputError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}
