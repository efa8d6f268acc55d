import Foundation
import Testing

@testable import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// MPD clients over TCP (`--listen`), on loopback only: mpc and python-mpd2 at every permission level,
/// the rules network clients live by, and clients that mean harm.
@Suite("Clients over TCP: --listen, passwords, permissions, hostile clients")
struct TCPTests {
    /// One line per permission level: the password, and the probes it lets through (see
    /// python/mpd2_permissions.py: status needs read, add add, stop player, save control, enableoutput
    /// admin; control brings player with it, as in MPD).
    static let levels: [(password: String, allowed: Set<String>)] = [
        ("-", []),
        ("pw-read", ["status"]),
        ("pw-add", ["add"]),
        ("pw-player", ["stop"]),
        ("pw-control", ["stop", "save"]),
        ("pw-admin", ["enableoutput"]),
        ("pw-all", ["status", "add", "stop", "save", "enableoutput"]),
    ]
    static let passwordLines =
        "pw-read@read\npw-add@add\npw-player@player\npw-control@control\npw-admin@admin\npw-all@read,add,player,control,admin\n"

    /// The probes as mpc types them, with the commands mpc sends for each and the probe whose permission
    /// each needs. `-q` keeps mpc from asking for the status after a command; `enable` still lists the
    /// outputs after it (read).
    static let mpcProbes: [(arguments: [String], sends: [(command: String, needs: String)])] = [
        (["status"], [("status", "status")]),
        (["-q", "add", "stereo-44k-cbr.mp3"], [("add", "add")]),
        (["-q", "stop"], [("stop", "stop")]),
        (["-q", "save", "from-mpc"], [("save", "save")]),
        (["-q", "enable", "1"], [("enableoutput", "enableoutput"), ("outputs", "status")]),
    ]

