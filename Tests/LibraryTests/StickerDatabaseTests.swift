import Foundation
import GRDB
import Testing

@testable import Library

@Suite("Sticker database")
struct StickerDatabaseTests {
    private static func open(_ directory: TemporaryDirectory) throws -> StickerDatabase {
        try StickerDatabase(path: directory.path + "/stickers.db")
    }

    @Test("set, get, list, delete: MPD's answers, names in byte order, an empty name stores nothing")
    func basics() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.open(directory)
        #expect(try stickers.value(type: "song", uri: "a.mp3", name: "rating") == nil)
        #expect(try stickers.set(type: "song", uri: "a.mp3", name: "rating", value: "5"))
        #expect(try stickers.set(type: "song", uri: "a.mp3", name: "Zeta", value: "z"))
        #expect(try stickers.set(type: "song", uri: "a.mp3", name: "a=b", value: "c d"))
        #expect(try stickers.set(type: "song", uri: "b.mp3", name: "rating", value: "1"))
        // Replacing keeps one row.
        #expect(try stickers.set(type: "song", uri: "a.mp3", name: "rating", value: "7"))
        #expect(try stickers.value(type: "song", uri: "a.mp3", name: "rating") == "7")
        // MPD 0.23 takes an empty name without a word and stores nothing; reading one finds nothing.
        #expect(try !stickers.set(type: "song", uri: "a.mp3", name: "", value: "x"))
        #expect(try stickers.value(type: "song", uri: "a.mp3", name: "") == nil)
        let listed = try stickers.list(type: "song", uri: "a.mp3")
        #expect(listed.map(\.name) == ["Zeta", "a=b", "rating"])
        #expect(listed.map(\.value) == ["z", "c d", "7"])
        // Another type is another namespace.
        #expect(try stickers.list(type: "playlist", uri: "a.mp3").isEmpty)
        #expect(try !stickers.delete(type: "song", uri: "a.mp3", name: "missing"))
        #expect(try stickers.delete(type: "song", uri: "a.mp3", name: "Zeta"))
        #expect(try stickers.list(type: "song", uri: "a.mp3").map(\.name) == ["a=b", "rating"])
        #expect(try stickers.delete(type: "song", uri: "a.mp3"))
        #expect(try !stickers.delete(type: "song", uri: "a.mp3"))
        #expect(try stickers.list(type: "song", uri: "a.mp3").isEmpty)
        #expect(try stickers.value(type: "song", uri: "b.mp3", name: "rating") == "1")
    }

    /// The stickers of a small library, set in no particular order.
    private static func filled(_ directory: TemporaryDirectory) throws -> StickerDatabase {
        let stickers = try Self.open(directory)
        let values = [
            ("dir/sub/c.mp3", "10"), ("a.mp3", "9"), ("Other/d.mp3", "2"), ("dir/b.mp3", "100"),
            ("DIR_e.mp3", "abc"), ("dirx.mp3", "-5"),
        ]
        for (uri, value) in values {
            try stickers.set(type: "song", uri: uri, name: "n", value: value)
        }
        try stickers.set(type: "song", uri: "a.mp3", name: "other", value: "1")
        return stickers
    }

    private static func uris(_ found: [StickerDatabase.Found]) -> [String] { found.map(\.uri) }

    @Test("find: below a directory exactly (not a name that starts alike, not another case), by URI in byte order")
    func findBelow() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.filled(directory)
        // What mpd 0.23.12 answered for the same stickers.
        #expect(
            try Self.uris(stickers.find(type: "song", below: "", name: "n")) == [
                "DIR_e.mp3", "Other/d.mp3", "a.mp3", "dir/b.mp3", "dir/sub/c.mp3", "dirx.mp3",
            ])
        #expect(try Self.uris(stickers.find(type: "song", below: "dir", name: "n")) == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try Self.uris(stickers.find(type: "song", below: "dir/sub", name: "n")) == ["dir/sub/c.mp3"])
        // MPD's LIKE folds ASCII case and reads `_` as any character; the prefix itself does neither.
        #expect(try stickers.find(type: "song", below: "DIR", name: "n").isEmpty)
        #expect(try stickers.find(type: "song", below: "dir_", name: "n").isEmpty)
        #expect(try stickers.find(type: "song", below: "di", name: "n").isEmpty)
        #expect(try stickers.find(type: "song", below: "dir/", name: "n").isEmpty)
        #expect(try stickers.find(type: "song", below: "a.mp3", name: "n").isEmpty)
        #expect(try Self.uris(stickers.find(type: "song", below: "", name: "other")) == ["a.mp3"])
        #expect(try stickers.find(type: "song", below: "", name: "none").isEmpty)
        let found = try stickers.find(type: "song", below: "dir", name: "n")
        #expect(found.map(\.value) == ["100", "10"])
    }

    @Test("find with a comparison: =, <, > on strings (MPD 0.23), eq, lt, gt on integers, contains, starts_with")
    func findComparing() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.filled(directory)
        func find(_ comparison: StickerDatabase.Comparison, _ value: String) throws -> [String] {
            try Self.uris(stickers.find(type: "song", below: "", name: "n", comparison: (comparison, value)))
        }
        // Strings: "100", "10", "2" and "-5" sort before "5"; "9" and "abc" after (as mpd answered).
        #expect(try find(.less, "5") == ["Other/d.mp3", "dir/b.mp3", "dir/sub/c.mp3", "dirx.mp3"])
        #expect(try find(.greater, "5") == ["DIR_e.mp3", "a.mp3"])
        #expect(try find(.equal, "10") == ["dir/sub/c.mp3"])
        #expect(try find(.equal, "1").isEmpty)
        // Integers: "abc" reads as 0.
        #expect(try find(.lessInteger, "5") == ["DIR_e.mp3", "Other/d.mp3", "dirx.mp3"])
        #expect(try find(.greaterInteger, "9") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try find(.equalInteger, "0") == ["DIR_e.mp3"])
        #expect(try find(.contains, "0") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try find(.contains, "B") == ["DIR_e.mp3"])
        #expect(try find(.startsWith, "1") == ["dir/b.mp3", "dir/sub/c.mp3"])
    }

    @Test("find's sort (MPD 0.24): by URI, value or integer value, either way; ties by URI")
    func findSorted() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.filled(directory)
        func find(_ order: StickerDatabase.Order?, descending: Bool = false) throws -> [String] {
            try stickers.find(type: "song", below: "", name: "n", order: order, descending: descending).map(\.value)
        }
        #expect(try find(.uri) == ["abc", "2", "9", "100", "10", "-5"])
        #expect(try find(.uri, descending: true) == ["-5", "10", "100", "9", "2", "abc"])
        #expect(try find(.value) == ["-5", "10", "100", "2", "9", "abc"])
        #expect(try find(.integerValue) == ["-5", "abc", "2", "9", "10", "100"])
        #expect(try find(.integerValue, descending: true) == ["100", "10", "9", "2", "abc", "-5"])
        try stickers.set(type: "song", uri: "dir/b.mp3", name: "n", value: "2")
        #expect(
            try Self.uris(stickers.find(type: "song", below: "", name: "n", order: .value)) == [
                "dirx.mp3", "dir/sub/c.mp3", "Other/d.mp3", "dir/b.mp3", "a.mp3", "DIR_e.mp3",
            ])
    }

    @Test("inc and dec (MPD 0.24): a new sticker takes the value given; an old one adds as SQLite adds")
    func incrementing() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.open(directory)
        func value(_ name: String) throws -> String? { try stickers.value(type: "song", uri: "a.mp3", name: name) }
        try stickers.increment(type: "song", uri: "a.mp3", name: "count", by: "5")
        #expect(try value("count") == "5")
        try stickers.increment(type: "song", uri: "a.mp3", name: "count", by: "2")
        #expect(try value("count") == "7")
        try stickers.increment(type: "song", uri: "a.mp3", name: "count", by: "10", decrement: true)
        #expect(try value("count") == "-3")
        // MPD's SQL inserts the value as given, even for dec.
        try stickers.increment(type: "song", uri: "a.mp3", name: "down", by: "3", decrement: true)
        #expect(try value("down") == "3")
        // Text that is no number counts as 0.
        try stickers.set(type: "song", uri: "a.mp3", name: "word", value: "abc")
        try stickers.increment(type: "song", uri: "a.mp3", name: "word", by: "1")
        #expect(try value("word") == "1")
        try stickers.increment(type: "song", uri: "a.mp3", name: "count", by: "0.5")
        #expect(try value("count") == "-2.5")
        // The largest integer plus one turns to a real number (SQLite's text of it), rather than wrap or trap.
        try stickers.set(type: "song", uri: "a.mp3", name: "huge", value: String(Int64.max))
        try stickers.increment(type: "song", uri: "a.mp3", name: "huge", by: "1")
        #expect(try value("huge") == "9.22337203685478e+18")
    }

    @Test("play statistics: a counter and its time, myMPD's names and values, in one go")
    func counting() throws {
        let directory = try TemporaryDirectory()
        let stickers = try Self.open(directory)
        try stickers.count(uri: "a.mp3", counter: "playCount", timestampName: "lastPlayed", timestamp: 1_700_000_000)
        try stickers.count(uri: "a.mp3", counter: "playCount", timestampName: "lastPlayed", timestamp: 1_700_000_300)
        try stickers.count(uri: "a.mp3", counter: "skipCount", timestampName: "lastSkipped", timestamp: 1_700_000_400)
        let listed = try stickers.list(type: "song", uri: "a.mp3")
        #expect(listed.map(\.name) == ["lastPlayed", "lastSkipped", "playCount", "skipCount"])
        #expect(listed.map(\.value) == ["1700000300", "1700000400", "2", "1"])
    }

    @Test("stickers survive closing and opening the file again")
    func reopening() throws {
        let directory = try TemporaryDirectory()
        do {
            let stickers = try Self.open(directory)
            try stickers.set(type: "song", uri: "a.mp3", name: "rating", value: "8")
        }
        let stickers = try Self.open(directory)
        #expect(try stickers.value(type: "song", uri: "a.mp3", name: "rating") == "8")
    }

    @Test("an MPD sticker file is read and written as it is")
    func mpdFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/sticker.sql"
        do {
            // MPD 0.23.12's schema, word for word (src/sticker/Database.cxx).
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS sticker(  type VARCHAR NOT NULL,   uri VARCHAR NOT NULL, \
                          name VARCHAR NOT NULL,   value VARCHAR NOT NULL);\
                        CREATE UNIQUE INDEX IF NOT EXISTS sticker_value ON sticker(type, uri, name);
                        INSERT INTO sticker VALUES ('song', 'x/y.mp3', 'rating', '6');
                        """)
            }
            try queue.close()
        }
        let stickers = try StickerDatabase(path: path)
        #expect(try stickers.value(type: "song", uri: "x/y.mp3", name: "rating") == "6")
        try stickers.set(type: "song", uri: "x/y.mp3", name: "rating", value: "7")
        #expect(try stickers.list(type: "song", uri: "x/y.mp3").map(\.value) == ["7"])
    }

    /// Expects opening `path` to fail with a message containing `words`, leaving the file byte for byte.
    private static func expectRefused(
        _ path: String, _ words: String, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let before = FileManager.default.contents(atPath: path)
        do {
            _ = try StickerDatabase(path: path)
            Issue.record("\(path) was opened", sourceLocation: sourceLocation)
        } catch {
            #expect(error.description.contains(words), "\(error)", sourceLocation: sourceLocation)
            #expect(error.description.contains(path), "\(error)", sourceLocation: sourceLocation)
        }
        #expect(FileManager.default.contents(atPath: path) == before, sourceLocation: sourceLocation)
        let names = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect(
            names.filter { $0.hasPrefix((path as NSString).lastPathComponent) } == [
                (path as NSString).lastPathComponent
            ],
            "files beside it: \(names)", sourceLocation: sourceLocation)
    }

    @Test("a file that is not a database is refused and left as it is")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        try directory.write(String(repeating: "not a database at all\n", count: 200), to: "stickers.db")
        try Self.expectRefused(directory.path + "/stickers.db", "is not an SQLite database")
    }

    @Test("another program's database is refused and left as it is")
    func foreignDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/stickers.db"
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE song (uri TEXT); INSERT INTO song VALUES ('a.mp3')")
            }
            try queue.close()
        }
        try Self.expectRefused(path, "another program's database (tables song)")
        // A sticker table of another shape is no better.
        let other = directory.path + "/other.db"
        do {
            let queue = try DatabaseQueue(path: other)
            try queue.write { db in try db.execute(sql: "CREATE TABLE sticker (uri TEXT, rating INTEGER)") }
            try queue.close()
        }
        try Self.expectRefused(other, "without the columns type, name, value")
    }

    @Test("a damaged database is refused and left as it is")
    func damaged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/stickers.db"
        do {
            let stickers = try Self.open(directory)
            for index in 0..<2000 {
                try stickers.set(type: "song", uri: "dir/song\(index).mp3", name: "rating", value: "\(index)")
            }
        }
        // Let SQLite fold the WAL into the file, then scribble over pages in its middle.
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try queue.close()
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 16 * 4096)
        try handle.seek(toOffset: 4 * 4096)
        handle.write(Data(repeating: 0xA5, count: 8 * 4096))
        try handle.close()
        try Self.expectRefused(path, "is damaged")
    }

    @Test("a directory where the file should be is refused")
    func directoryInTheWay() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.path + "/stickers.db", withIntermediateDirectories: false)
        #expect(throws: StickerDatabaseError.self) { try Self.open(directory) }
    }

    @Test("the file's directory is made when missing")
    func makesItsDirectory() throws {
        let directory = try TemporaryDirectory()
        let stickers = try StickerDatabase(path: directory.path + "/a/b/stickers.db")
        try stickers.set(type: "song", uri: "a.mp3", name: "rating", value: "1")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/a/b/stickers.db"))
    }
}
