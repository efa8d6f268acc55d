import Foundation
import Logging
import Testing

@testable import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The real playerd with a playlist directory and a library of its music directory: a temporary copy of
/// a few fixtures with a cover in a subdirectory.
final class PlaylistDaemon {
    let directory: String
    let music: String
    let playlists: String
    let socketPath: String
    let cover: [UInt8]
    private let daemon: RunningPlayerd

    init() throws {
        self.directory = try Paths.makeTemporaryDirectory()
        self.music = self.directory + "/music"
        self.playlists = self.directory + "/playlists"
        let manager = FileManager.default
        try manager.createDirectory(atPath: self.music + "/Artist/Album", withIntermediateDirectories: true)
        try manager.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: self.music + "/one-second.mp3")
        try manager.copyItem(
            atPath: Paths.fixture("tagged-id3v24.mp3"), toPath: self.music + "/Artist/Album/tagged.mp3")
        try manager.copyItem(
            atPath: Paths.fixture("stereo-44k-cbr.mp3"), toPath: self.music + "/Artist/Album/stereo.mp3")
        // 20,000 bytes holding every byte value, newlines and "OK\n" included.
        self.cover = (0..<20000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }
        try Data(self.cover).write(to: URL(fileURLWithPath: self.music + "/Artist/Album/cover.jpg"))
        var options = RunningPlayerd.Options()
        options.output = "null:unpaced"
        options.library = true
        options.extraArguments = ["--music-dir", self.music, "--playlist-dir", self.playlists]
        self.daemon = try RunningPlayerd(options)
        self.socketPath = self.daemon.socketPath
        // The library's first scan, so that lsinfo and listplaylistinfo see the songs.
        let client = try LineClient.greeted(self.socketPath)
        let deadline = Date(timeIntervalSinceNow: 20)
        while try client.fields("status")["updating_db"] != nil, Date() < deadline {
            usleep(20_000)
        }
    }

    deinit {
        self.daemon.kill()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    func connect() throws -> LineClient {
        try LineClient.greeted(self.socketPath)
    }

    func playlistFile(_ name: String) throws -> String {
        try String(contentsOfFile: self.playlists + "/" + name + ".m3u", encoding: .utf8)
    }
}

/// A client that reads binary answers: `size:`, `type:`, `binary: N`, N raw bytes, a newline, `OK`.
final class BinaryClient {
    private let connection: LineClient

    init(_ path: String) throws {
        self.connection = try LineClient(socketPath: path)
        guard try self.line().hasPrefix("OK MPD ") else { throw HarnessError("no greeting") }
    }

    private func line() throws -> String {
        guard let line = try self.connection.readLine(timeout: .seconds(10)) else {
            throw HarnessError("the connection ended")
        }
        return line
    }

    /// One binary answer: its fields, its chunk, its last line (`OK` or the ACK).
    func binary(_ command: String) throws -> (fields: [String: String], chunk: [UInt8], end: String) {
        try self.connection.send(line: command)
        var fields: [String: String] = [:]
        while true {
            let line = try self.line()
            if line == "OK" || line.hasPrefix("ACK ") { return (fields, [], line) }
            guard let colon = line.range(of: ": ") else { throw HarnessError("not a field: \(line)") }
            let key = String(line[..<colon.lowerBound])
            fields[key] = String(line[colon.upperBound...])
            if key == "binary", let count = Int(fields[key]!) {
                let chunk = try self.connection.readBytes(count, timeout: .seconds(10))
                guard try self.line() == "" else { throw HarnessError("no newline after the chunk") }
                return (fields, chunk, try self.line())
            }
        }
    }
}

