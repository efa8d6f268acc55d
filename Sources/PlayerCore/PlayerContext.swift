import Audio
import StreamInput

/// The player's brain: the current state (exactly one of the four state structs), the queue, volume,
/// timers and the last error. It guards every transition with one table and returns the effects the
/// engine must perform. It does no I/O and knows no threads, so it is tested as a plain value.
public struct PlayerContext: Sendable {
    /// The current state.
    public private(set) var state: PlayerState = .stop(StopState())
    /// The play queue.
    public private(set) var queue: Queue
    /// The volume, 0 to 100: the software volume, or what a mixer outside the engine reads
    /// (`mirrorVolume`); nil when there is none to read (MPD's "No mixer").
    public private(set) var volume: Int? = 100
    /// True while muted: silence at any volume.
    public private(set) var isMuted = false
    /// The sleep timer.
    public private(set) var sleepTimer: SleepTimer = .off
    /// The last playback error (a song that failed, an output that broke), until cleared.
    public private(set) var lastError: String?
    /// Counts the songs that followed one that ended, the same entry again included (repeat on a
    /// one-song queue): MPD tells clients `player` at each, which an unchanged entry would not show.
    public private(set) var songsFollowed = 0
    /// The ReplayGain mode (see `resolvedReplayGain`).
    public var replayGainMode: ReplayGainMode = .off
    /// The preamp, missing-gain preamp and peak limit applied with ReplayGain (its source is ignored).
    public var replayGainSettings = ReplayGain.off
    /// Whether pausing releases the device (and resuming reopens it).
    public var releasesOutputOnPause: Bool
    /// Crossfade and MixRamp (MPD's `crossfade`, `mixrampdb`, `mixrampdelay`): the engine reads them
    /// as each song nears its end.
    public var crossfade = CrossfadeSettings()
    /// The messages of songs that failed one after another since the last one opened or the last
    /// request to play: when every song in the queue has failed, playback stops instead of cycling
    /// through them forever, and the error names them all.
    private var failures: [String] = []

    /// Creates a stopped player with `queue`.
    public init(queue: Queue = Queue(), releasesOutputOnPause: Bool = false) {
        self.queue = queue
        self.releasesOutputOnPause = releasesOutputOnPause
    }

    // MARK: - The transition table

    /// The one table of legal moves. Staying in a state's kind is legal (it only updates the state's
    /// data); playing or pausing needs a prepared song, so neither can follow stop directly.
    public static func isValidNextState(from current: PlayerStateKind, to next: PlayerStateKind) -> Bool {
        switch (current, next) {
        case (.stop, .stop), (.stop, .prepare): true
        case (.stop, .play), (.stop, .pause): false
        case (.prepare, .prepare), (.prepare, .play), (.prepare, .pause), (.prepare, .stop): true
        case (.play, .prepare), (.play, .play), (.play, .pause), (.play, .stop): true
        case (.pause, .prepare), (.pause, .play), (.pause, .pause), (.pause, .stop): true
        }
    }

    /// Whether `next` may follow the current state; no side effects.
    public func canEnter(_ next: PlayerState) -> Bool {
        Self.isValidNextState(from: self.state.kind, to: next.kind)
    }

    /// Moves to `next`: the old state's `willExit(to:)`, the swap, the new state's `didEnter(from:)`.
    /// A move within one kind about the same song only replaces the state's data (a new start offset,
    /// a pause timer) and runs no hooks; preparing another song runs them.
    /// - Returns: the effects the engine must perform, in order.
    /// - Throws: `PlayerError.illegalTransition` for a move the table forbids; nothing changes.
    public mutating func enter(_ next: PlayerState) throws(PlayerError) -> [PlayerEffect] {
        let previous = self.state
        guard self.canEnter(next) else {
            throw .illegalTransition(from: previous.kind, to: next.kind)
        }
        if case .prepare(let prepare) = next {
            // A song starting to play loses its priority, as in MPD.
            self.queue.songStarted(id: prepare.entry.id)
        }
        if previous.kind == next.kind && previous.entry == next.entry {
            self.state = next
            return []
        }
        var effects = previous.hooks.willExit(to: next)
        self.state = next
        effects += next.hooks.didEnter(from: previous)
        return effects
    }

    // MARK: - Requests

