import ControlProtocol
import Foundation
import GRDB
import MusicTags
import Testing

@testable import Library

/// MPD's order of names (ICU's root collation: case and accents fold first) and of a directory's
/// songs (album, disc, track, name), as mpd 0.23.12 lists them here; empty directories last.
@Suite struct CollationTests {
    let all = Set(TagName.allCases)

    @Test func namesFoldCaseAndAccentsFirst() {
        let names = [
            "Takk", "Zebra", "émilie", "apple", "Ágætis byrjun", "Apple", "坂本龍一", "Émilie Simon", "emilie", "Bee",
        ]
        // mpd 0.23.12's lsinfo of directories with these names, in its order.
        let expected = [
            "Ágætis byrjun", "apple", "Apple", "Bee", "emilie", "émilie", "Émilie Simon", "Takk", "Zebra", "坂本龍一",
        ]
        #expect(names.sorted(by: Collation.precedes) == expected)
    }

    @Test func keysEndInOneZeroAndCompareAsTheTexts() {
        for text in ["", "a", "Ágætis", "坂本龍一", "caf\\xE9.mp3", String(repeating: "ü", count: 5000)] {
            let key = Collation.key(text)
            #expect(key.last == 0)
            #expect(!key.dropLast().contains(0))
        }
        #expect(Collation.precedes("a", "B") && Collation.precedes("B", "c") && !Collation.precedes("c", "B"))
    }

    @Test func songsOfADirectoryGoByAlbumDiscTrackThenName() {
        func tags(_ album: String?, disc: String? = nil, track: String? = nil) -> Tags {
            var tags = Tags()
            if let album { tags[.album] = [album] }
            if let disc { tags[.disc] = [disc] }
            if let track { tags[.track] = [track] }
            return tags
        }
        // The Mixed folder of the differential suite's library, in the order mpd 0.23.12 lists it.
        let songs: [(name: String, tags: Tags)] = [
            ("a.mp3", tags("Zeta", track: "2")), ("b.mp3", tags("alpha", disc: "2", track: "1")),
            ("c.mp3", tags("Alpha", disc: "1", track: "3")), ("d.mp3", tags(nil)), ("e.mp3", tags("Zeta", track: "1")),
            ("Ω.mp3", tags("Ärger", track: "1")), ("f.mp3", tags("Zeta", track: "0")),
            ("g.mp3", tags("Zeta", track: "-3")), ("h.mp3", tags("Zeta", track: "99999999999999999999999")),
        ]
        let ordered = songs.sorted {
            Collation.songListingKey(name: $0.name, tags: $0.tags)
                .lexicographicallyPrecedes(Collation.songListingKey(name: $1.name, tags: $1.tags))
        }.map(\.name)
        #expect(ordered == ["d.mp3", "b.mp3", "c.mp3", "Ω.mp3", "f.mp3", "g.mp3", "e.mp3", "a.mp3", "h.mp3"])
    }

    @Test func numbersAreReadAsStrtolReadsThem() {
        #expect(Collation.leadingNumber("12/14") == 12)
        #expect(Collation.leadingNumber("  7") == 7)
        #expect(Collation.leadingNumber("+3") == 3)
        #expect(Collation.leadingNumber("-3") == 0)
        #expect(Collation.leadingNumber("x1") == 0)
        #expect(Collation.leadingNumber("") == 0)
        #expect(Collation.leadingNumber("99999999999999999999999") == Int64.max)
    }

