import ControlProtocol
import GRDB
import GRDBSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A query tried at once on a thread that must not be held up (a client's event loop), so that the
/// usual small answer (`lsinfo` of an album, `find album X`) costs no trip to another thread and back —
/// which took most of its time.
///
/// A quick query is abandoned, having sent nothing, as soon as it proves not small: when one of its
/// statements has taken about `steps` of SQLite's virtual-machine operations, or when its answer passes
/// `answerLimit` bytes. Its caller then runs it again where it may take long.
enum QuickQuery {
    /// SQLite's operations a quick statement may take: a fraction of a millisecond.
    static let steps: Int32 = 20_000
    /// The most bytes of a quick answer: about 30 song blocks.
    static let answerLimit = 8 * 1024

    /// The state of the calling thread's quick query: 0 none, 1 running, 2 abandoned. Per thread, as
    /// each query runs on one.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static var state: Int {
        get { Int(bitPattern: pthread_getspecific(Self.key)) }
        set { pthread_setspecific(Self.key, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Whether the calling thread runs a quick query now.
    static var isRunning: Bool { Self.state != 0 }

    /// Marks the calling thread's quick query as abandoned: its answer is thrown away.
    static func abandon() {
        if Self.state != 0 { Self.state = 2 }
    }

    /// Runs `body` as a quick query; nil if it was abandoned.
    static func run<T>(_ body: () throws(Ack) -> T) throws(Ack) -> T? {
        Self.state = 1
        defer { Self.state = 0 }
        do {
            let value = try body()
            return Self.state == 2 ? nil : value
        } catch {
            if Self.state == 2 { return nil }
            throw error
        }
    }

    /// Runs `body` on `db` with SQLite's work bounded when a quick query runs; a statement stopped for
    /// it throws (SQLITE_INTERRUPT) and abandons the query.
    static func bounded<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        guard Self.isRunning else { return try body(db) }
        sqlite3_progress_handler(db.sqliteConnection, Self.steps, { _ in 1 }, nil)
        defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
        do {
            return try body(db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            Self.abandon()
            throw error
        }
    }
}

extension MusicLibrary {
    /// Runs `body` — one of the library's queries — only if it answers at once: see `QuickQuery`. Nil
    /// when it did not (nothing of its answer counts); then run it again on a thread that may wait.
    public func quickly<T>(_ body: () throws(Ack) -> T) throws(Ack) -> T? {
        try QuickQuery.run(body)
    }

    /// Whether a query may go on after writing a row: a long answer is offered to `flush` (false: the
    /// client has gone); a quick query that outgrew its limit is abandoned.
    static func goesOn(_ response: inout ResponseWriter, _ flush: ResponseFlush) -> Bool {
        if QuickQuery.isRunning {
            guard response.count < QuickQuery.answerLimit else {
                QuickQuery.abandon()
                return false
            }
            return true
        }
        return response.count < Self.streamChunk || flush(&response)
    }

    /// For work a quick query must not do (a file-system probe): abandons it. True when the caller
    /// must stop because of that.
    public static func abandonsQuickQuery() -> Bool {
        guard QuickQuery.isRunning else { return false }
        QuickQuery.abandon()
        return true
    }
}
