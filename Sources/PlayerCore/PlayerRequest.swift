/// What a listener can ask of the player. Each request is legal in some states and refused with a
/// `PlayerError` naming the request and the state in the others.
public enum PlayerRequest: Sendable, Hashable, CustomStringConvertible {
    /// Start playing the current (or first) song, or resume from pause.
    case play
    /// Play the song at a queue position.
    case playPosition(Int)
    /// Play the song with a queue id.
    case playID(Int)
    /// Pause (MPD's `pause 1`).
    case pause
    /// Resume from pause (MPD's `pause 0`).
    case resume
    /// Pause when playing, resume when paused (MPD's `pause`).
    case togglePause
    /// Stop, releasing the decoder and the device.
    case stop
    /// Skip to the next song in play order.
    case next
    /// Go back to the previous song in play order.
    case previous
    /// Move to `offset` nanoseconds into the current song.
    case seek(offset: Int64)
    /// Move to `offset` nanoseconds into the song at a queue position (MPD's `seek`): a seek within the
    /// current song, or that song prepared from there, playing or paused as the player was.
    case seekPosition(Int, offset: Int64)
    /// As `seekPosition`, for the song with a queue id (MPD's `seekid`).
    case seekID(Int, offset: Int64)
    /// Pause now and resume by itself after `duration` nanoseconds.
    case pauseFor(duration: Int64)
    /// Stop after `duration` nanoseconds.
    case sleepAfter(duration: Int64)
    /// Stop when the current song ends.
    case sleepAtEndOfSong
    /// Cancel the sleep timer.
    case cancelSleep

    /// The request's name in messages: "cannot pause: player is stopped".
    public var name: String {
        switch self {
        case .play, .playPosition, .playID: "play"
        case .pause: "pause"
        case .resume: "resume"
        case .togglePause: "toggle pause"
        case .stop: "stop"
        case .next: "skip to the next song"
        case .previous: "go back to the previous song"
        case .seek, .seekPosition, .seekID: "seek"
        case .pauseFor: "pause for a while"
        case .sleepAfter, .sleepAtEndOfSong: "set a sleep timer"
        case .cancelSleep: "cancel the sleep timer"
        }
    }

    public var description: String { self.name }
}

/// The sleep timer: playback stops at a moment, or at the end of the current song.
public enum SleepTimer: Sendable, Hashable {
    /// No timer.
    case off
    /// Stop when the clock reaches this many nanoseconds.
    case at(Int64)
    /// Stop when the current song ends.
    case endOfSong
}
