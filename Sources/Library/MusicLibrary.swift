import Audio
import Dispatch
import Foundation
import GRDB
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The music library: the database of the music directory's songs, kept current by update jobs that
/// run one at a time on a thread of their own while queries answer from the last committed state.
public final class MusicLibrary: Sendable {
    /// What the library tells the daemon about its jobs.
    public enum Event: Sendable {
        /// Job `id` started.
        case updateStarted(id: Int)
        /// Job `id` finished; `report.changed` says whether the database changed.
        case updateFinished(id: Int, report: UpdateReport)
        /// Something worth one line in the log (a file moved aside, a skipped file, a failed job).
        case notice(String)
    }

    /// The music directory, without a trailing slash.
    public let musicDirectory: String
    /// The database now: replaced only when the file turns out to be damaged (see `rebuild`).
    var database: LibraryDatabase { self.currentDatabase.withLock { $0 } }
    private let currentDatabase: Mutex<LibraryDatabase>
    private let databasePath: String
    private let events: @Sendable (Event) -> Void
    private let jobs = Mutex(JobQueue())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let jobThread = Mutex<pthread_t?>(nil)
    private let cancellation = WalkCancellation()
    private let cachedStats = Mutex(LibraryStats())
    private let watcher: LibraryWatcher?
    /// The library the watcher's changes go to: set once `self` exists, cleared at shutdown.
    private let watcherTarget: Target?

    private final class Target: Sendable {
        let library = Mutex<MusicLibrary?>(nil)
    }

    /// A count that grows whenever the database changes: an answer kept with an earlier count is stale.
    public var changeCount: Int { LibraryDatabase.changes.load(ordering: .acquiring) }

    /// The figures `stats` shows, as of the last update that finished.
    public var stats: LibraryStats { self.cachedStats.withLock { $0 } }

    /// At most this many jobs wait, as in MPD; the next `update` is refused with ACK 54.
    public static let maximumQueuedJobs = 32

    /// Gives back the memory SQLite keeps between queries: the readers are closed (those at work once
    /// done; they open again when a query needs one), and the writer drops its page cache and
    /// statements once it is free. Returns at once: GRDB's `releaseMemory` would wait for every read
    /// under way, and hold up new ones meanwhile, behind a client reading a long answer slowly.
    public func releaseMemory() {
        self.database.pool.releaseMemoryEventually()
    }

    private struct JobQueue {
        var nextID = 1
        var queued: [(id: Int, uri: String, rescan: Bool)] = []
        var running: Int?
        var stopped = false
    }

    /// Opens the database at `databasePath` for the music in `musicDirectory` and starts the thread
    /// that runs update jobs. `events` is called from that thread.
    /// With `watches`, inotify keeps the library current between updates (changes are gathered until
    /// things are quiet, then updated); `rescanInterval` (milliseconds) is how often everything is
    /// rescanned instead when the kernel cannot watch it all.
    public init(
        musicDirectory: String, databasePath: String, watches: Bool = true, rescanInterval: Int64 = 60_000,
        watchLimit: Int? = nil, events: @escaping @Sendable (Event) -> Void
    ) throws {
        var directory = musicDirectory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        self.musicDirectory = directory
        self.events = events
        Self.makeParentDirectory(of: databasePath)
        self.databasePath = databasePath
        self.currentDatabase = Mutex(
            try LibraryDatabase(path: databasePath) { aside, reason in
                events(.notice("library \(databasePath): \(reason); moved aside to \(aside) and rebuilt"))
            })
        if watches {
            let updates = Target()
            self.watcher = LibraryWatcher(rescanInterval: rescanInterval, watchLimit: watchLimit) { uris in
                guard let library = updates.library.withLock({ $0 }) else { return }
                for uri in uris {
                    _ = try? library.update(uri)
                }
            } notice: { text in
                events(.notice("library: \(text)"))
            }
            self.watcherTarget = updates
        } else {
            self.watcher = nil
            self.watcherTarget = nil
        }
        if let stats = try? self.readStats() {
            self.cachedStats.withLock { $0 = stats }
        }
        self.watcherTarget?.library.withLock { $0 = self }
        // SQLite's deletes through the full-text index outgrew a small thread stack, corrupting the
        // heap: the job thread gets what the main thread has.
        let thread = startThread(stackSize: 8 << 20) { [self] in self.runJobs() }
        self.jobThread.withLock { $0 = thread }
    }

