import Audio
import Dispatch
import GRDB
import MusicTags
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What one update did.
public struct UpdateReport: Sendable, Hashable {
    public var added = 0
    public var updated = 0
    public var removed = 0
    /// Files and directories that could not be read, with the reason.
    public var skipped: [String] = []
    /// Whether the walk was cancelled (the daemon is stopping) before it finished.
    public var cancelled = false
    /// Whether changes may have been committed that no finished update announced: those of an update
    /// that failed after committing some (a full disk), or of one before it that did.
    public var unannounced = false

    /// Whether the database changed.
    public var changed: Bool { self.added + self.updated + self.removed > 0 || self.unannounced }
}

/// Brings the database in line with the music directory under one URI: new and changed files (by
/// modification time and size) are read, vanished ones leave, the rest cost a `stat`.
///
/// Songs are written in batches, each in its own transaction, so that a scan killed half-way leaves a
/// consistent database holding what it had read, and the next update finishes the job.
struct LibraryUpdate {
    let database: LibraryDatabase
    let musicDirectory: String
    let cancellation: WalkCancellation?
    /// Called with each batch's figures as it is committed, for progress reports.
    var progress: (@Sendable (UpdateReport) -> Void)?

    /// Songs read and written in the first transaction; each next one takes twice as many, up to
    /// `largestBatch`. Small updates stay small (a batch is read while the one before it is written, and
    /// the first is read with nothing to overlap); large ones commit less often, and each commit writes
    /// the index pages it touched once for thousands of songs, not for 512.
    static let firstBatch = 512
    static let largestBatch = 4096
    /// From how many songs to read an update is a bulk write (`LibraryDatabase.beginBulkWriting`): each
    /// song touches some thirty pages all over the file, and 1,000 changed songs in a library of 200,000
    /// wrote 490 MB through 2 MiB of cache.
    static let bulkSongs = 256

    private struct Known {
        var directories: [PathKey: (id: Int64, mtime: Int64)] = [:]
        var playlists: [PathKey: Int64] = [:]
        /// Files that could not be read, as they were then: not read (nor named in the log) again
        /// until they change.
        var unreadable: [PathKey: (mtime: Int64, size: Int64)] = [:]
        /// Whether an update committed changes and then failed (a full disk, say) before it recomputed
        /// what is derived from them: this one does it, changes or not.
        var derivedStale = false
    }

