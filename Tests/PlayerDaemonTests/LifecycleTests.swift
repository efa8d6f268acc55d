import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's life and its socket file: modes, a second daemon, stale sockets, absolute paths,
/// and an orderly end on SIGTERM.
@Suite("Daemon lifecycle")
struct LifecycleTests {
    private static func mode(of path: String) throws -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw HarnessError.system("lstat \(path)", errno)
        }
        #expect(info.st_mode & S_IFMT == S_IFSOCK, "\(path) is not a socket")
        return info.st_mode & 0o7777
    }

    // MARK: - The socket file

    @Test("the socket is 0600 by default, so only the daemon's user may connect")
    func defaultSocketMode() throws {
        try withPlayerd { daemon throws in
            #expect(try Self.mode(of: daemon.socketPath) == 0o600)
        }
    }

    @Test("--socket-mode 660 gives the socket mode 0660")
    func socketMode660() throws {
        var options = RunningPlayerd.Options()
        options.socketMode = "660"
        try withPlayerd(options) { daemon throws in
            #expect(try Self.mode(of: daemon.socketPath) == 0o660)
            #expect(try daemon.connect().command("ping") == ["OK"])
        }
    }

    @Test("an invalid --socket-mode is refused at start with a message")
    func invalidSocketMode() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/socket"
        let result = try runProgram(
            Paths.playerd,
            [
                "--socket", socket, "--output", "null", "--state-file", "none", "--library", "none", "--socket-mode",
                "999",
            ],
            within: .seconds(10))
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("socket mode"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test("the socket's directory is created when missing")
    func missingDirectoryIsCreated() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.socketPath = directory + "/run/socket"
        try withPlayerd(options) { daemon throws in
            #expect(try daemon.connect().command("ping") == ["OK"])
        }
    }

    @Test("a second playerd on the same socket exits non-zero, says so, and leaves the first alone")
    func secondDaemonOnTheSameSocket() throws {
        try withPlayerd { first in
            let client = try first.connect()
            #expect(try client.command("setvol 42") == ["OK"])
            let result = try runProgram(
                Paths.playerd,
                [
                    "--socket", first.socketPath, "--output", "null", "--state-file", first.directory + "/second-state",
                    "--music-dir", Paths.fixtures, "--library", "none",
                ],
                within: .seconds(10))
            #expect(result.status != 0, "\(result)")
            #expect(result.stderr.contains("another playerd is listening on \(first.socketPath)"), "\(result)")
            // The first daemon's socket file is still there and still answers, old and new clients alike.
            #expect(FileManager.default.fileExists(atPath: first.socketPath))
            #expect(try client.command("getvol") == ["volume: 42", "OK"])
            #expect(try first.connect().command("getvol") == ["volume: 42", "OK"])
        }
    }

    @Test("a stale socket file (bound, then closed without unlinking) is replaced")
    func staleSocketFromAClosedListener() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/socket"
        try Self.bindAndAbandon(path)
        #expect(FileManager.default.fileExists(atPath: path))
        var options = RunningPlayerd.Options()
        options.socketPath = path
        try withPlayerd(options) { daemon throws in
            #expect(try daemon.connect().command("ping") == ["OK"])
            #expect(try Self.mode(of: path) == 0o600)
        }
    }

    @Test("after kill -9 the socket file stays behind, and the next playerd replaces it")
    func staleSocketFromAKilledDaemon() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.socketPath = directory + "/socket"
        let crashed = try RunningPlayerd(options)
        crashed.kill()
        #expect(FileManager.default.fileExists(atPath: options.socketPath!))
        try withPlayerd(options) { daemon throws in
            #expect(try daemon.connect().command("ping") == ["OK"])
        }
    }

    @Test("a file that is not a socket in the socket's place is left alone and playerd refuses to start")
    func regularFileInTheWay() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/socket"
        try "precious".write(toFile: path, atomically: false, encoding: .utf8)
        let result = try runProgram(
            Paths.playerd, ["--socket", path, "--output", "null", "--state-file", "none", "--library", "none"],
            within: .seconds(10))
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains(path), "\(result)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    /// Binds a Unix socket at `path`, listens, and closes it without unlinking: what a crash leaves.
    private static func bindAndAbandon(_ path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError.system("socket", errno) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw HarnessError.system("bind", errno) }
        guard listen(descriptor, 1) == 0 else { throw HarnessError.system("listen", errno) }
    }

    // MARK: - Stopping

    @Test("SIGTERM while playing, with clients idling and mid-list: exit 0 within 2 s, socket removed")
    func sigtermWhilePlaying() throws {
        let daemon = try RunningPlayerd()
        let control = try daemon.connect()
        #expect(try control.command("add stereo-44k-cbr.mp3") == ["OK"])
        #expect(try control.command("play") == ["OK"])
        let idler = try daemon.connect()
        try idler.send(line: "idle mixer")
        let lister = try daemon.connect()
        try lister.send(bytes: Array("command_list_begin\nstatus\n".utf8))
        let took = try daemon.stop(within: .seconds(5))
        #expect(took < .seconds(2), "SIGTERM took \(took)")
        // Every client sees the end of its connection.
        #expect(idler.isClosedByPeer(within: .seconds(2)))
        #expect(lister.isClosedByPeer(within: .seconds(2)))
        #expect(control.isClosedByPeer(within: .seconds(2)))
    }

    @Test("SIGINT stops the daemon as SIGTERM does")
    func sigint() throws {
        let daemon = try RunningPlayerd()
        kill(daemon.processIdentifier, SIGINT)
        #expect(daemon.waitForExit(within: .seconds(5)))
        #expect(daemon.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    // MARK: - Absolute paths

    @Test("add with an absolute path works for the daemon's own user; inside the music dir it shows relative")
    func absolutePaths() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outside = directory + "/elsewhere.mp3"
        try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: outside)
        try withPlayerd { daemon throws in
            let client = try daemon.connect()
            #expect(try client.command("add \"\(Paths.fixture("one-second.mp3"))\"") == ["OK"])
            #expect(try client.command("add \"\(outside)\"") == ["OK"])
            #expect(try client.command("add \"file://\(outside)\"") == ["OK"])
            let missing = try client.command("add \"\(directory)/missing.mp3\"")
            #expect(missing.count == 1 && missing[0].hasPrefix("ACK [50@0] {add}"), "\(missing)")
            let files = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(files == ["file: one-second.mp3", "file: \(outside)", "file: \(outside)"])
            #expect(try client.command("play 1") == ["OK"])
            let status = try client.fields("status")
            #expect(status["state"] == "play" && status["song"] == "1", "\(status)")
            #expect(status["error"] == nil, "\(status)")
            #expect(try client.command("stop") == ["OK"])
        }
    }

    @Test(
        "a client of another uid may not queue a file it cannot read by absolute path; a readable one it may",
        .enabled(if: getuid() == 0, "needs root to connect as another user"))
    func otherUsersAreChecked() throws {
        try Self.asNobody { daemon, secret, shared in
            let answers = try Self.addAsNobody(daemon, [secret, shared, "file://" + secret])
            #expect(answers.count == 3)
            guard answers.count == 3 else { return }
            #expect(answers[0].hasPrefix("ACK [4@0] {add}"), "a file nobody may read: \(answers[0])")
            #expect(answers[1] == "OK", "a world-readable file: \(answers[1])")
            #expect(answers[2].hasPrefix("ACK [4@0] {add}"), "a file nobody may read, as a URI: \(answers[2])")
            let queue = try daemon.connect().command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(queue == ["file: \(shared)"])
        }
    }

    @Test(
        "a client of another uid cannot reach a file it cannot read with a relative path and ..",
        .enabled(if: getuid() == 0, "needs root to connect as another user"))
    func otherUsersCannotEscapeTheMusicDirectory() throws {
        try Self.asNobody { daemon, secret, _ in
            let relative = String(repeating: "../", count: 16) + String(secret.dropFirst())
            let answers = try Self.addAsNobody(daemon, [relative])
            #expect(answers.count == 1 && answers[0].hasPrefix("ACK "), "\(relative): \(answers)")
            let queue = try daemon.connect().command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(queue == [])
        }
    }

    /// A daemon whose socket anyone may use, a copy of a fixture only its user may read, and a
    /// world-readable one.
    private static func asNobody(_ body: (RunningPlayerd, _ secret: String, _ shared: String) throws -> Void) throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secret = directory + "/secret.mp3"
        let shared = directory + "/shared.mp3"
        try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: secret)
        try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: shared)
        chmod(secret, 0o600)
        chmod(shared, 0o644)
        // Others must be able to reach both files (and not read the secret one).
        chmod(directory, 0o711)
        var options = RunningPlayerd.Options()
        options.socketMode = "666"
        try withPlayerd(options) { daemon throws in
            chmod(daemon.directory, 0o711)
            try body(daemon, secret, shared)
        }
    }

    /// Sends `add "PATH"` for each path as user nobody (a Python child that drops root) and returns the
    /// answers.
    private static func addAsNobody(_ daemon: RunningPlayerd, _ paths: [String]) throws -> [String] {
        let script = """
            import os, socket, sys
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5)
            f = s.makefile('rb')
            f.readline()
            for path in sys.argv[2:]:
                s.sendall(('add "%s"\\n' % path).encode())
                print(f.readline().decode().rstrip())
            """
        let result = try runProgram(Paths.python, ["-c", script, daemon.socketPath] + paths, within: .seconds(20))
        #expect(result.status == 0, "\(result)")
        return result.stdout.split(separator: "\n").map(String.init)
    }
}
