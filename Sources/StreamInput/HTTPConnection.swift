import NIOCore
import NIOPosix
import NIOSSL

/// How a connection finished.
enum ConnectionEnd: Equatable {
    /// The body's declared end: Content-Length met, or a chunked body's last chunk.
    case complete
    /// The server closed a body that has no declared end.
    case closed
    /// The connection broke: closed before the declared end, a TLS or socket error, a malformed
    /// response. The reason is for messages.
    case broken(String)
    /// The response is not one we can take: a head too large, not HTTP, a malformed chunked body. Not
    /// worth trying again on a first connection.
    case invalid(String)
}

/// What a connection tells its owner, on the connection's event loop.
protocol HTTPConnectionDelegate: AnyObject {
    /// The response head arrived. False: the delegate is done with this connection (a redirect, an
    /// error): it is closed and nothing more is reported.
    func connectionDidReceive(head: HTTPResponseHead) -> Bool
    /// Body bytes (chunked framing taken out): returns how many it took. Fewer than given: no room,
    /// and the connection reads nothing more until `resume()`.
    func connectionDidReceive(body: UnsafeRawBufferPointer) -> Int
    /// The connection finished (reported once, unless the head was refused).
    func connectionDidEnd(_ end: ConnectionEnd)
}

/// One HTTP/1.x GET over a channel (after TLS when https): writes the request, parses the response head
/// within a size limit (HTTP/1.x and SHOUTcast's `ICY 200 OK`), takes the body's framing out (length,
/// chunked, or until close) and hands the body to its delegate with back-pressure: the channel's
/// autoRead is off, and it is read again only once the delegate took everything read so far.
final class HTTPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case head
        case body(Framing)
        case done
    }

    private enum Framing {
        case length(remaining: Int)
        case untilClose
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    private let request: String
    private let maxHeaderBytes: Int
    var delegate: (any HTTPConnectionDelegate)?
    private var phase = Phase.head
    private var inbound: ByteBuffer?
    private var context: ChannelHandlerContext?
    /// The delegate took fewer bytes than it was given: reading waits for `resume()`.
    private(set) var paused = false
    /// When the last bytes arrived (or reading resumed).
    private(set) var lastActivity = NIODeadline.now()
    /// Body bytes (after framing, before ICY) received so far.
    private(set) var bodyBytes = 0

    init(request: String, maxHeaderBytes: Int, delegate: any HTTPConnectionDelegate) {
        self.request = request
        self.maxHeaderBytes = maxHeaderBytes
        self.delegate = delegate
    }

    /// Whether the head has been read and the body is being read.
    var inBody: Bool {
        if case .body = phase { return true }
        return false
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { sendRequest(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context: context)
        context.fireChannelActive()
    }

    private var requestSent = false

    private func sendRequest(context: ChannelHandlerContext) {
        guard !requestSent else { return }
        requestSent = true
        lastActivity = .now()
        var buffer = context.channel.allocator.buffer(capacity: request.utf8.count)
        buffer.writeString(request)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard !isDone else { return }  // after the end: nothing more matters
        lastActivity = .now()
        if inbound == nil {
            inbound = incoming
        } else {
            inbound!.discardReadBytes()
            inbound!.writeBuffer(&incoming)
        }
        process()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !paused, !isDone { context.read() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finishOnClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOSSLError, case .handshakeFailed = error {
            // An untrusted certificate or no common protocol: not worth trying again.
            end(.invalid(describe(error)))
        } else {
            end(.broken(describe(error)))
        }
        context.close(promise: nil)
    }

    /// Reads again once the delegate has room.
    func resume() {
        guard paused else { return }
        paused = false
        lastActivity = .now()
        process()
        if !paused, !isDone { context?.read() }
    }

    /// Stops: nothing more is reported, and the channel is closed.
    func stop() {
        phase = .done
        delegate = nil
        context?.close(promise: nil)
    }

    private var isDone: Bool {
        if case .done = phase { return true }
        return false
    }

    private func end(_ how: ConnectionEnd) {
        guard !isDone else { return }
        phase = .done
        let delegate = self.delegate
        self.delegate = nil
        delegate?.connectionDidEnd(how)
    }

    private func finishOnClose() {
        switch phase {
        case .head:
            end(.broken("the server closed the connection before answering"))
        case .body(.untilClose):
            // What was read but not yet taken is delivered first when room comes: only the end of
            // an undelimited body counts here.
            if (inbound?.readableBytes ?? 0) == 0 { end(.closed) } else { closedWithPending = true }
        case .body:
            if (inbound?.readableBytes ?? 0) > 0, paused {
                closedWithPending = true
            } else {
                end(.broken("the connection was closed before the body's end"))
            }
        case .done:
            break
        }
    }

    private var closedWithPending = false

    /// Runs the response through as far as the bytes and the delegate's room allow.
    private func process() {
        while !isDone, !paused, var buffer = inbound, buffer.readableBytes > 0 {
            let progressed = step(&buffer)
            inbound = buffer.readableBytes > 0 ? buffer : nil
            if !progressed { break }
        }
        if closedWithPending, (inbound?.readableBytes ?? 0) == 0, !isDone {
            if case .body(.untilClose) = phase {
                end(.closed)
            } else {
                end(.broken("the connection was closed before the body's end"))
            }
        }
    }

    /// One step of parsing; false when it needs more bytes (or room).
    private func step(_ buffer: inout ByteBuffer) -> Bool {
        switch phase {
        case .head:
            let found = buffer.withUnsafeReadableBytes { HTTPResponseHead.end(in: $0) }
            guard let headEnd = found else {
                if buffer.readableBytes > maxHeaderBytes {
                    end(.invalid("response head too large (more than \(maxHeaderBytes) bytes)"))
                    context?.close(promise: nil)
                }
                return false
            }
            guard headEnd <= maxHeaderBytes else {
                end(.invalid("response head too large (more than \(maxHeaderBytes) bytes)"))
                context?.close(promise: nil)
                return false
            }
            let parsed = buffer.withUnsafeReadableBytes { bytes in
                Result { () throws(HTTPResponseHead.ParseError) in
                    try HTTPResponseHead.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<headEnd]))
                }
            }
            buffer.moveReaderIndex(forwardBy: headEnd)
            let head: HTTPResponseHead
            switch parsed {
            case .success(let value): head = value
            case .failure(.notHTTP(let what)):
                end(.invalid(what))
                context?.close(promise: nil)
                return false
            }
            if (100..<200).contains(head.status) { return true }  // 100 Continue and the like
            let framing: Framing
            if let coding = head["transfer-encoding"], coding.lowercased().contains("chunked") {
                framing = .chunkSize
            } else if let length = head["content-length"].flatMap({ Int($0) }), length >= 0 {
                framing = .length(remaining: length)
            } else {
                framing = .untilClose
            }
            phase = .body(framing)
            guard delegate?.connectionDidReceive(head: head) == true else {
                stop()
                return false
            }
            if case .length(0) = framing { end(.complete) }
            return true
        case .body(let framing):
            return stepBody(framing, &buffer)
        case .done:
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return false
        }
    }

    private func deliver(_ buffer: inout ByteBuffer, upTo limit: Int) -> Int {
        let count = min(limit, buffer.readableBytes)
        guard count > 0, let delegate else { return 0 }
        let taken = buffer.withUnsafeReadableBytes { bytes in
            delegate.connectionDidReceive(body: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        }
        buffer.moveReaderIndex(forwardBy: taken)
        bodyBytes += taken
        if taken < count { paused = true }
        return taken
    }

    private func stepBody(_ framing: Framing, _ buffer: inout ByteBuffer) -> Bool {
        switch framing {
        case .untilClose:
            return deliver(&buffer, upTo: .max) > 0
        case .length(let remaining):
            let taken = deliver(&buffer, upTo: remaining)
            if isDone { return false }
            phase = .body(.length(remaining: remaining - taken))
            if remaining - taken == 0 {
                end(.complete)
                context?.close(promise: nil)
            }
            return taken > 0
        case .chunkData(let remaining):
            let taken = deliver(&buffer, upTo: remaining)
            if isDone { return false }
            phase = .body(remaining - taken == 0 ? .chunkDataEnd : .chunkData(remaining: remaining - taken))
            return taken > 0
        case .chunkSize, .chunkDataEnd, .trailers:
            guard let line = readLine(&buffer) else {
                if buffer.readableBytes > 1024 {
                    end(.invalid("a malformed chunked body"))
                    context?.close(promise: nil)
                }
                return false
            }
            switch framing {
            case .chunkSize:
                let sizeText = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace() } ?? ""
                guard let size = Int(sizeText, radix: 16), size >= 0 else {
                    end(.invalid("a malformed chunked body"))
                    context?.close(promise: nil)
                    return false
                }
                phase = .body(size == 0 ? .trailers : .chunkData(remaining: size))
            case .chunkDataEnd:
                guard line.isEmpty else {
                    end(.invalid("a malformed chunked body"))
                    context?.close(promise: nil)
                    return false
                }
                phase = .body(.chunkSize)
            default:
                if line.isEmpty {
                    end(.complete)
                    context?.close(promise: nil)
                    return false
                }
            }
            return true
        }
    }

    /// A line ending in LF (CR dropped), taken from the buffer; nil until it has all arrived.
    private func readLine(_ buffer: inout ByteBuffer) -> String? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: 0x0A) else { return nil }
        let length = newline - view.startIndex
        var line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }
}

