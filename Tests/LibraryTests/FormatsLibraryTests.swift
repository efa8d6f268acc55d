import Audio
import ControlProtocol
import Foundation
import GRDB
import MusicTags
import Testing

@testable import Library

/// A music tree of every format playerd decodes, made at test time from sox's tones by the reference
/// encoders (flac, oggenc, opusenc, lame), tagged by metaflac and vorbiscomment, and scanned.
final class FormatsTree {
    let root: String
    let music: String
    let library: MusicLibrary

    /// The files, relative to the music directory.
    static let flac16 = "F/16.flac"
    static let flac24 = "F/24.flac"
    static let vorbis = "O/vorbis.ogg"
    static let vorbisMono = "O/mono.ogg"
    static let opus = "O/opus.opus"
    static let mp3 = "M/tone.mp3"
    /// FLAC content under an MP3's name, and MP3 content under a FLAC's.
    static let flacNamedMP3 = "X/flac-inside.mp3"
    static let mp3NamedFLAC = "X/mp3-inside.flac"

    init() throws {
        self.root = NSTemporaryDirectory() + "formats-library-" + UUID().uuidString
        self.music = self.root + "/music"
        for directory in ["F", "O", "M", "X"] {
            try FileManager.default.createDirectory(
                atPath: self.music + "/" + directory, withIntermediateDirectories: true)
        }
        let m = self.music
        try Self.shell(
            """
            set -e
            cd '\(self.root)'
            sox -q -n -r 44100 -c 2 -b 16 t16.wav synth 2 sine 440 vol 0.3
            sox -q -n -r 96000 -c 2 -b 24 t24.wav synth 2 sine 550 vol 0.3
            sox -q -n -r 22050 -c 1 -b 16 mono.wav synth 1 sine 300 vol 0.3
            flac -s -f t16.wav -o '\(m)/\(Self.flac16)'
            flac -s -f t24.wav -o '\(m)/\(Self.flac24)'
            oggenc -Q t16.wav -o '\(m)/\(Self.vorbis)'
            oggenc -Q mono.wav -o '\(m)/\(Self.vorbisMono)'
            opusenc --quiet t16.wav '\(m)/\(Self.opus)'
            lame --quiet -b 128 t16.wav '\(m)/\(Self.mp3)'
            metaflac --set-tag=TITLE=Sixteen --set-tag=ARTIST=One --set-tag=ALBUM=Both --set-tag=ARTIST=Two \
                --set-tag=TRACKNUMBER=3/12 --set-tag=DISCNUMBER=1/2 --set-tag='REPLAYGAIN_TRACK_GAIN=-3.5 dB' \
                '\(m)/\(Self.flac16)'
            metaflac --set-tag=ARTIST=Three --set-tag=TITLE=Twenty-four '\(m)/\(Self.flac24)'
            vorbiscomment -w -t TITLE=Vorbis -t ARTIST=One -t ALBUM=Both '\(m)/\(Self.vorbis)'
            cp '\(m)/\(Self.flac24)' '\(m)/\(Self.flacNamedMP3)'
            cp '\(m)/\(Self.mp3)' '\(m)/\(Self.mp3NamedFLAC)'
            """)
        self.library = try MusicLibrary(
            musicDirectory: self.music, databasePath: self.root + "/library.db", watches: false
        ) { _ in }
    }

    deinit {
        self.library.shutdown()
        try? FileManager.default.removeItem(atPath: self.root)
    }

    static func shell(_ script: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FormatsTestError("making the test files (sox, flac, vorbis-tools, opus-tools, lame): \(text)")
        }
    }

    func update() throws -> UpdateReport {
        try LibraryUpdate(database: self.library.database, musicDirectory: self.music, cancellation: nil)
            .run(uri: "", rescan: false)
    }

    /// The song block of `uri`, as `lsinfo` writes it with every tag.
    func block(_ uri: String) throws -> String {
        var response = ResponseWriter()
        try self.library.listInfo(uri, tagTypes: Set(TagName.allCases), to: &response)
        return response.text
    }

    /// The files `find` answers for `filter`.
    func files(_ filter: SongFilter) throws -> [String] {
        var response = ResponseWriter()
        try self.library.find(LibraryQuery(filter: filter), tagTypes: [], to: &response) { _ in true }
        return response.text.split(separator: "\n").filter { $0.hasPrefix("file: ") }.map {
            String($0.dropFirst(6))
        }
    }
}

