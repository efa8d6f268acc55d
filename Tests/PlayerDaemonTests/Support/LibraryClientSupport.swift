import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// Support for LibraryClientTests: a generated music tree, a server (playerd, or the real MPD to prove
// the tests) started on it, a raw protocol client that also reads binary answers, and tmux driving
// the curses clients.

// MARK: - The music tree

/// A small music tree made once per test run with sox and lame, in a temporary directory: 12 tagged
/// MP3s in `Artist/Album/NN Title.mp3` folders, a loose song at the root, an untagged song three
/// folders down, a file whose name is not UTF-8, a `cover.jpg` and a `notes.txt`. Every test copies it
/// (see `copy(into:)`), because some change their copy.
enum LibraryTree {
    /// One song: where it goes and the tags lame writes (ID3v2.3, UTF-16, so any script survives).
    struct Song {
        let path: String
        let title: String
        let artist: String
        let album: String?
        let date: String
        let track: String
        let genre: String
        /// TPE2; nil means none, so that AlbumArtist falls back to Artist.
        let albumArtist: String?
    }

    static let songs: [Song] = [
        Song(
            path: "Beyoncé/Lemonade/01 Formation.mp3", title: "Formation", artist: "Beyoncé", album: "Lemonade",
            date: "2016", track: "1/2", genre: "Pop", albumArtist: "Beyoncé"),
        Song(
            path: "Beyoncé/Lemonade/02 Hold Up.mp3", title: "Hold Up", artist: "Beyoncé", album: "Lemonade",
            date: "2016", track: "2/2", genre: "Pop", albumArtist: "Beyoncé"),
        Song(
            path: "Motörhead/Ace of Spades/01 Ace of Spades.mp3", title: "Ace of Spades", artist: "Motörhead",
            album: "Ace of Spades", date: "1980", track: "1/2", genre: "Metal", albumArtist: "Motörhead"),
        Song(
            path: "Motörhead/Ace of Spades/02 Love Me Like a Reptile.mp3", title: "Love Me Like a Reptile",
            artist: "Motörhead", album: "Ace of Spades", date: "1980", track: "2/2", genre: "Metal",
            albumArtist: "Motörhead"),
        Song(
            path: "Sigur Rós/Takk/01 Glósóli.mp3", title: "Glósóli", artist: "Sigur Rós", album: "Takk",
            date: "2005", track: "1/2", genre: "Rock", albumArtist: "Sigur Rós"),
        Song(
            path: "Sigur Rós/Takk/02 Hoppípolla.mp3", title: "Hoppípolla", artist: "Sigur Rós", album: "Takk",
            date: "2005", track: "2/2", genre: "Rock", albumArtist: "Sigur Rós"),
        Song(
            path: "Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3", title: "Svefn-g-englar", artist: "Sigur Rós",
            album: "Ágætis byrjun", date: "1999", track: "1/1", genre: "Rock", albumArtist: nil),
        Song(
            path: "東京事変/教育/01 林檎の唄.mp3", title: "林檎の唄", artist: "東京事変", album: "教育", date: "2004",
            track: "1/2", genre: "Pop", albumArtist: "東京事変"),
        Song(
            path: "東京事変/教育/02 群青日和.mp3", title: "群青日和", artist: "東京事変", album: "教育", date: "2004",
            track: "2/2", genre: "Pop", albumArtist: "東京事変"),
        Song(
            path: "Various Artists/Mixtape/01 Overkill.mp3", title: "Overkill", artist: "Motörhead", album: "Mixtape",
            date: "2020", track: "1/2", genre: "Metal", albumArtist: "Various Artists"),
        Song(
            path: "Various Artists/Mixtape/02 Crazy in Love.mp3", title: "Crazy in Love", artist: "Beyoncé",
            album: "Mixtape", date: "2020", track: "2/2", genre: "Pop", albumArtist: "Various Artists"),
        Song(
            path: "loose.mp3", title: "Loose Song", artist: "Nobody", album: nil, date: "2001", track: "1",
            genre: "Pop", albumArtist: nil),
    ]

    /// The untagged song (no ID3 tag at all).
    static let untaggedPath = "Misc/Deep/Deeper/untagged.mp3"

    /// The song whose file name is not UTF-8: `Misc/caf` 0xE9 `.mp3` (Latin-1 "café"). MPD 0.23 leaves
    /// it out of its database (a name it cannot send as UTF-8 is not a song a client can address).
    static let latin1NameBytes: [UInt8] = Array("Misc/caf".utf8) + [0xE9] + Array(".mp3".utf8)

