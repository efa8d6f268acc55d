import Audio
import Foundation
import Logging
import PlayerDaemon
import StreamInput
import WebRemote

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's entry point: the command line and environment make a `DaemonConfiguration`, then
/// `Daemon` runs until SIGTERM or SIGINT.
@main
enum Playerd {
    static func main() {
        // Before any thread starts: every thread inherits the mask, and a SIGTERM that comes while
        // playerd starts waits for runUntilSignalled instead of being lost or killing it half-started.
        Daemon.holdStopSignals()
        let environment = Environment()
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(
                arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
        } catch {
            Self.exitWithUsageError(error)
        }
        if options.wantsHelp {
            print(CommandLineOptions.help, terminator: "")
            exit(0)
        }
        let level: Logger.Level
        let configuration: DaemonConfiguration
        let exportsMPRIS: Bool
        let webAddresses: [WebAddress]
        do {
            level = try Self.parseLogLevel(options["log-level"] ?? "info")
            exportsMPRIS = try Self.mprisEnabled(options["mpris"])
            configuration = try Self.configuration(from: options, environment: environment)
            webAddresses = try Self.webAddresses(options)
        } catch {
            Self.exitWithUsageError(error)
        }

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
        let daemon: Daemon
        do {
            daemon = try Daemon(
                configuration: configuration, systemd: .fromEnvironment(),
                resumePlaying: options.flag("resume-playing"), logger: logger)
        } catch {
            logger.error("\(error)")
            exit(1)
        }
        logger.info(
            "listening on \(daemon.server.places.joined(separator: ", ")), playing on \(configuration.outputs.map(\.description).joined(separator: ", ")), \(configuration.mixer) volume"
        )
        let mpris = exportsMPRIS ? Self.startMPRIS(daemon: daemon, logger: logger) : nil
        var web: WebRemoteServer?
        if !webAddresses.isEmpty {
            let server = WebRemoteServer(
                addresses: webAddresses, passwordSet: configuration.passwords != nil, logger: logger
            ) { host in try daemon.connectNetworkClient(host: host) }
            do {
                try server.start()
            } catch {
                logger.error("\(error)")
                mpris?.stop()
                daemon.shutdown()
                exit(1)
            }
            web = server
        }
        daemon.runUntilSignalled(beforeShutdown: {
            web?.stop()
            mpris?.stop()
        })
    }

