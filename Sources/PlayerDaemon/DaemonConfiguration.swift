import Audio
import ControlProtocol
import PlayerCore
import StreamInput

/// How the daemon runs: where it listens, what it plays on, its limits.
public struct DaemonConfiguration: Sendable {
    /// The control socket's path.
    public var socketPath: String
    /// The socket file's permission bits (0600 by default: only the daemon's user may connect).
    public var socketMode: UInt32 = 0o600
    /// The outputs the player plays on, all at once; the first enabled one that works sets the pace.
    public var outputs: [ConfiguredOutput] = [ConfiguredOutput(spec: .alsa(device: "default"))]
    /// Where relative paths in `add` resolve; nil when none is configured.
    public var musicDirectory: String?
    /// The library's database file; nil turns the library off (`--library none`).
    public var libraryPath: String?
    /// Where stored playlists (`NAME.m3u`) live; nil when there is none.
    public var playlistDirectory: String?
    /// The state file (queue, position, modes); used by the persistence layer.
    public var stateFile: String?
    /// The sticker database (`--sticker-file`, MPD's `sticker_file`); nil for none (`sticker` is then
    /// refused, as MPD refuses it without one).
    public var stickerFile: String?
    /// Whether playerd keeps play statistics (`playCount`, `skipCount`, `lastPlayed`, `lastSkipped`) as
    /// stickers; off with `--no-play-statistics`, and nothing without a sticker database.
    public var recordsPlayStatistics = true
    /// Clients connected at once; the next one gets an ACK and is disconnected.
    public var maximumClients = 64
    /// Songs the queue holds at most (MPD's `max_playlist_length`); a directory walk stops there too.
    public var maximumQueueLength = Queue.defaultMaximumLength
    /// Bounds on network streams (internet radio) and the station lists fetched: buffer, prebuffer,
    /// waits, redirects, header and document sizes.
    public var streamLimits = StreamLimits()
    /// The longest request line, in bytes.
    public var maximumLineLength = 65536
    /// What sets the loudness: software volume (the default), a sound card's mixer, or nothing.
    public var mixer: MixerChoice = .software
    /// Whether pausing releases the sound device.
    public var releasesOutputOnPause = false
    /// ReplayGain's preamp, missing-gain preamp and peak limit (`--replaygain-*`); its source is unused:
    /// the mode is the clients' (`replay_gain_mode`).
    public var replayGain = ReplayGain.off
    /// The passwords clients may send and what each grants (`--password-file`); nil for none, and
    /// then `password` is always refused, as MPD refuses it with no password configured.
    public var passwords: PasswordFile?
    /// More places to accept clients (`--listen`), besides the control socket.
    public var listenAddresses: [ListenAddress] = []
    /// What clients that have not sent `password` may do where no socket file's mode vouches for them:
    /// network clients, and other users' on an abstract socket (`--default-permissions`). nil for MPD's
    /// default: everything without a password file, nothing but `password` with one.
    public var defaultPermissions: Permission?
    /// How long a network client may stay silent (outside `idle`) before it is disconnected, as MPD's
    /// `connection_timeout`; local clients have no limit.
    public var networkTimeout: Duration = .seconds(60)

    /// The default permissions in force.
    public var effectiveDefaultPermissions: Permission {
        self.defaultPermissions ?? (self.passwords == nil ? .all : [])
    }

    /// A permission list as `--default-permissions` takes it: MPD's names, or `none`.
    public static func permissions(parsing text: String) throws(PermissionError) -> Permission {
        text == "none" ? [] : try Permission(parsing: text)
    }

    /// A configuration listening on `socketPath`, everything else default.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }
}