    /// Carries out a listener's request at clock time `now` (nanoseconds).
    /// - Returns: the effects the engine must perform.
    /// - Throws: `PlayerError` when the request is not allowed now; nothing changes then.
    public mutating func handle(_ request: PlayerRequest, now: Int64) throws(PlayerError) -> [PlayerEffect] {
        switch request {
        case .play, .playPosition, .playID:
            // As in MPD, asking to play again clears the last error (if the request stands).
            let previousError = self.lastError
            self.lastError = nil
            do {
                return try self.carryOut(request, now: now)
            } catch {
                self.lastError = previousError
                throw error
            }
        case .stop:
            // A stop by hand also ends a sleep timer: it would otherwise stop the next playback.
            let effects = try self.carryOut(request, now: now)
            self.sleepTimer = .off
            return effects
        default:
            return try self.carryOut(request, now: now)
        }
    }

    private mutating func carryOut(_ request: PlayerRequest, now: Int64) throws(PlayerError) -> [PlayerEffect] {
        switch (request, self.state) {
        case (.stop, .stop):
            return []
        case (.stop, _):
            return try self.enter(.stop(StopState()))

        case (.play, .stop):
            guard let position = self.queue.currentPosition ?? self.queue.firstPosition else {
                throw .emptyQueue(request: request.name)
            }
            return try self.prepare(position: position, request: request)
        case (.play, .pause(let pause)), (.resume, .pause(let pause)), (.togglePause, .pause(let pause)):
            return try self.enter(.play(PlayState(song: pause.song)))
        case (.play, .play), (.play, .prepare), (.resume, .play):
            return []

        case (.playPosition(let position), _):
            guard self.queue.entry(at: position) != nil else {
                throw .noSuchSong(request: request.name, detail: "no song at position \(position)")
            }
            return try self.prepare(position: position, request: request)
        case (.playID(let id), _):
            guard let position = self.queue.position(ofID: id) else {
                throw .noSuchSong(request: request.name, detail: "no song with id \(id)")
            }
            return try self.prepare(position: position, request: request)

        case (.pause, .play(let play)), (.togglePause, .play(let play)):
            return try self.enter(.pause(PauseState(song: play.song, releasedOutput: self.releasesOutputOnPause)))
        case (.pause, .pause(var pause)):
            // Pausing by hand during a timed pause cancels its automatic resume.
            guard pause.resumesAt != nil else { return [] }
            pause.resumesAt = nil
            return try self.enter(.pause(pause))
        case (.pause, .prepare(var prepare)), (.resume, .prepare(var prepare)), (.togglePause, .prepare(var prepare)):
            prepare.startsPaused =
                switch request {
                case .pause: true
                case .resume: false
                default: !prepare.startsPaused
                }
            return try self.enter(.prepare(prepare))
        case (.pause, .stop), (.resume, .stop), (.togglePause, .stop):
            // Nothing to pause or resume: MPD answers OK and does nothing.
            return []
        case (.next, .stop), (.previous, .stop),
            (.seek, .stop), (.pauseFor, .stop), (.pauseFor, .prepare), (.sleepAfter, .stop), (.sleepAtEndOfSong, .stop):
            throw .notAllowed(request: request.name, state: self.state.kind)

        case (.next, _):
            guard self.queue.advanceToNext() != nil else {
                return try self.enter(.stop(StopState()))
            }
            return try self.prepareCurrent(request)
        case (.previous, _):
            guard self.queue.returnToPrevious() != nil else {
                throw .noSuchSong(request: request.name, detail: "no song before the current one")
            }
            return try self.prepareCurrent(request)

        case (.seek, _) where self.state.entry.map({ StationStream.isStation($0.path) }) ?? false:
            self.lastError = "Not seekable"
            throw .notSeekable(request: request.name)
        case (.seek(let offset), .prepare(var prepare)):
            guard offset >= 0 else { throw .badArgument(request: request.name, detail: "negative position") }
            prepare.startOffset = offset
            return try self.enter(.prepare(prepare))
        case (.seek(let offset), .play(let play)):
            let offset = try self.clampedSeek(offset, in: play.song, request: request)
            return [.dropOutput, .seekDecoder(offset: offset)]
        case (.seek(let offset), .pause(let pause)):
            let offset = try self.clampedSeek(offset, in: pause.song, request: request)
            return pause.releasedOutput ? [.seekDecoder(offset: offset)] : [.dropOutput, .seekDecoder(offset: offset)]

        case (.seekPosition(let position, let offset), _):
            guard let entry = self.queue.entry(at: position) else {
                throw .noSuchSong(request: request.name, detail: "no song at position \(position)")
            }
            if StationStream.isStation(entry.path) {
                self.lastError = "Not seekable"
                throw .notSeekable(request: request.name)
            }
            return try self.seek(toPosition: position, offset: offset, request: request, now: now)
        case (.seekID(let id, let offset), _):
            guard let position = self.queue.position(ofID: id) else {
                throw .noSuchSong(request: request.name, detail: "no song with id \(id)")
            }
            if let entry = self.queue.entry(at: position), StationStream.isStation(entry.path) {
                self.lastError = "Not seekable"
                throw .notSeekable(request: request.name)
            }
            return try self.seek(toPosition: position, offset: offset, request: request, now: now)

        case (.pauseFor(let duration), .play(let play)):
            guard duration > 0 else {
                throw .badArgument(request: request.name, detail: "the duration must be positive")
            }
            let pause = PauseState(
                song: play.song, resumesAt: now.clampedAdding(duration), releasedOutput: self.releasesOutputOnPause)
            return try self.enter(.pause(pause))
        case (.pauseFor(let duration), .pause(var pause)):
            guard duration > 0 else {
                throw .badArgument(request: request.name, detail: "the duration must be positive")
            }
            pause.resumesAt = now.clampedAdding(duration)
            return try self.enter(.pause(pause))

        case (.sleepAfter(let duration), _):
            guard duration > 0 else {
                throw .badArgument(request: request.name, detail: "the duration must be positive")
            }
            self.sleepTimer = .at(now.clampedAdding(duration))
            return []
        case (.sleepAtEndOfSong, _):
            self.sleepTimer = .endOfSong
            return []
        case (.cancelSleep, _):
            self.sleepTimer = .off
            return []
        }
    }

