import ArgumentParser
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// Controls playerd from the command line: each verb opens the control socket, sends a few MPD
/// commands, prints the answer and exits. It also drives any MPD server for the verbs both know.
@main
struct PlayerCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playerctl",
        abstract: "Control playerd, the music-player daemon (or any MPD server).",
        discussion: """
            Positions in the queue count from 1. Durations read like 90, 2.5, 30s, 1m30s, 20m, 1h, 1:30 \
            or 1:02:03. Exit status: 0 done, 1 the daemon refused (its message is printed), 2 usage error, \
            3 the daemon is not running, 4 a wait timed out. Command lines of the desktop's playerctl \
            (MPRIS: -p, -l, -a, -F, --format, metadata KEY, loop, shuffle, open ...) are handed to it.
            """,
        subcommands: [
            Play.self, Pause.self, PlayPause.self, Stop.self, Next.self, Previous.self, Seek.self,
            Position.self, Volume.self, StatusCommand.self, Metadata.self, QueueCommand.self,
            RepeatCommand.self, RandomCommand.self, SingleCommand.self, ConsumeCommand.self, Wait.self,
            Update.self, Search.self, ListCommand.self, OutputsCommand.self, ReplayGainCommand.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    /// Like mpc, `playerctl` alone says what is playing. (A default subcommand would do it too, but
    /// then a mistyped verb would be reported with the usage of `status`.)
    func run() throws {
        let (status, song) = try statusAndSong(try self.global.connect())
        print(statusText(status, song), terminator: "")
    }

    /// ArgumentParser's own `main` exits 64 on usage errors; playerctl promises 2, and its own exit
    /// statuses for the daemon's refusals (1) and absence (3).
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if DesktopPlayerctl.owns(arguments) {
            printError(DesktopPlayerctl.exec(arguments))
            Glibc.exit(ExitStatus.usage)
        }
        if let message = UnknownSubcommand.message(for: arguments) {
            writeAll(STDERR_FILENO, message)
            Glibc.exit(ExitStatus.usage)
        }
        var command: ParsableCommand
        do {
            command = try PlayerCtl.parseAsRoot()
        } catch {
            PlayerCtl.exitForArgumentError(error)
        }
        do {
            try command.run()
        } catch let error as ClientError {
            Glibc.exit(PlayerCtl.report(error))
        } catch {
            PlayerCtl.exitForArgumentError(error)
        }
        Glibc.exit(0)
    }

    /// Prints a client error the way the exit statuses promise and returns the status.
    static func report(_ error: ClientError) -> Int32 {
        switch error {
        case .notRunning(let path):
            var status = stat()
            if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK {
                // ECONNREFUSED: the file is there, nobody listens (a playerd killed with SIGKILL leaves it).
                printError(
                    "playerd is not running: nobody answers on \(path) (its socket file is left from a playerd that ended without removing it)"
                )
            } else {
                printError("playerd is not running: no socket at \(path)")
            }
            printError(startAdvice(socketPath: path, userID: geteuid()))
            return ExitStatus.notRunning
        case .refused(_, _, let message):
            printError(message)
            return ExitStatus.failed
        default:
            printError(error.description)
            return ExitStatus.failed
        }
    }

    private static func exitForArgumentError(_ error: any Error) -> Never {
        if PlayerCtl.exitCode(for: error) == .validationFailure {
            writeAll(STDERR_FILENO, PlayerCtl.fullMessage(for: error) + "\n")
            Glibc.exit(ExitStatus.usage)
        }
        PlayerCtl.exit(withError: error)
    }
}

/// The exit statuses playerctl documents.
enum ExitStatus {
    /// The daemon refused a command, or the conversation with it failed.
    static let failed: Int32 = 1
    /// The command line is wrong.
    static let usage: Int32 = 2
    /// Nothing listens on the control socket.
    static let notRunning: Int32 = 3
    /// `wait` gave up: its --timeout passed first.
    static let timedOut: Int32 = 4
}

/// The options every verb takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The control socket (default: $PLAYERD_SOCKET, else $XDG_RUNTIME_DIR/playerd/socket).",
            valueName: "path"),
        completion: .file())
    var socket: String?

    /// The socket to talk to: --socket, else the default.
    var socketPath: String { self.socket ?? defaultSocketPath() }

    /// Connects to the daemon.
    func connect() throws(ClientError) -> MPDConnection {
        try MPDConnection(socketPath: self.socketPath)
    }
}

/// Writes one line to standard error, prefixed with the program's name.
func printError(_ message: String) {
    writeAll(STDERR_FILENO, "playerctl: \(message)\n")
}

/// Writes all of `text` to a file descriptor, bypassing stdio: error messages and the live status line
/// must appear at once, and stdio's `stdout` is a global that strict concurrency cannot vouch for.
func writeAll(_ descriptor: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR {
                continue
            }
            guard written > 0 else {
                // Nobody reads any more (a closed pipe): there is nowhere to report it either.
                return
            }
            offset += written
        }
    }
}

/// A duration option's value: seconds, read by `parseDuration` so that the error says what is accepted.
@Sendable
func durationOption(_ text: String) throws -> Double {
    do {
        return try parseDuration(text)
    } catch {
        throw ValidationError(error.description)
    }
}