    /// Runs the update of `uri` ("" for everything); `rescan` reads every file again.
    func run(uri: String, rescan: Bool) throws -> UpdateReport {
        var report = UpdateReport()
        let path = uri.isEmpty ? self.musicDirectory : self.musicDirectory + "/" + uri
        var info = stat()
        let exists = stat(PathEscaping.systemPath(path), &info) == 0
        if exists && info.st_mode & S_IFMT == S_IFREG {
            return try self.updateFile(uri: uri, info: info, rescan: rescan)
        }
        var walk = LibraryWalk(musicDirectory: self.musicDirectory, cancellation: self.cancellation)
        if exists {
            guard walk.walk(uri) else {
                report.cancelled = true
                return report
            }
        }
        report.skipped = walk.skipped.map { "\($0.path): \($0.reason)" }
        let known = try self.known(under: uri)
        report.unannounced = known.derivedStale
        var walked = walk.directories
        // The walk's own copy goes, so that `walked` changes in place below.
        walk = LibraryWalk(musicDirectory: self.musicDirectory)
        // Unchanged songs leave `walked`: what stays there is to be read.
        let (vanishedSongs, knownChanged) = try self.compareSongs(under: uri, with: &walked, rescan: rescan)

        // Directories and songs that vanished leave first; cascades take their songs and tags.
        let vanishedDirectories = known.directories.keys.filter {
            walked[$0] == nil && !($0.string.isEmpty && uri.isEmpty)
        }
        var toRead: [SongToRead] = []
        for (directoryKey, directory) in walked {
            let directoryURI = directoryKey.string
            for (nameKey, file) in directory.songs {
                if !rescan && !known.unreadable.isEmpty {
                    let name = nameKey.string
                    let songURI = directoryURI.isEmpty ? name : directoryURI + "/" + name
                    if let failed = known.unreadable[PathKey(songURI)], failed == (file.mtime, file.size) {
                        continue
                    }
                }
                toRead.append(SongToRead(directory: directoryKey, name: nameKey, mtime: file.mtime, size: file.size))
            }
        }
        // Directory by directory, in byte order: a directory's songs stay together in a batch.
        toRead.sort { left, right in
            left.directory == right.directory
                ? left.name.string.utf8.lexicographicallyPrecedes(right.name.string.utf8)
                : left.directory.string.utf8.lexicographicallyPrecedes(right.directory.string.utf8)
        }
        let directoryChanges = walked.contains { uri, directory in
            known.directories[uri].map { $0.mtime != directory.mtime } ?? true
        }
        let playlistsChanged =
            walked.contains { directoryURI, directory in
                directory.playlists.contains { name, mtime in
                    let directoryURI = directoryURI.string
                    return known.playlists[
                        PathKey(directoryURI.isEmpty ? name.string : directoryURI + "/" + name.string)] != mtime
                }
            }
            || known.playlists.contains { playlistURI, _ in
                let (directoryURI, name) = Self.split(playlistURI.string)
                return walked[PathKey(directoryURI)]?.playlists[PathKey(name)] == nil
            }

        let vanishedUnreadable = known.unreadable.keys.filter { songURI in
            let (directoryURI, name) = Self.split(songURI.string)
            return walked[PathKey(directoryURI)]?.songs[PathKey(name)] == nil
        }.map(\.string)
        // How the number of songs having each tag changes, committed transaction by transaction; nil once
        // it cannot be told (a directory left, taking its songs with it): then they are counted again.
        let taggedChanges = Mutex<[Int64: Int]?>(known.derivedStale || !vanishedDirectories.isEmpty ? nil : [:])
        if !vanishedDirectories.isEmpty || !vanishedSongs.isEmpty || directoryChanges || playlistsChanged
            || !vanishedUnreadable.isEmpty
        {
            try self.database.write { db in
                try Self.markDerivedStale(db)
                for uri in vanishedUnreadable {
                    try db.execute(sql: "DELETE FROM unreadable WHERE uri = ?", arguments: [uri])
                }
                var songs = try SongRowWriter(db)
                for songURI in vanishedSongs {
                    try songs.remove(uri: songURI)
                }
                taggedChanges.withLock { Self.add(songs.taggedChanges, to: &$0) }
                for directoryURI in vanishedDirectories {
                    try db.execute(sql: "DELETE FROM directory WHERE uri = ?", arguments: [directoryURI.string])
                }
                try Self.writeDirectories(walked, root: uri, db: db)
            }
            report.removed = vanishedSongs.count
        }

        // Read and write in batches: each batch is read while the one before it is written, so that
        // neither waits for the other. The writer, one thread, is the longer of the two: the readers
        // take every core but one, leaving it a core of its own (on two cores, two readers beside it
        // made no scan faster).
        let now = Int64(time(nil))
        let writer = DispatchQueue(label: "library.write")
        let writing = DispatchGroup()
        let outcome = Mutex<(added: Int, updated: Int, removed: Int, error: (any Error)?)>((0, 0, 0, nil))
        let database = self.database
        // Hundreds of songs to write: the writer's page cache grows for the job.
        let bulk = toRead.count >= Self.bulkSongs ? try database.beginBulkWriting() : nil
        defer { bulk.map(database.endBulkWriting) }
        var start = 0
        var batchSize = Self.firstBatch
        while start < toRead.count {
            if self.cancellation?.isCancelled == true {
                report.cancelled = true
                break
            }
            let batch = toRead[start..<min(start + batchSize, toRead.count)].map(\.item)
            start += batch.count
            batchSize = min(batchSize * 2, Self.largestBatch)
            let results = Self.readConcurrently(
                batch.map { item in
                    (self.musicDirectory + "/" + item.uri, item)
                })
            var records: [SongRecord] = []
            var failures: [(uri: String, mtime: Int64, size: Int64, reason: String)] = []
            for (result, item) in zip(results, batch) {
                switch result {
                case .success(let record): records.append(record)
                case .failure(let failure):
                    report.skipped.append(failure.description)
                    failures.append((item.uri, item.mtime, item.size, failure.description))
                }
            }
            // The batch before this one must be in before this one goes.
            writing.wait()
            if let error = outcome.withLock({ $0.error }) { throw error }
            let progress = self.progress
            let sofar = report
            writing.enter()
            writer.async { [records, failures] in
                defer { writing.leave() }
                do {
                    var added = 0
                    var updated = 0
                    var removed = 0
                    let changes = try database.write { db in
                        try Self.markDerivedStale(db)
                        var songs = try SongRowWriter(db)
                        for failure in failures {
                            // A song that became unreadable leaves the library.
                            if knownChanged.contains(PathKey(failure.uri)) { removed += 1 }
                            try songs.remove(uri: failure.uri)
                            try db.execute(
                                sql: "INSERT OR REPLACE INTO unreadable (uri, mtime, size, reason) VALUES (?, ?, ?, ?)",
                                arguments: [failure.uri, failure.mtime, failure.size, failure.reason])
                        }
                        for record in records where known.unreadable[PathKey(record.uri)] != nil {
                            try db.execute(sql: "DELETE FROM unreadable WHERE uri = ?", arguments: [record.uri])
                        }
                        for record in records {
                            let replacing = knownChanged.contains(PathKey(record.uri))
                            if replacing { updated += 1 } else { added += 1 }
                            try songs.write(record, added: now, replacing: replacing)
                        }
                        return songs.taggedChanges
                    }
                    taggedChanges.withLock { Self.add(changes, to: &$0) }
                    let totals = outcome.withLock { totals in
                        totals.added += added
                        totals.updated += updated
                        totals.removed += removed
                        return totals
                    }
                    var figures = sofar
                    figures.added = totals.added
                    figures.updated = totals.updated
                    figures.removed += totals.removed
                    progress?(figures)
                } catch {
                    outcome.withLock { $0.error = error }
                }
            }
        }
        writing.wait()
        let totals = outcome.withLock { $0 }
        if let error = totals.error { throw error }
        report.added = totals.added
        report.updated = totals.updated
        report.removed += totals.removed
        if report.changed || directoryChanges {
            // A scan of most of the library counts again: as cheap as adding up, and right whatever came before.
            let changes = report.added + report.updated > 50_000 ? nil : taggedChanges.withLock { $0 }
            try self.database.write { db in
                try Self.refreshDerived(db, now: now, changed: report.changed, taggedChanges: changes)
            }
        }
        return report
    }