    /// Prepares the song at `position` to start `offset` nanoseconds in, paused (holding no device
    /// until resumed) or playing: how a restart picks up where the last run left off.
    /// - Throws: `PlayerError.noSuchSong` for a position outside the queue.
    public mutating func restore(position: Int, offset: Int64, paused: Bool) throws(PlayerError) -> [PlayerEffect] {
        let request = "restore the saved position"
        do {
            try self.queue.setCurrent(position: position)
        } catch {
            throw .noSuchSong(request: request, detail: error.description)
        }
        guard let entry = self.queue.current else {
            throw .noSuchSong(request: request, detail: "no song at position \(position)")
        }
        return try self.enter(.prepare(PrepareState(entry: entry, startOffset: max(0, offset), startsPaused: paused)))
    }

    /// Sets the software volume.
    /// - Throws: `PlayerError.badArgument` outside 0...100.
    public mutating func setVolume(_ volume: Int) throws(PlayerError) {
        guard (0...100).contains(volume) else {
            throw .badArgument(request: "set the volume", detail: "the volume must be between 0 and 100")
        }
        self.volume = volume
    }

    /// Records the volume a mixer outside the engine reads (a sound card's, after it was set or
    /// changed by another program), or nil when there is no mixer to read.
    public mutating func mirrorVolume(_ volume: Int?) {
        self.volume = volume.map { min(max($0, 0), 100) }
    }

    /// Mutes or unmutes.
    public mutating func setMuted(_ muted: Bool) {
        self.isMuted = muted
    }

    /// The song with `id`, a station playing, announced new tags (its name, a title): the queue counts
    /// the song as changed.
    mutating func streamTagsChanged(id: Int) {
        self.queue.tagsChanged(id: id)
    }

    /// Forgets the last error.
    public mutating func clearError() {
        self.lastError = nil
    }

    // MARK: - Engine events and time

