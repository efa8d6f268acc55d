import GRDB
import GRDBSQLite

/// A cached GRDB statement bound and stepped through SQLite's C interface: for the scan's inserts and
/// the queries clients make most, where GRDB's generic arguments, rows and cursors cost more than
/// SQLite's own work.
struct RawStatement {
    private let statement: Statement

    init(_ db: Database, _ sql: String) throws {
        self.statement = try db.cachedStatement(sql: sql)
    }

    /// `statement`, with `arguments` bound.
    init(_ statement: Statement, arguments: StatementArguments) throws {
        self.statement = statement
        try statement.setArguments(arguments)
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

    func bind(_ index: Int32, _ value: [UInt8]) {
        value.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(self.handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ index: Int32, _ value: Double?) {
        guard let value else {
            sqlite3_bind_null(self.handle, index)
            return
        }
        sqlite3_bind_double(self.handle, index, value)
    }

    /// Steps to the next row of a query: false when there is none, and then the statement is reset
    /// for its next use.
    func next(_ db: Database) throws -> Bool {
        switch sqlite3_step(self.handle) {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            sqlite3_reset(self.handle)
            return false
        case let code:
            sqlite3_reset(self.handle)
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// Resets the statement: a query left before its last row must be, before the statement is used again.
    func reset() {
        sqlite3_reset(self.handle)
    }

    /// The integer in column `column` of the current row.
    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(self.handle, column)
    }

    /// The text in column `column` of the current row ("" for NULL).
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(self.handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(self.handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// `prefix` followed by the text in column `column` of the current row. Only the column's bytes are
    /// checked for UTF-8 (`prefix` is a string already): `add` of a directory of 10,000 songs spent
    /// two fifths of its database read checking whole paths, the music directory's in each.
    func string(_ column: Int32, after prefix: String) -> String {
        guard let text = sqlite3_column_text(self.handle, column) else { return prefix }
        let count = Int(sqlite3_column_bytes(self.handle, column))
        var result = prefix
        result.reserveCapacity(prefix.utf8.count + count)
        result.append(String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self))
        return result
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
