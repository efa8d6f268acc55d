import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private pulseaudio with a null sink, so ALSA's `pulse` ctl shows a `Master` control without a
/// sound card (DESIGN §10). Runs as root too: `-n` skips the default script, HOME and
/// XDG_RUNTIME_DIR point at a temporary directory, and the socket is not named `pulse` (pulseaudio
/// makes a directory of that name there). `stop()` kills it and removes the directory.
public final class PulseServer {
    /// Its private directory (HOME and XDG_RUNTIME_DIR).
    public let directory: URL
    /// Its socket's path.
    public let socket: String
    /// Spawned with posix_spawn, not Foundation's Process: Process's reaper blocked in wait4 on this
    /// long-lived child and never noticed pactl's exit.
    private var pid: pid_t = 0

    /// The value for PULSE_SERVER.
    public var address: String { "unix:" + socket }

    /// Starts it and waits (up to 10 s) for its socket: a fresh one, or `socket` (a server started
    /// again where an earlier one was, as a restarted sound server comes back).
    public init(socket: String? = nil) throws {
        if let socket {
            directory = URL(fileURLWithPath: socket).deletingLastPathComponent()
            self.socket = socket
        } else {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-\(UUID().uuidString)")
            self.socket = directory.appendingPathComponent("sock").path
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.path
        environment["XDG_RUNTIME_DIR"] = directory.path
        let arguments = [
            "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "-L", "module-null-sink", "-L",
            "module-native-protocol-unix socket=\(self.socket) auth-anonymous=1",
        ]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawn(&pid, "/usr/bin/pulseaudio", &actions, nil, &argv, &envp) == 0 else {
            throw CocoaError(.executableLoad)
        }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: self.socket) {
            guard Date() < deadline, waitpid(pid, nil, WNOHANG) == 0 else {
                stop()
                throw CocoaError(.fileNoSuchFile)
            }
            usleep(50_000)
        }
    }

    /// Kills it (SIGTERM, then waits) and removes its directory. Calling it again does nothing.
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        waitpid(pid, nil, 0)
        pid = 0
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        self.stop()
    }

    /// `pactl` against this server: what it printed.
    public func pactl(_ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = self.address
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: printed, as: UTF8.self)
    }

    /// The null sink's volume in percent (front-left), as pactl prints it.
    public func sinkPercent() throws -> Int? {
        let text = try pactl("get-sink-volume", "@DEFAULT_SINK@")
        guard let match = text.firstMatch(of: /(\d+)%/) else { return nil }
        return Int(match.1)
    }
}