    /// Takes in what the engine reports about the effects it performed.
    /// - Returns: the effects that follow (open the next song, stop ...).
    public mutating func handle(_ event: EngineEvent) -> [PlayerEffect] {
        switch (event, self.state) {
        case (.songOpened(let song), .prepare(let prepare)) where song.entry == prepare.entry:
            self.failures = []
            if prepare.startsPaused {
                // The device is not taken until the listener resumes.
                return self.force(.pause(PauseState(song: song, releasedOutput: true)))
            }
            return self.force(.play(PlayState(song: song)))

        case (.songFailed(let entry, let message), .prepare(let prepare)) where entry == prepare.entry:
            self.lastError = message
            self.failures.append(message)
            guard self.failures.count < self.queue.count, self.queue.advanceToNext() != nil,
                let next = self.queue.current
            else {
                if self.failures.count > 1 {
                    self.lastError = Self.summary(ofFailures: self.failures)
                }
                self.failures = []
                return self.force(.stop(StopState()))
            }
            return self.force(
                .prepare(PrepareState(entry: next, startsPaused: prepare.startsPaused, reason: prepare.reason)))

        case (.songEnded(let entry, let message), .play(let play)) where entry == play.song.entry:
            if let message {
                self.lastError = message
            }
            if self.sleepTimer == .endOfSong {
                self.sleepTimer = .off
                return self.stopAfterDrain()
            }
            if self.queue.songFinished() != nil, let next = self.queue.current {
                self.songsFollowed &+= 1
                return self.force(.prepare(PrepareState(entry: next, reason: .songBoundary)))
            }
            guard let next = self.queue.current else {
                return self.stopAfterDrain()
            }
            self.songsFollowed &+= 1
            // Single mode holds playback at the song boundary: the song that follows is current, paused
            // at its start once the finished one has played out (MPD's border pause).
            return [.drainOutput]
                + self.force(.prepare(PrepareState(entry: next, startsPaused: true, reason: .songBoundary)))

        case (.outputFailed(let message), _):
            // As MPD: the song and its position stay, paused, and `play` goes on from there once an
            // output can play again.
            self.lastError = message
            switch self.state {
            case .stop:
                return []
            case .play(let play):
                return self.force(.pause(PauseState(song: play.song, releasedOutput: true)))
            case .pause(var pause):
                pause.resumesAt = nil
                pause.releasedOutput = true
                return [.releaseOutput] + self.force(.pause(pause))
            case .prepare(var prepare):
                // The failure cut the preparation short, before the song was opened: open it, to land
                // paused.
                prepare.startsPaused = true
                return [.releaseOutput] + self.force(.prepare(prepare))
                    + [.openDecoder(entry: prepare.entry, startOffset: prepare.startOffset)]
            }

        default:
            // A report about a song the player has already left behind: nothing to do.
            return []
        }
    }

    /// Lets time pass: a timed pause ends, a sleep timer fires.
    public mutating func tick(now: Int64) -> [PlayerEffect] {
        var effects: [PlayerEffect] = []
        if case .pause(let pause) = self.state, let resumesAt = pause.resumesAt, now >= resumesAt {
            effects += self.force(.play(PlayState(song: pause.song)))
        }
        if case .at(let deadline) = self.sleepTimer, now >= deadline {
            self.sleepTimer = .off
            if self.state.kind != .stop {
                effects += self.force(.stop(StopState()))
            }
        }
        return effects
    }

    /// The next moment `tick(now:)` has something to do, if any.
    public var nextDeadline: Int64? {
        let resumesAt: Int64? = if case .pause(let pause) = self.state { pause.resumesAt } else { nil }
        guard case .at(let deadline) = self.sleepTimer else { return resumesAt }
        return min(resumesAt ?? deadline, deadline)
    }

    // MARK: - Queue edits

    /// Edits the queue. When the edit removes the song the player is on, playback moves to the song
    /// that took its place (as MPD does) or stops; clearing the queue stops.
    /// - Returns: what `body` returned, and the effects of any move.
    public mutating func editQueue<Result>(
        _ request: String,
        _ body: (inout Queue) throws(QueueError) -> Result
    ) throws(PlayerError) -> (Result, [PlayerEffect]) {
        let current = self.queue.current
        let result: Result
        do {
            result = try body(&self.queue)
        } catch {
            throw .queue(request: request, detail: error.description)
        }
        if self.state.kind == .stop, let current, self.queue.position(ofID: current.id) == nil {
            // Stopped, the current song removed: no song is current, as in MPD (the queue's own rule
            // moves on to the next survivor, which is what playing or paused needs).
            try? self.queue.setCurrent(position: nil)
        }
        guard let entry = self.state.entry, self.queue.position(ofID: entry.id) == nil else {
            return (result, [])
        }
        if self.state.kind != .pause, let position = self.queue.currentPosition,
            let next = self.queue.entry(at: position)
        {
            return (result, self.force(.prepare(PrepareState(entry: next))))
        }
        return (result, self.force(.stop(StopState())))
    }

