import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// playerd started as a person starts it, without the flags every other test gives (`--playlist-dir`
/// above all), in a working directory of its own; killed when dropped.
final class PlainPlayerd {
    let socketPath: String
    private let program = Process()

    init(in workingDirectory: String, socket: String, _ arguments: [String]) throws {
        self.socketPath = socket
        self.program.executableURL = URL(fileURLWithPath: Paths.playerd)
        self.program.arguments =
            ["--socket", socket, "--output", "null:unpaced", "--music-dir", Paths.fixtures, "--mpris", "off"]
            + arguments
        self.program.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("PLAYERD_") {
            environment[key] = nil
        }
        self.program.environment = environment
        self.program.standardInput = FileHandle.nullDevice
        self.program.standardOutput = FileHandle.nullDevice
        self.program.standardError = FileHandle.nullDevice
        try self.program.run()
        try expectEventually("playerd answers on \(socket)") {
            guard self.program.isRunning else { throw HarnessError("playerd exited at start") }
            return (try? LineClient.greeted(socket, timeout: .seconds(1))) != nil
        }
    }

    deinit {
        if self.program.isRunning {
            kill(self.program.processIdentifier, SIGKILL)
            self.program.waitUntilExit()
        }
    }

    func connect() throws -> LineClient { try LineClient.greeted(self.socketPath) }
}

/// The names in `directory`, sorted; none when it cannot be read.
func contents(of directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}
