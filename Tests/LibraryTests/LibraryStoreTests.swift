import ControlProtocol
import Dispatch
import Foundation
import GRDB
import MusicTags
import Synchronization
import Testing

@testable import Library

/// A music tree made of the repository's tagged fixtures, scanned into a fresh database.
final class ScannedTree {
    let root: String
    let music: String
    let database: LibraryDatabase
    let library: MusicLibrary

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// root.mp3 (no tags), A/x.mp3 (ID3v2.3: Björk & Sigur Rós), A/B/y.mp3 (ID3v2.4: Мумий Тролль),
    /// C/z.mp3 (ID3v1: Sigur Rós), C/empty.mp3 (zero bytes), notes.txt.
    init() throws {
        self.root = NSTemporaryDirectory() + "library-test-" + UUID().uuidString
        self.music = self.root + "/music"
        let files = [
            ("root.mp3", "stereo-44k-cbr.mp3"), ("A/x.mp3", "tagged-id3v23.mp3"), ("A/B/y.mp3", "tagged-id3v24.mp3"),
            ("C/z.mp3", "tagged-id3v1.mp3"), ("C/empty.mp3", "empty.mp3"),
        ]
        for (name, fixture) in files {
            let path = self.music + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + fixture, toPath: path)
        }
        try "not music".write(toFile: self.music + "/notes.txt", atomically: true, encoding: .utf8)
        self.library = try MusicLibrary(
            musicDirectory: self.music, databasePath: self.root + "/library.db", watches: false
        ) { _ in }
        self.database = self.library.database
    }

    /// Runs an update of `uri` to its end on the calling thread.
    func update(_ uri: String = "", rescan: Bool = false) throws -> UpdateReport {
        try LibraryUpdate(database: self.database, musicDirectory: self.music, cancellation: nil)
            .run(uri: uri, rescan: rescan)
    }

    deinit {
        self.library.shutdown()
        try? FileManager.default.removeItem(atPath: self.root)
    }

    /// The answer a query writes, as text.
    func answer(_ body: (inout ResponseWriter) throws(Ack) -> Void) throws -> String {
        var response = ResponseWriter()
        try body(&response)
        return response.text
    }

    /// The `file:` lines of an answer, in order.
    static func files(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("file: ") }.map { String($0.dropFirst(6)) }
    }
}

/// A library database as an older playerd left it: the migrations up to `migration`, then `rows` (SQL)
/// written, in a new temporary directory (`root`, removed by the caller) holding `library.db`.
func olderLibrary(upTo migration: String, rows: String) throws -> (root: String, path: String) {
    let root = NSTemporaryDirectory() + "older-library-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    let path = root + "/library.db"
    let pool = try DatabasePool(path: path)
    try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA application_id = \(LibraryDatabase.applicationID)")
    }
    try LibraryDatabase.migrator.migrate(pool, upTo: migration)
    try pool.write { db in try db.execute(sql: rows) }
    return (root, path)
}

@Suite struct LibraryStoreTests {
    let all = Set(TagName.allCases)

