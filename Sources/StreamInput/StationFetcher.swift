import Dispatch
import NIOCore
import Synchronization

/// Fetches a document (a station list) with the same client, limits and redirects as the streams.
public enum StationFetcher {
    /// Fetches `url` whole: redirects followed up to `limits.maxRedirects`, the head within
    /// `limits.connectSeconds`, the whole within `limits.firstAudioSeconds`, at most
    /// `limits.maxDocumentBytes`. Blocks the calling thread: never call it on the network's event loop.
    /// - Throws: `StreamInputError` naming the URL and the reason.
    public static func fetch(
        url: String, limits: StreamLimits
    ) throws(StreamInputError) -> (contentType: String?, body: [UInt8]) {
        guard let target = StreamURL(url) else {
            throw StreamInputError(description: "\(url): not an http or https URL")
        }
        let fetch = DocumentFetch(url: url, limits: limits)
        let done = DispatchSemaphore(value: 0)
        fetch.loop.execute { fetch.begin(target, done: done) }
        done.wait()
        switch fetch.outcome.withLock({ $0 }) {
        case .some(.success(let result)): return result
        case .some(.failure(let error)): throw error
        case .none: throw StreamInputError(description: "\(url): the fetch did not finish")
        }
    }
}

/// One fetch, on the network's loop.
private final class DocumentFetch: HTTPConnectionDelegate, @unchecked Sendable {
    let url: String
    let limits: StreamLimits
    let loop: any EventLoop
    let outcome = Mutex<Result<(contentType: String?, body: [UInt8]), StreamInputError>?>(nil)
    private var done: DispatchSemaphore?
    private var current: StreamURL?
    private var channel: (any Channel)?
    private var redirects = 0
    private var contentType: String?
    private var body: [UInt8] = []
    private var timers: [Scheduled<Void>] = []
    private var finished = false
    private var attempt = 0

    init(url: String, limits: StreamLimits) {
        self.url = url
        self.limits = limits
        loop = StreamNetwork.group.next()
    }

    func begin(_ target: StreamURL, done: DispatchSemaphore) {
        self.done = done
        timers.append(
            loop.scheduleTask(in: StreamNetwork.amount(limits.firstAudioSeconds)) { [self] in
                finish(
                    .failure(
                        .init(
                            description: "\(url): no answer within \(StreamNetwork.format(limits.firstAudioSeconds)) s")
                    ))
            })
        connect(target)
    }

    private func connect(_ target: StreamURL) {
        channel?.close(promise: nil)
        channel = nil
        attempt += 1
        let id = attempt
        current = target
        body = []
        let request = StreamNetwork.request(for: target, icy: false)
        let maxHeaderBytes = limits.maxHeaderBytes
        timers.append(
            loop.scheduleTask(in: StreamNetwork.amount(limits.connectSeconds)) { [self] in
                guard id == attempt, !headSeen else { return }
                finish(
                    .failure(
                        .init(
                            description: "\(url): no response within \(StreamNetwork.format(limits.connectSeconds)) s"))
                )
            })
        headSeen = false
        StationDriver.bootstrap(for: target, loop: loop, connectSeconds: limits.connectSeconds) { [self] _ in
            finished ? nil : HTTPConnectionHandler(request: request, maxHeaderBytes: maxHeaderBytes, delegate: self)
        }.whenComplete { [self] result in
            switch result {
            case .success(let channel):
                if finished || id != attempt {
                    channel.close(promise: nil)
                } else {
                    self.channel = channel
                }
            case .failure(let error):
                guard id == attempt else { return }
                finish(.failure(.init(description: "\(url): \(describe(error))")))
            }
        }
    }

    private var headSeen = false

    private func finish(_ result: Result<(contentType: String?, body: [UInt8]), StreamInputError>) {
        guard !finished else { return }
        finished = true
        attempt += 1
        for timer in timers { timer.cancel() }
        channel?.close(promise: nil)
        let closed = channel?.closeFuture ?? loop.makeSucceededVoidFuture()
        outcome.withLock { $0 = result }
        let done = self.done
        closed.whenComplete { _ in done?.signal() }
    }

    func connectionDidReceive(head: HTTPResponseHead) -> Bool {
        guard !finished else { return false }
        headSeen = true
        if (300..<400).contains(head.status), head.status != 304, let location = head["location"] {
            redirects += 1
            guard redirects <= limits.maxRedirects else {
                finish(.failure(.init(description: "\(url): too many redirects (more than \(limits.maxRedirects))")))
                return false
            }
            guard let next = current?.resolving(location) else {
                finish(.failure(.init(description: "\(url): redirected to an unsupported address (\(location))")))
                return false
            }
            // This connection is closed by its handler once this returns.
            channel = nil
            connect(next)
            return false
        }
        guard (200..<300).contains(head.status) else {
            finish(.failure(.init(description: "\(url): HTTP \(head.statusText)")))
            return false
        }
        contentType = head["content-type"].map(mediaType)
        if let length = head["content-length"].flatMap({ Int($0) }), length > limits.maxDocumentBytes {
            finish(.failure(tooLarge))
            return false
        }
        return true
    }

    private var tooLarge: StreamInputError {
        .init(description: "\(url): larger than \(limits.maxDocumentBytes) bytes")
    }

    func connectionDidReceive(body bytes: UnsafeRawBufferPointer) -> Int {
        guard !finished else { return bytes.count }
        guard body.count + bytes.count <= limits.maxDocumentBytes else {
            finish(.failure(tooLarge))
            return bytes.count
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    func connectionDidEnd(_ end: ConnectionEnd) {
        switch end {
        case .complete, .closed:
            finish(.success((contentType?.isEmpty == false ? contentType : nil, body)))
        case .broken(let reason), .invalid(let reason):
            finish(.failure(.init(description: "\(url): \(reason)")))
        }
    }
}
