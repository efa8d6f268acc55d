import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's sticker database: name=value pairs that clients attach to songs (ratings, play counts), in an
/// SQLite file of its own, through GRDB.
///
/// The schema is MPD's own (`sticker(type, uri, name, value)` with a unique index on the first three),
/// and every query is MPD's SQL, so that answers match MPD's to the byte (`sticker find`'s `<` compares
/// strings, `inc` adds as SQLite adds) and an MPD `sticker_file` can be used as it is, both ways.
///
/// Unlike the library, which is a cache, stickers are the user's own data: a file that is not a sticker
/// database (another program's, or damaged) is never moved, rewritten or replaced. Opening it fails,
/// saying why, and the daemon runs without stickers until the file is put right.
public final class StickerDatabase: Sendable {
    /// The file.
    public let path: String
    private let pool: DatabasePool

    /// What `find` compares a sticker's value with: MPD 0.23's `=`, `<`, `>` (strings, as SQLite compares
    /// them), and MPD 0.24's `eq`, `lt`, `gt` (integers), `contains` and `starts_with`.
    public enum Comparison: String, Sendable, CaseIterable {
        case equal = "="
        case less = "<"
        case greater = ">"
        case equalInteger = "eq"
        case lessInteger = "lt"
        case greaterInteger = "gt"
        case contains
        case startsWith = "starts_with"

        /// The SQL condition on `value`, with one parameter: MPD's, word for word.
        var condition: String {
            switch self {
            case .equal: "value=?"
            case .less: "value<?"
            case .greater: "value>?"
            case .equalInteger: "CAST(value AS INT)=?"
            case .lessInteger: "CAST(value AS INT)<?"
            case .greaterInteger: "CAST(value AS INT)>?"
            case .contains: "value LIKE ('%' || ? || '%')"
            case .startsWith: "value LIKE (? || '%')"
            }
        }
    }

    /// How `find` orders what it finds (MPD 0.24's `sort`): by URI, value, or value read as an integer.
    public enum Order: String, Sendable, CaseIterable {
        case uri
        case value
        case integerValue = "value_int"

        var expression: String {
            switch self {
            case .uri: "uri"
            case .value: "value"
            case .integerValue: "CAST(value AS INT)"
            }
        }
    }

    /// One sticker `find` found.
    public struct Found: Sendable, Hashable {
        public var uri: String
        public var value: String
    }

    /// MPD's schema, as MPD creates it.
    private static let schema = """
        CREATE TABLE IF NOT EXISTS sticker(
            type VARCHAR NOT NULL, uri VARCHAR NOT NULL, name VARCHAR NOT NULL, value VARCHAR NOT NULL);
        CREATE UNIQUE INDEX IF NOT EXISTS sticker_value ON sticker(type, uri, name);
        """

