import ArgumentParser
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// `play FILE...` replaces the queue and starts it; `play` alone starts or resumes. Either way it
/// returns once a song plays, and fails, naming each song's reason, when none can.
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play files, directories or .m3u playlists, replacing the queue; alone, start or resume.",
        discussion: """
            With files, nothing changes unless one of them can play: a path that cannot be queued, or \
            files none of which can play (MP3, FLAC, Ogg Vorbis, Opus), leave the queue and the player as they were. Exits 0 \
            once a song plays, 1 with each song's reason when none can. --search and --album play from \
            the library instead (nothing changes, and the exit status is 1, when nothing matches).
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "What to play: paths (relative to the current directory) or URLs.", completion: .file())
    var files: [String] = []

    @OptionGroup var library: LibraryChoice

    func validate() throws {
        try self.library.validate(withFiles: !self.files.isEmpty)
    }

    func run() throws {
        let connection = try self.global.connect()
        if let uris = try self.library.songs(connection) {
            let queued = try playLibrarySongs(connection, uris)
            try waitUntilPlaying(connection)
            print("playing \(counted(queued, "song")) from the library")
            return
        }
        if self.files.isEmpty {
            _ = try connection.command("play")
        } else {
            let directory = currentDirectory()
            let paths = self.files.map { absolutePath($0, currentDirectory: directory) }
            do {
                // playerd checks every path and opens songs until one plays before it touches the queue.
                _ = try connection.command("playnow", paths)
            } catch {
                // Another MPD server has no `playnow` (ACK 5): clear, add and play in one list, as mpc does.
                guard case .refused(code: 5, _, _) = error else { throw error }
                _ = try connection.commandList([("clear", [])] + paths.map { ("add", [$0]) } + [("play", ["0"])])
            }
        }
        try waitUntilPlaying(connection)
    }

    /// Returns once a song has been entered; throws `ExitCode(1)` with the player's error when none
    /// could be: every song failed, or no output could play.
    ///
    /// Called right after the server took the request to play, so any error in `status` is new (a
    /// request to play clears the last one, in MPD and playerd alike). On an output that is not paced
    /// (`wav:`, `null:unpaced`) a short queue can be played to its end before the first `status` read,
    /// so a stopped player is read for what it says happened, not taken as a failure.
    private func waitUntilPlaying(_ connection: MPDConnection) throws {
        // A song that opens takes milliseconds; a server still preparing after this long is taken at
        // its word that it plays.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let status = try connection.status()
            switch PlayOutcome(status) {
            case .entered:
                return
            case .failed(let reason):
                printError(reason)
                throw ExitCode(ExitStatus.failed)
            case .preparing:
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return }
                _ = try connection.idle(["player"], timeout: min(left, .seconds(1)))
            }
        }
    }
}

/// What a `status` read after a request to play says became of it.
enum PlayOutcome: Equatable {
    /// A song plays or is paused, or songs were played and the player has stopped since.
    case entered
    /// The player stopped, or paused on an output failure, without playing: the reason to show.
    case failed(String)
    /// The player is still opening a song (playerd: `play` without `audio:`).
    case preparing

    init(_ status: Status) {
        switch status.state {
        case .play where status.audio != nil, .pause where status.error == nil:
            self = .entered
        case .play:
            self = .preparing
        case .pause:
            // Paused with an error: no output could play (playerd keeps the song and its place, as mpd).
            self = .failed(status.error ?? "nothing plays")
        case .stop where status.playlistLength == 0:
            // An error left from before the queue was cleared is not why nothing plays now.
            self = .failed("the queue is empty")
        case .stop where status.error == nil:
            // Stopped with nothing wrong: the queue was played to its end (or single mode stopped after
            // the song) before we looked. A song that cannot be played always leaves an error.
            self = .entered
        case .stop where status.song == nil:
            // The player has moved past the queue's last song: songs were played, and a later one
            // failed. A player that could not enter any song stays on the one that failed last.
            self = .entered
        case .stop:
            self = .failed(status.error ?? "nothing plays")
        }
    }
}

/// `pause`, or a timed pause with `--for`.
struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause; with --for, resume by itself later.")

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("for"), help: ArgumentHelp("Resume after this long.", valueName: "duration"),
        transform: durationOption)
    var duration: Double?

    func run() throws {
        let connection = try self.global.connect()
        if let duration = self.duration {
            _ = try connection.command("pausefor", [protocolSeconds(duration)])
        } else {
            _ = try connection.command("pause", ["1"])
        }
    }
}

/// `play-pause` toggles.
struct PlayPause: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play-pause", abstract: "Pause when playing, play when paused or stopped.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let connection = try self.global.connect()
        if try connection.status().state == .stop {
            _ = try connection.command("play")
        } else {
            // No argument: the server toggles, so a change between our status and this is not undone.
            _ = try connection.command("pause")
        }
    }
}

/// `stop`, or one of the sleep timer's settings.
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop now, or set the sleep timer with --after or --at-end.")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Stop after this long.", valueName: "duration"), transform: durationOption)
    var after: Double?

    @Flag(help: "Stop at the end of the current song.")
    var atEnd = false

    @Flag(help: "Cancel the sleep timer.")
    var cancelTimer = false

    func validate() throws {
        let chosen = [self.after != nil, self.atEnd, self.cancelTimer].filter { $0 }.count
        if chosen > 1 {
            throw ValidationError("--after, --at-end and --cancel-timer exclude each other; give one")
        }
    }

    func run() throws {
        let connection = try self.global.connect()
        if let after = self.after {
            _ = try connection.command("sleeptimer", [protocolSeconds(after)])
        } else if self.atEnd {
            _ = try connection.command("sleeptimer", ["end"])
        } else if self.cancelTimer {
            _ = try connection.command("sleeptimer", ["off"])
        } else {
            _ = try connection.command("stop")
        }
    }
}

/// `next`.
struct Next: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Play the next song in the queue.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = try self.global.connect().command("next")
    }
}

/// `previous`, also `prev`.
struct Previous: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play the previous song in the queue.", aliases: ["prev"])

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = try self.global.connect().command("previous")
    }
}

/// `seek 90`, `seek 1:30`, `seek +10`, `seek -1:00`.
struct Seek: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seek in the current song: to a time, or by +/- a time from where it is.")

    @OptionGroup var global: GlobalOptions

    // `-10` looks like an option to the parser; taking unrecognized words lets it through as a value.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("A time (90, 1:30, 1m30s), or +TIME / -TIME to move by it.", valueName: "time"))
    var time: [String] = []

    func validate() throws {
        _ = try self.target()
    }

    func run() throws {
        _ = try self.global.connect().command("seekcur", [try self.target()])
    }

    // seekcur's argument: seconds, signed when relative.
    private func target() throws -> String {
        let words = withoutTerminator(self.time)
        guard words.count == 1, let text = words.first else {
            throw ValidationError("seek takes one time, like 90, 1:30, +10 or -10")
        }
        var sign = ""
        var magnitude = Substring(text)
        if let first = text.first, first == "+" || first == "-" {
            sign = String(first)
            magnitude = magnitude.dropFirst()
        }
        return sign + protocolSeconds(try durationOption(String(magnitude)))
    }
}

/// `position`.
struct Position: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print how far into the current song playback is.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print seconds with three decimals instead of m:ss.")
    var seconds = false

    func run() throws {
        let elapsed = try self.global.connect().status().elapsed ?? 0
        print(self.seconds ? threeDecimals(elapsed) : formatDuration(elapsed))
    }
}

/// `volume`, `volume 70`, `volume +5`, `volume -5`.
struct Volume: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the volume, set it (0-100), or change it by +N / -N.")

    @OptionGroup var global: GlobalOptions

    // `-5` looks like an option to the parser; taking unrecognized words lets it through as a value.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("70, +5 or -5.", valueName: "level"))
    var level: [String] = []

    func validate() throws {
        _ = try self.request()
    }

    func run() throws {
        let connection = try self.global.connect()
        guard let (command, argument) = try self.request() else {
            print(try connection.status().volume.map { "\($0)%" } ?? "n/a")
            return
        }
        _ = try connection.command(command, [argument])
    }

    // The command to send, none to print the volume.
    private func request() throws -> (String, String)? {
        let words = withoutTerminator(self.level)
        guard let text = words.first else {
            return nil
        }
        let usage = ValidationError("volume takes a level from 0 to 100, or a change from -100 to +100: \(text)")
        guard words.count == 1, let first = text.first else {
            throw usage
        }
        let relative = first == "+" || first == "-"
        let digits = relative ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits),
            value <= 100
        else {
            throw usage
        }
        return relative ? ("volume", text) : ("setvol", String(value))
    }
}

/// The words of an argument that takes unrecognized words, without the `--` that a careful user may
/// put before `-10`: such an argument receives it as a word.
func withoutTerminator(_ words: [String]) -> [String] {
    words.first == "--" ? Array(words.dropFirst()) : words
}

/// The current directory, for turning relative paths into the absolute ones the daemon needs.
func currentDirectory() -> String {
    guard let pointer = getcwd(nil, 0) else {
        // A directory that was deleted under us: relative paths cannot be resolved, so send them as
        // given and let the daemon refuse them.
        return ""
    }
    defer { free(pointer) }
    return String(cString: pointer)
}

/// Seconds with exactly three decimals, `42.125`.
func threeDecimals(_ seconds: Double) -> String {
    let milliseconds = Int((max(0, seconds) * 1000).rounded())
    let fraction = milliseconds % 1000
    let padding = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
    return "\(milliseconds / 1000).\(padding)\(fraction)"
}