/// Serialized: the daemon runs in this process, and its commands run on Swift's cooperative pool (a
/// thread per core), which a test's blocking reads hold one thread of; several at once starved it.
@Suite("Stored playlists and pictures through the daemon", .serialized)
struct StoredPlaylistCommandTests {
    @Test("save, listplaylists, listplaylist, load, and MPD's refusals")
    func saveAndLoad() throws {
        let daemon = try PlaylistDaemon()
        let client = try daemon.connect()
        #expect(try client.command("listplaylists") == ["OK"])
        #expect(try client.command("add one-second.mp3") == ["OK"])
        #expect(try client.command("add Artist") == ["OK"])
        #expect(try client.command("add \(daemon.music)/one-second.mp3") == ["OK"])
        #expect(try client.command("save mix") == ["OK"])
        #expect(
            try daemon.playlistFile("mix")
                == "one-second.mp3\nArtist/Album/stereo.mp3\nArtist/Album/tagged.mp3\none-second.mp3\n")
        #expect(try client.command("save mix") == ["ACK [56@0] {save} Playlist already exists"])
        #expect(try client.command("save \"\"") == ["ACK [2@0] {save} Bad playlist name"])
        #expect(try client.command("save a/b") == ["ACK [2@0] {save} Bad playlist name"])
        #expect(
            try client.command("save mix bogus")
                == ["ACK [2@0] {save} Unrecognized save mode, expected one of 'create', 'append', 'replace'"])
        #expect(try client.command("save mix append") == ["OK"])
        #expect(try client.command("save mix replace") == ["OK"])
        #expect(try client.command("save other append") == ["ACK [50@0] {save} No such playlist"])

        let list = try client.command("listplaylists")
        #expect(list.count == 3 && list[0] == "playlist: mix" && list[2] == "OK", "\(list)")
        #expect(list[1].wholeMatch(of: /Last-Modified: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil, "\(list)")
        #expect(
            try client.command("listplaylist mix") == [
                "file: one-second.mp3", "file: Artist/Album/stereo.mp3", "file: Artist/Album/tagged.mp3",
                "file: one-second.mp3", "OK",
            ])
        #expect(try client.command("listplaylist nope") == ["ACK [50@0] {listplaylist} No such playlist"])
        #expect(try client.command("listplaylist \"\"") == ["ACK [50@0] {listplaylist} No such playlist"])
        #expect(
            try client.command("listplaylist mix 0:1")
                == ["ACK [2@0] {listplaylist} wrong number of arguments for \"listplaylist\""])

        #expect(try client.command("clear") == ["OK"])
        #expect(try client.command("load nope") == ["ACK [50@0] {load} No such playlist"])
        #expect(try client.command("load mix") == ["OK"])
        #expect(try client.fields("status")["playlistlength"] == "4")
        #expect(try client.command("load mix 1:3 0") == ["OK"])
        #expect(try client.command("load mix 7:9") == ["OK"])
        #expect(try client.command("load mix 0:1 99") == ["ACK [2@0] {load} Number too large: 99"])
        let files = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
        #expect(
            files == [
                "file: Artist/Album/stereo.mp3", "file: Artist/Album/tagged.mp3", "file: one-second.mp3",
                "file: Artist/Album/stereo.mp3", "file: Artist/Album/tagged.mp3", "file: one-second.mp3",
            ])
    }

    @Test("load skips what cannot be queued, keeps stations; files from other tools (CRLF, comments) load")
    func loadForeignFile() throws {
        let daemon = try PlaylistDaemon()
        try FileManager.default.createDirectory(atPath: daemon.playlists, withIntermediateDirectories: true)
        try Data(
            "#EXTM3U\r\n#EXTINF:1,x\r\none-second.mp3\r\n\r\nmissing.mp3\r\nhttp://example.com/s.mp3\r\n\(daemon.music)/Artist/Album/stereo.mp3\r\n"
                .utf8
        ).write(to: URL(fileURLWithPath: daemon.playlists + "/foreign.m3u"))
        let client = try daemon.connect()
        #expect(
            try client.command("listplaylist foreign") == [
                "file: one-second.mp3", "file: missing.mp3", "file: http://example.com/s.mp3",
                "file: Artist/Album/stereo.mp3", "OK",
            ])
        #expect(try client.command("load foreign") == ["OK"])
        #expect(
            try client.command("playlistinfo").filter { $0.hasPrefix("file: ") } == [
                "file: one-second.mp3", "file: http://example.com/s.mp3", "file: Artist/Album/stereo.mp3",
            ])
    }

    @Test("listplaylistinfo: song blocks as playlistinfo writes them, without Pos and Id")
    func listPlaylistInfo() throws {
        let daemon = try PlaylistDaemon()
        let client = try daemon.connect()
        #expect(try client.command("playlistadd p Artist/Album/tagged.mp3") == ["OK"])
        #expect(try client.command("playlistadd p missing/x.mp3") == ["ACK [50@0] {playlistadd} No such directory"])
        #expect(try client.command("playlistadd p http://example.com/s.mp3") == ["OK"])
        #expect(try client.command("add Artist/Album/tagged.mp3") == ["OK"])
        let queued = try client.command("playlistinfo").filter { !$0.hasPrefix("Pos: ") && !$0.hasPrefix("Id: ") }
        let info = try client.command("listplaylistinfo p")
        #expect(info == Array(queued.dropLast()) + ["file: http://example.com/s.mp3", "OK"])
        #expect(info.contains { $0.hasPrefix("Title: ") }, "\(info)")
        #expect(info.contains("duration: 2.000"), "\(info)")
        // The client's tagtypes apply.
        #expect(try client.command("tagtypes clear") == ["OK"])
        let untagged = try client.command("listplaylistinfo p").filter {
            !$0.hasPrefix("Last-Modified: ") && !$0.hasPrefix("Format: ")
        }
        #expect(
            untagged == [
                "file: Artist/Album/tagged.mp3", "Time: 2", "duration: 2.000", "file: http://example.com/s.mp3", "OK",
            ])
        #expect(try client.command("listplaylistinfo nope") == ["ACK [50@0] {listplaylistinfo} No such playlist"])
    }

    @Test("playlistadd, playlistdelete, playlistmove, playlistclear, rename, rm, with MPD's texts")
    func edits() throws {
        let daemon = try PlaylistDaemon()
        let client = try daemon.connect()
        #expect(try client.command("playlistadd p one-second.mp3") == ["OK"])
        #expect(try client.command("playlistadd p Artist") == ["OK"])
        #expect(try client.command("playlistadd p one-second.mp3 9") == ["ACK [2@0] {playlistadd} Bad position"])
        #expect(try client.command("playlistadd q one-second.mp3 1") == ["ACK [2@0] {playlistadd} Bad position"])
        #expect(try client.command("playlistadd p http://host/s.mp3 0") == ["OK"])
        #expect(try client.command("playlistadd \"\" one-second.mp3") == ["ACK [2@0] {playlistadd} Bad playlist name"])
        #expect(
            try daemon.playlistFile("p")
                == "http://host/s.mp3\none-second.mp3\nArtist/Album/stereo.mp3\nArtist/Album/tagged.mp3\n")

        #expect(try client.command("playlistdelete p 7") == ["ACK [2@0] {playlistdelete} Bad song index"])
        #expect(try client.command("playlistdelete p 5:9") == ["ACK [2@0] {playlistdelete} Bad song index"])
        #expect(
            try client.command("playlistdelete p x") == ["ACK [2@0] {playlistdelete} Integer or range expected: x"])
        #expect(try client.command("playlistdelete nope 0") == ["ACK [50@0] {playlistdelete} No such playlist"])
        #expect(try client.command("playlistdelete p 0") == ["OK"])
        #expect(try client.command("playlistmove p 0 2") == ["OK"])
        #expect(
            try client.command("listplaylist p") == [
                "file: Artist/Album/stereo.mp3", "file: Artist/Album/tagged.mp3", "file: one-second.mp3", "OK",
            ])
        #expect(try client.command("playlistmove p 0 5") == ["ACK [2@0] {playlistmove} Bad range"])
        #expect(try client.command("playlistmove p 0:1 1") == ["ACK [2@0] {playlistmove} Integer expected: 0:1"])
        #expect(try client.command("playlistmove nope 0 1") == ["ACK [50@0] {playlistmove} No such playlist"])
        #expect(try client.command("playlistmove nope 0 0") == ["OK"])
        #expect(try client.command("playlistdelete p 1:") == ["OK"])
        #expect(try client.command("listplaylist p") == ["file: Artist/Album/stereo.mp3", "OK"])

        #expect(try client.command("playlistclear nope") == ["ACK [50@0] {playlistclear} No such playlist"])
        #expect(try client.command("playlistclear p") == ["OK"])
        #expect(try client.command("listplaylist p") == ["OK"])
        #expect(try client.command("save q") == ["OK"])
        #expect(try client.command("rename p q") == ["ACK [56@0] {rename} Playlist exists already"])
        #expect(try client.command("rename nope x") == ["ACK [50@0] {rename} No such playlist"])
        #expect(try client.command("rename p \"\"") == ["ACK [2@0] {rename} Bad playlist name"])
        #expect(try client.command("rename p r") == ["OK"])
        #expect(try client.command("rm nope") == ["ACK [50@0] {rm} No such playlist"])
        #expect(try client.command("rm \"\"") == ["ACK [2@0] {rm} Bad playlist name"])
        #expect(try client.command("rm r") == ["OK"])
        #expect(try client.command("rm q") == ["OK"])
        #expect(try client.command("listplaylists") == ["OK"])
    }

    @Test("every change wakes idle stored_playlist; a refusal and a read do not")
    func idle() throws {
        let daemon = try PlaylistDaemon()
        let client = try daemon.connect()
        let idler = try daemon.connect()
        let changes = [
            "playlistadd p one-second.mp3", "save q", "playlistmove p 0 0", "playlistdelete p 0", "playlistclear q",
            "rename q r", "rm r", "playlistadd p Artist", "playlistmove p 0 1",
        ]
        for change in changes {
            try idler.send(line: "idle stored_playlist")
            #expect(try !idler.hasInput(within: .milliseconds(50)))
            // Refusals and reads first: nothing wakes the idler.
            _ = try client.command("rm nope")
            _ = try client.command("listplaylists")
            let answer = try client.command(change)
            #expect(answer == ["OK"], "\(change)")
            if change == "playlistmove p 0 0" {
                // Moving an entry onto itself changes nothing.
                #expect(try !idler.hasInput(within: .milliseconds(100)))
                _ = try client.command("playlistadd p one-second.mp3")
            }
            #expect(try idler.readAnswer() == ["changed: stored_playlist", "OK"], "\(change)")
        }
    }

    @Test("albumart: chunks reassemble the cover; a directory with a slash, absolute paths; MPD's refusals")
    func albumArt() throws {
        let daemon = try PlaylistDaemon()
        let client = try BinaryClient(daemon.socketPath)
        for uri in ["Artist/Album/tagged.mp3", "Artist/Album/", "\(daemon.music)/Artist/Album/stereo.mp3"] {
            var assembled: [UInt8] = []
            while true {
                let answer = try client.binary("albumart \"\(uri)\" \(assembled.count)")
                #expect(answer.end == "OK")
                #expect(answer.fields["size"] == "20000")
                #expect(answer.fields["type"] == nil)
                #expect(answer.chunk.count == min(8192, 20000 - assembled.count))
                if answer.chunk.isEmpty || answer.end != "OK" { break }
                assembled += answer.chunk
            }
            #expect(assembled == daemon.cover, "\(uri)")
        }
        let last = try client.binary("albumart Artist/Album/tagged.mp3 19990")
        #expect(last.chunk == Array(daemon.cover[19990...]))
        #expect(
            try client.binary("albumart Artist/Album/tagged.mp3 20001").end == "ACK [2@0] {albumart} Offset too large")
        #expect(try client.binary("albumart Artist/Album 0").end == "ACK [50@0] {albumart} No file exists")
        #expect(try client.binary("albumart one-second.mp3 0").end == "ACK [50@0] {albumart} No file exists")
        #expect(try client.binary("albumart nosuch/x.mp3 0").end == "ACK [50@0] {albumart} No file exists")
        #expect(
            try client.binary("albumart ../music/Artist/Album/x.mp3 0").end == "ACK [50@0] {albumart} No file exists")
        #expect(try client.binary("albumart x.mp3 -1").end == "ACK [2@0] {albumart} Number too large: -1")
        #expect(
            try client.binary("albumart x.mp3")
                .end == "ACK [2@0] {albumart} wrong number of arguments for \"albumart\"")
    }

    @Test("binarylimit: chunks of the client's size, 64 at least, per connection")
    func binaryLimit() throws {
        let daemon = try PlaylistDaemon()
        let client = try BinaryClient(daemon.socketPath)
        let other = try BinaryClient(daemon.socketPath)
        #expect(try client.binary("binarylimit 63").end == "ACK [2@0] {binarylimit} Value too small")
        #expect(try client.binary("binarylimit x").end == "ACK [2@0] {binarylimit} Integer expected: x")
        #expect(try client.binary("binarylimit 8400897").end == "ACK [2@0] {binarylimit} Number too large: 8400897")
        #expect(try client.binary("binarylimit 8400896").end == "OK")
        #expect(try client.binary("binarylimit 64").end == "OK")
        var assembled: [UInt8] = []
        var answers = 0
        while assembled.count < 20000 {
            let answer = try client.binary("albumart Artist/Album/ \(assembled.count)")
            #expect(answer.chunk.count == min(64, 20000 - assembled.count))
            assembled += answer.chunk
            answers += 1
        }
        #expect(answers == 313)
        #expect(assembled == daemon.cover)
        #expect(try client.binary("binarylimit 30000").end == "OK")
        #expect(try client.binary("albumart Artist/Album/ 0").chunk == daemon.cover)
        // Another client keeps the default.
        #expect(try other.binary("albumart Artist/Album/ 0").chunk.count == 8192)
    }

    @Test("readpicture: no picture is just OK; a song that cannot be read is No such song")
    func readPicture() throws {
        let daemon = try PlaylistDaemon()
        let client = try BinaryClient(daemon.socketPath)
        #expect(try client.binary("readpicture one-second.mp3 0").end == "OK")
        #expect(try client.binary("readpicture nosuch.mp3 0").end == "ACK [50@0] {readpicture} No such song")
        #expect(
            try client.binary("readpicture Artist/Album/cover.jpg 0").end == "ACK [50@0] {readpicture} No such song")
        #expect(try client.binary("readpicture ../x.mp3 0").end == "ACK [50@0] {readpicture} No such song")
    }

    /// Runs `mpc --host SOCKET ARGUMENTS...`, expecting success and nothing on stderr.
    private static func mpc(_ daemon: PlaylistDaemon, _ arguments: String...) throws -> String {
        let result = try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments, within: .seconds(20))
        #expect(result.status == 0, "mpc \(arguments): \(result)")
        #expect(result.stderr == "", "mpc \(arguments): \(result)")
        return result.stdout
    }

    @Test(
        "mpc save, lsplaylists (once lsinfo is registered), playlist NAME, load, rm",
        .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.mpc), "needs /usr/bin/mpc"))
    func mpc() throws {
        let daemon = try PlaylistDaemon()
        _ = try Self.mpc(daemon, "add", "one-second.mp3")
        _ = try Self.mpc(daemon, "add", "Artist/Album/stereo.mp3")
        #expect(try Self.mpc(daemon, "save", "fromMPC") == "")
        #expect(try daemon.playlistFile("fromMPC") == "one-second.mp3\nArtist/Album/stereo.mp3\n")
        // mpc lsplaylists reads the root's `playlist:` entries from `lsinfo`, which the library registers.
        let hasLsinfo = Commands.table["lsinfo"] != nil
        if hasLsinfo {
            #expect(try Self.mpc(daemon, "lsplaylists") == "fromMPC\n")
        }
        #expect(try Self.mpc(daemon, "playlist", "fromMPC") == "one-second.mp3\nArtist/Album/stereo.mp3\n")
        _ = try Self.mpc(daemon, "clear")
        #expect(try Self.mpc(daemon, "load", "fromMPC") == "loading: fromMPC\n")
        #expect(try Self.mpc(daemon, "playlist") == "one-second.mp3\nArtist/Album/stereo.mp3\n")
        let refused = try runProgram(Paths.mpc, ["--host", daemon.socketPath, "save", "fromMPC"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Playlist already exists"), "\(refused)")
        #expect(try Self.mpc(daemon, "rm", "fromMPC") == "")
        if hasLsinfo {
            #expect(try Self.mpc(daemon, "lsplaylists") == "")
        }
        #expect(try daemon.connect().command("listplaylists") == ["OK"])
    }

    @Test("with no playlist directory: listplaylists is empty, the rest are refused")
    func disabled() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--playlist-dir", "none"]
        let daemon = try RunningPlayerd(options)
        defer { daemon.kill() }
        let client = try daemon.connect()
        #expect(try client.command("listplaylists") == ["OK"])
        #expect(try client.command("save x") == ["ACK [5@0] {save} Stored playlists are disabled"])
        #expect(try client.command("listplaylist x") == ["ACK [5@0] {listplaylist} Stored playlists are disabled"])
    }
}
