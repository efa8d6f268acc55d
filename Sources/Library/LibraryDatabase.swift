import Foundation
import GRDB
import MusicTags
import Synchronization

/// The library's SQLite file, through GRDB: the schema and its migrations, and the pool that reads
/// while one writer commits (WAL), so that no query ever waits for a scan.
///
/// A file that is not a database, is corrupt, or belongs to something else is moved aside (named in the
/// log) and a new one is made: the library is only a cache of the music directory, rebuilt by a scan.
final class LibraryDatabase: Sendable {
    let pool: DatabasePool
    let path: String

    /// `PRAGMA application_id` of playerd's library files ("PLYD"): a database without it is foreign.
    static let applicationID: Int32 = 0x504C_5944

    /// Opens (or creates) the database at `path`. `movedAside` is called with the path a bad file was
    /// moved to and why.
    init(path: String, movedAside: (String, String) -> Void = { _, _ in }) throws {
        self.path = path
        do {
            self.pool = try Self.open(path)
        } catch {
            movedAside(Self.moveAside(path), "\(error)")
            self.pool = try Self.open(path)
        }
    }

    /// Renames the file at `path` (and its WAL files) out of the way, and returns its new name. No
    /// connection may have it open: SQLite removes a WAL by name when its last connection closes.
    static func moveAside(_ path: String) -> String {
        let aside = "\(path).broken-\(Int(Date().timeIntervalSince1970))"
        for suffix in ["", "-wal", "-shm"] {
            _ = rename(path + suffix, aside + suffix)
        }
        return aside
    }

    /// How many times any library database of this process was written to (or replaced): answers kept
    /// from an earlier count are stale.
    static let changes = Atomic<Int>(0)

