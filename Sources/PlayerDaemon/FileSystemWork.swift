import ControlProtocol
import NIOPosix
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// Runs work that blocks on the file system (directory walks, probing and tagging songs) on threads of
/// its own. Command handlers run on Swift's cooperative pool, which has one thread per core: a walk of
/// a large tree held there stalled every other client's `setvol`, `play` and `clear` behind it.
///
/// The walks' and tags' threads run at a lower CPU priority (nice 10) than the event loops and the
/// audio thread, so that however many clients walk huge trees at once, the rest are answered as if
/// nothing walked; there are few of them, so walks queue rather than multiply threads. The library's
/// threads keep the daemon's priority: their queries are bounded, and a client waits for each.
enum FileSystemWork {
    /// Which kind of work: each has its own threads, so that clients walking huge trees delay nobody's
    /// song blocks.
    enum Lane {
        /// Directory and playlist walks, and opening songs to see whether they play.
        case walks
        /// Reading tags for song blocks.
        case songInfo
        /// Library queries: a long `listallinfo` streaming to a slow client holds one of these.
        case library
    }

    private static let walks = Self.startedPool(threads: 4)
    private static let songInfo = Self.startedPool(threads: 2)
    private static let library = Self.startedPool(threads: 4)

    /// The nice value of the threads: below the daemon's other threads, whatever the machine's load.
    static let niceness: Int32 = 10

    private static func startedPool(threads: Int) -> NIOThreadPool {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }

    /// Runs `body` on `lane`, off the cooperative pool, and returns what it returned. Cancelling the
    /// calling task (its client went away) fires the `WalkCancellation` handed to `body`, which a walk
    /// checks as it goes, so that a walk nobody waits for ends within milliseconds.
    static func run<Value: Sendable>(
        on lane: Lane = .walks,
        _ body: @escaping @Sendable (WalkCancellation) throws(Ack) -> Value
    ) async throws(Ack) -> Value {
        let cancellation = WalkCancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Ack>, Never>) in
                Self.submit(on: lane) {
                    continuation.resume(returning: Result { () throws(Ack) in try body(cancellation) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Runs `body` on one of `lane`'s threads and returns at once. A client session hands library
    /// queries over this way, straight from its event loop: two thread hops for a round trip, where a
    /// task and a continuation took four (most of a `lsinfo DIR`'s time).
    static func submit(on lane: Lane, _ body: @escaping @Sendable () -> Void) {
        let pool =
            switch lane {
            case .walks: Self.walks
            case .songInfo: Self.songInfo
            case .library: Self.library
            }
        pool.submit { _ in
            // On Linux the nice value belongs to the thread: this one, which only ever runs this work.
            // Library queries keep the daemon's priority: they are bounded reads a client waits for (as
            // MPD answers them on its main thread), where a walk may take minutes.
            if lane != .library {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
            }
            body()
        }
    }
}
