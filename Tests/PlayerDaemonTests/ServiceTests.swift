import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`: it collects what the daemon sends.
final class NotifyListener {
    let path: String
    private let descriptor: Int32

    init(directory: String) throws {
        self.path = directory + "/notify"
        self.descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard self.descriptor >= 0 else { throw HarnessError.system("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(self.path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw HarnessError.system("bind", errno) }
    }

    deinit {
        close(self.descriptor)
        unlink(self.path)
    }

    /// The messages that arrive within `window`.
    func messages(within window: Duration) -> [String] {
        let deadline = ContinuousClock.now + window
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(
                max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
            }
        }
        return messages
    }
}

/// playerd started directly, with an environment of the test's choosing (what systemd would set).
func startPlayerd(_ arguments: [String], environment extra: [String: String], log: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Paths.playerd)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLAYERD_") }
    environment.merge(extra) { _, new in new }
    process.environment = environment
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    // playerd has its own copy once started: ours is closed now, not when Foundation drops the Process.
    defer { try? handle.close() }
    try process.run()
    return process
}

func waitForSocket(_ path: String, within limit: Duration = .seconds(10)) throws -> LineClient {
    let deadline = ContinuousClock.now + limit
    while true {
        if let client = try? LineClient.greeted(path, timeout: .seconds(1)) {
            return client
        }
        guard ContinuousClock.now < deadline else { throw HarnessError("nothing answered on \(path)") }
        usleep(20_000)
    }
}

func fields(_ client: LineClient, _ command: String) throws -> [String: String] {
    try client.fields(command)
}

@Suite("playerd as a systemd service", .serialized)
struct ServiceTests {
    @Test("socket activation: playerd serves the socket systemd-socket-activate passes, and says READY=1")
    func socketActivation() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listener = try NotifyListener(directory: directory)
        let socketPath = directory + "/activated.sock"
        let activator = try startPlayerdUnder(
            "/usr/bin/systemd-socket-activate",
            [
                "-l", socketPath, "-E", "NOTIFY_SOCKET=\(listener.path)", Paths.playerd, "--output", "null",
                "--state-file", "none", "--library", "none", "--socket", directory + "/unused.sock",
            ], log: directory + "/log")
        defer {
            kill(activator.processIdentifier, SIGKILL)
            activator.waitUntilExit()
        }
        // The first connection makes systemd-socket-activate start playerd on the listening socket.
        let client = try waitForSocket(socketPath)
        #expect(try fields(client, "status")["state"] == "stop")
        let messages = listener.messages(within: .seconds(2))
        #expect(messages.contains { $0.hasPrefix("READY=1") }, "notifications: \(messages)")
        // It used the socket it was given: its own path was never created.
        #expect(!FileManager.default.fileExists(atPath: directory + "/unused.sock"))
        client.close()
        kill(activator.processIdentifier, SIGTERM)
        activator.waitUntilExit()
        #expect(activator.terminationStatus == 0)
    }

    @Test("socket activation with a Unix and a TCP socket: both served, the TCP one's clients as network clients")
    func socketActivationWithTCP() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/activated.sock"
        let port = try freeLoopbackPort()
        let activator = try startPlayerdUnder(
            "/usr/bin/systemd-socket-activate",
            [
                "-l", socketPath, "-l", "127.0.0.1:\(port)", Paths.playerd, "--output", "null", "--state-file", "none",
                "--library", "none", "--music-dir", Paths.fixtures, "--socket", directory + "/unused.sock",
            ], log: directory + "/log")
        defer {
            kill(activator.processIdentifier, SIGKILL)
            activator.waitUntilExit()
        }
        let local = try waitForSocket(socketPath)
        #expect(try local.command("config") == ["music_directory: \(Paths.fixtures)", "OK"])
        let network = try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
        #expect(try network.command("config") == ["ACK [4@0] {config} Command only permitted to local clients"])
        #expect(try network.command("status").last == "OK")
        kill(activator.processIdentifier, SIGTERM)
        activator.waitUntilExit()
        #expect(activator.terminationStatus == 0)
    }

    @Test("the watchdog is pinged while the daemon is alive, and no longer once the audio thread is stuck")
    func watchdogStopsWhenTheAudioThreadIsStuck() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listener = try NotifyListener(directory: directory)
        // A FIFO nobody reads: opening it for writing blocks the audio thread, as a hung device would.
        let fifo = directory + "/stuck.wav"
        guard mkfifo(fifo, 0o600) == 0 else { throw HarnessError.system("mkfifo", errno) }
        let socketPath = directory + "/socket"
        let daemon = try startPlayerd(
            [
                "--socket", socketPath, "--output", "wav:\(fifo)", "--music-dir", Paths.fixtures, "--state-file",
                "none", "--library", "none",
            ],
            environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "300000"], log: directory + "/log")
        defer {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        let client = try waitForSocket(socketPath)
        let alive = listener.messages(within: .seconds(1)).filter { $0 == "WATCHDOG=1" }
        #expect(alive.count >= 3, "pings while alive: \(alive.count)")

        #expect(try client.command("add one-second.mp3").last == "OK")
        try client.send(line: "play")  // never answered: the audio thread blocks opening the FIFO
        _ = listener.messages(within: .milliseconds(500))  // pings already on their way
        let stuck = listener.messages(within: .seconds(1.5)).filter { $0 == "WATCHDOG=1" }
        #expect(stuck.isEmpty, "pings while stuck: \(stuck.count)")
        let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
        #expect(log.contains("the audio thread is stuck"))
    }

    @Test("under journald every line carries its syslog priority")
    func journaldPriorities() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/socket"
        let daemon = try startPlayerd(
            ["--socket", socketPath, "--output", "null", "--state-file", "none", "--library", "none"],
            environment: ["JOURNAL_STREAM": "8:12345"], log: directory + "/log")
        _ = try waitForSocket(socketPath)
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        let lines = try String(contentsOfFile: directory + "/log", encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(
            lines.allSatisfy {
                $0.hasPrefix("<6>") || $0.hasPrefix("<5>") || $0.hasPrefix("<4>") || $0.hasPrefix("<3>")
            })
        #expect(lines.contains { $0.hasPrefix("<6>listening on \(socketPath)") })
    }

    @Test(
        "SIGTERM and SIGKILL mid-playback: the queue, the song, the position, volume and modes come back",
        arguments: [SIGTERM, SIGKILL])
    func stateSurvivesRestarts(_ signal: Int32) throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.stateFile = directory + "/state"
        let first = try RunningPlayerd(options)
        let client = try first.connect()
        for command in [
            "add stereo-44k-cbr.mp3", "add one-second.mp3", "add tagged-id3v24.mp3", "setvol 40", "repeat 1",
            "random 0", "single 0", "consume 0", "play 0", "seekcur 1.5",
        ] {
            #expect(try client.command(command).last == "OK", "\(command)")
        }
        // Long enough for a periodic save while playing (every 3 s) to have happened.
        usleep(3_500_000)
        let before = try client.fields("status")
        if signal == SIGTERM {
            try first.stop()
        } else {
            first.kill()
        }

        let second = try RunningPlayerd(options)
        let after = try second.connect().fields("status")
        #expect(after["playlistlength"] == "3")
        #expect(after["song"] == before["song"])
        #expect(after["state"] == "pause")
        #expect(after["volume"] == "40")
        #expect(after["repeat"] == "1")
        let elapsedBefore = Double(before["elapsed"] ?? "") ?? -100
        let elapsedAfter = Double(after["elapsed"] ?? "") ?? 100
        // SIGTERM saves at once; SIGKILL loses at most the last few seconds.
        #expect(
            abs(elapsedAfter - elapsedBefore) <= (signal == SIGTERM ? 0.5 : 3.5),
            "\(elapsedBefore) then \(elapsedAfter)")
        try second.stop()
    }

    @Test("a corrupt state file is kept aside and playerd starts empty")
    func corruptStateFile() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let garbage = "playerd-state 1\nvolume: 70\nsong: /music/a.mp3\n"  // cut short: no end line
        try garbage.write(toFile: state, atomically: true, encoding: .utf8)
        var options = RunningPlayerd.Options()
        options.stateFile = state
        let daemon = try RunningPlayerd(options)
        #expect(try daemon.connect().fields("status")["playlistlength"] == "0")
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("state.corrupt-")
        }
        #expect(aside.count == 1)
        #expect(try String(contentsOfFile: directory + "/" + aside[0], encoding: .utf8) == garbage)
        #expect(daemon.log.contains("the state file is corrupt: it is cut short"))
        try daemon.stop()
    }

    // Seen while writing the statefile fuzz target: this file was accepted, and playerd trapped at every
    // start converting the position to nanoseconds (under systemd: a restart loop). Then it cost the
    // whole file; now the damaged line alone is read past, named in the log, and the queue stays.
    @Test("a paused state file with a position no song can have keeps its queue; the line is named in the log")
    func hugeSavedPosition() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let damaged = """
            playerd-state 1
            volume: 100
            state: pause
            current: 0
            elapsed: 1e10
            song: \(Paths.fixture("one-second.mp3"))
            end

            """
        try damaged.write(toFile: state, atomically: true, encoding: .utf8)
        var options = RunningPlayerd.Options()
        options.stateFile = state
        let daemon = try RunningPlayerd(options)
        let status = try daemon.connect().fields("status")
        #expect(status["state"] == "pause")
        #expect(status["playlistlength"] == "1")
        #expect(status["elapsed"] == "0.000")
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("state.corrupt-")
        }
        #expect(aside.isEmpty)
        #expect(daemon.log.contains("skipped line 5: elapsed must be seconds, at most 1000000000, not \"1e10\""))
        try daemon.stop()
    }

    @Test("a vanished file is skipped on restore; the rest of the queue stays")
    func vanishedFile() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/copy.mp3"
        try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: copy)
        let state = """
            playerd-state 1
            volume: 100
            state: stop
            song: \(Paths.fixture("stereo-44k-cbr.mp3"))
            song: \(copy)
            song: \(Paths.fixture("one-second.mp3"))
            end

            """
        try FileManager.default.removeItem(atPath: copy)
        try state.write(toFile: directory + "/state", atomically: true, encoding: .utf8)
        var options = RunningPlayerd.Options()
        options.stateFile = directory + "/state"
        let daemon = try RunningPlayerd(options)
        let songs = try daemon.connect().command("playlistinfo").filter { $0.hasPrefix("file: ") }
        #expect(songs == ["file: stereo-44k-cbr.mp3", "file: one-second.mp3"])
        #expect(daemon.log.contains("skipped \(copy)"))
        try daemon.stop()
    }

    @Test("a saved queue longer than --max-queue-length keeps its first songs, and says so")
    func savedQueuePastTheLimit() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let songs = ["one-second.mp3", "stereo-44k-cbr.mp3", "tagged-id3v1.mp3"]
        let state =
            "playerd-state 1\nvolume: 100\nstate: stop\n"
            + songs.map { "song: \(Paths.fixture($0))\n" }.joined() + "end\n"
        try state.write(toFile: directory + "/state", atomically: true, encoding: .utf8)
        var options = RunningPlayerd.Options()
        options.stateFile = directory + "/state"
        options.extraArguments = ["--max-queue-length", "2"]
        let daemon = try RunningPlayerd(options)
        let queued = try daemon.connect().command("playlistinfo").filter { $0.hasPrefix("file: ") }
        #expect(queued == ["file: one-second.mp3", "file: stereo-44k-cbr.mp3"])
        #expect(daemon.log.contains("the saved queue holds 3 songs; keeping the first 2"))
        try daemon.stop()
    }

    @Test("an unwritable state directory is a clear error at start")
    func unwritableStateDirectory() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "not a directory".write(toFile: directory + "/file", atomically: true, encoding: .utf8)
        let result = try runProgram(
            Paths.playerd,
            [
                "--socket", directory + "/socket", "--output", "null", "--state-file", directory + "/file/state",
                "--library", "none",
            ])
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(directory)/file: stat failed: not a directory"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/socket"))
    }
}

/// Starts a program (here systemd-socket-activate wrapping playerd) with output to `log`.
func startPlayerdUnder(_ executable: String, _ arguments: [String], log: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLAYERD_") }
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    process.standardOutput = handle
    process.standardError = handle
    // playerd has its own copy once started: ours is closed now, not when Foundation drops the Process.
    defer { try? handle.close() }
    try process.run()
    return process
}
