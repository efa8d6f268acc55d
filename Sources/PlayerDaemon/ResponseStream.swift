import ControlProtocol
import Dispatch
import NIOCore
import Synchronization

/// Sends a long answer to its client in pieces while the command is still writing it (`listallinfo` of
/// 100,000 songs is 27 MB), so that the daemon's memory stays bounded whatever the answer's size.
///
/// `send` blocks its thread (one of the file-system work threads) until the piece is in the socket: a
/// client reading slowly slows only its own answer, and its query gives its turn to others meanwhile.
/// One that reads nothing for `stallLimit` is disconnected rather than allowed to hold a thread for
/// ever.
final class ResponseStream: Sendable {
    private let channel: Channel
    private let sentSomething = Atomic<Bool>(false)
    /// How long a client may leave a piece unread.
    static let stallLimit: DispatchTimeInterval = .seconds(60)
    /// The same while most library threads already wait for clients that do not read: others' long
    /// answers would otherwise queue behind them (FileSystemWork.waitingForClient).
    static let crowdedStallLimit: DispatchTimeInterval = .seconds(5)

    init(channel: Channel) {
        self.channel = channel
    }

    /// Writes what `response` holds to the client, empties it, and returns whether the client is still
    /// there to read more.
    func send(_ response: inout ResponseWriter) -> Bool {
        guard !response.isEmpty else { return self.channel.isActive }
        self.sentSomething.store(true, ordering: .relaxed)
        var buffer = self.channel.allocator.buffer(capacity: response.count)
        response.withUnsafeBytes { _ = buffer.writeBytes($0) }
        response.removeAll()
        let written = DispatchSemaphore(value: 0)
        let box = Box()
        self.channel.writeAndFlush(buffer).whenComplete { result in
            if case .success = result { box.flag.store(true, ordering: .relaxed) }
            written.signal()
        }
        // A library query waits without holding a turn of the others' (FileSystemWork.waitingForClient).
        let outcome = FileSystemWork.waitingForClient { crowded in
            written.wait(timeout: .now() + (crowded ? Self.crowdedStallLimit : Self.stallLimit))
        }
        guard outcome == .success else {
            self.channel.close(promise: nil)
            return false
        }
        return box.flag.load(ordering: .relaxed)
    }

    /// Whether part of the answer went out through the stream (then the command's own answer is only
    /// its tail).
    var hasSent: Bool { self.sentSomething.load(ordering: .relaxed) }

    private final class Box: Sendable {
        let flag = Atomic<Bool>(false)
    }
}
