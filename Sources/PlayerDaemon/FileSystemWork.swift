import ControlProtocol
import Dispatch
import PlayerCore

/// Runs work that blocks on the file system (directory walks, probing and tagging songs) on threads of
/// its own. Command handlers run on Swift's cooperative pool, which has one thread per core: a walk of
/// a large tree held there stalled every other client's `setvol`, `play` and `clear` behind it.
enum FileSystemWork {
    /// Which kind of work: each has its own threads, so that clients walking huge trees at once delay
    /// neither each other's song blocks nor anything else.
    enum Lane {
        /// Directory and playlist walks, and opening songs to see whether they play.
        case walks
        /// Reading tags for song blocks.
        case songInfo
    }

    private static let walks = DispatchQueue(label: "playerd.walks", qos: .utility, attributes: .concurrent)
    private static let songInfo = DispatchQueue(label: "playerd.song-info", qos: .utility, attributes: .concurrent)

    /// Runs `body` on `lane`, off the cooperative pool, and returns what it returned. Cancelling the
    /// calling task (its client went away) fires the `WalkCancellation` handed to `body`, which a walk
    /// checks as it goes, so that a walk nobody waits for ends within milliseconds.
    static func run<Value: Sendable>(
        on lane: Lane = .walks,
        _ body: @escaping @Sendable (WalkCancellation) throws(Ack) -> Value
    ) async throws(Ack) -> Value {
        let cancellation = WalkCancellation()
        let queue = lane == .walks ? Self.walks : Self.songInfo
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Ack>, Never>) in
                queue.async {
                    continuation.resume(returning: Result { () throws(Ack) in try body(cancellation) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }
}