struct FormatsTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("The library with FLAC, Ogg Vorbis and Opus beside MP3")
struct FormatsLibraryTests {
    @Test("Tags keep the order their values came in, across tags, and compare without it")
    func tagsKeepTheirOrder() {
        var tags = Tags()
        tags.append("One", to: .artist)
        tags.append("Title", to: .title)
        tags.append("Two", to: .artist)
        tags.append("", to: .genre)
        #expect(tags.items.map(\.tag) == [.artist, .title, .artist])
        #expect(tags.items.map(\.value) == ["One", "Title", "Two"])
        // MPD's fixed order for MP3s is still there.
        #expect(tags.pairs.map(\.value) == ["One", "Two", "Title"])
        // Replacing values keeps their place; a new count puts them where the tag first was.
        tags[.artist] = ["Uno", "Dos"]
        #expect(tags.items.map(\.value) == ["Uno", "Title", "Dos"])
        tags[.artist] = ["Solo"]
        #expect(tags.items.map(\.value) == ["Solo", "Title"])
        tags[.title] = []
        tags[.album] = ["Album"]
        #expect(tags.items.map(\.value) == ["Solo", "Album"])
        // Equal whatever the order.
        let other = Tags(items: [(TagName.album, "Album"), (.artist, "Solo")])
        #expect(other == tags)
        #expect(other.hashValue == tags.hashValue)
        #expect(other.items.map(\.value) == ["Album", "Solo"])
        // Vorbis comments come in the file's order, interleaved tags kept.
        let comments = VorbisComments.tags([("ARTIST", "a"), ("TITLE", "t"), ("artist", "b"), ("TRACKNUMBER", "4")])
        #expect(comments.items.map(\.value) == ["a", "t", "b", "4"])
    }

    @Test("a library made before the new formats opens: its songs say 16 bits, what it could not read is read again")
    func aLibraryOfMainIsMigrated() throws {
        // The schema as main left it (migrations v1 and v2), with one MP3 and one FLAC it could not read.
        let (root, path) = try olderLibrary(
            upTo: "v2 listing order",
            rows: """
                INSERT INTO directory (id, uri, parent, name, mtime) VALUES (1, '', NULL, '', 0);
                INSERT INTO song (directory, name, uri, mtime, size, added, duration, sample_rate, channels, block)
                VALUES (1, 'a.mp3', 'a.mp3', 1, 2, 3, 1.5, 44100, 2, 'Title: A\n');
                INSERT INTO unreadable (uri, mtime, size, reason) VALUES ('b.flac', 1, 2, 'FLAC is not decoded yet');
                """)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let database = try LibraryDatabase(path: path)
        let (bits, unreadable) = try database.read { db in
            (
                try Int.fetchAll(db, sql: "SELECT bits FROM song"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM unreadable") ?? -1
            )
        }
        #expect(bits == [16])
        #expect(unreadable == 0)
        let library = try MusicLibrary(musicDirectory: root, databasePath: path, watches: false) { _ in }
        defer { library.shutdown() }
        #expect(library.songFacts("a.mp3")?.format == "44100:16:2")
        var response = ResponseWriter()
        try library.listInfo("a.mp3", tagTypes: Set(TagName.allCases), to: &response)
        #expect(response.text.contains("Format: 44100:16:2\nTitle: A\n"))
    }

    @Test("`Format` and `AudioFormat` filters say each song's own sample format: 24 bits for 24-bit FLAC, f for Vorbis")
    func formatsAndFilters() throws {
        let tree = try FormatsTree()
        let report = try tree.update()
        #expect(report.skipped == [])
        #expect(report.added == 8)
        #expect(try tree.block(FormatsTree.mp3).contains("\nFormat: 44100:16:2\n"))
        #expect(try tree.block(FormatsTree.flac16).contains("\nFormat: 44100:16:2\n"))
        #expect(try tree.block(FormatsTree.flac24).contains("\nFormat: 96000:24:2\n"))
        #expect(try tree.block(FormatsTree.vorbis).contains("\nFormat: 44100:f:2\n"))
        #expect(try tree.block(FormatsTree.vorbisMono).contains("\nFormat: 22050:f:1\n"))
        #expect(try tree.block(FormatsTree.opus).contains("\nFormat: 48000:16:2\n"))
        #expect(tree.library.songFacts(FormatsTree.flac24)?.format == "96000:24:2")
        #expect(tree.library.songFacts(FormatsTree.vorbis)?.format == "44100:f:2")
        func pattern(_ text: String, mask: Bool) throws -> SongFilter {
            .audioFormat(try AudioFormatPattern(parsing: text, allowingMasks: mask), exact: !mask)
        }
        #expect(try tree.files(pattern("96000:24:2", mask: false)) == [FormatsTree.flac24, FormatsTree.flacNamedMP3])
        #expect(try tree.files(pattern("*:f:*", mask: true)).sorted() == [FormatsTree.vorbisMono, FormatsTree.vorbis])
        #expect(try tree.files(pattern("48000:*:*", mask: true)) == [FormatsTree.opus])
        #expect(
            try tree.files(pattern("44100:16:2", mask: false)).sorted()
                == [FormatsTree.flac16, FormatsTree.mp3, FormatsTree.mp3NamedFLAC])
    }