    private static func makeParentDirectory(of path: String) {
        var parent = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            parent += parent.isEmpty && component.isEmpty ? "/" : (parent.hasSuffix("/") ? "" : "/") + component
            if !parent.isEmpty && parent != "/" { mkdir(parent, 0o755) }
        }
    }

    /// Queues an update of `uri` ("" for everything) and returns its job id, which `status` shows as
    /// `updating_db` while it runs. A request for what a queued job already covers joins it, as in MPD.
    public func update(_ uri: String, rescan: Bool = false) throws(UpdateRefusal) -> Int {
        let id = try self.jobs.withLock { jobs throws(UpdateRefusal) -> Int in
            if let same = jobs.queued.first(where: { $0.uri == uri && $0.rescan == rescan }) {
                return same.id
            }
            guard jobs.queued.count < Self.maximumQueuedJobs else { throw UpdateRefusal.queueFull }
            let id = jobs.nextID
            jobs.nextID = jobs.nextID == Int(Int32.max) ? 1 : jobs.nextID + 1
            jobs.queued.append((id, uri, rescan))
            return id
        }
        self.wakeUp.signal()
        return id
    }

    /// Why an update was not queued.
    public enum UpdateRefusal: Error, Sendable {
        case queueFull
    }

    /// The job running now, if any: `status` shows it as `updating_db`.
    public var runningJob: Int? {
        self.jobs.withLock { $0.running ?? $0.queued.first?.id }
    }

    /// Stops the job thread and the watcher and waits for both to end: the running job stops at its
    /// next batch (what it wrote stays, and the next start finishes the job).
    public func shutdown() {
        let first = self.jobs.withLock { jobs -> Bool in
            defer { jobs.stopped = true }
            return !jobs.stopped
        }
        guard first else { return }
        self.watcher?.stop()
        self.watcherTarget?.library.withLock { $0 = nil }
        self.cancellation.cancel()
        self.wakeUp.signal()
        if let thread = self.jobThread.withLock({ $0.take() }) {
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)  // asked from one of its own events: it ends by itself
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Points the watcher at every directory the library holds now.
    private func watchDirectories() {
        guard let watcher = self.watcher,
            let directories = try? self.database.read({ db in
                try String.fetchAll(db, sql: "SELECT uri FROM directory")
            })
        else { return }
        watcher.watch(directories) { self.path(of: $0) }
    }

    /// Closes the damaged database (waiting for the queries reading it), moves it aside, starts an empty
    /// one in its place and queues a full update to fill it. Queries wait meanwhile.
    private func rebuild(because error: any Error) {
        do {
            try self.currentDatabase.withLock { database in
                try? database.pool.close()
                let aside = LibraryDatabase.moveAside(self.databasePath)
                database = try LibraryDatabase(path: self.databasePath)
                LibraryDatabase.changes.add(1, ordering: .releasing)
                self.events(.notice("library \(self.databasePath): \(error); moved aside to \(aside) and rebuilt"))
            }
        } catch {
            self.events(.notice("library \(self.databasePath) could not be rebuilt: \(error)"))
            return
        }
        self.cachedStats.withLock { $0 = (try? self.readStats()) ?? LibraryStats() }
        _ = try? self.update("")
    }

    private func runJobs() {
        // The file opened; now every page of it is checked, before any job writes to it.
        do {
            try self.database.check()
        } catch {
            if LibraryDatabase.isDamage(error) {
                self.rebuild(because: error)
            } else {
                self.events(.notice("library \(self.databasePath) could not be checked: \(error)"))
            }
        }
        // A job that fails on a damaged file rebuilds it, but not twice in a row.
        var rebuiltForLastJob = false
        while true {
            self.wakeUp.wait()
            while let job = self.jobs.withLock({ jobs -> (id: Int, uri: String, rescan: Bool)? in
                guard !jobs.stopped, !jobs.queued.isEmpty else { return nil }
                let job = jobs.queued.removeFirst()
                jobs.running = job.id
                return job
            }) {
                self.events(.updateStarted(id: job.id))
                var report = UpdateReport()
                do {
                    let update = LibraryUpdate(
                        database: self.database, musicDirectory: self.musicDirectory, cancellation: self.cancellation)
                    report = try update.run(uri: job.uri, rescan: job.rescan)
                    rebuiltForLastJob = false
                } catch {
                    if LibraryDatabase.isDamage(error) && !rebuiltForLastJob {
                        rebuiltForLastJob = true
                        self.rebuild(because: error)
                    } else {
                        // A full disk rolls back the batch being written: the batches before it stay.
                        let kept =
                            LibraryDatabase.isDiskFull(error)
                            ? "; what was committed is kept, and the next update goes on from there" : ""
                        let reason = LibraryDatabase.explain(error, path: self.databasePath)
                        self.events(.notice("library update of \"\(job.uri)\" failed: \(reason)\(kept)"))
                    }
                    // Batches before the failure may have been committed: clients are told to look again.
                    report.unannounced = true
                }
                for skipped in report.skipped.prefix(100) {
                    self.events(.notice("library: skipped \(skipped)"))
                }
                if report.skipped.count > 100 {
                    self.events(.notice("library: skipped \(report.skipped.count - 100) more"))
                }
                if report.changed, let stats = try? self.readStats() {
                    self.cachedStats.withLock { $0 = stats }
                }
                self.watchDirectories()
                self.jobs.withLock { $0.running = nil }
                self.events(.updateFinished(id: job.id, report: report))
            }
            if self.jobs.withLock({ $0.stopped }) {
                return
            }
        }
    }
}
