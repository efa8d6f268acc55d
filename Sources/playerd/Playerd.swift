import ArgumentParser
import Audio
import Logging
import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's command line: flags, each with an environment variable, then `Daemon`.
@main
struct Playerd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playerd",
        abstract: "The playerd music daemon: plays MP3 through ALSA, controlled over an MPD-protocol socket.",
        discussion: """
            Every option can also be set through the environment variable named after it. \
            Outputs: \(OutputSpec.validForms).
            """
    )

    @Option(help: "The control socket (env PLAYERD_SOCKET).")
    var socket: String?

    @Option(help: "The socket file's mode, in octal (env PLAYERD_SOCKET_MODE).")
    var socketMode: String?

    @Option(help: "Where to play (env PLAYERD_OUTPUT; default alsa).")
    var output: String?

    @Option(help: "Where relative paths in `add` resolve (env PLAYERD_MUSIC_DIR).")
    var musicDir: String?

    @Option(help: "The state file: queue, position, modes; `none` keeps no state (env PLAYERD_STATE_FILE).")
    var stateFile: String?

    @Option(help: "Clients connected at once (env PLAYERD_MAX_CLIENTS; default 64).")
    var maxClients: Int?

    @Flag(help: "Release the sound device while paused (env PLAYERD_RELEASE_ON_PAUSE=1).")
    var releaseOnPause = false

    @Flag(
        help: "Start playing a saved state that was playing, instead of paused at its position (env PLAYERD_RESUME=1).")
    var resumePlaying = false

    @Option(help: "trace, debug, info, notice, warning, error or critical (env PLAYERD_LOG_LEVEL; default info).")
    var logLevel: String?

    func run() throws {
        let environment = Environment()
        let level = try self.parseLogLevel(self.logLevel ?? environment["PLAYERD_LOG_LEVEL"] ?? "info")
        let journal = environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in
            if journal {
                return JournalLogHandler(level: level)
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "playerd")

        var configuration = DaemonConfiguration(
            socketPath: self.socket ?? environment["PLAYERD_SOCKET"] ?? Self.defaultSocketPath(environment))
        if let mode = self.socketMode ?? environment["PLAYERD_SOCKET_MODE"] {
            guard let value = UInt32(mode, radix: 8), value <= 0o777 else {
                throw ValidationError("invalid socket mode \"\(mode)\": expected octal like 600 or 660")
            }
            configuration.socketMode = value
        }
        let outputText = self.output ?? environment["PLAYERD_OUTPUT"] ?? "alsa"
        do {
            configuration.output = try OutputSpec(parsing: outputText)
        } catch {
            throw ValidationError(error.description)
        }
        configuration.musicDirectory = (self.musicDir ?? environment["PLAYERD_MUSIC_DIR"]).map(Self.absolute)
        configuration.stateFile =
            (self.stateFile ?? environment["PLAYERD_STATE_FILE"] ?? Self.defaultStateFile(environment))
            .flatMap { $0 == "none" ? nil : Self.absolute($0) }
        if let limit = self.maxClients ?? environment["PLAYERD_MAX_CLIENTS"].flatMap({ Int($0) }) {
            guard limit > 0 else { throw ValidationError("--max-clients must be at least 1") }
            configuration.maximumClients = limit
        }
        configuration.releasesOutputOnPause = self.releaseOnPause || environment["PLAYERD_RELEASE_ON_PAUSE"] == "1"

        let daemon: Daemon
        do {
            daemon = try Daemon(
                configuration: configuration, systemd: .fromEnvironment(),
                resumePlaying: self.resumePlaying || environment["PLAYERD_RESUME"] == "1", logger: logger)
        } catch {
            logger.error("\(error)")
            throw ExitCode.failure
        }
        logger.info("listening on \(configuration.socketPath), playing on \(configuration.output)")
        daemon.runUntilSignalled()
    }

    private func parseLogLevel(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError(
                "invalid log level \"\(text)\": expected trace, debug, info, notice, warning, error or critical")
        }
        return level
    }

    /// `$XDG_RUNTIME_DIR/playerd/socket`, or `/run/playerd/socket` for root.
    static func defaultSocketPath(_ environment: Environment) -> String {
        if getuid() == 0 {
            return "/run/playerd/socket"
        }
        let runtime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        return runtime + "/playerd/socket"
    }

    /// `$XDG_STATE_HOME/playerd/state` (`~/.local/state` when unset), or `/var/lib/playerd/state` for root.
    static func defaultStateFile(_ environment: Environment) -> String? {
        if getuid() == 0 {
            return "/var/lib/playerd/state"
        }
        if let stateHome = environment["XDG_STATE_HOME"] {
            return stateHome + "/playerd/state"
        }
        return environment["HOME"].map { $0 + "/.local/state/playerd/state" }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd + "/" + path
    }
}

/// The process environment, read once.
struct Environment {
    private let values: [String: String]

    init() {
        var values: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        self.values = values
    }

    subscript(name: String) -> String? { self.values[name] }
}