    /// A song file the update is to read. Its directory and name share the walk's strings: a scan of a
    /// million songs holds this for every one of them, and a URI made for each (as before) cost 80 MB.
    private struct SongToRead {
        let directory: PathKey
        let name: PathKey
        let mtime: Int64
        let size: Int64

        var item: (uri: String, directoryURI: String, name: String, mtime: Int64, size: Int64) {
            let (directoryURI, name) = (self.directory.string, self.name.string)
            return (directoryURI.isEmpty ? name : directoryURI + "/" + name, directoryURI, name, self.mtime, self.size)
        }
    }

    /// Updates one file.
    private func updateFile(uri: String, info: stat, rescan: Bool) throws -> UpdateReport {
        var report = UpdateReport()
        let (directoryURI, name) = Self.split(uri)
        guard Self.isSong(name) else { return report }
        let mtime = Int64(info.st_mtim.tv_sec)
        let size = Int64(info.st_size)
        let existing = try self.database.read { db in
            try Row.fetchOne(db, sql: "SELECT mtime, size FROM song WHERE uri = ?", arguments: [uri])
        }
        if !rescan, let existing, existing[0] as Int64 == mtime, existing[1] as Int64 == size {
            return report
        }
        do {
            var folding = FoldingMemo()
            let record = try SongRecord.read(
                with: SongReader(), folding: &folding, path: self.musicDirectory + "/" + uri, uri: uri,
                directoryURI: directoryURI,
                name: name, mtime: mtime,
                size: size)
            let now = Int64(time(nil))
            try self.database.write { db in
                var songs = try SongRowWriter(db)
                try songs.write(record, added: now)
                let stale = try Bool.fetchOne(db, sql: "SELECT 1 FROM meta WHERE key = 'derived_stale'") ?? false
                try Self.refreshDerived(db, now: now, changed: true, taggedChanges: stale ? nil : songs.taggedChanges)
            }
            if existing == nil { report.added = 1 } else { report.updated = 1 }
        } catch let error as DecoderError {
            report.skipped.append(error.description)
        }
        return report
    }

