import Audio
import MusicTags
import StreamInput

/// What the player is doing, as a value any thread may hold: the engine publishes one after every
/// change and every period it plays.
public struct PlayerStatus: Sendable, Equatable {
    /// The state's name.
    public var state: PlayerStateKind = .stop
    /// The current song: the one playing, paused or being prepared, or the queue's current one.
    public var entry: QueueEntry?
    /// The current song's queue position.
    public var position: Int?
    /// What plays after the current song ends by itself, if anything.
    public var nextEntry: QueueEntry?
    /// The next song's queue position.
    public var nextPosition: Int?
    /// Songs in the queue.
    public var queueLength = 0
    /// The queue's version: it changes whenever the queue does (MPD's `playlist`).
    public var queueVersion = 0
    /// Repeat mode.
    public var repeatMode = false
    /// Random mode.
    public var random = false
    /// Single mode.
    public var single: SingleMode = .off
    /// Consume mode.
    public var consume = false
    /// The volume, 0 to 100; nil when there is no mixer to read.
    public var volume: Int? = 100
    /// The ReplayGain mode.
    public var replayGainMode: ReplayGainMode = .off
    /// Crossfade and MixRamp settings.
    public var crossfade = CrossfadeSettings()
    /// True while muted.
    public var isMuted = false
    /// The open song's PCM format.
    public var format: AudioFormat?
    /// The open song's length in frames, when known.
    public var lengthFrames: Int?
    /// The bitrate of the frame last decoded, kbit/s.
    public var bitrate = 0
    /// Frames of the current song heard when the status was sampled.
    public var heardFrames = 0
    /// Frames of the current song decoded and handed to the output: nothing past them can be heard.
    public var writtenFrames = 0
    /// When the status was sampled, clock nanoseconds.
    public var sampledAt: Int64 = 0
    /// Nanoseconds of audio handed to the outputs since the engine started, every song counted (MPD's
    /// `playtime` in `stats`): it only grows.
    public var playedNanoseconds: Int64 = 0
    /// The last playback error, until cleared.
    public var error: String?
    /// The station of the current song, when it is a network stream (being connected to, or playing).
    public var stream: StreamStatus?
    /// The sleep timer.
    public var sleepTimer: SleepTimer = .off
    /// When a timed pause ends by itself.
    public var resumesAt: Int64?
    /// Counts seeks, so that observers see one even when nothing else changed.
    public var seekCount = 0
    /// Counts songs that followed an ended one (`PlayerContext.songsFollowed`), so that observers see
    /// the same song starting again.
    public var songsFollowed = 0
    /// Counts output switches that opened or closed the output's mixer: MPD tells clients `mixer` with
    /// such a switch, in the same change as `output`.
    public var mixerSwitches = 0
    /// The outputs, in order.
    public var outputs: [OutputStatus] = []

    /// Creates the status of a stopped player with an empty queue.
    public init() {}

    /// Frames of the current song heard at clock time `now`: while playing, the sample moves on at the
    /// stream's rate, up to what has been written.
    public func heardFrames(at now: Int64) -> Int {
        guard self.state == .play, let format = self.format else { return self.heardFrames }
        let moved = format.frames(inNanoseconds: max(0, now - self.sampledAt))
        return min(self.writtenFrames, self.heardFrames + moved)
    }

    /// Seconds of the current song heard at clock time `now`.
    public func elapsed(at now: Int64) -> Double {
        guard let format = self.format else { return 0 }
        return Double(self.heardFrames(at: now)) / Double(format.sampleRate)
    }

    /// The current song's length in seconds, when known.
    public var duration: Double? {
        guard let format = self.format, let lengthFrames = self.lengthFrames else { return nil }
        return Double(lengthFrames) / Double(format.sampleRate)
    }
}

