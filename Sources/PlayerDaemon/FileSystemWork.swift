import ControlProtocol
import Dispatch
import NIOPosix
import PlayerCore
import Synchronization

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
    /// The library's threads: as many as the database has readers (`LibraryDatabase`), of which only
    /// `libraryTurns` work at once. The rest are for answers waiting for their clients to read.
    private static let libraryThreads = 16
    private static let library = Self.startedPool(threads: Self.libraryThreads)
    /// Library queries that may work at once. A query whose answer waits for a slow client gives its
    /// turn up meanwhile (`waitingForClient`): a client that stops reading holds its own thread and
    /// place in its answer, never a turn of the other clients' queries (issue 27; with 4 such clients
    /// and 4 threads, everybody else's `lsinfo` waited for the minute's stall limit).
    private static let libraryTurns = DispatchSemaphore(value: 4)
    /// Whether the calling thread holds a library turn: non-nil when it does.
    private static let holdsTurn: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

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
            guard lane == .library else {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                body()
                return
            }
            Self.libraryTurns.wait()
            pthread_setspecific(Self.holdsTurn, UnsafeRawPointer(bitPattern: 1))
            body()
            pthread_setspecific(Self.holdsTurn, nil)
            Self.libraryTurns.signal()
        }
    }

    /// Runs `wait` — a wait for a client to read a piece of its answer — with the calling thread's
    /// library turn given to another query meanwhile, and taken back after. `wait` is told whether most
    /// library threads are already waiting so (`crowded`): a client that does not read then gets less
    /// time before it is dropped, so that such clients cannot hold every thread for a minute.
    static func waitingForClient<Value>(_ wait: (_ crowded: Bool) -> Value) -> Value {
        guard pthread_getspecific(Self.holdsTurn) != nil else { return wait(false) }
        let waiting = Self.waitingForClients.add(1, ordering: .relaxed).newValue
        Self.libraryTurns.signal()
        defer {
            Self.libraryTurns.wait()
            Self.waitingForClients.subtract(1, ordering: .relaxed)
        }
        return wait(waiting > Self.libraryThreads / 2)
    }

    /// Library threads waiting for their clients to read.
    private static let waitingForClients = Atomic<Int>(0)
}