    private static func isSong(_ name: String) -> Bool { AudioFileKind.hasSongSuffix(name) }

    /// Splits a URI into its directory's URI and its name.
    static func split(_ uri: String) -> (directory: String, name: String) {
        guard let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", uri) }
        return (String(uri[..<slash]), String(uri[uri.utf8.index(after: slash)...]))
    }

    /// The range condition for URIs under `uri`: `uri` itself and `uri/...`.
    static func under(_ column: String, _ uri: String) -> (sql: String, arguments: StatementArguments) {
        guard !uri.isEmpty else { return ("1", []) }
        return ("(\(column) = ? OR (\(column) >= ? AND \(column) < ?))", [uri, uri + "/", uri + "0"])
    }

    private func known(under uri: String) throws -> Known {
        try self.database.read { db in
            var known = Known()
            let directories = Self.under("uri", uri)
            let rows = try Row.fetchCursor(
                db, sql: "SELECT uri, id, mtime FROM directory WHERE \(directories.sql)",
                arguments: directories.arguments)
            while let row = try rows.next() {
                known.directories[PathKey(row[0])] = (row[1], row[2])
            }
            let songs = Self.under("uri", uri)
            let unreadableRows = try Row.fetchCursor(
                db, sql: "SELECT uri, mtime, size FROM unreadable WHERE \(songs.sql)", arguments: songs.arguments)
            while let row = try unreadableRows.next() {
                known.unreadable[PathKey(row[0])] = (row[1], row[2])
            }
            known.derivedStale = try Bool.fetchOne(db, sql: "SELECT 1 FROM meta WHERE key = 'derived_stale'") ?? false
            let playlistRows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT d.uri, p.name, p.mtime FROM playlist_file p JOIN directory d ON d.id = p.directory
                    WHERE \(directories.sql.replacingOccurrences(of: "uri", with: "d.uri"))
                    """, arguments: directories.arguments)
            while let row = try playlistRows.next() {
                let directoryURI: String = row[0]
                let name: String = row[1]
                known.playlists[PathKey(directoryURI.isEmpty ? name : directoryURI + "/" + name)] = row[2]
            }
            return known
        }
    }

    /// Compares every song the library holds under `uri` with what the walk found: an unchanged one
    /// leaves `walked` (with `rescan`, none does), one the walk did not meet has vanished. Returns the
    /// vanished songs' URIs and those of the known songs left in `walked` (to be read again).
    ///
    /// The known songs are never gathered in memory: at a million songs, a dictionary of them beside the
    /// walk's doubled what an update held (the walk alone shrinks as unchanged songs leave it).
    private func compareSongs(
        under uri: String, with walked: inout [PathKey: WalkedDirectory], rescan: Bool
    ) throws -> (vanished: [String], changed: Set<PathKey>) {
        try self.database.read { db in
            var vanished: [String] = []
            var changed = Set<PathKey>()
            let songs = Self.under("uri", uri)
            // Stepped through SQLite's C interface, which costs a fraction of GRDB's rows (a no-op update
            // of 20,000 songs spent a fifth of its time there).
            let rows = try RawStatement(
                db.makeStatement(sql: "SELECT uri, mtime, size FROM song WHERE \(songs.sql)"),
                arguments: songs.arguments)
            while try rows.next(db) {
                let songURI = rows.string(0)
                let (directoryURI, name) = Self.split(songURI)
                let (directoryKey, nameKey) = (PathKey(directoryURI), PathKey(name))
                guard let file = walked[directoryKey]?.songs[nameKey] else {
                    vanished.append(songURI)
                    continue
                }
                if !rescan && file == (rows.int64(1), rows.int64(2)) {
                    walked[directoryKey]?.songs[nameKey] = nil
                } else {
                    changed.insert(PathKey(songURI))
                }
            }
            return (vanished, changed)
        }
    }

    /// Makes sure a directory row exists for `uri` and each of its ancestors; returns its id.
    @discardableResult
    static func ensureDirectory(_ uri: String, db: Database) throws -> Int64 {
        if let id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM directory WHERE uri = ?"), arguments: [uri])
        {
            return id
        }
        let parent: Int64? = uri.isEmpty ? nil : try Self.ensureDirectory(Self.split(uri).directory, db: db)
        try db.cachedStatement(sql: "INSERT INTO directory (uri, parent, name, mtime) VALUES (?, ?, ?, 0)")
            .execute(arguments: [uri, parent, Self.split(uri).name])
        return db.lastInsertedRowID
    }

    /// Writes the walked directories (their rows and mtimes, and their playlist files).
    private static func writeDirectories(_ walked: [PathKey: WalkedDirectory], root: String, db: Database) throws {
        let setMtime = try db.cachedStatement(sql: "UPDATE directory SET mtime = ? WHERE id = ? AND mtime != ?")
        let clearPlaylists = try db.cachedStatement(sql: "DELETE FROM playlist_file WHERE directory = ?")
        let insertPlaylist = try db.cachedStatement(
            sql: "INSERT INTO playlist_file (directory, name, mtime) VALUES (?, ?, ?)")
        // Parents before children: sorted URIs put "A" before "A/B".
        for key in walked.keys.sorted(by: { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }) {
            let directory = walked[key]!
            let id = try Self.ensureDirectory(key.string, db: db)
            try setMtime.execute(arguments: [directory.mtime, id, directory.mtime])
            try clearPlaylists.execute(arguments: [id])
            for (name, mtime) in directory.playlists {
                try insertPlaylist.execute(arguments: [id, name.string, mtime])
            }
        }
    }

    /// Notes, in a transaction that changes songs or directories, that what is derived from them is
    /// recomputed only later (`refreshDerived` clears the note): should the update fail before then,
    /// the next one recomputes it even when it finds nothing to change.
    private static func markDerivedStale(_ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('derived_stale', 1)")
    }

    /// Recomputes what is derived from the whole tree: each directory's place in MPD's listing order,
    /// and the figures `stats` shows. The order is depth first, paths in MPD's collated order
    /// (`Collation`), except that directories holding no song and no playlist file at any depth come
    /// after their parent's other directories: mpd 0.23 prunes them when it saves its database, and
    /// its next update that changes nothing adds them back at the end of their parent's list.
    ///
    /// `taggedChanges`: how the number of songs having each tag changed since the counts were last
    /// right (`SongRowWriter.taggedChanges`), or nil to count every tag row again (1.2 s at 200,000
    /// songs, which a one-file update paid too).
    static func refreshDerived(_ db: Database, now: Int64, changed: Bool, taggedChanges: [Int64: Int]? = nil) throws {
        try db.execute(sql: "DELETE FROM meta WHERE key = 'derived_stale'")
        var children: [Int64?: [(id: Int64, key: [UInt8])]] = [:]
        var parents: [Int64: Int64] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT id, parent, uri FROM directory")
        while let row = try rows.next() {
            let parent = row[1] as Int64?
            children[parent, default: []].append((row[0], Collation.key(row[2])))
            if let parent { parents[row[0]] = parent }
        }
        var holding = Set<Int64>()
        for id in try Int64.fetchAll(db, sql: "SELECT directory FROM song UNION SELECT directory FROM playlist_file") {
            var next: Int64? = id
            while let current = next, holding.insert(current).inserted {
                next = parents[current]
            }
        }
        for parent in children.keys {
            children[parent]?.sort { left, right in
                let (leftHolds, rightHolds) = (holding.contains(left.id), holding.contains(right.id))
                return leftHolds != rightHolds ? leftHolds : left.key.lexicographicallyPrecedes(right.key)
            }
        }
        var position = 0
        var pending: [Int64] = (children[nil] ?? []).map(\.id)
        let update = try db.cachedStatement(sql: "UPDATE directory SET position = ? WHERE id = ? AND position != ?")
        while let id = pending.popLast() {
            try update.execute(arguments: [position, id, position])
            position += 1
            pending.append(contentsOf: (children[id] ?? []).reversed().map(\.id))
        }
        if changed {
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('db_update', ?)", arguments: [now])
            // `stats` reads these rather than counting 100,000 songs for every client that asks.
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO meta (key, value) VALUES
                    ('artists', (SELECT count(DISTINCT value) FROM tag WHERE name = ? AND fallback = 0)),
                    ('albums', (SELECT count(DISTINCT value) FROM tag WHERE name = ? AND fallback = 0)),
                    ('songs', (SELECT count(*) FROM song)),
                    ('db_playtime', (SELECT CAST(total(duration) AS INTEGER) FROM song))
                    """, arguments: [TagName.artist.order, TagName.album.order])
            // How many songs have each tag: `list TAG` adds "" when some song lacks it. The distinct
            // (song, name) pairs come in order from tag_by_song; `count(DISTINCT song)` per name sorted
            // every row again (180 ms of a 20,000-song scan, 75 ms this way).
            if let taggedChanges {
                for (name, change) in taggedChanges where change != 0 {
                    try db.execute(
                        sql: """
                            INSERT INTO meta (key, value) VALUES ('tagged:' || ?1, ?2)
                            ON CONFLICT(key) DO UPDATE SET value = value + ?2
                            """, arguments: [name, change])
                }
                try db.execute(sql: "DELETE FROM meta WHERE key LIKE 'tagged:%' AND value <= 0")
            } else {
                try db.execute(sql: "DELETE FROM meta WHERE key LIKE 'tagged:%'")
                try db.execute(
                    sql: """
                        INSERT INTO meta (key, value)
                        SELECT 'tagged:' || name, count(*) FROM (SELECT DISTINCT song, name FROM tag) GROUP BY name
                        """)
            }
        }
    }

    /// Adds `changes` to `total` (nil stays nil: the counts are to be made again).
    private static func add(_ changes: [Int64: Int], to total: inout [Int64: Int]?) {
        guard total != nil else { return }
        total!.merge(changes, uniquingKeysWith: +)
    }

    /// Reads files on every core but the writer's (at least one thread), results in the order given.
    private static func readConcurrently(
        _ items: [(path: String, item: (uri: String, directoryURI: String, name: String, mtime: Int64, size: Int64))]
    ) -> [Result<SongRecord, DecoderError>] {
        let results = Mutex<[Result<SongRecord, DecoderError>?]>(Array(repeating: nil, count: items.count))
        let workers = max(1, min(sysconf(Int32(_SC_NPROCESSORS_ONLN)) - 1, 8))
        let chunk = (items.count + workers - 1) / workers
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let range = min(items.count, worker * chunk)..<min(items.count, (worker + 1) * chunk)
            // One reader (one libmpg123 handle) per thread, reused for every file.
            let reader = SongReader()
            var folding = FoldingMemo()
            for index in range {
                let (path, item) = items[index]
                let result = Result { () throws(DecoderError) in
                    try SongRecord.read(
                        with: reader, folding: &folding, path: path, uri: item.uri, directoryURI: item.directoryURI,
                        name: item.name,
                        mtime: item.mtime,
                        size: item.size)
                }
                results.withLock { $0[index] = result }
            }
        }
        return results.withLock { $0.map { $0! } }
    }
}