/// What changed, in MPD's idle subsystems.
public struct PlayerChanges: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Creates a set from raw bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Play state, current song, position jumps (seek), errors.
    public static let player = PlayerChanges(rawValue: 1 << 0)
    /// Volume or mute.
    public static let mixer = PlayerChanges(rawValue: 1 << 1)
    /// The queue's contents.
    public static let playlist = PlayerChanges(rawValue: 1 << 2)
    /// Repeat, random, single, consume, sleep timer.
    public static let options = PlayerChanges(rawValue: 1 << 3)
    /// An output switched on or off, failing or back, or starting to drop frames.
    public static let output = PlayerChanges(rawValue: 1 << 4)

    /// The subsystems that differ between two statuses.
    public static func between(_ old: PlayerStatus, _ new: PlayerStatus) -> PlayerChanges {
        var changes: PlayerChanges = []
        if old.state != new.state || !QueueEntry.sameSong(old.entry, new.entry) || old.error != new.error
            || old.seekCount != new.seekCount || old.songsFollowed != new.songsFollowed
            || old.resumesAt != new.resumesAt || old.stream != new.stream
        {
            changes.insert(.player)
        }
        if old.volume != new.volume || old.isMuted != new.isMuted || old.mixerSwitches != new.mixerSwitches {
            changes.insert(.mixer)
        }
        if old.queueVersion != new.queueVersion {
            changes.insert(.playlist)
        }
        if old.repeatMode != new.repeatMode || old.random != new.random || old.single != new.single
            || old.consume != new.consume || old.sleepTimer != new.sleepTimer
            || old.replayGainMode != new.replayGainMode
        {
            changes.insert(.options)
        }
        return changes.union(Self.between(outputs: old.outputs, new.outputs))
    }

    /// `.output` when an output was switched, failed or recovered, or its problem or first dropped
    /// frames came or went between two lists of outputs; else nothing.
    static func between(outputs old: [OutputStatus], _ new: [OutputStatus]) -> PlayerChanges {
        if old.count != new.count || zip(old, new).contains(where: { $0.differsNoticeably(from: $1) }) {
            return .output
        }
        return []
    }
}

/// What a station says of itself while it plays: its name, the title it announces (ICY), the tags
/// its stream carries, and what is wrong while it is being reconnected.
public struct StreamStatus: Sendable, Equatable {
    /// The station's name (`icy-name`).
    public var name: String?
    /// The title it announces now (ICY `StreamTitle`).
    public var title: String?
    /// Its genre (`icy-genre`).
    public var genre: String?
    /// The tags its stream carries (an Ogg link's comments).
    public var tags: Tags
    /// While the connection is being made again: what happened, for `status`'s error line.
    public var problem: String?

    /// The status of the station at `url` from what it reports.
    public init(url: String, info: StationInfo, tags: Tags = Tags()) {
        self.name = info.name
        self.title = info.title
        self.genre = info.genre
        self.tags = tags
        if case .reconnecting(let attempt, let reason) = info.state {
            self.problem = "\(url): \(reason); reconnecting (attempt \(attempt))"
        }
    }

    /// Whether `other` announces the same name, title and tags (whatever its problem).
    public func hasSameTags(as other: StreamStatus?) -> Bool {
        guard let other else { return false }
        return self.name == other.name && self.title == other.title && self.tags == other.tags
    }

    /// The song's tags as clients are shown them: the stream's own, with the station's name and the
    /// announced title over them (MPD's `Name` and `Title`).
    public func songTags(over base: Tags) -> Tags {
        // In MPD's order for a stream: Title, then Name, then the rest.
        var tags = Tags()
        let title = self.title.flatMap { $0.isEmpty ? nil : [$0] } ?? self.tags[.title].nonEmpty ?? base[.title]
        let name = self.name.flatMap { $0.isEmpty ? nil : [$0] } ?? self.tags[.name].nonEmpty ?? base[.name]
        tags[.title] = title
        tags[.name] = name
        for source in [self.tags, base] {
            let missing = Set(source.names.filter { tags[$0].isEmpty })
            for (tag, value) in source.items where missing.contains(tag) {
                tags.append(value, to: tag)
            }
        }
        return tags
    }
}

extension Array {
    /// The array, or nil when it is empty.
    fileprivate var nonEmpty: Self? { self.isEmpty ? nil : self }
}
