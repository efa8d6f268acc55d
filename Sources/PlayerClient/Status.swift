/// What the player is doing: play, pause or stop, with MPD's names.
public enum PlaybackState: String, Sendable, Hashable, CaseIterable {
    /// A song is playing.
    case play
    /// A song is paused.
    case pause
    /// Nothing is playing.
    case stop
}

/// The answer to `status`, decoded. Optional fields are `nil` where the server left them out.
public struct Status: Sendable, Hashable {
    /// What happens after the current song, the `single` option.
    public enum Single: String, Sendable, Hashable, CaseIterable {
        /// Playback goes on to the next song.
        case off = "0"
        /// Playback stops after the current song (or repeats it with `repeat` on).
        case on = "1"
        /// Like `on` for one song, then the option turns itself off.
        case oneshot
    }

    /// playerd's sleep timer: when playback stops by itself.
    public enum SleepTimer: Sendable, Hashable {
        /// After this many seconds.
        case after(Double)
        /// At the end of the current song.
        case endOfSong
    }

    /// Playing, paused or stopped.
    public var state: PlaybackState
    /// The current song's 0-based queue position.
    public var song: Int?
    /// The current song's queue id.
    public var songID: Int?
    /// The next song's 0-based queue position.
    public var nextSong: Int?
    /// The next song's queue id.
    public var nextSongID: Int?
    /// Songs in the queue.
    public var playlistLength: Int
    /// The volume from 0 to 100; `nil` when the server has no mixer.
    public var volume: Int?
    /// Whether the queue starts again after its last song.
    public var `repeat`: Bool
    /// Whether songs play in a shuffled order.
    public var random: Bool
    /// The `single` option.
    public var single: Single
    /// Whether songs leave the queue once played.
    public var consume: Bool
    /// Seconds into the current song.
    public var elapsed: Double?
    /// The current song's length in seconds.
    public var duration: Double?
    /// The current bitrate in kbit/s.
    public var bitrate: Int?
    /// The stream's format as the server spells it, `44100:16:2` (`f` for float samples).
    public var audio: String?
    /// The last playback error, until it is cleared.
    public var error: String?
    /// Seconds until a timed pause ends by itself (playerd's `resumein`); nil when none runs.
    public var resumesIn: Double?
    /// The sleep timer (playerd's `sleeptimer`); nil when none is set.
    public var sleepTimer: SleepTimer?

    /// Creates a status from its parts; everything not given is unknown, off or empty.
    public init(
        state: PlaybackState, song: Int? = nil, songID: Int? = nil, nextSong: Int? = nil, nextSongID: Int? = nil,
        playlistLength: Int = 0, volume: Int? = nil, repeat: Bool = false, random: Bool = false,
        single: Single = .off, consume: Bool = false, elapsed: Double? = nil, duration: Double? = nil,
        bitrate: Int? = nil, audio: String? = nil, error: String? = nil, resumesIn: Double? = nil,
        sleepTimer: SleepTimer? = nil
    ) {
        self.state = state
        self.song = song
        self.songID = songID
        self.nextSong = nextSong
        self.nextSongID = nextSongID
        self.playlistLength = playlistLength
        self.volume = volume
        self.repeat = `repeat`
        self.random = random
        self.single = single
        self.consume = consume
        self.elapsed = elapsed
        self.duration = duration
        self.bitrate = bitrate
        self.audio = audio
        self.error = error
        self.resumesIn = resumesIn
        self.sleepTimer = sleepTimer
    }

    /// Decodes `status`'s fields. Keys it does not know are skipped; a known key with a value it cannot
    /// read, or no `state`, is `ClientError.malformed`.
    public init(fields: [(key: String, value: String)]) throws(ClientError) {
        self.init(state: .stop)
        var decodedState: PlaybackState?
        // Servers older than MPD 0.20 only send `time: elapsed:total` in whole seconds.
        var time: (elapsed: Double, total: Double)?
        for (key, value) in fields {
            switch key {
            case "state":
                guard let parsed = PlaybackState(rawValue: value) else {
                    throw .malformed("state: \(value)")
                }
                decodedState = parsed
            case "song": self.song = try integer(key, value)
            case "songid": self.songID = try integer(key, value)
            case "nextsong": self.nextSong = try integer(key, value)
            case "nextsongid": self.nextSongID = try integer(key, value)
            case "playlistlength": self.playlistLength = try integer(key, value)
            case "volume":
                // MPD said -1 for "no mixer" before it learnt to leave the key out.
                let volume = try integer(key, value)
                self.volume = volume < 0 ? nil : volume
            case "repeat": self.repeat = try boolean(key, value)
            case "random": self.random = try boolean(key, value)
            case "single":
                guard let single = Single(rawValue: value) else {
                    throw .malformed("single: \(value)")
                }
                self.single = single
            // MPD 0.24 adds `consume: oneshot`, which is on for now.
            case "consume": self.consume = value == "oneshot" ? true : try boolean(key, value)
            case "elapsed": self.elapsed = try seconds(key, value)
            case "duration": self.duration = try seconds(key, value)
            case "time":
                let parts = value.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let elapsed = Double(parts[0]), let total = Double(parts[1]) else {
                    throw .malformed("time: \(value)")
                }
                time = (elapsed, total)
            case "bitrate": self.bitrate = try integer(key, value)
            case "audio": self.audio = value
            case "error": self.error = value
            case "resumein": self.resumesIn = try seconds(key, value)
            case "sleeptimer": self.sleepTimer = value == "end" ? .endOfSong : .after(try seconds(key, value))
            default: break
            }
        }
        guard let decodedState else {
            throw .malformed("status without a state")
        }
        self.state = decodedState
        if let time {
            self.elapsed = self.elapsed ?? time.elapsed
            self.duration = self.duration ?? (time.total > 0 ? time.total : nil)
        }
    }
}

/// A field's whole number, or `malformed` naming the field.
func integer(_ key: String, _ value: String) throws(ClientError) -> Int {
    guard let number = Int(value) else {
        throw .malformed("\(key): \(value)")
    }
    return number
}

/// A field's `0` or `1`, MPD's booleans.
func boolean(_ key: String, _ value: String) throws(ClientError) -> Bool {
    switch value {
    case "0": return false
    case "1": return true
    default: throw .malformed("\(key): \(value)")
    }
}

/// A field's seconds, `12.345`.
func seconds(_ key: String, _ value: String) throws(ClientError) -> Double {
    guard let number = Double(value), number.isFinite else {
        throw .malformed("\(key): \(value)")
    }
    return number
}