/// A short description of a networking error for messages.
func describe(_ error: any Error) -> String {
    if let error = error as? IOError {
        switch error.errnoCode {
        case 111: return "connection refused"
        case 104: return "connection reset by the server"
        case 110: return "connection timed out"
        case 113, 101: return "host unreachable"
        default: return "\(error)"
        }
    }
    if let error = error as? NIOConnectionError {
        if let first = error.connectionErrors.first { return describe(first.error) }
        if error.dnsAError != nil || error.dnsAAAAError != nil { return "host not found (\(error.host))" }
        return "could not connect to \(error.host)"
    }
    if let error = error as? ChannelError {
        switch error {
        case .connectTimeout: return "connection timed out"
        case .eof: return "the server closed the connection"
        default: return "\(error)"
        }
    }
    if let error = error as? NIOSSLError {
        if case .handshakeFailed = error {
            let detail = "\(error)"
            if detail.contains("CERTIFICATE_VERIFY_FAILED") { return "TLS: the server's certificate is not trusted" }
            return "TLS handshake failed (\(detail))"
        }
        if case .uncleanShutdown = error { return "the server closed the connection (TLS)" }
        return "TLS: \(error)"
    }
    let text = "\(error)"
    if text.contains("connection refused") || text.contains("Connection refused") { return "connection refused" }
    return text
}