    static func configuration(
        from options: CommandLineOptions, environment: Environment
    ) throws(UsageError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(socketPath: options["socket"] ?? Self.defaultSocketPath(environment))
        if let mode = options["socket-mode"] {
            guard let value = UInt32(mode, radix: 8), value <= 0o777 else {
                throw UsageError("invalid socket mode \"\(mode)\": expected octal like 600 or 660")
            }
            configuration.socketMode = value
        }
        do {
            let specs = options.all("output")
            configuration.outputs = try (specs.isEmpty ? ["alsa"] : specs).map { (text) throws(OutputSpecError) in
                try ConfiguredOutput(parsing: text)
            }
            try ConfiguredOutput.checkList(configuration.outputs)
        } catch {
            throw UsageError(error.description)
        }
        do {
            configuration.mixer = try MixerChoice(parsing: options["mixer"] ?? "software")
        } catch {
            throw UsageError(error.description)
        }
        if let device = options["mixer-device"] {
            guard case .hardware(let control, _) = configuration.mixer else {
                throw UsageError("--mixer-device \"\(device)\" needs --mixer hardware")
            }
            configuration.mixer = .hardware(control: control, device: device)
        }
        configuration.musicDirectory = (options["music-dir"] ?? Self.defaultMusicDirectory(environment))
            .map(Self.absolute)
        configuration.stateFile = (options["state-file"] ?? Self.defaultStateFile(environment))
            .flatMap { $0 == "none" ? nil : Self.absolute($0) }
        configuration.libraryPath = (options["library"] ?? Self.defaultLibrary(environment))
            .flatMap { $0 == "none" ? nil : Self.absolute($0) }
        switch options["playlist-dir"] {
        case "none": configuration.playlistDirectory = nil
        case let directory?: configuration.playlistDirectory = Self.absolute(directory)
        case nil:
            // Beside the state file actually used; `--state-file none` keeps no state, and so no playlists.
            configuration.playlistDirectory = configuration.stateFile.map(Self.playlistDirectory(besideStateFile:))
        }
        switch options["sticker-file"] {
        case "none": configuration.stickerFile = nil
        case let file?: configuration.stickerFile = Self.absolute(file)
        case nil:
            // User data, not a cache: beside the state file (as stored playlists), not the library.
            configuration.stickerFile = configuration.stateFile.map(Self.stickerFile(besideStateFile:))
        }
        configuration.recordsPlayStatistics = !options.flag("no-play-statistics")
        if let text = options["max-clients"] {
            guard let limit = Int(text), limit > 0 else {
                throw UsageError("invalid --max-clients \"\(text)\": expected a whole number of at least 1")
            }
            configuration.maximumClients = limit
        }
        if let text = options["max-queue-length"] {
            guard let limit = Int(text), limit > 0 else {
                throw UsageError("invalid --max-queue-length \"\(text)\": expected a whole number of at least 1")
            }
            configuration.maximumQueueLength = limit
        }
        configuration.streamLimits = try Self.streamLimits(options)
        configuration.releasesOutputOnPause = options.flag("release-on-pause")
        configuration.replayGain = try Self.replayGainSettings(options)
        if let path = options["password-file"] {
            do {
                configuration.passwords = try PasswordFile.load(Self.absolute(path))
            } catch {
                throw UsageError(error.description)
            }
        }
        for text in options.all("listen") {
            do {
                configuration.listenAddresses.append(try ListenAddress(parsing: text))
            } catch {
                throw UsageError(error.description)
            }
        }
        if let text = options["default-permissions"] {
            do {
                configuration.defaultPermissions = try DaemonConfiguration.permissions(parsing: text)
            } catch {
                throw UsageError("invalid --default-permissions \"\(text)\": \(error)")
            }
        }
        if let text = options["connection-timeout"] {
            guard let seconds = Int(text), seconds > 0 else {
                throw UsageError(
                    "invalid --connection-timeout \"\(text)\": expected a whole number of seconds, at least 1")
            }
            configuration.networkTimeout = .seconds(seconds)
        }
        return configuration
    }

    /// `--http`'s addresses, in `--listen`'s forms (an abstract socket excepted), and `:PORT`.
    static func webAddresses(_ options: CommandLineOptions) throws(UsageError) -> [WebAddress] {
        var addresses: [WebAddress] = []
        for text in options.all("http") {
            let address: ListenAddress
            do {
                // `:6680` is every address, as `any:6680`.
                address = try ListenAddress(parsing: text.hasPrefix(":") ? "any" + text : text)
            } catch {
                throw UsageError(error.description.replacingOccurrences(of: "listen address", with: "--http address"))
            }
            switch address {
            case .tcp(let host, let port): addresses.append(.tcp(host: host, port: port))
            case .path(let path): addresses.append(.unix(path: Self.absolute(path)))
            case .abstract:
                throw UsageError("invalid --http address \"\(text)\": the web remote cannot use an abstract socket")
            }
        }
        return addresses
    }