    @Test("Vorbis comments: MPD's names, the file's order, every value of a tag, track and disc without totals")
    func vorbisCommentsInTheLibrary() throws {
        let tree = try FormatsTree()
        _ = try tree.update()
        let block = try tree.block(FormatsTree.flac16)
        let tags = block.split(separator: "\n").filter {
            !$0.hasPrefix("file:") && !$0.hasPrefix("Last-Modified:") && !$0.hasPrefix("Format:")
                && !$0.hasPrefix("Time:") && !$0.hasPrefix("duration:")
        }
        #expect(tags == ["Title: Sixteen", "Artist: One", "Album: Both", "Artist: Two", "Track: 3", "Disc: 1"])
        #expect(block.hasSuffix("Time: 2\nduration: 2.000\n"))
        #expect(try tree.files(.compare(.tag(.artist), .equals, "Two", ignoringCase: false)) == [FormatsTree.flac16])
        #expect(
            try tree.files(.compare(.tag(.artist), .equals, "One", ignoringCase: false)).sorted()
                == [FormatsTree.flac16, FormatsTree.vorbis])
        #expect(
            try tree.files(.compare(.tag(.album), .contains, "both", ignoringCase: true)).sorted()
                == [FormatsTree.flac16, FormatsTree.vorbis])
        #expect(try tree.block(FormatsTree.vorbis).contains("\nTitle: Vorbis\nArtist: One\nAlbum: Both\n"))
    }

    @Test("a file is read by its content's decoder, whatever its name says")
    func contentNotName() throws {
        let tree = try FormatsTree()
        _ = try tree.update()
        let flac = try tree.block(FormatsTree.flacNamedMP3)
        #expect(flac.contains("\nFormat: 96000:24:2\nArtist: Three\nTitle: Twenty-four\n"), "\(flac)")
        let mp3 = try tree.block(FormatsTree.mp3NamedFLAC)
        #expect(mp3.contains("\nFormat: 44100:16:2\n"), "\(mp3)")
        let facts = try SongFile.read(path: tree.music + "/" + FormatsTree.flacNamedMP3, reader: SongReader())
        #expect(facts.kind == .flac)
        #expect(facts.format == "96000:24:2")
        #expect(try SongFile.read(path: tree.music + "/" + FormatsTree.mp3NamedFLAC, reader: SongReader()).kind == .mp3)
    }

    @Test("bad files of every format are refused, named, and not read again until they change")
    func badFiles() throws {
        let tree = try FormatsTree()
        let bad = tree.music + "/bad"
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: bad + "/empty.flac"))
        try Data("fLaC not really".utf8).write(to: URL(fileURLWithPath: bad + "/short.flac"))
        let vorbis = try Data(contentsOf: URL(fileURLWithPath: tree.music + "/" + FormatsTree.vorbis))
        try vorbis.prefix(200).write(to: URL(fileURLWithPath: bad + "/cut.ogg"))
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: URL(fileURLWithPath: bad + "/noise.opus"))
        let report = try tree.update()
        #expect(report.added == 8)
        let skipped = report.skipped.sorted()
        #expect(skipped.count == 4, "\(skipped)")
        for name in ["cut.ogg", "empty.flac", "noise.opus", "short.flac"] {
            #expect(skipped.contains { $0.contains("bad/" + name + ": ") }, "\(name) in \(skipped)")
        }
        #expect(try tree.update().skipped.isEmpty)
    }
}
