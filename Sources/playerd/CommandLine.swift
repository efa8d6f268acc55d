// playerd's command line. A daemon parses its arguments once, at start, and then runs for weeks, so
// this is a small table and a loop rather than swift-argument-parser: that library's reflection-based
// parsing pulled about 1.3 MB of code pages into the daemon's resident memory for good (measured with
// /proc/PID/pagemap), a tenth of the idle daemon. playerctl, a short-lived client, keeps using it.

import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// One option: `--name VALUE` (or `--name=VALUE`), or a flag `--name`, and the environment variable
/// that sets it when the command line does not.
struct OptionSpec {
    let name: String
    /// The value's placeholder in the help, or nil for a flag.
    let value: String?
    let environment: String
    let help: String
    /// Whether it may be given more than once (every value is kept).
    var repeatable = false
    /// What separates a repeatable option's values in its environment variable; nil for white space.
    var environmentSeparator: Character?
}

/// What the command line and the environment asked for; nil where neither said anything.
struct CommandLineOptions {
    static let specs = [
        OptionSpec(name: "socket", value: "path", environment: "PLAYERD_SOCKET", help: "The control socket."),
        OptionSpec(
            name: "socket-mode", value: "mode", environment: "PLAYERD_SOCKET_MODE",
            help: "The socket file's mode, in octal (default 600)."),
        OptionSpec(
            name: "output", value: "output", environment: "PLAYERD_OUTPUT",
            help:
                "Where to play (default alsa); repeatable: every output plays at once, the first enabled one sets the pace. Attributes after the spec: name=NAME, enabled=no (env: several, separated by ;).",
            repeatable: true, environmentSeparator: ";"),
        OptionSpec(
            name: "mixer", value: "kind", environment: "PLAYERD_MIXER",
            help:
                "What sets the volume: software (the default), hardware[:CONTROL] (the sound card's mixer; CONTROL defaults to PCM, then Master, then the first with a playback volume) or none."
        ),
        OptionSpec(
            name: "mixer-device", value: "device", environment: "PLAYERD_MIXER_DEVICE",
            help:
                "The ALSA mixer device for --mixer hardware (default: the card of the first alsa output, else default)."
        ),
        OptionSpec(
            name: "music-dir", value: "path", environment: "PLAYERD_MUSIC_DIR",
            help:
                "The music library's root, where relative paths resolve (default: XDG_MUSIC_DIR or ~/Music; /var/lib/playerd/music for root); one that cannot be read is logged at start."
        ),
        OptionSpec(
            name: "library", value: "path", environment: "PLAYERD_LIBRARY",
            help:
                "The library's database (default: $XDG_CACHE_HOME/playerd/library.db; /var/cache/playerd/library.db for root); `none` turns the library off."
        ),
        OptionSpec(
            name: "playlist-dir", value: "path", environment: "PLAYERD_PLAYLIST_DIR",
            help:
                "Where stored playlists (NAME.m3u) live (default: `playlists` beside the state file, none with `--state-file none`); `none` for none."
        ),
        OptionSpec(
            name: "sticker-file", value: "path", environment: "PLAYERD_STICKER_FILE",
            help:
                "The sticker database, MPD's sticker_file (default: stickers.db beside the state file, none with `--state-file none`); `none` for none."
        ),
        OptionSpec(
            name: "no-play-statistics", value: nil, environment: "PLAYERD_NO_PLAY_STATISTICS",
            help: "Keep no play statistics (the playCount, skipCount, lastPlayed, lastSkipped stickers) (env value 1)."),
        OptionSpec(
            name: "password-file", value: "path", environment: "PLAYERD_PASSWORD_FILE",
            help:
                "Passwords clients may send, one PASSWORD@PERMISSIONS a line (read, add, player, control, admin); the file must not be open to other users."
        ),
        OptionSpec(
            name: "listen", value: "address", environment: "PLAYERD_LISTEN",
            help:
                "Accept clients here too; repeatable: a socket path, @abstract, HOST:PORT, [IPv6]:PORT or any:PORT (env: several, separated by spaces).",
            repeatable: true),
        OptionSpec(
            name: "http", value: "address", environment: "PLAYERD_HTTP",
            help:
                "Serve the web remote (a page and a JSON API) here; repeatable: HOST:PORT, [IPv6]:PORT, any:PORT (or :PORT) or a socket path (off unless given; clients get what network clients get) (env: several, separated by spaces).",
            repeatable: true),
        OptionSpec(
            name: "default-permissions", value: "list", environment: "PLAYERD_DEFAULT_PERMISSIONS",
            help:
                "What network clients (and other users on an abstract socket) may do before `password`: a list of read, add, player, control, admin, or none (default: all without --password-file, none with it)."
        ),
        OptionSpec(
            name: "connection-timeout", value: "seconds", environment: "PLAYERD_CONNECTION_TIMEOUT",
            help: "Disconnect a network client silent this long outside idle (default 60)."),
        OptionSpec(
            name: "state-file", value: "path", environment: "PLAYERD_STATE_FILE",
            help:
                "The state file: queue, position, modes (default: $XDG_STATE_HOME/playerd/state; /var/lib/playerd/state for root); `none` keeps no state."
        ),
        OptionSpec(
            name: "max-clients", value: "count", environment: "PLAYERD_MAX_CLIENTS",
            help: "Clients connected at once (default 64)."),
        OptionSpec(
            name: "max-queue-length", value: "count", environment: "PLAYERD_MAX_QUEUE_LENGTH",
            help: "Songs the queue holds at most; also where adding a directory stops (default 1000000)."),
        OptionSpec(
            name: "stream-buffer", value: "KiB", environment: "PLAYERD_STREAM_BUFFER",
            help: "Of a radio stream, hold at most this much ahead of what plays (default 1024)."),
        OptionSpec(
            name: "stream-prebuffer", value: "KiB", environment: "PLAYERD_STREAM_PREBUFFER",
            help:
                "Of a radio stream, have this much before it starts playing, and again after a reconnection (default 16)."
        ),
        OptionSpec(
            name: "stream-timeout", value: "seconds", environment: "PLAYERD_STREAM_TIMEOUT",
            help: "Give up a station that has not sent its first audio after this long (default 15)."),
        OptionSpec(
            name: "stream-stall", value: "seconds", environment: "PLAYERD_STREAM_STALL",
            help: "Drop and remake a station's connection that sends nothing for this long (default 10)."),
        OptionSpec(
            name: "stream-reconnect", value: "seconds", environment: "PLAYERD_STREAM_RECONNECT",
            help: "Keep reconnecting a station that dropped for this long before giving it up (default 60)."),
        OptionSpec(
            name: "stream-redirects", value: "count", environment: "PLAYERD_STREAM_REDIRECTS",
            help: "Follow at most this many HTTP redirects to a station or a station list (default 5)."),
        OptionSpec(
            name: "stream-header-limit", value: "KiB", environment: "PLAYERD_STREAM_HEADER_LIMIT",
            help: "Refuse a station whose HTTP response head is larger than this (default 16)."),
        OptionSpec(
            name: "release-on-pause", value: nil, environment: "PLAYERD_RELEASE_ON_PAUSE",
            help: "Release the sound device while paused (env value 1)."),
        OptionSpec(
            name: "replaygain-preamp", value: "dB", environment: "PLAYERD_REPLAYGAIN_PREAMP",
            help: "Added to every stored ReplayGain value, in dB (default 0)."),
        OptionSpec(
            name: "replaygain-missing-preamp", value: "dB", environment: "PLAYERD_REPLAYGAIN_MISSING_PREAMP",
            help: "The gain, in dB, of songs that store no ReplayGain value while ReplayGain is on (default 0)."),
        OptionSpec(
            name: "replaygain-limit", value: "yes|no", environment: "PLAYERD_REPLAYGAIN_LIMIT",
            help: "Lower a ReplayGain value that would clip the song's stored peak (default yes)."),
        OptionSpec(
            name: "resume-playing", value: nil, environment: "PLAYERD_RESUME",
            help: "Start playing a saved state that was playing, instead of paused at its position (env value 1)."),
        OptionSpec(
            name: "mpris", value: "on|off", environment: "PLAYERD_MPRIS",
            help: "Export MPRIS on the session bus, for the desktop's media keys, widgets and playerctl (default on)."),
        OptionSpec(
            name: "log-level", value: "level", environment: "PLAYERD_LOG_LEVEL",
            help: "trace, debug, info, notice, warning, error or critical (default info)."),
    ]