    /// Replaces the queue with `paths` and plays the song at `position` among them, as one step: if
    /// either part is refused, the queue and the player stay exactly as they were.
    /// - Returns: the effects the engine must perform.
    /// - Throws: `PlayerError.queue` when the paths do not fit the queue, `noSuchSong` for a position
    ///   outside them.
    public mutating func replaceQueue(
        with paths: [String],
        playingFrom position: Int,
        now: Int64
    ) throws(PlayerError) -> [PlayerEffect] {
        let before = self
        do {
            let (_, edited) = try self.editQueue("replace the queue") { queue throws(QueueError) in
                queue.clear()
                try queue.add(paths, at: nil)
            }
            return edited + (try self.handle(.playPosition(position), now: now))
        } catch {
            self = before
            throw error
        }
    }

    /// One message naming every song of a run that failed: the first few and how many more.
    public static func summary(ofFailures messages: [String]) -> String {
        let shown = 5
        var text = "no song could be played: " + messages.prefix(shown).joined(separator: "; ")
        if messages.count > shown {
            text += "; and \(messages.count - shown) more"
        }
        return text
    }

    // MARK: - Helpers

    /// A seek to a song by its position: within the song the player is on, a plain seek; to another
    /// song (or from stop), that song prepared from `offset`, landing paused when the player was paused,
    /// as MPD does.
    private mutating func seek(
        toPosition position: Int, offset: Int64, request: PlayerRequest, now: Int64
    ) throws(PlayerError) -> [PlayerEffect] {
        guard offset >= 0 else { throw .badArgument(request: request.name, detail: "negative position") }
        if self.state.kind != .stop, let entry = self.state.entry, self.queue.position(ofID: entry.id) == position {
            return try self.carryOut(.seek(offset: offset), now: now)
        }
        let paused =
            switch self.state {
            case .pause: true
            case .prepare(let prepare): prepare.startsPaused
            case .play, .stop: false
            }
        return try self.prepare(position: position, request: request, startOffset: offset, startsPaused: paused)
    }

    private mutating func prepare(
        position: Int, request: PlayerRequest, startOffset: Int64 = 0, startsPaused: Bool = false
    ) throws(PlayerError) -> [PlayerEffect] {
        // A new request to play starts afresh: songs that failed before it do not count against it.
        self.failures = []
        do {
            if self.state.kind == .stop {
                // Not playing: nothing has been played yet, so (in random mode) the chosen song goes
                // to the front of the order and every other song still follows it, as in MPD.
                try self.queue.setCurrent(position: nil)
            }
            try self.queue.setCurrent(position: position)
        } catch {
            throw .noSuchSong(request: request.name, detail: error.description)
        }
        guard let entry = self.queue.current else {
            throw .noSuchSong(request: request.name, detail: "no song at position \(position)")
        }
        return try self.enter(
            .prepare(PrepareState(entry: entry, startOffset: startOffset, startsPaused: startsPaused)))
    }

    /// Prepares the queue's current song, after `next` or `previous` moved it.
    private mutating func prepareCurrent(_ request: PlayerRequest) throws(PlayerError) -> [PlayerEffect] {
        self.failures = []
        guard let entry = self.queue.current else {
            throw .emptyQueue(request: request.name)
        }
        return try self.enter(.prepare(PrepareState(entry: entry)))
    }

    /// A seek's target within `song`: a position past its end is its end (the song then ends at once
    /// while playing), as MPD takes it.
    private func clampedSeek(_ offset: Int64, in song: OpenSong, request: PlayerRequest) throws(PlayerError) -> Int64 {
        guard offset >= 0 else {
            throw .badArgument(request: request.name, detail: "negative position")
        }
        guard let length = song.lengthFrames else { return offset }
        return min(offset, song.format.nanoseconds(forFrames: length))
    }

    private mutating func stopAfterDrain() -> [PlayerEffect] {
        [.drainOutput] + self.force(.stop(StopState()))
    }

    /// Enters a state the engine's report makes necessary. Every such move is in the table; if one
    /// were not, stopping is the safe answer.
    private mutating func force(_ next: PlayerState) -> [PlayerEffect] {
        do {
            return try self.enter(next)
        } catch {
            assertionFailure("engine report led to an illegal transition: \(error)")
            self.state = .stop(StopState())
            return [.closeDecoder, .releaseOutput]
        }
    }
}