    /// Runs `body` in a write transaction, and counts the change.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        defer { Self.changes.add(1, ordering: .releasing) }
        return try self.pool.write(body)
    }

    /// Runs `body` in a read transaction on one of the pool's readers: the last committed state, never
    /// waiting for a writer.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try self.pool.unsafeRead { db in
            // GRDB's `read` prepares BEGIN and COMMIT anew for every read, which cost a small query
            // (`lsinfo` of an album) a third of its time: these stay prepared.
            try db.cachedStatement(sql: "BEGIN DEFERRED").execute()
            do {
                let value = try body(db)
                try db.cachedStatement(sql: "COMMIT").execute()
                return value
            } catch {
                try? db.cachedStatement(sql: "ROLLBACK").execute()
                throw error
            }
        }
    }

    /// What a bulk write changed on the writer's connection, to be put back by `endBulkWriting`.
    struct BulkWriting {
        let cacheSize: Int
        let autoCheckpoint: Int
    }

    /// Makes the writer's connection fit for a job writing thousands of songs: a page cache of
    /// `bulkCacheKiB` instead of 2 MiB, and a checkpoint every 64 MiB of log instead of every 4 MiB.
    ///
    /// Why: each song adds rows to indexes in no useful order (its title among all titles), so a batch
    /// touches pages all over them. With 2 MiB of cache, every such page was read back and written
    /// again for each batch once the indexes outgrew the cache: at 200,000 songs a scan wrote 15 KB per
    /// song to the log and the file (8 KB at 20,000) and read 24 KB, and its time per song grew with the
    /// library. The cache stays bounded (not the library's size) and is given back by `endBulkWriting`.
    func beginBulkWriting() throws -> BulkWriting {
        try self.pool.writeWithoutTransaction { db in
            let saved = BulkWriting(
                cacheSize: try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2048,
                autoCheckpoint: try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000)
            try db.execute(sql: "PRAGMA cache_size = -\(Self.bulkCacheKiB)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 16384")
            return saved
        }
    }

    /// Puts back what `beginBulkWriting` changed, and gives the cache's memory back.
    func endBulkWriting(_ saved: BulkWriting) {
        try? self.pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = \(saved.cacheSize)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(saved.autoCheckpoint)")
            try db.execute(sql: "PRAGMA shrink_memory")
        }
    }

    /// The writer's page cache while a job writes thousands of songs.
    static let bulkCacheKiB = 32 * 1024

    /// SQLite's check of every page (`PRAGMA quick_check`), which reads the whole file: a quarter of a
    /// second for 100,000 songs, so it runs on the job thread, not before the daemon answers. Throws
    /// `LibraryError.corrupt` naming the first fault.
    func check() throws {
        let result = try self.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") } ?? "ok"
        if result != "ok" {
            throw LibraryError.corrupt(result)
        }
    }

    /// Whether `error` says the file itself is damaged (then it is rebuilt), not that a query failed.
    static func isDamage(_ error: any Error) -> Bool {
        if error is LibraryError { return true }
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }

    /// Whether `error` says the disk holding the file is full (SQLITE_FULL: a write met ENOSPC). The file
    /// is whole (the transaction rolled back): not damage, and nothing to rebuild.
    static func isDiskFull(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_FULL
    }

    /// `error` from the file at `path` in words a person can act on: a full disk is named as such, with
    /// the file; another SQLite error gives its code and message, without the SQL that met it.
    static func explain(_ error: any Error, path: String) -> String {
        guard let error = error as? DatabaseError else { return "\(path): \(error)" }
        let code = error.resultCode.rawValue
        let message = error.message ?? "unknown error"
        if Self.isDiskFull(error) {
            return "the disk holding \(path) is full (SQLite error \(code): \(message))"
        }
        return "\(path): SQLite error \(code): \(message)"
    }

    private static func open(_ path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "library"
        // As many readers as threads that read (the library's 16, tag and walk threads, the event loops,
        // the job thread, the watcher), so that none waits for another: a client's event loop runs
        // quick queries itself and must never wait, even while every library thread holds a reader for
        // an answer its client does not read (with 16 readers, 18 such clients made a small `lsinfo`
        // wait 57 s). They open as needed; few are ever open at once.
        configuration.maximumReaderCount = 32
        // Another playerd on the same file (a second user session, tests) waits its turn to write.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // A small page cache per connection: the library lives on disk, not in the daemon's memory.
            try db.execute(sql: "PRAGMA cache_size = -2048")
            db.add(function: SQLFunctions.fold)
            db.add(function: SQLFunctions.regexp)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            // Checks that the file is a database at all, and ours: a foreign one has tables and another id.
            // Damage further in is found by `check()`, later.
            let id = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
            if id != Self.applicationID && tables > 0 {
                throw LibraryError.foreignDatabase
            }
            try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)")
            // A crash loses at most the last transaction, never the file (WAL commits are atomic).
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        try Self.migrator.migrate(pool)
        return pool
    }

    /// The FTS column holding tag `tag`'s folded values.
    static func textColumn(_ tag: TagName) -> String { "t\(tag.order)" }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            let textColumns = TagName.allCases.map { Self.textColumn($0) }.joined(separator: ", ")
            try db.execute(
                sql: """
                    CREATE TABLE directory (
                        id INTEGER PRIMARY KEY,
                        uri TEXT NOT NULL UNIQUE,
                        parent INTEGER REFERENCES directory(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        mtime INTEGER NOT NULL,
                        position INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX directory_by_parent ON directory(parent, name);
                    CREATE TABLE song (
                        id INTEGER PRIMARY KEY,
                        directory INTEGER NOT NULL REFERENCES directory(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        uri TEXT NOT NULL UNIQUE,
                        mtime INTEGER NOT NULL,
                        size INTEGER NOT NULL,
                        added INTEGER NOT NULL,
                        duration REAL,
                        sample_rate INTEGER,
                        channels INTEGER,
                        block TEXT NOT NULL
                    );
                    CREATE INDEX song_by_directory ON song(directory, name);
                    CREATE TABLE tag (
                        song INTEGER NOT NULL REFERENCES song(id) ON DELETE CASCADE,
                        name INTEGER NOT NULL,
                        value TEXT NOT NULL,
                        folded TEXT NOT NULL,
                        fallback INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX tag_by_value ON tag(name, value);
                    CREATE INDEX tag_by_song ON tag(song, name);
                    CREATE TABLE playlist_file (
                        directory INTEGER NOT NULL REFERENCES directory(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        mtime INTEGER NOT NULL,
                        PRIMARY KEY (directory, name)
                    ) WITHOUT ROWID;
                    CREATE VIRTUAL TABLE song_text USING fts5(\(textColumns), tokenize = 'trigram');
                    CREATE TRIGGER song_text_delete AFTER DELETE ON song BEGIN
                        DELETE FROM song_text WHERE rowid = old.id;
                    END;
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                    CREATE TABLE unreadable (
                        uri TEXT PRIMARY KEY,
                        mtime INTEGER NOT NULL,
                        size INTEGER NOT NULL,
                        reason TEXT NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // MPD's listing order of a directory's songs (`Collation.songListingKey`), for databases made
        // before it: worked out from the stored names and tags.
        migrator.registerMigration("v2 listing order") { db in
            try db.execute(sql: "ALTER TABLE song ADD COLUMN listing BLOB NOT NULL DEFAULT x''")
            let first = { (tag: TagName) in
                "(SELECT value FROM tag WHERE song = s.id AND name = \(tag.order) AND fallback = 0 ORDER BY rowid LIMIT 1)"
            }
            let rows = try Row.fetchAll(
                db, sql: "SELECT s.id, s.name, \(first(.album)), \(first(.disc)), \(first(.track)) FROM song s")
            let update = try db.makeStatement(sql: "UPDATE song SET listing = ? WHERE id = ?")
            for row in rows {
                var tags = Tags()
                for (index, tag) in [TagName.album, .disc, .track].enumerated() {
                    if let value = row[2 + index] as String? { tags[tag] = [value] }
                }
                let key = Collation.songListingKey(name: row[1], tags: tags)
                try update.execute(arguments: [Data(key), row[0] as Int64])
            }
            try db.execute(sql: "CREATE INDEX song_by_listing ON song(directory, listing, name)")
            // Song blocks list their tags in MPD's order for MP3s (`TagName.blockOrder`), and no Comment
            // (`TagName.announced`).
            let blocks = try Row.fetchAll(db, sql: "SELECT id, block FROM song")
            let setBlock = try db.makeStatement(sql: "UPDATE song SET block = ? WHERE id = ?")
            for row in blocks {
                let block: String = row[1]
                let lines = block.split(separator: "\n").filter { !$0.hasPrefix("Comment: ") }.enumerated().sorted {
                    left, right in
                    let order = { (line: Substring) in
                        line.firstIndex(of: ":").flatMap { TagName(name: String(line[..<$0])) }?.blockOrder ?? .max
                    }
                    let (a, b) = (order(left.element), order(right.element))
                    return a != b ? a < b : left.offset < right.offset
                }
                let reordered = lines.map { $0.element + "\n" }.joined()
                if reordered != block {
                    try setBlock.execute(arguments: [reordered, row[0] as Int64])
                }
            }
            // Comment is no longer kept (`SongRecord.prepare`).
            try db.execute(sql: "DELETE FROM tag WHERE name = \(TagName.comment.order)")
            try db.execute(sql: "UPDATE song_text SET \(Self.textColumn(.comment)) = NULL")
            try db.execute(sql: "DELETE FROM meta WHERE key = 'tagged:\(TagName.comment.order)'")
            // Directories' positions follow the same order from the next update on.
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('derived_stale', 1)")
        }
        // FLAC, Ogg Vorbis and Opus beside MP3: each song's sample format, as `Format:` shows it (16, 24,
        // 32 bits, or -1 for floats). Every song stored before was an MP3, decoded to 16 bits. Files the
        // scans before could not read (FLAC, Ogg and Opus among them) are forgotten, so the next update
        // reads them with the new decoders rather than pass them over until they change.
        migrator.registerMigration("v3 sample format") { db in
            try db.execute(sql: "ALTER TABLE song ADD COLUMN bits INTEGER NOT NULL DEFAULT 16")
            try db.execute(sql: "DELETE FROM unreadable")
        }
        // Each song's file name folded, for `search file`: folding it for every song at each search
        // made that search 3x mpd's. A table of its own, filled once here, rather than a column that
        // would rewrite every song row.
        migrator.registerMigration("v4 folded file names") { db in
            try db.execute(
                sql: """
                    CREATE TABLE song_folded_name (id INTEGER PRIMARY KEY, folded TEXT NOT NULL);
                    CREATE TRIGGER song_folded_name_delete AFTER DELETE ON song BEGIN
                        DELETE FROM song_folded_name WHERE id = old.id;
                    END;
                    INSERT INTO song_folded_name (id, folded) SELECT id, fold(name) FROM song;
                    """)
        }
        return migrator
    }
}

/// What goes wrong with the library file itself.
enum LibraryError: Error, CustomStringConvertible {
    case foreignDatabase
    case corrupt(String)

    var description: String {
        switch self {
        case .foreignDatabase: "a database of something else, not playerd's library"
        case .corrupt(let detail): "corrupt (\(detail))"
        }
    }
}

/// The SQL functions the library's queries call: folding (for `search file`) and regular expressions.
enum SQLFunctions {
    static let fold = DatabaseFunction("fold", argumentCount: 1, pure: true) { values in
        String.fromDatabaseValue(values[0]).map(TextFolding.fold)
    }

    /// `regexp(PATTERN, TEXT)`: whether the pattern matches part of the text. Patterns are compiled once
    /// per thread and kept.
    static let regexp = DatabaseFunction("regexp", argumentCount: 2, pure: true) { values in
        guard let pattern = String.fromDatabaseValue(values[0]), let text = String.fromDatabaseValue(values[1])
        else { return false }
        guard let regex = RegexCache.regex(pattern) else { return false }
        return (try? regex.firstMatch(in: text)) != nil
    }
}

/// Compiled regular expressions by pattern, per thread (a `Regex` is not Sendable).
enum RegexCache {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Box>.fromOpaque(pointer).release() }
        }
        return key
    }()

    private final class Box {
        var regexes: [String: Regex<AnyRegexOutput>] = [:]
    }

    static func regex(_ pattern: String) -> Regex<AnyRegexOutput>? {
        let box: Box
        if let pointer = pthread_getspecific(Self.key) {
            box = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
        } else {
            box = Box()
            pthread_setspecific(Self.key, Unmanaged.passRetained(box).toOpaque())
        }
        if let regex = box.regexes[pattern] {
            return regex
        }
        guard let regex = try? Regex(pattern) else { return nil }
        if box.regexes.count > 64 {
            box.regexes.removeAll()
        }
        box.regexes[pattern] = regex
        return regex
    }
}