    /// The bytes of `Beyoncé/Lemonade/cover.jpg`: a JPEG's start and end markers around zeros, 1013
    /// bytes; servers send files' bytes as they are, so it need not be a picture.
    static let coverBytes: [UInt8] =
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00] + [UInt8](repeating: 0, count: 1000)
        + [0xFF, 0xD9]

    /// The tree, made at the first use in this test run; a failure to make it is kept and rethrown.
    static func path() throws -> String {
        try made.get()
    }

    private static let made: Result<String, HarnessError> = {
        do {
            let directory = try makeDirectory(prefix: "/tmp/playerd-libtree-")
            try generate(in: directory)
            treeForCleanup.withLock { $0 = directory }
            atexit {
                if let directory = LibraryTree.treeForCleanup.withLock({ $0 }) {
                    try? FileManager.default.removeItem(atPath: directory)
                }
            }
            return .success(directory)
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("making the music tree: \(error)"))
        }
    }()

    fileprivate static let treeForCleanup = Mutex<String?>(nil)

    private static func generate(in root: String) throws {
        for tool in ["/usr/bin/sox", "/usr/bin/lame"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw HarnessError("\(tool) is missing: run scripts/setup.sh test")
        }
        // 0.3 s of a 440 Hz sine, 22050 Hz mono; at 32 kbit/s each song is about 1.7 KB.
        let wave = root + "/.tone.wav"
        try checked(
            runProgram(
                "/usr/bin/sox", ["-R", "-D", "-n", "-r", "22050", "-c", "1", wave, "synth", "0.3", "sine", "440"]))
        for song in songs {
            try FileManager.default.createDirectory(
                atPath: root + "/" + (song.path as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            // --id3v2-utf16 applies to the tag options after it; lame reads them in the locale's
            // charset, hence C.UTF-8 (under LC_ALL=C it drops every non-ASCII letter).
            var arguments = [
                "LC_ALL=C.UTF-8", "/usr/bin/lame", "--quiet", "-b", "32", "--id3v2-only", "--id3v2-utf16",
                "--tt", song.title, "--ta", song.artist, "--ty", song.date, "--tn", song.track, "--tg", song.genre,
            ]
            if let album = song.album {
                arguments += ["--tl", album]
            }
            if let albumArtist = song.albumArtist {
                arguments += ["--tv", "TPE2=" + albumArtist]
            }
            arguments += ["--tv", "TPOS=1", wave, root + "/" + song.path]
            try checked(runProgram("/usr/bin/env", arguments))
        }
        try FileManager.default.createDirectory(atPath: root + "/Misc/Deep/Deeper", withIntermediateDirectories: true)
        try checked(runProgram("/usr/bin/lame", ["--quiet", "-b", "32", wave, root + "/" + untaggedPath]))
        let latin1Staging = root + "/Misc/latin1.mp3"
        try checked(
            runProgram(
                "/usr/bin/env",
                [
                    "LC_ALL=C.UTF-8", "/usr/bin/lame", "--quiet", "-b", "32", "--id3v2-only", "--tt", "Latin-1 Name",
                    "--ta", "Nobody", wave, latin1Staging,
                ]))
        // Foundation's paths are Strings; a name that is not UTF-8 needs the C call with raw bytes.
        let from = Array((latin1Staging).utf8CString)
        let to = (Array(root.utf8) + [UInt8(ascii: "/")] + latin1NameBytes + [0]).map { CChar(bitPattern: $0) }
        guard rename(from, to) == 0 else {
            throw HarnessError.system("rename to the Latin-1 name", errno)
        }
        try Data("not music\n".utf8).write(to: URL(fileURLWithPath: root + "/Various Artists/Mixtape/notes.txt"))
        try Data(coverBytes).write(to: URL(fileURLWithPath: root + "/Beyoncé/Lemonade/cover.jpg"))
        try FileManager.default.removeItem(atPath: wave)
    }

    /// A private copy of the tree at `destination` (made with cp, which copies any file name's bytes).
    static func copy(into destination: String) throws {
        try checked(runProgram("/bin/cp", ["-a", try path(), destination]))
    }

    private static func checked(_ result: ProgramResult) throws {
        guard result.status == 0 else {
            throw HarnessError("making the music tree: \(result)")
        }
    }
}

/// A new private directory named `prefix` + 6 random characters (mkdtemp).
func makeDirectory(prefix: String) throws -> String {
    var template = Array((prefix + "XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
    guard made != nil else {
        throw HarnessError.system("mkdtemp", errno)
    }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

// MARK: - The server under test

/// A server on a private copy of the tree: playerd (`--output null --music-dir TREE --library DB
/// --playlist-dir PL`), or the real MPD 0.23.12 with the same tree, database file and playlist folder
/// and a null output. `PLAYERD_INTEROP_SERVER=mpd` runs the library client tests against MPD, which is
/// how they were proven: a check that fails there is wrong, not the daemon.
final class InteropServer {
    enum Kind: String, Sendable {
        case playerd
        case mpd
    }

    /// The server the tests drive: playerd unless `PLAYERD_INTEROP_SERVER=mpd`.
    static var underTest: Kind {
        ProcessInfo.processInfo.environment["PLAYERD_INTEROP_SERVER"] == "mpd" ? .mpd : .playerd
    }

    static let mpdPath = "/usr/bin/mpd"

    let kind: Kind
    /// The server's private folder: the music copy, database, playlists, socket, config and log.
    let directory: String
    let musicDirectory: String
    let playlistDirectory: String
    private(set) var socketPath = ""
    private var playerd: RunningPlayerd?
    private var mpd: BackgroundProgram?

    /// Copies the tree and starts the server; returns once its socket greets.
    init(_ kind: Kind = InteropServer.underTest) throws {
        self.kind = kind
        self.directory = try makeDirectory(prefix: "/tmp/playerd-libtest-")
        self.musicDirectory = self.directory + "/music"
        self.playlistDirectory = self.directory + "/playlists"
        do {
            try LibraryTree.copy(into: self.musicDirectory)
            try FileManager.default.createDirectory(atPath: self.playlistDirectory, withIntermediateDirectories: true)
            switch kind {
            case .playerd:
                var options = RunningPlayerd.Options()
                options.output = "null"
                options.extraArguments = [
                    "--music-dir", self.musicDirectory, "--library", self.directory + "/library.db",
                    "--playlist-dir", self.playlistDirectory,
                ]
                let daemon = try RunningPlayerd(options, readiness: .seconds(20))
                self.playerd = daemon
                self.socketPath = daemon.socketPath
            case .mpd:
                guard FileManager.default.isExecutableFile(atPath: Self.mpdPath) else {
                    throw HarnessError("\(Self.mpdPath) is missing: run scripts/setup.sh test")
                }
                self.socketPath = self.directory + "/socket"
                let configuration = """
                    music_directory "\(self.musicDirectory)"
                    db_file "\(self.directory)/mpd.db"
                    playlist_directory "\(self.playlistDirectory)"
                    bind_to_address "\(self.socketPath)"
                    log_file "\(self.directory)/mpd.log"
                    auto_update "no"
                    zeroconf_enabled "no"
                    filesystem_charset "UTF-8"
                    audio_output {
                        type "null"
                        name "null"
                    }

                    """
                try configuration.write(toFile: self.directory + "/mpd.conf", atomically: true, encoding: .utf8)
                self.mpd = try BackgroundProgram(Self.mpdPath, ["--no-daemon", self.directory + "/mpd.conf"])
                try self.waitForMPD(within: .seconds(20))
            }
        } catch {
            self.kill()
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
    }

    deinit {
        self.kill()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    private func waitForMPD(within limit: Duration) throws {
        let deadline = ContinuousClock.now + limit
        var problem = "nothing tried yet"
        while ContinuousClock.now < deadline {
            guard let mpd = self.mpd, mpd.isRunning else {
                throw HarnessError("mpd exited before it answered\n\(self.logTail)")
            }
            do {
                let client = try LineClient(socketPath: self.socketPath)
                let greeting = try client.readLine(timeout: .seconds(1))
                if greeting?.hasPrefix("OK MPD 0.23.") == true {
                    return
                }
                problem = "greeting \(greeting ?? "EOF")"
            } catch {
                problem = "\(error)"
            }
            usleep(20_000)
        }
        throw HarnessError("mpd did not answer within \(limit): \(problem)\n\(self.logTail)")
    }

    /// The last lines of the server's log, for failure messages.
    var logTail: String {
        switch self.kind {
        case .playerd:
            return self.playerd?.logTail ?? ""
        case .mpd:
            let log = (try? String(contentsOfFile: self.directory + "/mpd.log", encoding: .utf8)) ?? ""
            let output = (self.mpd?.stdout ?? "") + (self.mpd?.stderr ?? "")
            return (log + output).split(separator: "\n", omittingEmptySubsequences: false).suffix(40)
                .joined(separator: "\n")
        }
    }

    /// A raw connection whose greeting (`OK MPD 0.23.x`) has been read.
    func connect() throws -> ProtocolClient {
        try ProtocolClient(socketPath: self.socketPath)
    }

    /// Asks for an update and waits until it has ended (as `mpc update --wait` does, by polling): the
    /// library then holds the whole tree.
    func updateAndWait(within limit: Duration = .seconds(30)) throws {
        let client = try self.connect()
        let answer = try client.command("update")
        guard answer.last == "OK", let job = answer.first?.split(separator: " ").last.flatMap({ Int($0) }) else {
            throw HarnessError("update was refused: \(answer)")
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let status = try client.command("status")
            let running = status.first { $0.hasPrefix("updating_db: ") }.flatMap { Int($0.dropFirst(13)) }
            if running == nil || running! > job {
                return
            }
            usleep(20_000)
        }
        throw HarnessError("update job \(job) did not end within \(limit)")
    }

    /// Stops the server with SIGTERM; it must end by itself.
    func stop() throws {
        if let playerd = self.playerd {
            try playerd.stop(within: .seconds(10))
        }
        if let mpd = self.mpd, mpd.isRunning {
            Glibc.kill(mpd.process.processIdentifier, SIGTERM)
            guard mpd.waitForExit(within: .seconds(10)) else {
                throw HarnessError("mpd did not exit within 10 s of SIGTERM\n\(self.logTail)")
            }
        }
    }

    private func kill() {
        self.playerd?.kill()
        if let mpd = self.mpd, mpd.isRunning {
            Glibc.kill(mpd.process.processIdentifier, SIGKILL)
            mpd.process.waitUntilExit()
        }
    }
}

/// Runs `body` against a fresh server (playerd or MPD, see `InteropServer.underTest`), then stops it.
/// A thrown error gets the server's log added.
func withInteropServer<Result>(
    _ kind: InteropServer.Kind = InteropServer.underTest, _ body: (InteropServer) throws -> Result
) throws -> Result {
    let server = try InteropServer(kind)
    let result: Result
    do {
        result = try body(server)
    } catch {
        throw HarnessError("\(error)\n--- \(kind.rawValue)'s log (last lines):\n\(server.logTail)")
    }
    try server.stop()
    return result
}

/// Fails with a clear message, rather than skipping, when a tool the tests need is not installed.
func requireTool(_ path: String) throws {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw HarnessError("\(path) is not installed: run scripts/setup.sh test (it installs the tests' clients)")
    }
}

// MARK: - A raw protocol client that reads binary answers

/// A blocking client of the MPD protocol for the differential test: it sends a request line and
/// returns the answer's lines up to `OK` or `ACK`; a `binary: N` line is followed by one line
/// `<N bytes, fnv1a XXXXXXXX>` that stands for the raw bytes (read exactly, whatever they hold).
final class ProtocolClient {
    private let connection: LineClient

    init(socketPath: String) throws {
        self.connection = try LineClient(socketPath: socketPath)
        let greeting = try self.connection.readLine(timeout: .seconds(10))
        guard let greeting, greeting.hasPrefix("OK MPD 0.23.") else {
            throw HarnessError("unexpected greeting \(greeting ?? "EOF")")
        }
    }

    /// Sends `request` and returns the answer, the final `OK`/`ACK` line included.
    func command(_ request: String, timeout: Duration = .seconds(10)) throws -> [String] {
        try self.connection.send(line: request)
        let deadline = ContinuousClock.now + timeout
        var lines: [String] = []
        while true {
            guard let line = try self.connection.readLine(timeout: ContinuousClock.now.duration(to: deadline)) else {
                throw HarnessError("the server closed the connection; received so far: \(lines)")
            }
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") {
                return lines
            }
            if line.hasPrefix("binary: "), let count = Int(line.dropFirst(8)) {
                let data = try self.connection.readBytes(count + 1, timeout: ContinuousClock.now.duration(to: deadline))
                guard data.last == 0x0A else {
                    throw HarnessError("binary data of \(request) not followed by a newline")
                }
                var hash: UInt32 = 2_166_136_261
                for byte in data.dropLast() {
                    hash = (hash ^ UInt32(byte)) &* 16_777_619
                }
                lines.append("<\(count) bytes, fnv1a \(String(hash, radix: 16))>")
            }
        }
    }
}

// MARK: - Curses clients in tmux

/// A private tmux server (its own socket, HOME and XDG_CONFIG_HOME, a UTF-8 locale) running one
/// curses client in a 200×50 window; the tests send keys and read the screen.
final class TmuxSession {
    static let tmux = "/usr/bin/tmux"

    private let directory: String
    private let socket: String
    private let session = "client"
    private let server: BackgroundProgram

    /// Starts `command` (its arguments as they are) in a detached session.
    init(_ command: [String]) throws {
        try requireTool(Self.tmux)
        self.directory = try makeDirectory(prefix: "/tmp/playerd-tmux-")
        self.socket = self.directory + "/tmux.socket"
        let home = self.directory + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.config", withIntermediateDirectories: true)
        // The server runs in the foreground (-D), as a program of this test that is killed with it: a
        // daemonized server would keep the descriptors it inherits open, among them the one
        // Foundation's Process watches for a child's end, and runProgram would wait for the server.
        let environment = [
            "-i", "PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config", "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8", "TERM=xterm-256color",
        ]
        self.server = try BackgroundProgram(
            "/usr/bin/env", environment + [Self.tmux, "-u", "-f", "/dev/null", "-D", "-S", self.socket])
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: self.socket) {
            guard self.server.isRunning, ContinuousClock.now < deadline else {
                throw HarnessError("the tmux server did not start: \(self.server.stderr)")
            }
            usleep(20_000)
        }
        let result = try runProgram(
            "/usr/bin/env",
            environment + [
                Self.tmux, "-u", "-S", self.socket, "new-session", "-d", "-s", self.session, "-x", "200", "-y", "50",
            ] + command)
        guard result.status == 0 else {
            throw HarnessError("tmux new-session \(command) failed: \(result)")
        }
    }

    deinit {
        _ = try? runProgram(Self.tmux, ["-S", self.socket, "kill-server"], within: .seconds(10))
        _ = self.server.waitForExit(within: .seconds(5))
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// Sends keys as tmux names them (`Enter`, `Down`, `2`, ...).
    func send(_ keys: String...) throws {
        let result = try runProgram(Self.tmux, ["-S", self.socket, "send-keys", "-t", self.session] + keys)
        guard result.status == 0 else {
            throw HarnessError("tmux send-keys \(keys) failed: \(result)\nscreen:\n\(self.lastScreen)")
        }
    }

    /// Types `text` literally.
    func type(_ text: String) throws {
        let result = try runProgram(Self.tmux, ["-S", self.socket, "send-keys", "-t", self.session, "-l", text])
        guard result.status == 0 else {
            throw HarnessError("tmux send-keys -l \(text) failed: \(result)")
        }
    }

    /// What the window shows now.
    func screen() throws -> String {
        let result = try runProgram(Self.tmux, ["-S", self.socket, "capture-pane", "-p", "-t", self.session])
        guard result.status == 0 else {
            throw HarnessError("tmux capture-pane failed (did the client exit?): \(result)")
        }
        self.seenScreens.append(result.stdout)
        return result.stdout
    }

    /// Every screen captured so far, oldest first.
    private(set) var seenScreens: [String] = []

    private var lastScreen: String { self.seenScreens.last ?? "" }

    /// Polls the screen until `condition` holds (at most `limit`), and returns it; throws with the
    /// last screen if it never does.
    @discardableResult
    func waitFor(
        _ what: String, within limit: Duration = .seconds(20), _ condition: (String) -> Bool
    ) throws -> String {
        let deadline = ContinuousClock.now + limit
        while true {
            let screen = try self.screen()
            if condition(screen) {
                return screen
            }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("the screen never showed \(what) within \(limit); last screen:\n\(screen)")
            }
            usleep(100_000)
        }
    }

    /// Polls until every one of `texts` is on the screen.
    @discardableResult
    func waitFor(all texts: [String], within limit: Duration = .seconds(20)) throws -> String {
        try self.waitFor(texts.joined(separator: ", "), within: limit) { screen in
            texts.allSatisfy { screen.contains($0) }
        }
    }
}