    /// The daemon gives SQLite's memory back when it is quiet, which a client reading a long answer
    /// slowly does not break: its read stays open all the while.
    @Test func releasingMemoryHoldsUpNoRead() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let library = tree.library
        let database = tree.database
        let inside = DispatchSemaphore(value: 0)
        let letGo = DispatchSemaphore(value: 0)
        let slowReadDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? database.read { _ in
                inside.signal()
                letGo.wait()
            }
            slowReadDone.signal()
        }
        inside.wait()
        defer {
            letGo.signal()
            slowReadDone.wait()
        }
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            library.releaseMemory()
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 5) == .success, "the release waited for the slow read")
        let found = Mutex<[String]?>(nil)
        let answered = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            found.withLock { $0 = try? library.songURIs(under: "A") ?? [] }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 5) == .success, "a query waited for the slow read")
        #expect(found.withLock { $0 } == ["A/x.mp3", "A/B/y.mp3"])
    }

    @Test func scansNewFilesSkipsBrokenOnesAndCountsThem() throws {
        let tree = try ScannedTree()
        let report = try tree.update()
        #expect(report.added == 4)
        #expect(report.skipped.count == 1)
        #expect(report.skipped.first?.contains("empty.mp3") == true)
        #expect(try tree.library.readStats().songs == 4)
        #expect(try tree.library.readStats().artists == 3)
    }

    @Test func aSecondUpdateReadsNothingAndSeesChangesAndRemovals() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let unchanged = try tree.update()
        #expect(!unchanged.changed)
        // The empty file is named once, not at every update, until it changes.
        #expect(unchanged.skipped.isEmpty)
        // A new mtime makes a file read again; a removed file leaves.
        let later = Date(timeIntervalSinceNow: 60)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: tree.music + "/A/x.mp3")
        try FileManager.default.removeItem(atPath: tree.music + "/C/z.mp3")
        let changed = try tree.update()
        #expect(changed.updated == 1)
        #expect(changed.removed == 1)
        #expect(try tree.library.readStats().songs == 3)
        // A whole directory gone takes its songs.
        try FileManager.default.removeItem(atPath: tree.music + "/A")
        #expect(try tree.update().changed)
        #expect(try tree.library.readStats().songs == 1)
    }

    @Test func lsinfoListsSongsThenDirectories() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let root = try tree.answer { response throws(Ack) in
            try tree.library.listInfo("", tagTypes: all, to: &response)
        }
        let keys = root.split(separator: "\n").map { $0.prefix { $0 != ":" } }
        #expect(keys.first == "file")
        #expect(root.contains("file: root.mp3\nLast-Modified: "))
        #expect(root.contains("directory: A\n"))
        #expect(root.range(of: "file: root.mp3")!.lowerBound < root.range(of: "directory: A")!.lowerBound)
        let a = try tree.answer { response throws(Ack) in
            try tree.library.listInfo("/A/", tagTypes: all, to: &response)
        }
        #expect(a.contains("file: A/x.mp3\nLast-Modified: "))
        #expect(a.contains("Format: 44100:16:2\nArtist: Björk & Sigur Rós\n"))
        #expect(a.contains("directory: A/B\n"))
        #expect(throws: Ack.self) {
            try tree.answer { response throws(Ack) in try tree.library.listInfo("nowhere", tagTypes: all, to: &response)
            }
        }
    }

    @Test func listallGoesDepthFirstInNameOrder() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let text = try tree.answer { response throws(Ack) in
            try tree.library.listAll("", info: false, tagTypes: all, to: &response) { _ in true }
        }
        #expect(
            text
                == "file: root.mp3\ndirectory: A\nfile: A/x.mp3\ndirectory: A/B\nfile: A/B/y.mp3\ndirectory: C\nfile: C/z.mp3\n"
        )
    }

    @Test func searchFoldsCaseAndAccentsAndFindIsExact() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        func files(_ filter: SongFilter) throws -> [String] {
            ScannedTree.files(
                try tree.answer { response throws(Ack) in
                    try tree.library.find(LibraryQuery(filter: filter), tagTypes: all, to: &response) { _ in true }
                })
        }
        #expect(try files(.compare(.anyTag, .contains, "SIGUR ROS", ignoringCase: true)) == ["A/x.mp3", "C/z.mp3"])
        #expect(try files(.compare(.tag(.title), .contains, "ca", ignoringCase: true)) == ["A/x.mp3"])
        #expect(try files(.compare(.tag(.artist), .equals, "Sigur Rós", ignoringCase: false)) == ["C/z.mp3"])
        #expect(try files(.compare(.tag(.artist), .equals, "sigur rós", ignoringCase: false)) == [])
        // AlbumArtist falls back to Artist, as in MPD.
        #expect(try files(.compare(.tag(.albumArtist), .equals, "Sigur Rós", ignoringCase: false)) == ["C/z.mp3"])
        // An empty value means "lacks the tag".
        #expect(try files(.compare(.tag(.artist), .equals, "", ignoringCase: false)) == ["root.mp3"])
        #expect(try files(.not(.compare(.tag(.artist), .equals, "", ignoringCase: false))).count == 3)
        #expect(try files(.base("A")) == ["A/x.mp3", "A/B/y.mp3"])
        #expect(try files(.compare(.tag(.title), .matchesRegex, "^Ζωή", ignoringCase: false)) == ["A/B/y.mp3"])
        #expect(
            try files(
                .and([
                    .compare(.tag(.genre), .equals, "Rock", ignoringCase: false),
                    .compare(.file, .contains, "z", ignoringCase: false),
                ])) == ["C/z.mp3"])
    }

    /// `search file X` folds a directory's path once and each song's name, not each whole path: what it
    /// finds must be what folding each whole path finds, in the directory, in the name, and across both.
    @Test func searchFileFindsWhatTheWholeFoldedPathHolds() throws {
        let tree = try ScannedTree()
        for path in ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3", "Beyoncé/Lemonade/Hold Up.MP3", "Ça/é.mp3"] {
            let target = tree.music + "/" + path
            try FileManager.default.createDirectory(
                atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: ScannedTree.fixtures + "/stereo-44k-cbr.mp3", toPath: target)
        }
        _ = try tree.update()
        func files(_ needle: String) throws -> [String] {
            let filter = SongFilter.compare(.file, .contains, needle, ignoringCase: true)
            return ScannedTree.files(
                try tree.answer { response throws(Ack) in
                    try tree.library.find(LibraryQuery(filter: filter), tagTypes: all, to: &response) { _ in true }
                }
            ).sorted()
        }
        func wholePaths(_ needle: String) throws -> [String] {
            try tree.database.read { db in
                try String.fetchAll(
                    db, sql: "SELECT uri FROM song WHERE instr(fold(uri), ?) > 0 ORDER BY uri",
                    arguments: [TextFolding.fold(needle)])
            }.sorted()
        }
        #expect(try files("sigur ros") == ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3"])
        #expect(try files("ÁGÆTIS") == ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3"])
        #expect(try files("SVEFN") == ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3"])
        #expect(try files("rós/ágætis") == ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3"])
        #expect(try files("byrjun/01") == ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3"])
        #expect(try files("hold up.mp3") == ["Beyoncé/Lemonade/Hold Up.MP3"])
        #expect(try files("ca/e") == ["Ça/é.mp3"])
        #expect(try files("nowhere") == [])
        for needle in ["a", "A/", "é", "E.MP3", ".mp3", "b/y", "x", "", "sigur", "/", "lemonade/hold", "MP3"] {
            #expect(try files(needle) == wholePaths(needle), "\(needle)")
        }
    }

    /// A library made before file names were folded when written gets them at its first start, and
    /// `search file` finds its songs; a song's folded name goes with the song.
    @Test func aLibraryWithoutFoldedNamesIsMigrated() throws {
        let (root, path) = try olderLibrary(
            upTo: "v3 sample format",
            rows: """
                INSERT INTO directory (id, uri, parent, name, mtime) VALUES (1, '', NULL, '', 0);
                INSERT INTO directory (id, uri, parent, name, mtime) VALUES (2, 'Beyoncé', 1, 'Beyoncé', 0);
                INSERT INTO song (id, directory, name, uri, mtime, size, added, duration, block)
                VALUES (7, 2, 'Hold Up.mp3', 'Beyoncé/Hold Up.mp3', 1, 2, 3, 1.5, 'Title: Hold Up\n');
                INSERT INTO song (id, directory, name, uri, mtime, size, added, duration, block)
                VALUES (8, 1, 'Ça.mp3', 'Ça.mp3', 1, 2, 3, 1.5, 'Title: Ça\n');
                """)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let database = try LibraryDatabase(path: path)
        let folded = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, folded FROM song_folded_name ORDER BY id").map {
                "\($0["id"] as Int64) \($0["folded"] as String)"
            }
        }
        #expect(folded == ["7 hold up.mp3", "8 ca.mp3"])
        let library = try MusicLibrary(musicDirectory: root, databasePath: path, watches: false) { _ in }
        defer { library.shutdown() }
        func files(_ needle: String) throws -> [String] {
            var response = ResponseWriter()
            let filter = SongFilter.compare(.file, .contains, needle, ignoringCase: true)
            try library.find(LibraryQuery(filter: filter), tagTypes: all, to: &response) { _ in true }
            return ScannedTree.files(response.text)
        }
        #expect(try files("HOLD") == ["Beyoncé/Hold Up.mp3"])
        #expect(try files("beyonce") == ["Beyoncé/Hold Up.mp3"])
        #expect(try files("ÇA.MP3") == ["Ça.mp3"])
        try database.pool.write { db in try db.execute(sql: "DELETE FROM song WHERE id = 7") }
        #expect(try database.read { db in try Int.fetchAll(db, sql: "SELECT id FROM song_folded_name") } == [8])
    }

    @Test func sortAndWindow() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        var query = LibraryQuery(filter: .not(.compare(.tag(.title), .equals, "", ignoringCase: false)))
        query.sort = SortOrder(key: .tag(.title), descending: true)
        query.window = (0, 2)
        let text = try tree.answer { response throws(Ack) in
            try tree.library.find(query, tagTypes: all, to: &response) { _ in true }
        }
        // Titles: "Café Noir ...", "Motörhead Übung", "Ζωή σε 4/4 ..." — descending, first two.
        #expect(ScannedTree.files(text) == ["A/B/y.mp3", "C/z.mp3"])
    }

    @Test func listValuesAreByteSortedWithEmptyForSongsLackingTheTag() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let text = try tree.answer { response throws(Ack) in
            try tree.library.list(.tag(.artist), query: LibraryQuery(), to: &response) { _ in true }
        }
        #expect(text == "Artist: \nArtist: Björk & Sigur Rós\nArtist: Sigur Rós\nArtist: Мумий Тролль\n")
        let grouped = try tree.answer { response throws(Ack) in
            try tree.library.list(.tag(.album), query: LibraryQuery(groups: [.genre]), to: &response) { _ in true }
        }
        #expect(
            grouped
                == "Genre: \nAlbum: \nGenre: Rock\nAlbum: Ágætis byrjun\nGenre: Synthpop\nAlbum: Ça ira, mon cœur\nGenre: Électronique\nAlbum: 日本語のアルバム\n"
        )
    }

    @Test func countsSongsAndPlaytime() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        let text = try tree.answer { response throws(Ack) in
            try tree.library.count(
                LibraryQuery(filter: .compare(.tag(.artist), .equals, "Sigur Rós", ignoringCase: false)), to: &response)
        }
        #expect(text.hasPrefix("songs: 1\nplaytime: "))
    }

    @Test func addsFromTheDatabase() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        #expect(try tree.library.songURIs(under: "A") == ["A/x.mp3", "A/B/y.mp3"])
        #expect(try tree.library.songURIs(under: "C/z.mp3") == ["C/z.mp3"])
        #expect(try tree.library.songURIs(under: "nowhere") == nil)
    }

    @Test func aCorruptDatabaseIsMovedAsideAndRebuilt() throws {
        let directory = NSTemporaryDirectory() + "library-corrupt-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/library.db"
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        var notices: [String] = []
        let database = try LibraryDatabase(path: path) { aside, reason in notices.append("\(aside): \(reason)") }
        #expect(notices.count == 1)
        #expect(try database.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM song") } == 0)
        let moved = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains("broken") }
        #expect(!moved.isEmpty)
    }

    @Test("a scan of thousands of songs writes each once, in growing batches, and puts the writer's cache back")
    func bulkScan() throws {
        let tree = try ScannedTree()
        let songs = 9000
        for directory in 0..<30 {
            let path = tree.music + "/Bulk/\(directory)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for index in 0..<(songs / 30) {
                try FileManager.default.linkItem(atPath: tree.music + "/A/x.mp3", toPath: path + "/\(index).mp3")
            }
        }
        let progress = Mutex<[Int]>([])
        var update = LibraryUpdate(database: tree.database, musicDirectory: tree.music, cancellation: nil)
        update.progress = { report in progress.withLock { $0.append(report.added) } }
        let report = try update.run(uri: "", rescan: false)
        // The tree's four readable songs, and the 9,000.
        #expect(report.added == songs + 4)
        // Batches of 512, 1,024, 2,048, then 4,096 at most: the first commits come early, the rest seldom.
        #expect(progress.withLock { $0 } == [512, 1536, 3584, 7680, 9004])
        let settings = try tree.database.pool.write { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA cache_size"),
                try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
            )
        }
        #expect(settings.0 == -2048 && settings.1 == 1000)
        let stored = try tree.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM song WHERE uri LIKE 'Bulk/%'"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM song_text"),
                try Int.fetchOne(db, sql: "SELECT count(DISTINCT song) FROM tag")
            )
        }
        // Every song has its full-text row; all but root.mp3 (no tags) have tag rows.
        #expect(stored.0 == songs && stored.1 == songs + 4 && stored.2 == songs + 3)
        // Nothing changed: nothing is read again.
        let again = try tree.update()
        #expect(again.added == 0 && again.updated == 0 && again.removed == 0)
    }

    @Test("small updates adjust the per-tag song counts, which then equal a count of every tag row")
    func taggedCountsFollowSmallUpdates() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        func counts() throws -> (kept: [String: Int], counted: [String: Int]) {
            try tree.database.read { db in
                let kept = try Row.fetchAll(db, sql: "SELECT key, value FROM meta WHERE key LIKE 'tagged:%'")
                let counted = try Row.fetchAll(
                    db,
                    sql: "SELECT 'tagged:' || name, count(*) FROM (SELECT DISTINCT song, name FROM tag) GROUP BY name")
                return (
                    Dictionary(uniqueKeysWithValues: kept.map { ($0[0] as String, $0[1] as Int) }),
                    Dictionary(uniqueKeysWithValues: counted.map { ($0[0] as String, $0[1] as Int) })
                )
            }
        }
        let first = try counts()
        #expect(!first.kept.isEmpty && first.kept == first.counted)
        // A song's tags change (ID3v2.3 Björk to ID3v2.4 Мумий Тролль), one goes, two come.
        let fixtures = ScannedTree.fixtures
        try FileManager.default.removeItem(atPath: tree.music + "/A/x.mp3")
        try FileManager.default.copyItem(atPath: fixtures + "/tagged-id3v24.mp3", toPath: tree.music + "/A/x.mp3")
        try FileManager.default.removeItem(atPath: tree.music + "/C/z.mp3")
        try FileManager.default.copyItem(atPath: fixtures + "/tagged-id3v1.mp3", toPath: tree.music + "/A/new.mp3")
        try FileManager.default.copyItem(atPath: fixtures + "/tagged-id3v23.mp3", toPath: tree.music + "/new.mp3")
        // Whole seconds: the same size and mtime would be taken for "unchanged".
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: tree.music + "/A/x.mp3")
        let report = try tree.update()
        #expect(report.added == 2 && report.updated == 1 && report.removed == 1)
        let second = try counts()
        #expect(second.kept == second.counted && second.kept != first.kept)
        // One file, updated by itself; then one that became unreadable leaves with its tags.
        try FileManager.default.removeItem(atPath: tree.music + "/new.mp3")
        try FileManager.default.copyItem(atPath: fixtures + "/tagged-id3v1.mp3", toPath: tree.music + "/new.mp3")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 10)], ofItemAtPath: tree.music + "/new.mp3")
        #expect(try tree.update("new.mp3").updated == 1)
        let third = try counts()
        #expect(third.kept == third.counted)
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: tree.music + "/A/new.mp3"))
        // It counts as removed: `stats` and idle `database` follow (they did not, before these counts).
        #expect(try tree.update().removed == 1)
        #expect(try tree.database.read { try Int.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'songs'") } == 4)
        let fourth = try counts()
        #expect(fourth.kept == fourth.counted && fourth.kept != third.kept)
        // A directory that goes takes its songs: counted again.
        try FileManager.default.removeItem(atPath: tree.music + "/A")
        _ = try tree.update()
        let fifth = try counts()
        #expect(fifth.kept == fifth.counted)
    }

    @Test func quickQueriesAreAbandonedWhenTheyProveLongOrSlow() throws {
        let tree = try ScannedTree()
        try FileManager.default.createDirectory(atPath: tree.music + "/Many", withIntermediateDirectories: true)
        for index in 0..<3000 {
            try FileManager.default.linkItem(
                atPath: tree.music + "/A/x.mp3", toPath: tree.music + "/Many/\(index).mp3")
        }
        _ = try tree.update()
        let all = Set(TagName.allCases)
        // Small: answered at once, the same as otherwise.
        let quick = try tree.library.quickly { () throws(Ack) -> [UInt8] in
            var response = ResponseWriter()
            try tree.library.listInfo("A", tagTypes: all, to: &response)
            return response.bytes
        }
        var slow = ResponseWriter()
        try tree.library.listInfo("A", tagTypes: all, to: &slow)
        #expect(quick == slow.bytes)
        // Long (3,000 song blocks): abandoned once past the quick answer's limit.
        #expect(
            try tree.library.quickly { () throws(Ack) -> Int in
                var response = ResponseWriter()
                try tree.library.listInfo("Many", tagTypes: all, to: &response)
                return response.bytes.count
            } == nil)
        // Slow (two letters no tag holds, looked for in each of the 3,000 songs' tags): SQLite stops it.
        let query = try LibraryQuery.parse(["any", "zq"], ignoringCase: true, allowing: [])
        #expect(
            try tree.library.quickly { () throws(Ack) -> Int in
                var response = ResponseWriter()
                try tree.library.find(query, tagTypes: all, to: &response) { _ in true }
                return response.bytes.count
            } == nil)
        // Run normally, both answer whole.
        var many = ResponseWriter()
        try tree.library.listInfo("Many", tagTypes: all, to: &many)
        #expect(many.text.components(separatedBy: "\nfile: ").count == 3000)
        var nothing = ResponseWriter()
        try tree.library.find(query, tagTypes: all, to: &nothing) { _ in true }
        #expect(nothing.bytes.isEmpty)
    }

    @Test func namesThatDifferOnlyInNormalizationAreTwoSongs() throws {
        let tree = try ScannedTree()
        // "café" with a composed é, and with an e and a combining accent: two files to the file system.
        for name in ["caf\u{E9}.mp3", "cafe\u{301}.mp3"] {
            try FileManager.default.copyItem(
                atPath: ScannedTree.fixtures + "/one-second.mp3", toPath: tree.music + "/C/" + name)
        }
        let report = try tree.update()
        #expect(report.added == 6)
        #expect(try tree.library.readStats().songs == 6)
        #expect(try tree.update().changed == false)
        try FileManager.default.removeItem(atPath: tree.music + "/C/cafe\u{301}.mp3")
        #expect(try tree.update().removed == 1)
        #expect(try tree.library.songURIs(under: "C")?.count == 2)
    }

    @Test func symlinkLoopsEndAndNamesThatAreNotUTF8AreRead() throws {
        let tree = try ScannedTree()
        // A loop back to the root, and an empty file whose name is not UTF-8.
        try FileManager.default.createSymbolicLink(atPath: tree.music + "/A/B/loop", withDestinationPath: "../..")
        try RawNames.copy("empty.mp3", to: Array((tree.music + "/C/caf").utf8) + [0xE9] + Array(".mp3".utf8))
        let report = try tree.update()
        #expect(report.added == 4)
        // The file is read under its escaped name (and found empty), not passed over for its name.
        #expect(report.skipped.contains { $0.hasSuffix("/C/caf\\xE9.mp3: empty file") }, "\(report.skipped)")
        #expect(!report.skipped.contains { $0.contains("UTF-8") })
        #expect(try tree.library.readStats().songs == 4)
    }
}

@Suite struct LibraryJobTests {
    /// An update job of a subtree that removes a song, run on the library's own thread: this once
    /// outgrew the thread's stack and corrupted the heap.
    @Test func aJobRemovingASongFromASubtree() async throws {
        let tree = try ScannedTree()
        let library = try MusicLibrary(
            musicDirectory: tree.music, databasePath: tree.root + "/probe.db", watches: false
        ) { _ in }
        defer { library.shutdown() }
        _ = try library.update("")
        for _ in 0..<200 where library.stats.songs != 4 { try await Task.sleep(for: .milliseconds(20)) }
        try FileManager.default.removeItem(atPath: tree.music + "/A/B/y.mp3")
        _ = try library.update("A/B")
        for _ in 0..<200 where library.stats.songs != 3 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(library.stats.songs == 3)
    }
}
