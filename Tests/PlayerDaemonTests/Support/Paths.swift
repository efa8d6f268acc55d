import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where the tests find what they need: the fixtures, their own files, and the built binaries.
enum Paths {
    /// This test target's folder (`Tests/PlayerDaemonTests`), found from this source file so that the
    /// tests run from any directory.
    static let testsDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The repository's `Fixtures` folder: `--music-dir` of every daemon the tests start.
    static let fixtures: String = {
        URL(fileURLWithPath: testsDirectory).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
    }()

    /// The folder of transcript files.
    static let transcripts = testsDirectory + "/Transcripts"

    /// The absolute path of a fixture.
    static func fixture(_ name: String) -> String {
        fixtures + "/" + name
    }

    /// The `playerd` built next to the test binary (`/proc/self/exe` is the test bundle in
    /// `.build/<triple>/debug`); failing that, the one in `.build/debug` of this checkout.
    static let playerd: String = {
        if let testBinary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("playerd")
            if FileManager.default.isExecutableFile(atPath: sibling.path) {
                return sibling.path
            }
        }
        return URL(fileURLWithPath: testsDirectory).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/playerd").path
    }()

    /// The `playerctl` built beside `playerd`.
    static let playerctl: String = {
        URL(fileURLWithPath: playerd).deletingLastPathComponent().appendingPathComponent("playerctl").path
    }()

    /// Debian's mpc, the real MPD client the daemon must satisfy.
    static let mpc = "/usr/bin/mpc"

    /// The system Python, which has Debian's python-mpd2 (`python3-mpd`).
    static let python = "/usr/bin/python3"

    /// A new, empty, private directory under /tmp with a short path: a socket path must fit in the 108
    /// bytes of `sun_path`.
    static func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/playerd-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else {
            throw HarnessError.system("mkdtemp", errno)
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// What went wrong in the harness itself (not in an expectation about the daemon).
struct HarnessError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// A failed C call, with the library's words for `code`.
    static func system(_ function: String, _ code: Int32) -> HarnessError {
        HarnessError("\(function) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// How a program that ran to its end finished, and what it printed.
struct ProgramResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String {
        "exit status \(self.status)\n--- stdout\n\(self.stdout)--- stderr\n\(self.stderr)"
    }
}

/// A program started in the background whose output goes to files (never pipes, which could fill up
/// and block it), stopped for sure when it is dropped.
final class BackgroundProgram {
    let process = Process()
    private let directory: String
    private let stdoutPath: String
    private let stderrPath: String

    /// Starts `executable` with `arguments`; output goes to files in a fresh temporary directory. With
    /// `environment`, those variables are set (over the test's own).
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        self.directory = try Paths.makeTemporaryDirectory()
        self.stdoutPath = self.directory + "/stdout"
        self.stderrPath = self.directory + "/stderr"
        _ = FileManager.default.createFile(atPath: self.stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: self.stderrPath, contents: nil)
        self.process.executableURL = URL(fileURLWithPath: executable)
        self.process.arguments = arguments
        if !environment.isEmpty {
            self.process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        self.process.standardInput = FileHandle.nullDevice
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: self.stdoutPath))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: self.stderrPath))
        // The child has its own copies once started. Ours are closed now, not when Foundation lets go of
        // the Process (which it did not: hundreds of descriptors piled up over a run, and Process.run's
        // walk of /proc/self/fd then read past glibc's buffer and crashed the test process).
        defer {
            try? output.close()
            try? errors.close()
        }
        self.process.standardOutput = output
        self.process.standardError = errors
        try self.process.run()
    }

    deinit {
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    var isRunning: Bool { self.process.isRunning }

    /// What it has printed on stdout so far.
    var stdout: String { (try? String(contentsOfFile: self.stdoutPath, encoding: .utf8)) ?? "" }

    /// What it has printed on stderr so far.
    var stderr: String { (try? String(contentsOfFile: self.stderrPath, encoding: .utf8)) ?? "" }

    /// Waits up to `limit` for the program to end; true if it has.
    func waitForExit(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while self.process.isRunning {
            if ContinuousClock.now >= deadline {
                return false
            }
            usleep(5000)
        }
        return true
    }

    /// Waits for the end (killing the program if it takes longer than `limit`) and returns the result.
    func finish(within limit: Duration) throws -> ProgramResult {
        guard self.waitForExit(within: limit) else {
            kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
            throw HarnessError("\(self.commandLine) did not finish within \(limit)\n\(self.partialOutput)")
        }
        return ProgramResult(status: self.process.terminationStatus, stdout: self.stdout, stderr: self.stderr)
    }

    private var commandLine: String {
        ([self.process.executableURL?.path ?? "?"] + (self.process.arguments ?? [])).joined(separator: " ")
    }

    private var partialOutput: String {
        "--- stdout so far\n\(self.stdout)--- stderr so far\n\(self.stderr)"
    }
}

/// Runs a program to its end (at most `limit`) and returns its exit status and output.
func runProgram(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    within limit: Duration = .seconds(20)
) throws -> ProgramResult {
    try BackgroundProgram(executable, arguments, environment: environment).finish(within: limit)
}

/// Checks that a WAV output's recording holds exactly the PCM mpg123 decodes from the fixture `name`
/// (a scratch file for mpg123's output goes in `directory`): what every output is owed, unscaled.
func expectRecording(
    _ wav: String, holdsDecoded name: String, scratch directory: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let reference = directory + "/reference.raw"
    let decoded = try runProgram("/usr/bin/mpg123", ["-q", "-O", reference, Paths.fixture(name)])
    #expect(decoded.status == 0, "\(decoded)", sourceLocation: sourceLocation)
    let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
    let recorded = try Data(contentsOf: URL(fileURLWithPath: wav))
    #expect(!expected.isEmpty && recorded.count == 44 + expected.count, sourceLocation: sourceLocation)
    #expect(recorded.dropFirst(44) == expected, sourceLocation: sourceLocation)
}

/// Tries `condition` every 20 ms until it holds; throws, naming `what`, when `limit` passes first.
func expectEventually(_ what: String, within limit: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + limit
    while !(try condition()) {
        guard ContinuousClock.now < deadline else {
            throw HarnessError("\(what): not within \(limit)")
        }
        usleep(20_000)
    }
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel picked, and that port; the caller closes it.
func listeningLoopbackSocket() throws -> (descriptor: Int32, port: Int) {
    let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(holder, $0, length) == 0 && listen(holder, 1) == 0 && getsockname(holder, $0, &length) == 0
        }
    }
    guard holder >= 0, bound else {
        let code = errno
        close(holder)
        throw HarnessError.system("bind", code)
    }
    return (holder, Int(UInt16(bigEndian: address.sin_port)))
}

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it for a socket now closed).
func freeLoopbackPort() throws -> Int {
    let (holder, port) = try listeningLoopbackSocket()
    close(holder)
    return port
}
