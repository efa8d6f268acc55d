import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The web remote (`--http`) driven as a person would, in Debian's headless chromium through its
/// chromedriver: python/web_*.py scripts (selenium and axe-core, from the project's .venv, which
/// `scripts/setup.sh test` makes) against the real playerd on a music tree of its own (web_music.py).
/// Each script checks the page itself, prints `ok: ...` for every check and exits non-zero with the
/// reason on the first that fails. One browser test at a time: their timings (a change made with mpc on
/// the page within a quarter of a second) are not measured against each other's chromium.
@Suite(
    "The web remote in a real browser",
    .serialized,
    .enabled(
        if: WebBrowser.isAvailable,
        "needs .venv/bin/python, /usr/bin/chromium and /usr/bin/chromedriver: run scripts/setup.sh test"))
struct WebRemoteBrowserTests {
    @Test("the page at phone (390x844) and desktop (1280x800) size: its parts shown, no serious axe-core violation")
    func pageAtBothSizes() throws {
        try WebBrowser.withWebPlayerd { daemon, url in
            try WebBrowser.expectScript("web_page.py", [url, daemon.socketPath], daemon: daemon)
        }
    }

    @Test("play from the library: Library → a folder → Play SONG; the page and mpc say playing within 2 s")
    func playFromLibrary() throws {
        try WebBrowser.withWebPlayerd { daemon, url in
            try WebBrowser.expectScript("web_play.py", [url, daemon.socketPath], daemon: daemon)
        }
    }

    @Test("changes made with mpc (pause, volume, random, add, del) reach the page within 0.25 s")
    func mpcChangesAppear() throws {
        try WebBrowser.withWebPlayerd { daemon, url in
            try WebBrowser.expectScript("web_live.py", [url, daemon.socketPath], daemon: daemon)
        }
    }

    @Test("the queue reordered with the Move buttons and by drag and drop, checked with mpc playlist")
    func reorderQueue() throws {
        try WebBrowser.withWebPlayerd { daemon, url in
            try WebBrowser.expectScript("web_queue.py", [url, daemon.socketPath], daemon: daemon)
        }
    }

    @Test("the other panels: artist → album → song, search, stored playlists, outputs, timers; mpc agrees")
    func otherPanels() throws {
        try WebBrowser.withWebPlayerd { daemon, url in
            try WebBrowser.expectScript("web_panels.py", [url, daemon.socketPath], daemon: daemon)
        }
    }

    @Test("with a password file and --default-permissions read: the login dialog, a wrong password, the right one")
    func logIn() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let passwords = directory + "/passwords"
        try "open-sesame@read,add,player,control,admin\n".write(toFile: passwords, atomically: false, encoding: .utf8)
        #expect(chmod(passwords, 0o600) == 0)
        let extra = ["--password-file", passwords, "--default-permissions", "read"]
        try WebBrowser.withWebPlayerd(extraArguments: extra) { daemon, url in
            try WebBrowser.expectScript("web_login.py", [url, daemon.socketPath, "open-sesame"], daemon: daemon)
        }
    }

    @Test("the connection banner: the daemon killed, the banner shown; a new daemon on the same port, the banner gone")
    func connectionBanner() throws {
        let handshake = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: handshake) }
        try WebBrowser.withWebPlayerd { daemon, url in
            let script = try BackgroundProgram(
                WebBrowser.python, [WebBrowser.script("web_reconnect.py"), url, daemon.socketPath, handshake])
            func waitFor(_ name: String) throws {
                try expectEventually("web_reconnect.py's \(name)", within: .seconds(60)) {
                    guard script.isRunning || FileManager.default.fileExists(atPath: handshake + "/" + name) else {
                        throw HarnessError("web_reconnect.py ended early\n\(script.stdout)\(script.stderr)")
                    }
                    return FileManager.default.fileExists(atPath: handshake + "/" + name)
                }
            }
            // The page has shown the first daemon's state: that daemon goes.
            try waitFor("kill-now")
            daemon.kill()
            // The page has said the connection is lost: a new daemon on the same port and library.
            try waitFor("banner-seen")
            try WebBrowser.withWebPlayerd(port: WebBrowser.port(of: url)) { second, _ in
                // A state the first daemon never had, which the page must fetch when it reconnects.
                for words in [["add", "Night Signals/Low Frequencies"], ["volume", "61"], ["play", "2"]] {
                    let result = try runProgram(Paths.mpc, ["-q", "-h", second.socketPath] + words)
                    #expect(result.status == 0, "mpc \(words): \(result)")
                }
                try "\(second.socketPath)\n".write(toFile: handshake + "/restarted", atomically: true, encoding: .utf8)
                let result = try script.finish(within: .seconds(90))
                print("--- web_reconnect.py:\n\(result.stdout)\(result.stderr)", terminator: "")
                #expect(result.status == 0, "web_reconnect.py: \(result)")
                #expect(result.stdout.hasSuffix("all checks passed\n"), "web_reconnect.py: \(result)")
            }
        }
    }
}

