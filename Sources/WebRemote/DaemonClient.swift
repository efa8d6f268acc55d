import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// What the daemon answered one command: its `key: value` lines and the bytes of a binary chunk
/// (`albumart`, `readpicture`), or its ACK.
struct DaemonAnswer: Sendable {
    var fields: [(key: String, value: String)] = []
    var binary: [UInt8]?

    /// The first value of `key`.
    subscript(key: String) -> String? {
        self.fields.first { $0.key == key }?.value
    }
}

/// Why a command got no answer, or what the daemon refused.
enum DaemonFailure: Error, Sendable {
    /// `ACK [code@index] {command} message`, split.
    case ack(code: Int, message: String)
    /// The daemon refused the connection (too many from one host, or at all): its message.
    case refused(String)
    /// The connection ended before the answer.
    case closed
}

/// One client of the daemon over a connected socket (a socketpair's end that the daemon serves as a
/// network client): commands go out in order and their answers are matched in order, so callers may
/// send at once without waiting for each other.
final class DaemonClient: Sendable {
    private let channel: any Channel
    private let reader: AnswerReader

    private init(channel: any Channel, reader: AnswerReader) {
        self.channel = channel
        self.reader = reader
    }

    /// Wraps `descriptor` (which it then owns) and waits for the daemon's greeting.
    static func connect(descriptor: Int32, group: any EventLoopGroup) async throws -> DaemonClient {
        let reader = AnswerReader()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(reader)
                    }
                }
                .withConnectedSocket(descriptor).get()
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        let client = DaemonClient(channel: channel, reader: reader)
        do {
            try await reader.greeted.futureResult.get()
        } catch {
            client.close()
            throw error
        }
        return client
    }

    /// Sends `name` with `arguments` (quoted as the protocol wants) and waits for its answer.
    func run(_ name: String, _ arguments: [String] = []) async throws(DaemonFailure) -> DaemonAnswer {
        var line = name
        for argument in arguments {
            line += " " + Self.quoted(argument)
        }
        line += "\n"
        let bytes = ByteBuffer(string: line)
        let channel = self.channel
        let reader = self.reader
        let promise = channel.eventLoop.makePromise(of: DaemonAnswer.self)
        channel.eventLoop.execute {
            // Queued before the write, on the loop that reads: the answer finds its promise.
            guard reader.expect(promise) else { return }
            channel.writeAndFlush(bytes, promise: nil)
        }
        do {
            return try await promise.futureResult.get()
        } catch let failure as DaemonFailure {
            throw failure
        } catch {
            throw .closed
        }
    }

    /// Whether the connection still stands.
    var isOpen: Bool { self.channel.isActive }

    /// Ends the connection; answers still awaited fail with `.closed`.
    func close() {
        self.channel.close(promise: nil)
    }

    /// An argument as the protocol reads it: in double quotes, with `"` and `\` escaped. Line breaks
    /// cannot be sent: they would end the command, so they become spaces.
    static func quoted(_ argument: String) -> String {
        var text = "\""
        for character in argument {
            switch character {
            case "\"", "\\": text += "\\" + String(character)
            case "\n", "\r", "\r\n": text += " "
            default: text.append(character)
            }
        }
        return text + "\""
    }
}

/// Reads the daemon's answers off the connection and completes the oldest awaited one with each.
private final class AnswerReader: ChannelInboundHandler, @unchecked Sendable {
    // Used on the channel's event loop only (and `greeted` is a promise): hence @unchecked.
    typealias InboundIn = ByteBuffer

    let greeted: EventLoopPromise<Void>
    private var buffer = ByteBuffer()
    private var waiting = CircularBuffer<EventLoopPromise<DaemonAnswer>>()
    private var answer = DaemonAnswer()
    private var answerBytes = 0
    /// The bytes of a binary chunk still to come (plus its closing newline), once `binary: N` was read.
    private var binaryRemaining: Int?
    private var isGreeted = false
    private var isClosed = false

    /// More than this in one answer is refused: the connection is closed rather than memory spent.
    static let answerLimit = 64 * 1024 * 1024

    init() {
        self.greeted = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
    }

    /// Queues `promise` for the next answer; false (and the promise failed) once the connection ended.
    func expect(_ promise: EventLoopPromise<DaemonAnswer>) -> Bool {
        guard !self.isClosed else {
            promise.fail(DaemonFailure.closed)
            return false
        }
        self.waiting.append(promise)
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = self.unwrapInboundIn(data)
        self.buffer.writeBuffer(&incoming)
        do {
            try self.parse()
        } catch {
            context.close(promise: nil)
        }
        if self.buffer.readerIndex > 64 * 1024 {
            self.buffer.discardReadBytes()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isClosed = true
        self.greeted.fail(DaemonFailure.closed)
        while let promise = self.waiting.popFirst() {
            promise.fail(DaemonFailure.closed)
        }
        context.fireChannelInactive()
    }

    private struct TooLarge: Error {}

    private func parse() throws {
        while true {
            if let remaining = self.binaryRemaining {
                guard self.buffer.readableBytes >= remaining + 1 else { return }
                self.answer.binary = self.buffer.readBytes(length: remaining)
                self.buffer.moveReaderIndex(forwardBy: 1)
                self.binaryRemaining = nil
                continue
            }
            guard let newline = self.buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return }
            let length = newline - self.buffer.readerIndex
            let line = self.buffer.readString(length: length) ?? ""
            self.buffer.moveReaderIndex(forwardBy: 1)
            self.answerBytes += length + 1
            guard self.answerBytes <= Self.answerLimit else { throw TooLarge() }
            self.take(line)
        }
    }

    private func take(_ line: String) {
        if !self.isGreeted {
            self.isGreeted = true
            if line.hasPrefix("OK MPD ") {
                self.greeted.succeed()
            } else {
                self.greeted.fail(DaemonFailure.refused(Self.ack(line).message))
            }
            return
        }
        if line == "OK" {
            self.finish(.success(self.answer))
        } else if line.hasPrefix("ACK ") {
            let (code, message) = Self.ack(line)
            self.finish(.failure(DaemonFailure.ack(code: code, message: message)))
        } else if let colon = line.firstIndex(of: ":") {
            let key = String(line[..<colon])
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            if key == "binary", let count = Int(value), count >= 0, count <= Self.answerLimit {
                self.binaryRemaining = count
            } else {
                self.answer.fields.append((key, String(value)))
            }
        }
    }

    private func finish(_ result: Result<DaemonAnswer, any Error>) {
        self.answer = DaemonAnswer()
        self.answerBytes = 0
        guard let promise = self.waiting.popFirst() else { return }
        promise.completeWith(result)
    }

    /// `ACK [50@0] {play} No such song` → (50, "No such song").
    private static func ack(_ line: String) -> (code: Int, message: String) {
        var code = 0
        if let open = line.firstIndex(of: "["), let at = line.firstIndex(of: "@"), open < at {
            code = Int(line[line.index(after: open)..<at]) ?? 0
        }
        let message: Substring
        if let brace = line.firstIndex(of: "}") {
            message = line[line.index(after: brace)...].drop { $0 == " " }
        } else {
            message = Substring(line)
        }
        return (code, String(message))
    }
}