    private func passwordFile(_ text: String) throws -> String {
        let path = try Paths.makeTemporaryDirectory() + "/passwords"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o600) == 0)
        return path
    }

    private func mpc(_ host: String, _ port: Int, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(Paths.mpc, ["--host", host, "--port", String(port)] + arguments, within: .seconds(20))
    }

    @Test("without a password file, mpc and python-mpd2 over TCP (IPv4 and IPv6) may do all but name local files")
    func noPasswords() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--listen", "127.0.0.1:0", "--listen", "[::1]:0"]
        try withPlayerd(options) { daemon in
            let port = try daemon.boundPort("127.0.0.1")
            let port6 = try daemon.boundPort("[::1]")
            #expect(try self.mpc("127.0.0.1", port, ["add", "stereo-44k-cbr.mp3"]).status == 0)
            #expect(try self.mpc("::1", port6, ["add", "one-second.mp3"]).status == 0)
            let playlist = try self.mpc("127.0.0.1", port, ["playlist"])
            #expect(playlist.stdout == "stereo-44k-cbr.mp3\none-second.mp3\n", "\(playlist)")
            // MPD's rule: a network client never names a file on the daemon's machine.
            let absolute = try self.mpc("127.0.0.1", port, ["add", Paths.fixtures + "/one-second.mp3"])
            #expect(absolute.status != 0)
            #expect(
                absolute.stderr.contains("only clients on this machine may name files by absolute path"), "\(absolute)")
            let client = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            #expect(try client.command("config") == ["ACK [4@0] {config} Command only permitted to local clients"])
            #expect(
                try client.command("add \"file://\(Paths.fixtures)/one-second.mp3\"").first?.hasPrefix(
                    "ACK [4@0] {add}")
                    == true)
            #expect(try daemon.connect().command("config") == ["music_directory: \(Paths.fixtures)", "OK"])
            let python = try runProgram(
                Paths.python,
                [Paths.testsDirectory + "/python/mpd2_permissions.py", "127.0.0.1", String(port), "-", "open"],
                within: .seconds(30))
            #expect(
                python.stdout
                    == "status allowed\nadd allowed\nstop allowed\nsave allowed\nenableoutput allowed\ndone\n",
                "\(python)")
        }
    }

    @Test("every permission level over TCP, tried with python-mpd2 and with mpc -h PASSWORD@HOST")
    func permissionLevels() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = [
            "--listen", "127.0.0.1:0", "--password-file", try self.passwordFile(Self.passwordLines),
        ]
        try withPlayerd(options) { daemon in
            let port = try daemon.boundPort("127.0.0.1")
            for (index, level) in Self.levels.enumerated() {
                let python = try runProgram(
                    Paths.python,
                    [
                        Paths.testsDirectory + "/python/mpd2_permissions.py", "127.0.0.1", String(port), level.password,
                        "from-python-\(index)",
                    ],
                    within: .seconds(30))
                let expected = ["status", "add", "stop", "save", "enableoutput"].map {
                    "\($0) \(level.allowed.contains($0) ? "allowed" : "denied")\n"
                }
                #expect(python.status == 0, "\(level.password): \(python)")
                #expect(python.stdout == expected.joined() + "done\n", "\(level.password): \(python)")

                let host = level.password == "-" ? "127.0.0.1" : "\(level.password)@127.0.0.1"
                for probe in Self.mpcProbes {
                    var arguments = probe.arguments
                    if let save = arguments.firstIndex(of: "save") {
                        arguments[save + 1] += "-\(index)"
                    }
                    let result = try self.mpc(host, port, arguments)
                    let what = "\(level.password) mpc \(arguments.joined(separator: " ")): \(result)"
                    if let denied = probe.sends.first(where: { !level.allowed.contains($0.needs) }) {
                        #expect(result.status != 0, "\(what)")
                        #expect(
                            result.stderr.contains("you don't have permission for \"\(denied.command)\""), "\(what)")
                    } else {
                        #expect(result.status == 0, "\(what)")
                    }
                }
            }
            // A wrong password is ACK 3, as mpc shows it.
            let wrong = try self.mpc("nope@127.0.0.1", port, ["status"])
            #expect(wrong.status != 0 && wrong.stderr.contains("incorrect password"), "\(wrong)")
            // The local socket keeps everything without a password.
            #expect(try daemon.connect().command("enableoutput 0") == ["OK"])
        }
    }

    @Test("--default-permissions is what network clients and other users on an abstract socket may do")
    func defaultPermissions() throws {
        let abstractName = "playerd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var options = RunningPlayerd.Options()
        options.extraArguments = [
            "--listen", "127.0.0.1:0", "--listen", "@" + abstractName, "--default-permissions", "read",
            "--password-file", try self.passwordFile(Self.passwordLines),
        ]
        try withPlayerd(options) { daemon in
            let port = try daemon.boundPort("127.0.0.1")
            let network = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            #expect(try network.command("status").last == "OK")
            #expect(
                try network.command("add stereo-44k-cbr.mp3") == [
                    "ACK [4@0] {add} you don't have permission for \"add\""
                ])
            #expect(try network.command("password pw-add") == ["OK"])
            #expect(try network.command("add stereo-44k-cbr.mp3") == ["OK"])
            // The socket file's mode vouches for its clients; on the abstract socket, the daemon's own user.
            #expect(try daemon.connect().command("add stereo-44k-cbr.mp3") == ["OK"])
            let own = try LineClient(abstract: abstractName).checkingGreeting()
            #expect(try own.command("add stereo-44k-cbr.mp3") == ["OK"])
            if geteuid() == 0 {
                // Another user reaches an abstract socket too (no file mode guards it): nobody (65534).
                let script = """
                    import os, socket
                    os.setgid(65534); os.setuid(65534)
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect("\\0\(abstractName)")
                    f = s.makefile("rwb")
                    f.readline()
                    for line in (b"status\\n", b"add stereo-44k-cbr.mp3\\n"):
                        f.write(line); f.flush()
                        while True:
                            answer = f.readline().decode().strip()
                            if answer == "OK" or answer.startswith("ACK"):
                                print(answer); break
                    """
                let other = try runProgram(Paths.python, ["-c", script], within: .seconds(20))
                #expect(other.stdout == "OK\nACK [4@0] {add} you don't have permission for \"add\"\n", "\(other)")
            }
        }
    }

    @Test("a hostile network client harms nobody: garbage, 1,000 connections, password guessing, silence")
    func hostileClients() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = [
            "--listen", "127.0.0.1:0", "--password-file", try self.passwordFile("good@read,add,player,control,admin\n"),
            "--connection-timeout", "2",
        ]
        try withPlayerd(options) { daemon in
            let port = try daemon.boundPort("127.0.0.1")
            let local = try daemon.connect()

            // Garbage: random bytes with and without newlines, and a line past the limit.
            var generator = SystemRandomNumberGenerator()
            let garbage = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            try? garbage.send(bytes: (0..<262_144).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try? garbage.send(bytes: [UInt8](repeating: 0x61, count: 100_000))
            _ = garbage.isClosedByPeer(within: .seconds(5))
            #expect(try local.command("ping") == ["OK"])

            // 1,000 connections from one host, 200 at a time: a quarter of the places (16) are theirs at
            // most; the rest are refused with a reason. Local clients and another host are served meanwhile.
            let perHost = 16
            for round in 0..<5 {
                var flood: [LineClient] = []
                for _ in 0..<200 {
                    flood.append(try LineClient(host: "127.0.0.1", port: port))
                }
                var greeted = 0
                var refused = 0
                for client in flood {
                    let first = try client.readLine(timeout: .seconds(10))
                    if first == "OK MPD 0.23.5" {
                        greeted += 1
                    } else if first == "ACK [52@0] {} too many clients from 127.0.0.1: the limit is \(perHost)" {
                        refused += 1
                    }
                }
                #expect(greeted == perHost, "round \(round)")
                #expect(refused == 200 - perHost, "round \(round)")
                #expect(try local.command("ping") == ["OK"])
                let neighbour = try LineClient(host: "127.0.0.1", port: port, from: "127.0.0.2").checkingGreeting()
                #expect(try neighbour.command("password good") == ["OK"])
                #expect(try neighbour.command("status").last == "OK")
                for client in flood {
                    client.close()
                }
            }
            // 920 refusals are a line or two in the log, not 920.
            let refusalLines = daemon.log.split(separator: "\n").filter { $0.contains("refused a client") }
            #expect((1...3).contains(refusalLines.count), "\(refusalLines.count) lines")
            // Every place is given back.
            try expectEventually("the flood's places are free again") {
                let clients = try (0..<perHost).map { _ in try LineClient(host: "127.0.0.1", port: port) }
                return try clients.allSatisfy { try $0.readLine(timeout: .seconds(5)) == "OK MPD 0.23.5" }
            }

            // Guessing: each wrong password is answered later than the one before, while others are served
            // at once; the third closes the connection.
            let guesser = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            var waits: [Duration] = []
            for attempt in 1...3 {
                let sent = ContinuousClock.now
                try guesser.send(line: "password guess\(attempt)")
                #expect(try local.command("ping") == ["OK"])
                #expect(!(try guesser.hasInput(within: .zero)), "answered before a local ping")
                #expect(try guesser.readLine(timeout: .seconds(20)) == "ACK [3@0] {password} incorrect password")
                waits.append(ContinuousClock.now - sent)
            }
            #expect(waits[0] >= .milliseconds(200) && waits[1] > waits[0] && waits[2] > waits[1], "\(waits)")
            #expect(guesser.isClosedByPeer(within: .seconds(5)))
            // A new connection from the same host waits longer still; another host is answered first.
            let again = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            let elsewhere = try LineClient(host: "127.0.0.1", port: port, from: "127.0.0.3").checkingGreeting()
            let sent = ContinuousClock.now
            try again.send(line: "password guess4")
            try elsewhere.send(line: "password guess5")
            #expect(try elsewhere.readLine(timeout: .seconds(20)) == "ACK [3@0] {password} incorrect password")
            #expect(!(try again.hasInput(within: .zero)))
            #expect(try again.readLine(timeout: .seconds(20)) == "ACK [3@0] {password} incorrect password")
            #expect(ContinuousClock.now - sent >= .milliseconds(1500))
            #expect(try again.command("password good") == ["OK"])
            let lines = daemon.log.split(separator: "\n").filter { $0.contains("repeated wrong passwords from") }
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains("from 127.0.0.1:") == true, "\(lines)")

            // Silence: a network client that says nothing for the timeout is let go; one in idle is not,
            // nor a local client.
            let silent = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            let idler = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
            #expect(try idler.command("password good") == ["OK"])
            try idler.send(line: "idle")
            #expect(silent.isClosedByPeer(within: .seconds(10)))
            #expect(!(try idler.hasInput(within: .seconds(3))))
            #expect(try idler.command("noidle") == ["OK"])
            #expect(try local.command("ping") == ["OK"])
            #expect(daemon.isRunning)
        }
    }

    @Test("a --listen value playerd cannot use stops it before it starts, naming the value and why")
    func badListen() throws {
        let (holder, taken) = try listeningLoopbackSocket()
        defer { close(holder) }
        let cases: [(String, Int32, String)] = [
            ("nonsense", 64, "invalid listen address \"nonsense\": expected a socket path (with a /), @NAME"),
            ("127.0.0.1:99999", 64, "\"99999\" is not a port from 1 to 65535"),
            ("[::1:6600", 64, "an IPv6 address is written [ADDRESS]:PORT"),
            ("127.0.0.1:\(taken)", 1, "cannot listen on 127.0.0.1:\(taken)"),
        ]
        for (value, status, message) in cases {
            let result = try runProgram(
                Paths.playerd,
                [
                    "--socket", try Paths.makeTemporaryDirectory() + "/socket", "--output", "null", "--state-file",
                    "none", "--library", "none", "--listen", value,
                ], within: .seconds(20))
            #expect(result.status == status, "\(value): \(result)")
            #expect(result.stderr.contains(message), "\(value): \(result)")
        }
    }

    @Test(
        "listen addresses: paths, abstract names, IPv4, IPv6, names, any",
        arguments: [
            ("/run/playerd/socket", ListenAddress.path("/run/playerd/socket")),
            ("./ctl", .path("./ctl")),
            ("@playerd", .abstract("playerd")),
            ("127.0.0.1:6600", .tcp(host: "127.0.0.1", port: 6600)),
            ("localhost:6601", .tcp(host: "localhost", port: 6601)),
            ("[::1]:6600", .tcp(host: "::1", port: 6600)),
            ("[fe80::1%lo]:6600", nil),
            ("any:6600", .tcp(host: "::", port: 6600)),
            ("*:6600", .tcp(host: "::", port: 6600)),
            ("127.0.0.1:0", .tcp(host: "127.0.0.1", port: 0)),
            (":6600", nil),
            ("6600", nil),
            ("host:port", nil),
            ("::1:6600", nil),
            ("@", nil),
            ("127.0.0.1:65536", nil),
            ("127.0.0.1:-1", nil),
        ] as [(String, ListenAddress?)])
    func parsing(_ text: String, _ expected: ListenAddress?) {
        let parsed = try? ListenAddress(parsing: text)
        #expect(parsed == expected)
        if let parsed, !text.hasPrefix("any"), !text.hasPrefix("*") {
            #expect(parsed.description == text)
        }
    }
}

extension RunningPlayerd {
    /// The port playerd bound for `--listen HOST:0`, from its log line `listening on A, B, ...`.
    func boundPort(_ host: String) throws -> Int {
        var port: Int?
        try expectEventually("playerd logs where it listens") {
            guard let line = self.log.split(separator: "\n").first(where: { $0.contains("listening on ") }) else {
                return false
            }
            let places = line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            port = places.first { $0.hasPrefix(host + ":") }.flatMap { Int($0.dropFirst(host.count + 1)) }
            return port != nil
        }
        return port!
    }
}
