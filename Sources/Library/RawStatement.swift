import GRDB
import GRDBSQLite

/// A cached GRDB statement bound and stepped through SQLite's C interface: for the scan's inserts,
/// where GRDB's generic argument arrays cost more than SQLite's own work.
struct RawStatement {
    private let statement: Statement

    init(_ db: Database, _ sql: String) throws {
        self.statement = try db.cachedStatement(sql: sql)
    }

    private var handle: OpaquePointer { self.statement.sqliteStatement }

    /// SQLite copies the bytes before `bind` returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(self.handle, index)
            return
        }
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(
                self.handle, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ index: Int32, _ value: Int64?) {
        guard let value else {
            sqlite3_bind_null(self.handle, index)
            return
        }
        sqlite3_bind_int64(self.handle, index, value)
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(self.handle, index, value)
    }

    func bind(_ index: Int32, _ value: Double?) {
        guard let value else {
            sqlite3_bind_null(self.handle, index)
            return
        }
        sqlite3_bind_double(self.handle, index, value)
    }

    /// Runs the statement once and readies it for the next values.
    func run(_ db: Database) throws {
        let code = sqlite3_step(self.handle)
        sqlite3_reset(self.handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
