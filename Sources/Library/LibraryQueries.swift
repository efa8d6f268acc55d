import ControlProtocol
import GRDB
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Hands a long answer to the client as it grows: called whenever the answer passes `streamChunk`
/// bytes, it sends what was written and empties the writer. It returns false when the client has gone,
/// and the query stops.
public typealias ResponseFlush = (inout ResponseWriter) -> Bool

/// The answers `stats` gives about the library.
public struct LibraryStats: Sendable, Hashable {
    public var artists = 0
    public var albums = 0
    public var songs = 0
    /// Seconds of music, summed.
    public var playtime = 0
    /// When the database last changed (Unix seconds), 0 for never.
    public var lastUpdate: Int64 = 0

    /// Figures for an empty library.
    public init() {}
}

extension MusicLibrary {
    /// The size past which a long answer is handed to the client before it is complete.
    public static let streamChunk = 64 * 1024

    /// ISO 8601 in UTC, as MPD prints `Last-Modified`.
    public static func timestamp(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    private func read<T>(_ body: (Database) throws -> T) throws(Ack) -> T {
        do {
            return try self.database.read { db in try QuickQuery.bounded(db, body) }
        } catch let ack as Ack {
            throw ack
        } catch {
            throw Ack(.system, "library: \(error)")
        }
    }

    private func directoryID(_ uri: String, _ db: Database) throws -> Int64? {
        let statement = try RawStatement(db, "SELECT id FROM directory WHERE uri = ?")
        statement.bind(1, uri)
        defer { statement.reset() }
        return try statement.next(db) ? statement.int64(0) : nil
    }

    /// MPD starts a query's walk at its filter's first `base` among the parts every song must match
    /// (`SongFilter::GetBase`): a base naming neither a directory nor a song is ACK 50 `No such
    /// directory`, whatever else the filter says.
    private func checkBase(_ filter: SongFilter?, _ db: Database) throws {
        func firstBase(_ filter: SongFilter?) -> String? {
            switch filter {
            case .base(let directory): directory
            case .and(let parts): parts.lazy.compactMap { firstBase($0) }.first
            default: nil
            }
        }
        guard let base = firstBase(filter) else { return }
        let uri = Self.normalized(base)
        guard !uri.isEmpty, try self.directoryID(uri, db) == nil else { return }
        let song = try RawStatement(db, "SELECT 1 FROM song WHERE uri = ?")
        song.bind(1, uri)
        defer { song.reset() }
        guard try song.next(db) else { throw Ack(.noExist, "No such directory") }
    }

    /// Normalises a client's URI: no leading or trailing slashes (`lsinfo /` is the root).
    public static func normalized(_ uri: String) -> String {
        var text = Substring(uri)
        while text.hasPrefix("/") { text = text.dropFirst() }
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }

    /// `lsinfo URI`: the directory's songs (full blocks), its playlist files, then its subdirectories;
    /// for a song's URI, that song's block. Stored playlists, which the root also lists, are the caller's.
    public func listInfo(
        _ uri: String, tagTypes: Set<TagName>, to response: inout ResponseWriter, flush: ResponseFlush = { _ in true }
    ) throws(Ack) {
        let uri = Self.normalized(uri)
        try self.read { db in
            var writer = SongBlockWriter(tagTypes: tagTypes)
            guard let id = try self.directoryID(uri, db) else {
                let before = response.count
                _ = try writer.write(
                    db.cachedStatement(sql: "SELECT \(SongBlockWriter.columns) FROM song s WHERE s.uri = ?"),
                    arguments: [uri], to: &response
                ) { _ in true }
                guard response.count > before else { throw Ack(.noExist, "No such directory") }
                return
            }
            guard
                try writer.write(
                    db.cachedStatement(
                        sql: "SELECT \(SongBlockWriter.columns) FROM song s WHERE s.directory = ? ORDER BY s.listing"),
                    arguments: [id], to: &response, flush: flush)
            else { return }
            let playlists = try RawStatement(
                db, "SELECT name, mtime FROM playlist_file WHERE directory = ? ORDER BY name")
            playlists.bind(1, id)
            defer { playlists.reset() }
            while try playlists.next(db) {
                let name = playlists.string(0)
                response.field("playlist", uri.isEmpty ? name : uri + "/" + name)
                response.field("Last-Modified", Self.timestamp(playlists.int64(1)))
                if !Self.goesOn(&response, flush) { return }
            }
            let directories = try RawStatement(
                db, "SELECT uri, mtime FROM directory WHERE parent = ? ORDER BY position")
            directories.bind(1, id)
            defer { directories.reset() }
            while try directories.next(db) {
                response.field("directory", directories.string(0))
                response.field("Last-Modified", Self.timestamp(directories.int64(1)))
                if !Self.goesOn(&response, flush) { return }
            }
        }
    }

    /// `listall URI` (`info: false`: URIs only) and `listallinfo URI` (full blocks): everything under the
    /// URI, depth first as MPD lists it, streamed through `flush`.
    public func listAll(
        _ uri: String, info: Bool, tagTypes: Set<TagName>, to response: inout ResponseWriter, flush: ResponseFlush
    ) throws(Ack) {
        let uri = Self.normalized(uri)
        try self.read { db in
            var writer = SongBlockWriter(tagTypes: tagTypes)
            guard try self.directoryID(uri, db) != nil else {
                let exists =
                    try Bool.fetchOne(
                        db.cachedStatement(sql: "SELECT 1 FROM song WHERE uri = ?"), arguments: [uri]) ?? false
                guard exists else { throw Ack(.noExist, "No such directory") }
                if info {
                    _ = try writer.write(
                        db.cachedStatement(sql: "SELECT \(SongBlockWriter.columns) FROM song s WHERE s.uri = ?"),
                        arguments: [uri], to: &response
                    ) { _ in true }
                } else {
                    response.field("file", uri)
                }
                return
            }
            let range = LibraryUpdate.under("uri", uri)
            // Directory by directory as the index gives them, not all read first: a million songs'
            // tree has tens of thousands.
            let directories = try RawStatement(
                db.makeStatement(sql: "SELECT id, uri, mtime FROM directory WHERE \(range.sql) ORDER BY position"),
                arguments: range.arguments)
            let songs = try db.cachedStatement(
                sql: "SELECT \(SongBlockWriter.columns) FROM song s WHERE s.directory = ? ORDER BY s.listing")
            let songURIs = try RawStatement(db, "SELECT uri FROM song WHERE directory = ? ORDER BY listing")
            let playlists = try RawStatement(
                db, "SELECT name, mtime FROM playlist_file WHERE directory = ? ORDER BY name")
            defer {
                directories.reset()
                songURIs.reset()
                playlists.reset()
            }
            while try directories.next(db) {
                let directoryID = directories.int64(0)
                let directoryURI = directories.string(1)
                // As in MPD, a listing of a directory starts with that directory itself.
                if !directoryURI.isEmpty {
                    response.field("directory", directoryURI)
                    if info { response.field("Last-Modified", Self.timestamp(directories.int64(2))) }
                }
                if info {
                    guard try writer.write(songs, arguments: [directoryID], to: &response, flush: flush)
                    else { return }
                } else {
                    songURIs.bind(1, directoryID)
                    while try songURIs.next(db) {
                        response.field("file", songURIs.string(0))
                        if !Self.goesOn(&response, flush) { return }
                    }
                }
                playlists.bind(1, directoryID)
                while try playlists.next(db) {
                    let name = playlists.string(0)
                    response.field("playlist", directoryURI.isEmpty ? name : directoryURI + "/" + name)
                    if info { response.field("Last-Modified", Self.timestamp(playlists.int64(1))) }
                }
            }
        }
    }

    /// `find`/`search`: the blocks of the songs the query selects, in its order and window.
    public func find(
        _ query: LibraryQuery, tagTypes: Set<TagName>, to response: inout ResponseWriter, flush: ResponseFlush
    ) throws(Ack) {
        try self.read { db in
            try self.checkBase(query.filter, db)
            let (statement, arguments) = try self.songStatement(query, columns: SongBlockWriter.columns, db)
            var writer = SongBlockWriter(tagTypes: tagTypes)
            writer.showsFormat = query.sort == nil
            _ = try writer.write(statement, arguments: arguments, to: &response, flush: flush)
        }
    }

    /// The URIs of the songs the query selects, in its order and window (`findadd`, `searchadd`).
    public func songURIs(_ query: LibraryQuery) throws(Ack) -> [String] {
        try self.read { db in try self.songURIs(query, db) }
    }

    private func songURIs(_ query: LibraryQuery, _ db: Database) throws -> [String] {
        try self.checkBase(query.filter, db)
        var uris: [String] = []
        let (statement, arguments) = try self.songStatement(query, columns: "s.uri", db)
        let rows = try RawStatement(statement, arguments: arguments)
        defer { rows.reset() }
        while try rows.next(db) {
            uris.append(rows.string(0))
        }
        return uris
    }

    private func selectSongs(_ query: LibraryQuery, columns: String, _ db: Database) throws -> RowCursor {
        let (statement, arguments) = try self.songStatement(query, columns: columns, db)
        return try Row.fetchCursor(statement, arguments: arguments)
    }

    /// The statement selecting the songs of `query`: prepared each time, since filters come in endless
    /// shapes that a cache would keep for ever.
    private func songStatement(_ query: LibraryQuery, columns: String, _ db: Database) throws -> (
        Statement, StatementArguments
    ) {
        let condition = FilterSQL.condition(query.filter)
        let order = FilterSQL.order(query.sort)
        var sql = """
            SELECT \(columns) FROM song s JOIN directory d ON d.id = s.directory
            WHERE \(condition.sql) ORDER BY \(order.sql)
            """
        var arguments = condition.arguments + order.arguments
        if let window = query.window {
            sql += " LIMIT ? OFFSET ?"
            arguments.append((window.end.map { max(0, $0 - window.start) } ?? -1).databaseValue)
            arguments.append(window.start.databaseValue)
        }
        return (try db.makeStatement(sql: sql), StatementArguments(arguments))
    }

    /// The songs the library holds under `uri` (a directory, or one song), in listing order, each after
    /// `base` (the music directory, for paths to queue); nil when the library knows no such URI.
    public func songURIs(under uri: String, prefixedWith base: String = "") throws(Ack) -> [String]? {
        try self.songURIs(underEach: [uri], prefixedWith: base)[0]
    }

    /// `songURIs(under:prefixedWith:)` for each of `uris`, in one read of the database with its
    /// statements prepared once: a command list of 1,000 `add`s, a read each, spent most of its time
    /// starting and ending reads.
    public func songURIs(underEach uris: [String], prefixedWith base: String = "") throws(Ack) -> [[String]?] {
        try self.read { db in
            let directoryID = try RawStatement(db, "SELECT id FROM directory WHERE uri = ?")
            let song = try RawStatement(db, "SELECT 1 FROM song WHERE uri = ?")
            let names = try RawStatement(db, "SELECT name FROM song WHERE directory = ? ORDER BY listing")
            defer {
                directoryID.reset()
                song.reset()
                names.reset()
            }
            return try uris.map { uri throws -> [String]? in
                let uri = Self.normalized(uri)
                directoryID.bind(1, uri)
                defer { directoryID.reset() }
                guard try directoryID.next(db) else {
                    song.bind(1, uri)
                    defer { song.reset() }
                    return try song.next(db) ? [base + uri] : nil
                }
                // Directory by directory in listing order, each one's songs from the index by directory
                // and name, which holds all a URI needs: the song rows themselves are never read.
                let range = LibraryUpdate.under("uri", uri)
                let directoryRows = try RawStatement(
                    db.cachedStatement(sql: "SELECT id, uri FROM directory WHERE \(range.sql) ORDER BY position"),
                    arguments: range.arguments)
                var directories: [(id: Int64, uri: String)] = []
                while try directoryRows.next(db) {
                    directories.append((directoryRows.int64(0), directoryRows.string(1)))
                }
                var found: [String] = []
                for directory in directories {
                    let prefix = base + (directory.uri.isEmpty ? "" : directory.uri + "/")
                    names.bind(1, directory.id)
                    defer { names.reset() }
                    while try names.next(db) {
                        found.append(names.string(0, after: prefix))
                    }
                }
                return found
            }
        }
    }

    /// `list TYPE [FILTER] [group TAG]...`: the distinct values, byte-sorted, grouped; songs lacking a
    /// tag contribute "" as in MPD.
    public func list(
        _ subject: ListSubject, query: LibraryQuery, to response: inout ResponseWriter, flush: ResponseFlush
    ) throws(Ack) {
        try self.read { db in
            try self.checkBase(query.filter, db)
            let condition = FilterSQL.condition(query.filter)
            guard case .tag(let tag) = subject else {
                let rows = try self.selectSongs(query, columns: "s.uri", db)
                while let row = try rows.next() {
                    response.field("file", row[0] as String)
                    if !Self.goesOn(&response, flush) { return }
                }
                return
            }
            // Every (group values..., value) tuple the matching songs make, outermost group first.
            let levels = query.groups.reversed() + [tag]
            if levels.count == 1 && query.filter == nil {
                // The common `list Artist`: straight from the index, in its order, with counts the update
                // stored. Read row by row, as every answer here: `list title` of a million songs is
                // streamed, never held whole (issue 27).
                let counts = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT (SELECT value FROM meta WHERE key = 'songs'),
                        (SELECT value FROM meta WHERE key = 'tagged:' || ?)
                        """, arguments: [tag.order])
                let songs: Int = counts?[0] ?? 0
                let tagged: Int = counts?[1] ?? 0
                if tagged < songs { response.field(tag.rawValue, "") }
                let values = try RawStatement(db, "SELECT DISTINCT value FROM tag WHERE name = ? ORDER BY value")
                values.bind(1, Int64(tag.order))
                defer { values.reset() }
                while try values.next(db) {
                    response.field(tag.rawValue, values.string(0))
                    if !Self.goesOn(&response, flush) { return }
                }
                return
            }
            // One row per distinct tuple, a song lacking a level's tag giving "" there; SQLite's sorter
            // orders them (byte order, as MPD's) in bounded memory, spilling to its temporary files for
            // a large library, so nothing here grows with the answer.
            let joins = levels.indices.map { index in
                "LEFT JOIN tag t\(index) ON t\(index).song = s.id AND t\(index).name = \(levels[index].order)"
            }
            let values = levels.indices.map { "coalesce(t\($0).value, '')" }
            let sql = """
                SELECT DISTINCT \(values.joined(separator: ", ")) FROM song s \(joins.joined(separator: " "))
                WHERE \(condition.sql) ORDER BY \(levels.indices.map { String($0 + 1) }.joined(separator: ", "))
                """
            let rows = try RawStatement(
                db.makeStatement(sql: sql), arguments: StatementArguments(condition.arguments))
            defer { rows.reset() }
            var previous: [String]?
            while try rows.next(db) {
                let tuple = levels.indices.map { rows.string(Int32($0)) }
                for (index, level) in levels.enumerated().dropLast()
                where previous == nil || previous![...index] != tuple[...index] {
                    response.field(level.rawValue, tuple[index])
                }
                response.field(tag.rawValue, tuple[tuple.count - 1])
                previous = tuple
                if !Self.goesOn(&response, flush) { return }
            }
        }
    }

    /// `count FILTER [group TAG]`: songs and whole seconds of music, per value of the group's tag.
    public func count(
        _ query: LibraryQuery, to response: inout ResponseWriter, flush: ResponseFlush = { _ in true }
    ) throws(Ack) {
        try self.read { db in
            try self.checkBase(query.filter, db)
            let condition = FilterSQL.condition(query.filter)
            guard let group = query.groups.last else {
                let row = try Row.fetchOne(
                    db, sql: "SELECT count(*), total(s.duration) FROM song s WHERE \(condition.sql)",
                    arguments: StatementArguments(condition.arguments))
                response.field("songs", row?[0] as Int? ?? 0)
                response.field("playtime", Int(row?[1] as Double? ?? 0))
                return
            }
            // Group by group, as SQLite's aggregate hands them over: `count group title` of a million
            // songs is streamed, never held whole.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT coalesce(t.value, ''), count(DISTINCT s.id), total(s.duration) FROM song s
                    LEFT JOIN tag t ON t.song = s.id AND t.name = ?
                    WHERE \(condition.sql) GROUP BY 1 ORDER BY 1
                    """,
                arguments: StatementArguments([group.order.databaseValue] + condition.arguments))
            while let row = try rows.next() {
                response.field(group.rawValue, row[0] as String)
                response.field("songs", row[1] as Int)
                response.field("playtime", Int(row[2] as Double))
                if !Self.goesOn(&response, flush) { return }
            }
        }
    }

    /// What the library knows of one song, for the queue's song blocks.
    public struct SongFacts: Sendable, Hashable {
        public var tags: Tags
        public var duration: Double?
        public var lastModified: Int64
        public var format: String?
    }

    /// The tags, length, time and format of the song at `uri`, or nil when the library lacks it.
    public func songFacts(_ uri: String) -> SongFacts? {
        try? self.database.read { db -> SongFacts? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT block, duration, mtime, sample_rate, channels, bits FROM song WHERE uri = ?",
                    arguments: [uri])
            else { return nil }
            // The block's order is MPD's: kept (`Tags.items`).
            var tags = Tags()
            for line in (row[0] as String).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":"), let tag = TagName(name: String(line[..<colon])) else {
                    continue
                }
                let valueStart = line.index(colon, offsetBy: 2, limitedBy: line.endIndex) ?? line.endIndex
                tags.append(String(line[valueStart...]), to: tag)
            }
            let rate: Int64? = row[3]
            let channels: Int64? = row[4]
            let bits: Int64 = row[5]
            return SongFacts(
                tags: tags, duration: row[1], lastModified: row[2],
                format: rate.flatMap { rate in
                    channels.map { SongRecord.format(sampleRate: rate, bits: bits, channels: $0) }
                })
        }
    }

    /// Reads the figures `stats` shows, as the last update stored them.
    func readStats() throws -> LibraryStats {
        try self.database.read { db in
            var stats = LibraryStats()
            let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM meta")
            for row in rows {
                let value: Int64 = row[1] ?? 0
                switch row[0] as String {
                case "artists": stats.artists = Int(value)
                case "albums": stats.albums = Int(value)
                case "songs": stats.songs = Int(value)
                case "db_playtime": stats.playtime = Int(value)
                case "db_update": stats.lastUpdate = value
                default: break
                }
            }
            return stats
        }
    }

    /// The absolute path of `uri`, escaped as URIs are (`PathEscaping.systemPath` gives the real one).
    public func path(of uri: String) -> String {
        let uri = Self.normalized(uri)
        return uri.isEmpty ? self.musicDirectory : self.musicDirectory + "/" + uri
    }
}