/// What the browser tests share: the venv's python, the music tree, a daemon serving the web remote.
enum WebBrowser {
    /// The repository's root (two folders above this test target).
    static let repository: String = {
        URL(fileURLWithPath: Paths.testsDirectory).deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The project's own Python virtual environment (`scripts/setup.sh test` makes it).
    static let python = repository + "/.venv/bin/python"

    static var isAvailable: Bool {
        [python, "/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static func script(_ name: String) -> String {
        Paths.testsDirectory + "/python/" + name
    }

    /// The music tree (python/web_music.py), made at its first use in this test run and shared: the
    /// daemons only read it.
    static func musicTree() throws -> String {
        try madeTree.get()
    }

    private static let madeTree: Result<String, HarnessError> = {
        do {
            let directory = try makeDirectory(prefix: "/tmp/playerd-webtree-")
            let result = try runProgram(python, [script("web_music.py"), directory], within: .seconds(300))
            guard result.status == 0 else {
                return .failure(HarnessError("making the web remote's music tree: \(result)"))
            }
            atexit {
                if let directory = try? WebBrowser.madeTree.get() {
                    try? FileManager.default.removeItem(atPath: directory)
                }
            }
            return .success(directory)
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("making the web remote's music tree: \(error)"))
        }
    }()

    /// The port of `http://127.0.0.1:PORT/`.
    static func port(of url: String) -> Int {
        Int(url.split(separator: ":").last?.filter(\.isNumber) ?? "") ?? 0
    }

    /// Runs `body` against a fresh playerd on the music tree (its library made with `mpc update --wait`)
    /// with `--http 127.0.0.1:PORT` (a free port unless given), once the web remote answers there; `body`
    /// gets the daemon and the page's URL.
    static func withWebPlayerd(
        port: Int? = nil, extraArguments: [String] = [], _ body: (RunningPlayerd, String) throws -> Void
    ) throws {
        let tree = try musicTree()
        let port = try port ?? freeLoopbackPort()
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.extraArguments =
            [
                "--music-dir", tree, "--library", directory + "/library.db", "--http", "127.0.0.1:\(port)",
            ] + extraArguments
        try withPlayerd(options) { daemon in
            let update = try runProgram(Paths.mpc, ["-h", daemon.socketPath, "update", "--wait"], within: .seconds(60))
            guard update.status == 0 else {
                throw HarnessError("mpc update --wait: \(update)")
            }
            let url = "http://127.0.0.1:\(port)/"
            try expectEventually("the web remote answering on 127.0.0.1:\(port)", within: .seconds(10)) {
                guard daemon.isRunning else {
                    throw HarnessError("playerd exited before its web remote answered")
                }
                return Self.accepts(port: port)
            }
            try body(daemon, url)
        }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Runs python/`name` with the venv's python and expects it to pass every check; its output and the
    /// end of `daemon`'s log are in the failure.
    static func expectScript(
        _ name: String, _ arguments: [String], daemon: RunningPlayerd, within limit: Duration = .seconds(180),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try runProgram(python, [script(name)] + arguments, within: limit)
        // Its checks and figures, passed or not.
        print("--- \(name):\n\(result.stdout)\(result.stderr)", terminator: "")
        #expect(
            result.status == 0, "\(name): \(result)--- playerd's log (last lines):\n\(daemon.logTail)",
            sourceLocation: sourceLocation)
        #expect(result.stdout.hasSuffix("all checks passed\n"), "\(name): \(result)", sourceLocation: sourceLocation)
        #expect(
            result.stdout.split(separator: "\n").contains { $0.hasPrefix("ok: ") }, "\(name): \(result)",
            sourceLocation: sourceLocation)
    }
}
