import GRDB
import MusicTags

/// Writes songs into the database inside one transaction: the statements are looked up once, not per
/// song, and each directory's id is asked of SQLite once. A scan writes 20,000 songs and each went
/// through three statement-cache lookups (hashing their SQL) and a freshly prepared directory query.
struct SongRowWriter {
    private let db: Database
    private let insertSong: RawStatement
    private let insertFoldedName: RawStatement
    private let insertTag: RawStatement
    private let insertText: RawStatement
    private let findSong: RawStatement
    private let deleteSong: RawStatement
    private let songTagNames: RawStatement
    private var directoryIDs: [String: Int64] = [:]
    /// How many more (or fewer) songs have each tag name (by `TagName.order`) than before this writer
    /// wrote: a small update adjusts the counts `stats` and `list` keep (`LibraryUpdate.refreshDerived`)
    /// by these instead of counting every tag row again, which took 1.2 s at 200,000 songs.
    private(set) var taggedChanges: [Int64: Int] = [:]

    init(_ db: Database) throws {
        self.db = db
        self.insertSong = try RawStatement(
            db,
            """
            INSERT INTO song (directory, name, uri, mtime, size, added, duration, sample_rate, channels, block, listing,
                bits)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        self.insertFoldedName = try RawStatement(db, "INSERT INTO song_folded_name (id, folded) VALUES (?, ?)")
        self.insertTag = try RawStatement(
            db, "INSERT INTO tag (song, name, value, folded, fallback) VALUES (?, ?, ?, ?, ?)")
        self.insertText = try RawStatement(
            db, "INSERT INTO song_text (rowid, \(Self.textColumns)) VALUES (?, \(Self.textPlaceholders))")
        self.findSong = try RawStatement(db, "SELECT id, added FROM song WHERE uri = ?")
        self.deleteSong = try RawStatement(db, "DELETE FROM song WHERE id = ?")
        self.songTagNames = try RawStatement(db, "SELECT DISTINCT name FROM tag WHERE song = ?")
    }

    private static let textPlaceholders = Array(repeating: "?", count: TagName.allCases.count).joined(
        separator: ", ")
    private static let textColumns = TagName.allCases.map { LibraryDatabase.textColumn($0) }.joined(
        separator: ", ")

    /// Inserts or replaces one song with its tags and full-text row. A song read again keeps the time
    /// it was first added; `replacing` false says it is known not to be in the database.
    mutating func write(_ record: SongRecord, added now: Int64, replacing: Bool = true) throws {
        let directory = try self.directoryID(record.directoryURI)
        var added = now
        if replacing {
            self.findSong.bind(1, record.uri)
            if try self.findSong.next(self.db) {
                let id = self.findSong.int64(0)
                added = self.findSong.int64(1)
                self.findSong.reset()
                try self.delete(id)
            }
        }
        let insertSong = self.insertSong
        insertSong.bind(1, directory)
        insertSong.bind(2, record.name)
        insertSong.bind(3, record.uri)
        insertSong.bind(4, record.mtime)
        insertSong.bind(5, record.size)
        insertSong.bind(6, added)
        insertSong.bind(7, record.duration)
        insertSong.bind(8, record.sampleRate.map(Int64.init))
        insertSong.bind(9, record.channels.map(Int64.init))
        insertSong.bind(10, record.block)
        insertSong.bind(11, record.listing)
        insertSong.bind(12, Int64(record.bits ?? 16))
        try insertSong.run(self.db)
        let song = self.db.lastInsertedRowID
        self.insertFoldedName.bind(1, song)
        self.insertFoldedName.bind(2, TextFolding.fold(record.name))
        try self.insertFoldedName.run(self.db)
        for name in Set(record.tagRows.map(\.order)) {
            self.taggedChanges[name, default: 0] += 1
        }
        for row in record.tagRows {
            self.insertTag.bind(1, song)
            self.insertTag.bind(2, row.order)
            self.insertTag.bind(3, row.value)
            self.insertTag.bind(4, row.folded)
            self.insertTag.bind(5, row.fallback ? 1 : 0)
            try self.insertTag.run(self.db)
        }
        self.insertText.bind(1, song)
        for (index, text) in record.searchTexts.enumerated() {
            self.insertText.bind(Int32(index + 2), text)
        }
        try self.insertText.run(self.db)
    }

    /// Removes the song at `uri`, if there is one, with its tags and full-text row.
    mutating func remove(uri: String) throws {
        self.findSong.bind(1, uri)
        guard try self.findSong.next(self.db) else { return }
        let id = self.findSong.int64(0)
        self.findSong.reset()
        try self.delete(id)
    }

    private mutating func delete(_ id: Int64) throws {
        self.songTagNames.bind(1, id)
        while try self.songTagNames.next(self.db) {
            self.taggedChanges[self.songTagNames.int64(0), default: 0] -= 1
        }
        self.deleteSong.bind(1, id)
        try self.deleteSong.run(self.db)
    }

    private mutating func directoryID(_ uri: String) throws -> Int64 {
        if let id = self.directoryIDs[uri] { return id }
        let id = try LibraryUpdate.ensureDirectory(uri, db: self.db)
        self.directoryIDs[uri] = id
        return id
    }
}