    private static func parseLogLevel(_ text: String) throws(UsageError) -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw UsageError(
                "invalid log level \"\(text)\": expected trace, debug, info, notice, warning, error or critical")
        }
        return level
    }

    /// Prints `playerd: MESSAGE` and a hint to standard error, and exits 64 (EX_USAGE).
    private static func exitWithUsageError(_ error: UsageError) -> Never {
        var text = "playerd: \(error.description)\nRun 'playerd --help' for the options.\n"
        text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(64)
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

    /// The user's music directory: `XDG_MUSIC_DIR` (from the environment or `user-dirs.dirs`), else
    /// `~/Music`; `/var/lib/playerd/music` for root.
    static func defaultMusicDirectory(_ environment: Environment) -> String? {
        if getuid() == 0 {
            return "/var/lib/playerd/music"
        }
        guard let home = environment["HOME"] else { return nil }
        if let music = environment["XDG_MUSIC_DIR"] {
            return music
        }
        let config = environment["XDG_CONFIG_HOME"] ?? home + "/.config"
        if let text = try? String(contentsOfFile: config + "/user-dirs.dirs", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("XDG_MUSIC_DIR=") })
        {
            let value = line.dropFirst("XDG_MUSIC_DIR=".count).trimmingCharacters(in: ["\""])
            return value.replacingOccurrences(of: "$HOME", with: home)
        }
        return home + "/Music"
    }

    /// `$XDG_CACHE_HOME/playerd/library.db` (`~/.cache` when unset), or `/var/cache/playerd/library.db`
    /// for root.
    static func defaultLibrary(_ environment: Environment) -> String? {
        if getuid() == 0 {
            return "/var/cache/playerd/library.db"
        }
        if let cache = environment["XDG_CACHE_HOME"] {
            return cache + "/playerd/library.db"
        }
        return environment["HOME"].map { $0 + "/.cache/playerd/library.db" }
    }

    /// `playlists` in the state file's directory: `$XDG_STATE_HOME/playerd/playlists` by default,
    /// `/var/lib/playerd/playlists` for root, `/tmp/demo/playlists` for `--state-file /tmp/demo/state`.
    static func playlistDirectory(besideStateFile state: String) -> String {
        String(state[..<(state.lastIndex(of: "/") ?? state.startIndex)]) + "/playlists"
    }

    /// `stickers.db` in the state file's directory: `$XDG_STATE_HOME/playerd/stickers.db` by default,
    /// `/var/lib/playerd/stickers.db` for root.
    static func stickerFile(besideStateFile state: String) -> String {
        String(state[..<(state.lastIndex(of: "/") ?? state.startIndex)]) + "/stickers.db"
    }

    /// The bounds on radio streams the `--stream-*` options set; each must be a positive number.
    static func streamLimits(_ options: CommandLineOptions) throws(UsageError) -> StreamLimits {
        var limits = StreamLimits()
        func number(_ name: String, upTo maximum: Double) throws(UsageError) -> Double? {
            guard let text = options[name] else { return nil }
            guard let value = Double(text), value.isFinite, value > 0, value <= maximum else {
                throw UsageError("invalid --\(name) \"\(text)\": expected a number above 0, at most \(Int(maximum))")
            }
            return value
        }
        if let kib = try number("stream-buffer", upTo: 1_048_576) { limits.bufferBytes = Int(kib * 1024) }
        if let kib = try number("stream-prebuffer", upTo: 1_048_576) { limits.prebufferBytes = Int(kib * 1024) }
        if let seconds = try number("stream-timeout", upTo: 86400) {
            limits.firstAudioSeconds = seconds
            limits.connectSeconds = min(limits.connectSeconds, seconds)
        }
        if let seconds = try number("stream-stall", upTo: 86400) { limits.stallSeconds = seconds }
        if let seconds = try number("stream-reconnect", upTo: 86400 * 365) { limits.reconnectSeconds = seconds }
        if let count = try number("stream-redirects", upTo: 100) { limits.maxRedirects = Int(count) }
        if let kib = try number("stream-header-limit", upTo: 1024) { limits.maxHeaderBytes = Int(kib * 1024) }
        // What plays first must fit in what is held.
        limits.prebufferBytes = min(limits.prebufferBytes, limits.bufferBytes)
        return limits
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd + "/" + path
    }
}
