import Foundation
import PlayerClient
import Testing

/// The repository's Fixtures folder, found from this source file so tests run from any directory.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures").path

/// The absolute path of a fixture.
func fixture(_ name: String) -> String {
    "\(fixturesDirectory)/\(name)"
}

/// Debian's real `mpd`, on a Unix socket in a scratch directory, with the fixtures as its music
/// directory and the null output (paced like a sound card). Stopped, and its directory removed, when
/// the value goes away, also when a test fails.
final class MPDServer {
    static let executable = "/usr/bin/mpd"

    let scratch: ScratchDirectory
    let socketPath: String
    private let process = Process()

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: MPDServer.executable) else {
            throw TestSetupError("\(MPDServer.executable) is missing: run scripts/setup.sh test")
        }
        self.scratch = try ScratchDirectory()
        self.socketPath = self.scratch.file("socket")
        let config = self.scratch.file("mpd.conf")
        try """
        music_directory "\(fixturesDirectory)"
        db_file "\(self.scratch.file("database"))"
        state_file "\(self.scratch.file("state"))"
        pid_file "\(self.scratch.file("pid"))"
        bind_to_address "\(self.socketPath)"
        zeroconf_enabled "no"
        audio_output {
            type "null"
            name "null"
            mixer_type "software"
        }
        input {
            plugin "curl"
            enabled "no"
        }
        decoder {
            plugin "mad"
            enabled "no"
        }

        """.write(toFile: config, atomically: true, encoding: .utf8)
        self.process.executableURL = URL(fileURLWithPath: MPDServer.executable)
        self.process.arguments = ["--no-daemon", "--stderr", config]
        let log = self.scratch.file("mpd.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        // mpd has its own copy once started: ours is closed now, not when Foundation drops the Process.
        defer { try? output.close() }
        self.process.standardOutput = output
        self.process.standardError = output
        self.process.standardInput = FileHandle.nullDevice
        try self.process.run()
        do {
            try self.waitUntilReady()
        } catch {
            self.stop()
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestSetupError("mpd did not start: \(error)\n\(output)")
        }
    }

    deinit {
        self.stop()
    }

    /// A new client connection.
    func connect() throws(ClientError) -> MPDConnection {
        try MPDConnection(socketPath: self.socketPath)
    }

    /// Ends mpd and waits for it: SIGTERM, then SIGKILL if it lingers.
    func stop() {
        guard self.process.isRunning else {
            return
        }
        self.process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while self.process.isRunning && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
        }
        self.process.waitUntilExit()
    }

    // The socket answers soon after start; the database (which `add` of a path inside the music
    // directory needs) is ready when `status` stops reporting `updating_db`.
    private func waitUntilReady() throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var lastError: (any Error)?
        while ContinuousClock.now < deadline {
            guard self.process.isRunning else {
                throw TestSetupError("mpd exited with status \(self.process.terminationStatus)")
            }
            do {
                let status = try self.connect().command("status")
                if !status.contains(where: { $0.key == "updating_db" }) {
                    return
                }
            } catch {
                lastError = error
            }
            usleep(20_000)
        }
        throw TestSetupError("no answer on \(self.socketPath) within 30 s (last: \(String(describing: lastError)))")
    }
}

/// A test could not set up what it needs.
struct TestSetupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// What playerctl printed and how it ended.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The `playerctl` executable built beside the test binary (`swift build --build-tests` builds both).
func playerctlPath() throws -> String {
    let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let path = URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("playerctl").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestSetupError("\(path) is not built: run `swift build --build-tests` before `swift test`")
    }
    return path
}

/// A playerctl process started but not yet finished, with its output going to files, or its standard
/// output to a terminal.
final class RunningCommand {
    let process = Process()
    private let scratch: ScratchDirectory
    /// The pseudo-terminal's master side when standard output is a terminal; -1 otherwise.
    private var terminal: Int32 = -1

    /// With `onTerminal`, standard output is a pseudo-terminal (playerctl sees a person's terminal),
    /// whose output is read back as written, without the terminal's `\n` to `\r\n`.
    init(
        _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        onTerminal: Bool = false
    ) throws {
        self.scratch = try ScratchDirectory()
        self.process.executableURL = URL(fileURLWithPath: try playerctlPath())
        self.process.arguments = arguments
        if let environment {
            self.process.environment = environment
        }
        if let directory {
            self.process.currentDirectoryURL = URL(fileURLWithPath: directory)
        }
        for name in ["out", "err"] {
            _ = FileManager.default.createFile(atPath: self.scratch.file(name), contents: nil)
        }
        self.process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: self.scratch.file("out")))
        if onTerminal {
            // posix_openpt, grantpt and ptsname are not in Swift's Glibc module: /dev/ptmx and its two
            // ioctls (Linux's generic numbers: TIOCSPTLCK unlocks, TIOCGPTN names /dev/pts/N) do the same.
            self.terminal = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard self.terminal >= 0, ioctl(self.terminal, 0x4004_5431, &unlock) == 0,
                ioctl(self.terminal, 0x8004_5430, &number) == 0
            else {
                throw TestSetupError("no pseudo-terminal: \(String(cString: strerror(errno)))")
            }
            let follower = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
            guard follower >= 0 else { throw TestSetupError("cannot open /dev/pts/\(number)") }
            var settings = termios()
            tcgetattr(follower, &settings)
            settings.c_oflag &= ~tcflag_t(OPOST)
            tcsetattr(follower, TCSANOW, &settings)
            _ = fcntl(self.terminal, F_SETFL, fcntl(self.terminal, F_GETFL) | O_NONBLOCK)
            self.process.standardOutput = FileHandle(fileDescriptor: follower, closeOnDealloc: true)
        }
        self.process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: self.scratch.file("err")))
        self.process.standardInput = FileHandle.nullDevice
        // The child has its own copies once started: the parent's are closed now, not when Foundation
        // drops the Process.
        defer {
            for handle in [self.process.standardOutput, self.process.standardError] {
                try? (handle as? FileHandle)?.close()
            }
        }
        try self.process.run()
    }

    /// What the terminal has received and not yet read.
    private func readTerminal() -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(self.terminal, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    deinit {
        if self.process.isRunning {
            self.process.terminate()
            self.process.waitUntilExit()
        }
        if self.terminal >= 0 {
            close(self.terminal)
        }
    }

    /// Waits for the end and collects the output. A process still running after `limit` is killed
    /// and reported, so that a hung playerctl fails the test instead of hanging it.
    func finish(within limit: Duration = .seconds(30)) throws -> CommandResult {
        let deadline = ContinuousClock.now + limit
        while self.process.isRunning && ContinuousClock.now < deadline {
            usleep(5000)
        }
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
            throw TestSetupError("playerctl \(self.process.arguments ?? []) did not finish within \(limit)")
        }
        self.process.waitUntilExit()
        return CommandResult(
            status: self.process.terminationStatus,
            stdout: self.terminal >= 0
                ? self.readTerminal() : try String(contentsOfFile: self.scratch.file("out"), encoding: .utf8),
            stderr: try String(contentsOfFile: self.scratch.file("err"), encoding: .utf8))
    }
}

/// Runs playerctl to its end.
func playerctl(
    _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil
) throws -> CommandResult {
    try RunningCommand(arguments, environment: environment, directory: directory).finish()
}
