import ControlProtocol
import Foundation
import Synchronization
import Testing

@testable import Library

/// A fresh directory for one test, removed when dropped.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/playerd-library-test-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw CocoaError(.fileWriteUnknown)
        }
        self.path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: self.path + "/" + name))
    }

    func read(_ name: String) throws -> String {
        try String(contentsOfFile: self.path + "/" + name, encoding: .utf8)
    }

    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: self.path).sorted()
    }
}

/// Expects `body` to throw exactly `code` and `message`, as MPD 0.23.12 answers.
func expectAck(
    _ code: AckCode, _ message: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(Ack) -> Void
) {
    do throws(Ack) {
        try body()
        Issue.record("expected ACK \(code.rawValue) \(message)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message == message, sourceLocation: sourceLocation)
    }
}

@Suite("Stored playlists")
struct StoredPlaylistsTests {
    private static func playlists(_ directory: TemporaryDirectory, maximumLength: Int = 16384) -> StoredPlaylists {
        StoredPlaylists(directory: directory.path, musicDirectory: "/music", maximumLength: maximumLength)
    }

    /// What mpd 0.23.12 lists for `listplaylist "Long/side.m3u"` (the differential suite's library).
    @Test("a playlist file in the music directory: entries from its own directory")
    func musicDirectoryPlaylist() throws {
        let music = try TemporaryDirectory()
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: music.path + "/Long", withIntermediateDirectories: true)
        try music.write(
            "#EXTM3U\n02 Long Two.mp3\n./x/y.mp3\n../ant.mp3\n../../out.mp3\n/nowhere.mp3\n", to: "Long/side.m3u")
        try music.write("a.mp3\n", to: "Long/notes.txt")
        let playlists = StoredPlaylists(directory: directory.path, musicDirectory: music.path)
        #expect(
            playlists.musicDirectoryEntries(of: "Long/side.m3u") == [
                "Long/02 Long Two.mp3", "Long/x/y.mp3", "ant.mp3", "/nowhere.mp3",
            ])
        #expect(playlists.musicDirectoryEntries(of: "Long/notes.txt") == nil)
        #expect(playlists.musicDirectoryEntries(of: "Long/missing.m3u") == nil)
        #expect(
            StoredPlaylists(directory: directory.path, musicDirectory: nil).musicDirectoryEntries(of: "Long/side.m3u")
                == nil)
    }

    /// As mpd 0.23.12 lists them: as its `readdir` of the directory gives them, in no sorted order.
    @Test("listed in the directory's own order, as readdir gives them")
    func listedInDirectoryOrder() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        let names = ["zed", "Ágætis", "apple", "Mix", "b", "Zulu", "émilie", "坂本", "a", "long name", "0"]
        for name in names {
            try playlists.save(name, [])
        }
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path).map { String($0.dropLast(4)) }
        #expect(try playlists.list().map(\.name) == onDisk)
        #expect(Set(onDisk) == Set(names))
        // The directory listing (`listfiles`) keeps that order too, and shows hidden files.
        try directory.write("", to: ".hidden")
        let entries = try DirectoryListing.entries(of: directory.path).map(\.name)
        #expect(entries == (try FileManager.default.contentsOfDirectory(atPath: directory.path)))
        #expect(entries.contains(".hidden"))
    }

    @Test("save, list, entries: one URI a line, listed by name with the file's time")
    func saveAndList() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        try playlists.save("b", ["x.mp3", "dir/y.mp3", "/elsewhere/z.mp3", "http://host/s.mp3"])
        try playlists.save("a", [])
        try playlists.save(".hidden", ["x.mp3"])
        #expect(try directory.read("b.m3u") == "x.mp3\ndir/y.mp3\n/elsewhere/z.mp3\nhttp://host/s.mp3\n")
        #expect(try directory.read("a.m3u") == "")
        let list = try playlists.list()
        #expect(list.map(\.name).sorted() == [".hidden", "a", "b"])
        let now = Int64(Date().timeIntervalSince1970)
        #expect(list.allSatisfy { abs($0.lastModified - now) < 60 })
        #expect(try playlists.entries(of: "b") == ["x.mp3", "dir/y.mp3", "/elsewhere/z.mp3", "http://host/s.mp3"])
        #expect(try playlists.entries(of: "a") == [])
        // No temporary file is left behind.
        #expect(try directory.names() == [".hidden.m3u", "a.m3u", "b.m3u"])
    }

    @Test("only regular NAME.m3u files are playlists")
    func listSkipsOthers() throws {
        let directory = try TemporaryDirectory()
        try directory.write("", to: ".m3u")
        try directory.write("", to: "notes.txt")
        try directory.write("", to: "song.m3u8")
        try FileManager.default.createDirectory(atPath: directory.path + "/dir.m3u", withIntermediateDirectories: false)
        try directory.write("x.mp3\n", to: "real.m3u")
        let playlists = Self.playlists(directory)
        #expect(try playlists.list().map(\.name) == ["real"])
        expectAck(.noExist, "No such playlist") { () throws(Ack) in _ = try playlists.entries(of: "dir") }
    }

    @Test("the directory is created when missing")
    func createsDirectory() throws {
        let directory = try TemporaryDirectory()
        let playlists = StoredPlaylists(directory: directory.path + "/a/b/", musicDirectory: nil)
        #expect(playlists.directory == directory.path + "/a/b")
        try playlists.save("p", ["x.mp3"])
        #expect(try String(contentsOfFile: directory.path + "/a/b/p.m3u", encoding: .utf8) == "x.mp3\n")
    }

    @Test("files from other tools: CRLF, comments, blank lines, no final newline, paths into the music directory")
    func foreignFiles() throws {
        let directory = try TemporaryDirectory()
        try directory.write(
            "#EXTM3U\r\n#EXTINF:1,x\r\na.mp3\r\n\r\n/music/b.mp3\r\n/other/c.mp3\r\nhttp://h/s\r\nlast.mp3",
            to: "crlf.m3u")
        let playlists = Self.playlists(directory)
        #expect(try playlists.entries(of: "crlf") == ["a.mp3", "b.mp3", "/other/c.mp3", "http://h/s", "last.mp3"])
        // An edit rewrites it in MPD's form.
        try playlists.delete("crlf", PositionRange(start: 4, end: 5))
        #expect(try directory.read("crlf.m3u") == "a.mp3\nb.mp3\n/other/c.mp3\nhttp://h/s\n")
    }

    @Test("names: empty, with / \\n \\r are refused; reading a bad name is a missing playlist")
    func names() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        for name in ["", "a/b", "a\nb", "a\rb", "/"] {
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.save(name, []) }
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.add(name, ["x"]) }
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.clear(name) }
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.remove(name) }
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in
                try playlists.delete(name, PositionRange(start: 0, end: 1))
            }
            expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.rename(name, to: "x") }
            expectAck(.noExist, "No such playlist") { () throws(Ack) in _ = try playlists.entries(of: name) }
        }
        // A leading dot and spaces are fine, as in MPD.
        try playlists.save(".dot", [])
        try playlists.save(" spaced name ", [])
        #expect(try playlists.list().map(\.name).sorted() == [" spaced name ", ".dot"])
        #expect(try directory.names() == [" spaced name .m3u", ".dot.m3u"])
    }

    @Test("save modes: create refuses an existing playlist, append and replace need one")
    func saveModes() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        try playlists.save("p", ["a"])
        expectAck(.exist, "Playlist already exists") { () throws(Ack) in try playlists.save("p", ["b"]) }
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.save("q", ["b"], mode: .append) }
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.save("q", ["b"], mode: .replace) }
        try playlists.save("p", ["b", "c"], mode: .append)
        #expect(try playlists.entries(of: "p") == ["a", "b", "c"])
        try playlists.save("p", ["d"], mode: .replace)
        #expect(try playlists.entries(of: "p") == ["d"])
        #expect(try playlists.list().map(\.name) == ["p"])
    }

    @Test("playlistadd creates, appends, inserts; Bad position; nothing to add creates nothing")
    func add() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory, maximumLength: 4)
        #expect(try playlists.add("p", []) == false)
        #expect(!playlists.exists("p"))
        #expect(try playlists.add("p", ["a"]))
        try playlists.add("p", ["b", "c"])
        try playlists.add("p", ["z"], at: 0)
        #expect(try playlists.entries(of: "p") == ["z", "a", "b", "c"])
        expectAck(.argument, "Bad position") { () throws(Ack) in try playlists.add("p", ["x"], at: 5) }
        expectAck(.argument, "Bad position") { () throws(Ack) in try playlists.add("missing", ["x"], at: 1) }
        expectAck(.playlistMax, "Stored playlist is too large") { () throws(Ack) in try playlists.add("p", ["x"]) }
        expectAck(.playlistMax, "Stored playlist is too large") { () throws(Ack) in
            try playlists.add("p", ["x"], at: 0)
        }
        #expect(try playlists.entries(of: "p") == ["z", "a", "b", "c"])
        try playlists.add("new", ["x"], at: 0)
        #expect(try playlists.entries(of: "new") == ["x"])
    }

    @Test("a file longer than max_playlist_length is read up to it, and an edit keeps the rest")
    func maximumLength() throws {
        let directory = try TemporaryDirectory()
        try directory.write("1\n2\n3\n4\n5\n", to: "long.m3u")
        let playlists = Self.playlists(directory, maximumLength: 3)
        #expect(try playlists.entries(of: "long") == ["1", "2", "3"])
        try playlists.move("long", from: 0, to: 2)
        #expect(try directory.read("long.m3u") == "2\n3\n1\n4\n5\n")
    }

    @Test("playlistdelete: one position, ranges, open ranges, -1; Bad song index past the end")
    func delete() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        try playlists.save("p", ["0", "1", "2", "3", "4", "5"])
        try playlists.delete("p", try Argument.range("1"))
        #expect(try playlists.entries(of: "p") == ["0", "2", "3", "4", "5"])
        try playlists.delete("p", try Argument.range("1:3"))
        #expect(try playlists.entries(of: "p") == ["0", "4", "5"])
        // At the end: nothing, but no error, as in MPD; an end past the end is cut back.
        try playlists.delete("p", try Argument.range("3"))
        try playlists.delete("p", try Argument.range("2:99"))
        #expect(try playlists.entries(of: "p") == ["0", "4"])
        expectAck(.argument, "Bad song index") { () throws(Ack) in
            try playlists.delete("p", try Argument.range("3"))
        }
        expectAck(.argument, "Bad song index") { () throws(Ack) in
            try playlists.delete("p", try Argument.range("5:9"))
        }
        try playlists.delete("p", try Argument.range("1:"))
        #expect(try playlists.entries(of: "p") == ["0"])
        try playlists.delete("p", try Argument.range("-1"))
        #expect(try playlists.entries(of: "p") == [])
        expectAck(.noExist, "No such playlist") { () throws(Ack) in
            try playlists.delete("missing", try Argument.range("0"))
        }
    }

    @Test("playlistmove: both ways; Bad range; onto itself is no change, even when missing")
    func move() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        try playlists.save("p", ["a", "b", "c"])
        try playlists.move("p", from: 0, to: 2)
        #expect(try playlists.entries(of: "p") == ["b", "c", "a"])
        try playlists.move("p", from: 2, to: 0)
        #expect(try playlists.entries(of: "p") == ["a", "b", "c"])
        expectAck(.argument, "Bad range") { () throws(Ack) in try playlists.move("p", from: 0, to: 3) }
        expectAck(.argument, "Bad range") { () throws(Ack) in try playlists.move("p", from: 3, to: 0) }
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.move("missing", from: 0, to: 1) }
        #expect(try playlists.move("missing", from: 1, to: 1) == false)
        #expect(!playlists.exists("missing"))
    }

    @Test("playlistclear, rm, rename and their refusals")
    func clearRemoveRename() throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        try playlists.save("p", ["a"])
        try playlists.save("q", ["b"])
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.clear("missing") }
        #expect(!playlists.exists("missing"))
        try playlists.clear("p")
        #expect(try playlists.entries(of: "p") == [])
        expectAck(.exist, "Playlist exists already") { () throws(Ack) in try playlists.rename("p", to: "q") }
        expectAck(.exist, "Playlist exists already") { () throws(Ack) in try playlists.rename("missing", to: "q") }
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.rename("missing", to: "r") }
        expectAck(.argument, "Bad playlist name") { () throws(Ack) in try playlists.rename("p", to: "") }
        try playlists.rename("q", to: "r")
        #expect(try playlists.list().map(\.name).sorted() == ["p", "r"])
        #expect(try playlists.entries(of: "r") == ["b"])
        expectAck(.noExist, "No such playlist") { () throws(Ack) in try playlists.remove("q") }
        try playlists.remove("r")
        try playlists.remove("p")
        #expect(try playlists.list().isEmpty)
        expectAck(.noExist, "No such playlist") { () throws(Ack) in _ = try playlists.entries(of: "p") }
    }

    @Test("a full disk: ACK 52 naming the file, the old playlist intact, no temporary file left")
    func fullDisk() throws {
        let directory = try TemporaryDirectory()
        try directory.write("old.mp3\n", to: "p.m3u")
        // Writes the first 5 bytes, then the disk is full.
        let written = Mutex(0)
        let playlists = StoredPlaylists(
            directory: directory.path, musicDirectory: nil, maximumLength: 100
        ) { _, buffer in
            written.withLock { total in
                guard total < 5 else {
                    errno = ENOSPC
                    return -1
                }
                let count = min(buffer.count, 5 - total)
                total += count
                return count
            }
        }
        let path = directory.path + "/p.m3u"
        let failure = "Failed to write \(path): No space left on device"
        expectAck(.system, failure) { () throws(Ack) in
            try playlists.save("p", ["new.mp3", "more.mp3"], mode: .replace)
        }
        expectAck(.system, failure) { () throws(Ack) in try playlists.add("p", ["new.mp3"]) }
        expectAck(.system, failure) { () throws(Ack) in try playlists.delete("p", PositionRange(start: 1, end: 1)) }
        expectAck(.system, "Failed to write \(directory.path)/q.m3u: No space left on device") { () throws(Ack) in
            try playlists.save("q", ["new.mp3"])
        }
        #expect(try directory.read("p.m3u") == "old.mp3\n")
        #expect(try directory.names() == ["p.m3u"])
    }

    @Test(
        "a directory that cannot be written: ACK 52 naming the file, the old playlist intact",
        .enabled(if: geteuid() != 0, "root writes anywhere"))
    func readOnlyDirectory() throws {
        let directory = try TemporaryDirectory()
        try directory.write("old.mp3\n", to: "p.m3u")
        chmod(directory.path, 0o555)
        defer { chmod(directory.path, 0o755) }
        let playlists = Self.playlists(directory)
        expectAck(.system, "Failed to write \(directory.path)/p.m3u: Permission denied") { () throws(Ack) in
            try playlists.add("p", ["new.mp3"])
        }
        #expect(try directory.read("p.m3u") == "old.mp3\n")
    }

    @Test("a missing directory that cannot be created is reported by the commands")
    func uncreatableDirectory() throws {
        let directory = try TemporaryDirectory()
        try directory.write("", to: "file")
        let playlists = StoredPlaylists(directory: directory.path + "/file/sub", musicDirectory: nil)
        expectAck(.system, "Failed to open playlist directory \(directory.path)/file/sub: Not a directory") {
            () throws(Ack) in
            _ = try playlists.list()
        }
        expectAck(.system, "Failed to write \(directory.path)/file/sub/p.m3u: Not a directory") { () throws(Ack) in
            try playlists.save("p", [])
        }
    }

    @Test("concurrent adds are serialised: none is lost")
    func concurrentAdds() async throws {
        let directory = try TemporaryDirectory()
        let playlists = Self.playlists(directory)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { _ = try? playlists.add("p", ["\(index)"]) }
            }
        }
        #expect(try Set(playlists.entries(of: "p")) == Set((0..<40).map(String.init)))
    }
}