    @Test func emptyDirectoriesComeAfterTheirParentsOtherDirectories() throws {
        let tree = try ScannedTree()
        for folder in ["0 empty", "Hollow/Inside", "A/0 Nothing"] {
            try FileManager.default.createDirectory(
                atPath: tree.music + "/" + folder, withIntermediateDirectories: true)
        }
        _ = try tree.update()
        let all = self.all
        let root = try tree.answer { response throws(Ack) in try tree.library.listInfo("", tagTypes: all, to: &response)
        }
        #expect(
            root.split(separator: "\n").filter { $0.hasPrefix("directory: ") } == [
                "directory: A", "directory: C", "directory: 0 empty", "directory: Hollow",
            ])
        let listing = try tree.answer { response throws(Ack) in
            try tree.library.listAll("", info: false, tagTypes: all, to: &response) { _ in true }
        }
        #expect(
            listing
                == "file: root.mp3\ndirectory: A\nfile: A/x.mp3\ndirectory: A/B\nfile: A/B/y.mp3\ndirectory: A/0 Nothing\n"
                + "directory: C\nfile: C/z.mp3\ndirectory: 0 empty\ndirectory: Hollow\ndirectory: Hollow/Inside\n")
        let hollow = try tree.answer { response throws(Ack) in
            try tree.library.listInfo("Hollow", tagTypes: all, to: &response)
        }
        #expect(hollow.hasPrefix("directory: Hollow/Inside\nLast-Modified: "))
        // A song arriving puts its folders back in name order.
        try FileManager.default.copyItem(atPath: tree.music + "/root.mp3", toPath: tree.music + "/Hollow/Inside/s.mp3")
        _ = try tree.update()
        let after = try tree.answer { response throws(Ack) in
            try tree.library.listAll("", info: false, tagTypes: all, to: &response) { _ in true }
        }
        #expect(
            after.hasSuffix(
                "directory: C\nfile: C/z.mp3\ndirectory: Hollow\ndirectory: Hollow/Inside\nfile: Hollow/Inside/s.mp3\ndirectory: 0 empty\n"
            ))
    }

    /// A database made before the listing order (schema v1: no `listing` key, blocks in the old tag
    /// order, comments kept) is brought up to it when opened, and its next update orders directories.
    @Test func aDatabaseFromBeforeTheListingOrderIsMigrated() throws {
        let root = NSTemporaryDirectory() + "collation-migration-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let music = root + "/music"
        for (name, fixture) in [
            ("b/z.mp3", "tagged-id3v1.mp3"), ("b/a.mp3", "one-second.mp3"), ("B2/x.mp3", "tagged-id3v23.mp3"),
            ("a1/y.mp3", "one-second.mp3"),
        ] {
            try FileManager.default.createDirectory(
                atPath: music + "/" + (name as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: ScannedTree.fixtures + "/" + fixture, toPath: music + "/" + name)
        }
        let path = root + "/library.db"
        do {
            let library = try MusicLibrary(musicDirectory: music, databasePath: path, watches: false) { _ in }
            _ = try LibraryUpdate(database: library.database, musicDirectory: music, cancellation: nil).run(
                uri: "", rescan: false)
            library.shutdown()
        }
        // Back to what the schema was: no key, the old block order, a comment, byte-ordered positions.
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "DROP INDEX song_by_listing")
                try db.execute(sql: "ALTER TABLE song DROP COLUMN listing")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v2 listing order'")
                try db.execute(
                    sql:
                        "UPDATE song SET block = 'Album: Ágætis byrjun\nTitle: Motörhead Übung\nComment: old\n' WHERE uri = 'b/z.mp3'"
                )
                try db.execute(sql: "UPDATE directory SET position = 0")
            }
        }
        let library = try MusicLibrary(musicDirectory: music, databasePath: path, watches: false) { _ in }
        defer { library.shutdown() }
        _ = try LibraryUpdate(database: library.database, musicDirectory: music, cancellation: nil).run(
            uri: "", rescan: false)
        let all = self.all
        var response = ResponseWriter()
        try library.listAll("", info: false, tagTypes: all, to: &response) { _ in true }
        // Directories collated (a1, b, B2), songs without an album before those with one.
        #expect(
            response.text
                == "directory: a1\nfile: a1/y.mp3\ndirectory: b\nfile: b/a.mp3\nfile: b/z.mp3\ndirectory: B2\nfile: B2/x.mp3\n"
        )
        var block = ResponseWriter()
        try library.listInfo("b/z.mp3", tagTypes: all, to: &block)
        #expect(block.text.contains("Title: Motörhead Übung\nAlbum: Ágætis byrjun\n"))
        #expect(!block.text.contains("Comment"))
    }

    /// As mpd 0.23.12 answers `find base nowhere` (and count, list, findadd): it looks the base up first.
    @Test func aBaseNamingNothingIsNoSuchDirectory() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        func find(_ filter: SongFilter) throws -> [String] {
            ScannedTree.files(
                try tree.answer { response throws(Ack) in
                    try tree.library.find(LibraryQuery(filter: filter), tagTypes: self.all, to: &response) { _ in true }
                })
        }
        #expect(try find(.base("A")) == ["A/x.mp3", "A/B/y.mp3"])
        #expect(try find(.base("A/x.mp3")) == ["A/x.mp3"])
        #expect(try find(.and([.compare(.tag(.title), .equals, "", ignoringCase: false), .base("")])) == ["root.mp3"])
        for filter in [
            SongFilter.base("nowhere"), .and([.compare(.file, .contains, "x", ignoringCase: false), .base("A/zz")]),
        ] {
            #expect(throws: Ack(.noExist, "No such directory")) { try find(filter) }
            #expect(throws: Ack(.noExist, "No such directory")) {
                try tree.library.songURIs(LibraryQuery(filter: filter))
            }
            #expect(throws: Ack(.noExist, "No such directory")) {
                try tree.answer { response throws(Ack) in
                    try tree.library.count(LibraryQuery(filter: filter), to: &response)
                }
            }
        }
        // A base inside a NOT is no place to start from: it filters.
        #expect(try find(.not(.base("nowhere"))).count == 4)
    }

    @Test func aSortedFindLeavesFormatOutAsMPDDoes() throws {
        let tree = try ScannedTree()
        _ = try tree.update()
        var query = LibraryQuery(filter: .compare(.tag(.artist), .equals, "", ignoringCase: false))
        let plain = try tree.answer { response throws(Ack) in
            try tree.library.find(query, tagTypes: self.all, to: &response) { _ in true }
        }
        #expect(plain.contains("Format: "))
        query.sort = SortOrder(key: .tag(.title), descending: false)
        let sorted = try tree.answer { response throws(Ack) in
            try tree.library.find(query, tagTypes: self.all, to: &response) { _ in true }
        }
        #expect(sorted.contains("file: root.mp3\n") && !sorted.contains("Format: "))
    }
}
