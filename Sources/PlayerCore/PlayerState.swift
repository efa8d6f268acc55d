import Audio

/// The four states a player can be in, by name: what transition tables and messages speak of.
public enum PlayerStateKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A song is being opened: decoder, then output.
    case prepare
    /// Audio is flowing to the output.
    case play
    /// A song is open, the output is held (or released), nothing flows.
    case pause
    /// Nothing is open: no decoder, no device.
    case stop

    /// The word for status lines and messages: "playing", "paused" ...
    public var description: String {
        switch self {
        case .prepare: "preparing"
        case .play: "playing"
        case .pause: "paused"
        case .stop: "stopped"
        }
    }
}

/// Why a song is being prepared, which decides what happens to audio still in the output's buffer.
public enum PrepareReason: Sendable, Hashable {
    /// The listener asked for another song or position: what is buffered is dropped at once.
    case request
    /// The previous song ended by itself: its buffered tail plays out, so songs join without a gap.
    case songBoundary
}

/// Nothing is open. The sound card is free for other programs.
public struct StopState: Sendable, Hashable {
    /// Creates the stopped state.
    public init() {}
}

/// A song is being opened; once its decoder and the output are ready the player plays (or pauses).
public struct PrepareState: Sendable, Hashable {
    /// The queue entry being opened.
    public var entry: QueueEntry
    /// Where in the song to start, in nanoseconds from its beginning.
    public var startOffset: Int64
    /// Whether the player lands in pause rather than play once the song is open.
    public var startsPaused: Bool
    /// What happens to audio already buffered.
    public var reason: PrepareReason

    /// Creates a prepare state for `entry`.
    public init(entry: QueueEntry, startOffset: Int64 = 0, startsPaused: Bool = false, reason: PrepareReason = .request)
    {
        self.entry = entry
        self.startOffset = startOffset
        self.startsPaused = startsPaused
        self.reason = reason
    }
}

/// What is known of a song once its decoder is open.
public struct OpenSong: Sendable, Hashable {
    /// The queue entry playing.
    public var entry: QueueEntry
    /// The decoder's output format.
    public var format: AudioFormat
    /// The song's length in frames, when known.
    public var lengthFrames: Int?

    /// Creates the description of an open song.
    public init(entry: QueueEntry, format: AudioFormat, lengthFrames: Int?) {
        self.entry = entry
        self.format = format
        self.lengthFrames = lengthFrames
    }
}

/// Audio flows from the song's decoder to the output.
public struct PlayState: Sendable, Hashable {
    /// The song playing.
    public var song: OpenSong

    /// Creates the playing state for an open song.
    public init(song: OpenSong) {
        self.song = song
    }
}

/// The song stays open at its position; the output is paused, or released when so configured.
public struct PauseState: Sendable, Hashable {
    /// The song paused.
    public var song: OpenSong
    /// When a timed pause ends by itself (clock nanoseconds), or nil for a pause without end.
    public var resumesAt: Int64?
    /// True when the device was released on pausing (release-on-pause) and must be reopened.
    public var releasedOutput: Bool

    /// Creates the paused state.
    public init(song: OpenSong, resumesAt: Int64? = nil, releasedOutput: Bool = false) {
        self.song = song
        self.resumesAt = resumesAt
        self.releasedOutput = releasedOutput
    }
}

/// The player's current state: exactly one of the four structs, each carrying only what means
/// something in it.
public enum PlayerState: Sendable, Hashable, CustomStringConvertible {
    /// Nothing open.
    case stop(StopState)
    /// A song being opened.
    case prepare(PrepareState)
    /// A song playing.
    case play(PlayState)
    /// A song paused.
    case pause(PauseState)

    /// The state's name.
    public var kind: PlayerStateKind {
        switch self {
        case .stop: .stop
        case .prepare: .prepare
        case .play: .play
        case .pause: .pause
        }
    }

    /// The queue entry the state is about, if any.
    public var entry: QueueEntry? {
        switch self {
        case .stop: nil
        case .prepare(let state): state.entry
        case .play(let state): state.song.entry
        case .pause(let state): state.song.entry
        }
    }

    /// The open song, in play and pause.
    public var song: OpenSong? {
        switch self {
        case .play(let state): state.song
        case .pause(let state): state.song
        case .stop, .prepare: nil
        }
    }

    public var description: String { self.kind.description }
}
