import Audio
import PlayerCore

/// How the daemon runs: where it listens, what it plays on, its limits.
public struct DaemonConfiguration: Sendable {
    /// The control socket's path.
    public var socketPath: String
    /// The socket file's permission bits (0600 by default: only the daemon's user may connect).
    public var socketMode: UInt32 = 0o600
    /// The output the player plays on.
    public var output: OutputSpec = .alsa(device: "default")
    /// Where relative paths in `add` resolve; nil when none is configured.
    public var musicDirectory: String?
    /// The library's database file; nil turns the library off (`--library none`).
    public var libraryPath: String?
    /// Where stored playlists (`NAME.m3u`) live; nil when there is none.
    public var playlistDirectory: String?
    /// The state file (queue, position, modes); used by the persistence layer.
    public var stateFile: String?
    /// Clients connected at once; the next one gets an ACK and is disconnected.
    public var maximumClients = 64
    /// Songs the queue holds at most (MPD's `max_playlist_length`); a directory walk stops there too.
    public var maximumQueueLength = Queue.defaultMaximumLength
    /// The longest request line, in bytes.
    public var maximumLineLength = 65536
    /// Whether pausing releases the sound device.
    public var releasesOutputOnPause = false
    /// The passwords clients may send and what each grants (`--password-file`); nil for none, and
    /// then `password` is always refused, as MPD refuses it with no password configured.
    public var passwords: PasswordFile?

    /// A configuration listening on `socketPath`, everything else default.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }
}