    /// Opens the sticker database at `path`, creating it (and its directory) when missing. A file that
    /// exists is first looked at read-only: one that is not an SQLite database, is damaged, or holds
    /// something else than stickers is refused, untouched, with the reason.
    public init(path: String) throws(StickerDatabaseError) {
        self.path = path
        Self.makeParentDirectory(of: path)
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw StickerDatabaseError("\(path) is not a regular file")
            }
            if info.st_size > 0 {
                try Self.inspect(path)
            }
        }
        do {
            var configuration = Configuration()
            configuration.label = "stickers"
            configuration.maximumReaderCount = 4
            // The daemon's threads, and another program on the same file (MPD, pointed at it), take turns.
            configuration.busyMode = .timeout(5)
            self.pool = try DatabasePool(path: path, configuration: configuration)
            try self.pool.writeWithoutTransaction { db in
                try db.execute(sql: Self.schema)
                // A crash loses at most the last change, never the file (WAL commits are atomic).
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        } catch {
            throw StickerDatabaseError(Self.explain(error, path: path))
        }
    }

    /// Checks, without writing, that the file at `path` is an SQLite database whose every page reads and
    /// which holds stickers (MPD's table) or nothing at all.
    private static func inspect(_ path: String) throws(StickerDatabaseError) {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.label = "stickers-check"
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "ok"
                guard check == "ok" else {
                    throw StickerDatabaseError("\(path) is damaged (SQLite's check says: \(check))")
                }
                let tables = try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                if tables.isEmpty { return }
                guard tables.contains("sticker") else {
                    throw StickerDatabaseError(
                        "\(path) is another program's database (tables \(tables.joined(separator: ", "))), not stickers"
                    )
                }
                let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(sticker)").map { $0["name"] as String })
                let missing = ["type", "uri", "name", "value"].filter { !columns.contains($0) }
                guard missing.isEmpty else {
                    throw StickerDatabaseError(
                        "\(path) has a sticker table without the column\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")): not MPD's sticker database"
                    )
                }
            }
        } catch let error as StickerDatabaseError {
            throw error
        } catch {
            throw StickerDatabaseError(Self.explain(error, path: path))
        }
    }

    /// An error from the file in words a person can act on.
    static func explain(_ error: any Error, path: String) -> String {
        if let error = error as? StickerDatabaseError { return error.description }
        guard let error = error as? DatabaseError else { return "\(path): \(error)" }
        let message = error.message ?? "unknown error"
        switch error.resultCode {
        case .SQLITE_NOTADB: return "\(path) is not an SQLite database (SQLite: \(message))"
        case .SQLITE_CORRUPT: return "\(path) is damaged (SQLite: \(message))"
        case .SQLITE_FULL: return "the disk holding \(path) is full"
        default: return "\(path): SQLite error \(error.resultCode.rawValue): \(message)"
        }
    }

    private static func makeParentDirectory(of path: String) {
        var parent = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            parent += parent.isEmpty && component.isEmpty ? "/" : (parent.hasSuffix("/") ? "" : "/") + component
            if !parent.isEmpty && parent != "/" { mkdir(parent, 0o755) }
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(StickerDatabaseError) -> T {
        do {
            return try self.pool.read(body)
        } catch {
            throw StickerDatabaseError(Self.explain(error, path: self.path))
        }
    }

    private func write<T>(_ body: (Database) throws -> T) throws(StickerDatabaseError) -> T {
        do {
            return try self.pool.write(body)
        } catch {
            throw StickerDatabaseError(Self.explain(error, path: self.path))
        }
    }

    // MARK: - MPD's operations

    /// The value of sticker `name` on `uri`; nil when there is none (or the name is empty, as in MPD).
    public func value(type: String, uri: String, name: String) throws(StickerDatabaseError) -> String? {
        guard !name.isEmpty else { return nil }
        return try self.read { db in
            try String.fetchOne(
                db, sql: "SELECT value FROM sticker WHERE type=? AND uri=? AND name=?", arguments: [type, uri, name])
        }
    }

    /// Every sticker on `uri`, by name in byte order (MPD keeps them in a `std::map`).
    public func list(type: String, uri: String) throws(StickerDatabaseError) -> [(name: String, value: String)] {
        try self.read { db in
            try Row.fetchAll(
                db, sql: "SELECT name, value FROM sticker WHERE type=? AND uri=? ORDER BY name", arguments: [type, uri]
            ).map { ($0[0], $0[1]) }
        }
    }

    /// Sets sticker `name` on `uri` to `value`, replacing any value it had. An empty name stores nothing
    /// and returns false, as MPD 0.23 does (without an error).
    @discardableResult
    public func set(type: String, uri: String, name: String, value: String) throws(StickerDatabaseError) -> Bool {
        guard !name.isEmpty else { return false }
        try self.write { db in try Self.set(db, type: type, uri: uri, name: name, value: value) }
        return true
    }

    private static func set(_ db: Database, type: String, uri: String, name: String, value: String) throws {
        try db.execute(
            sql: """
                INSERT INTO sticker(type, uri, name, value) VALUES(?, ?, ?, ?) \
                ON CONFLICT(type, uri, name) DO UPDATE SET value = excluded.value
                """, arguments: [type, uri, name, value])
    }

    /// MPD 0.24's `sticker inc` (or `dec`, with `decrement`): a new sticker takes `value` as it is, an
    /// existing one becomes its value plus (minus) `value`, added as SQLite adds (text that is not a
    /// number counts as 0; the sum is stored as text).
    public func increment(
        type: String, uri: String, name: String, by value: String, decrement: Bool = false
    ) throws(StickerDatabaseError) {
        try self.write { db in
            try Self.increment(db, type: type, uri: uri, name: name, by: value, decrement: decrement)
        }
    }

    private static func increment(
        _ db: Database, type: String, uri: String, name: String, by value: String, decrement: Bool
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO sticker (type, uri, name, value) VALUES (?, ?, ?, ?) \
                ON CONFLICT(type, uri, name) DO UPDATE SET value = value \(decrement ? "-" : "+") ?
                """, arguments: [type, uri, name, value, value])
    }

    /// Deletes every sticker on `uri`; false when there was none.
    public func delete(type: String, uri: String) throws(StickerDatabaseError) -> Bool {
        try self.write { db in
            try db.execute(sql: "DELETE FROM sticker WHERE type=? AND uri=?", arguments: [type, uri])
            return db.changesCount > 0
        }
    }

    /// Deletes sticker `name` on `uri`; false when there was none.
    public func delete(type: String, uri: String, name: String) throws(StickerDatabaseError) -> Bool {
        try self.write { db in
            try db.execute(
                sql: "DELETE FROM sticker WHERE type=? AND uri=? AND name=?", arguments: [type, uri, name])
            return db.changesCount > 0
        }
    }

    /// The stickers called `name` on URIs below the directory `base` ("" for all), whose value passes
    /// `comparison` if one is given; by URI in byte order (MPD's index order), or as `order` says.
    public func find(
        type: String, below base: String, name: String, comparison: (Comparison, String)? = nil,
        order: Order? = nil, descending: Bool = false
    ) throws(StickerDatabaseError) -> [Found] {
        // MPD's prefix: the directory and a slash. Its `LIKE` (which folds ASCII case and reads `%` and
        // `_` as wildcards) only narrows the search; the exact prefix is checked here, as MPD checks it.
        let prefix = base.isEmpty ? "" : base + "/"
        var sql = "SELECT uri,value FROM sticker WHERE type=? AND uri LIKE (? || '%') AND name=?"
        var arguments: StatementArguments = [type, prefix, name]
        if let (comparison, value) = comparison {
            sql += " AND " + comparison.condition
            arguments += [value]
        }
        let direction = descending ? " DESC" : ""
        if let order, order != .uri {
            sql += " ORDER BY \(order.expression)\(direction), uri"
        } else {
            sql += " ORDER BY uri\(direction)"
        }
        let rows = try self.read { db in try Row.fetchAll(db, sql: sql, arguments: arguments) }
        let prefixBytes = Array(prefix.utf8)
        return rows.compactMap { row -> Found? in
            let uri: String = row[0]
            guard uri.utf8.starts(with: prefixBytes) else { return nil }
            return Found(uri: uri, value: row[1])
        }
    }

    // MARK: - Play statistics

    /// Counts one more of counter `counter` (`playCount`, `skipCount`) on `uri` and sets `timestampName`
    /// (`lastPlayed`, `lastSkipped`) to `timestamp`, Unix seconds, in one transaction: myMPD's stickers,
    /// with its values (decimal integers).
    public func count(
        type: String = "song", uri: String, counter: String, timestampName: String, timestamp: Int64
    ) throws(StickerDatabaseError) {
        try self.write { db in
            try Self.increment(db, type: type, uri: uri, name: counter, by: "1", decrement: false)
            try Self.set(db, type: type, uri: uri, name: timestampName, value: String(timestamp))
        }
    }
}

/// Why the sticker database cannot be used, or a query of it failed.
public struct StickerDatabaseError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

extension MusicLibrary {
    /// Whether the library holds a song at exactly `uri` (MPD's `GetSong`).
    public func hasSong(_ uri: String) throws(StickerDatabaseError) -> Bool {
        try !self.songsPresent([uri]).isEmpty
    }

    /// Which of `uris` the library holds as songs, looked up in one read.
    public func songsPresent(_ uris: [String]) throws(StickerDatabaseError) -> Set<String> {
        do {
            return try self.database.read { db in
                let statement = try db.cachedStatement(sql: "SELECT 1 FROM song WHERE uri = ?")
                var present: Set<String> = []
                for uri in uris where try Bool.fetchOne(statement, arguments: [uri]) != nil {
                    present.insert(uri)
                }
                return present
            }
        } catch {
            throw StickerDatabaseError("library: \(error)")
        }
    }
}
