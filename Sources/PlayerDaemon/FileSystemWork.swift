import ControlProtocol
import Dispatch
import PlayerCore

/// Runs work that blocks on the file system (directory walks, probing and tagging songs) on threads of
/// its own. Command handlers run on Swift's cooperative pool, which has one thread per core: a walk of
/// a large tree held there stalled every other client's `setvol`, `play` and `clear` behind it.
enum FileSystemWork {
    private static let queue = DispatchQueue(label: "playerd.file-system", qos: .utility, attributes: .concurrent)

    /// Runs `body` off the cooperative pool and returns what it returned. Cancelling the calling task
    /// (its client went away) fires the `WalkCancellation` handed to `body`, which a walk checks as it
    /// goes, so that a walk nobody waits for ends within milliseconds.
    static func run<Value: Sendable>(
        _ body: @escaping @Sendable (WalkCancellation) throws(Ack) -> Value
    ) async throws(Ack) -> Value {
        let cancellation = WalkCancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Ack>, Never>) in
                Self.queue.async {
                    continuation.resume(returning: Result { () throws(Ack) in try body(cancellation) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }
}