    private var values: [String: String] = [:]
    private var repeated: [String: [String]] = [:]
    private(set) var wantsHelp = false

    /// Reads `arguments` (without the program name), then fills what they left out from `environment`.
    init(arguments: [String], environment: Environment) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                self.wantsHelp = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError("unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = Self.specs.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'")
            }
            let value: String
            if spec.value == nil {
                guard inlineValue == nil else { throw UsageError("'--\(name)' takes no value") }
                value = "1"
            } else if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError("missing value for '--\(name)'") }
                value = arguments[index]
                index += 1
            }
            self.values[name] = value
            if spec.repeatable {
                self.repeated[name, default: []].append(value)
            }
        }
        for spec in Self.specs where self.values[spec.name] == nil {
            if let value = environment[spec.environment] {
                self.values[spec.name] = value
                if spec.repeatable {
                    let values =
                        if let separator = spec.environmentSeparator {
                            value.split(separator: separator).map { $0.trimmingWhiteSpace() }.filter { !$0.isEmpty }
                        } else {
                            value.split(whereSeparator: \.isWhitespace).map(String.init)
                        }
                    self.repeated[spec.name] = values
                }
            }
        }
    }

    subscript(name: String) -> String? { self.values[name] }

    /// Every value of a repeatable option, in order.
    func all(_ name: String) -> [String] { self.repeated[name] ?? [] }

    /// A flag set on the command line, or by its environment variable set to 1.
    func flag(_ name: String) -> Bool { self.values[name] == "1" }

    static var help: String {
        var text = """
            OVERVIEW: The playerd music daemon: plays MP3, FLAC, Ogg Vorbis and Opus through ALSA, controlled over an MPD-protocol socket.

            Every option can also be set through its environment variable, which the command line overrides.
            Outputs: \(OutputSpec.validForms), each optionally followed by \(ConfiguredOutput.attributeForms).

            USAGE: playerd [options]

            OPTIONS:

            """
        for spec in Self.specs {
            let left = "  --\(spec.name)" + (spec.value.map { " <\($0)>" } ?? "")
            text += left + "\n      " + spec.help.dropLast() + " (env " + spec.environment + ").\n"
        }
        text += "  -h, --help\n      Show this help.\n"
        return text
    }
}

/// A command line that cannot be used as given; playerd prints it with a hint and exits 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
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

extension Substring {
    /// The text without the white space around it.
    fileprivate func trimmingWhiteSpace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
