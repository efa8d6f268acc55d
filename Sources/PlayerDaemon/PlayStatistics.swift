import Audio
import ControlProtocol
import Dispatch
import Library
import Logging
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the play statistics record about one song.
enum PlayEvent: Sendable, Hashable {
    /// The song counted as played (`playCount`, `lastPlayed`); `startedAt` is when it began, Unix seconds.
    case played(path: String, startedAt: Int64)
    /// The song was left before it counted as played (`skipCount`, `lastSkipped`), at `at`.
    case skipped(path: String, at: Int64)
}

/// Follows the player through its status samples and says when a song counts as played or skipped.
///
/// A song counts as played once it has been heard for half its length or four minutes, whichever
/// comes first, as scrobblers count (Last.fm's rule, which myMPD follows); what counts is audio heard,
/// so a seek past the middle does not count. It counts as skipped when another song takes its place
/// before that (`next`, `previous`, `play` of another song), after some of it was heard. A song that
/// ends by itself is never a skip; neither is `stop`, or clearing the queue. A pure value: the daemon
/// feeds it the engine's samples, tests feed it made-up ones.
struct PlayTally {
    /// The most listening a song needs to count as played.
    static let longest: Int64 = 240_000_000_000
    /// A song whose decoder is this close to its end when it is left ended by itself.
    static let endTolerance: Int64 = 500_000_000

    private struct Listening {
        let entryID: Int
        let path: String
        /// When it began, Unix seconds.
        let startedAt: Int64
        /// Nanoseconds of it heard so far.
        var heard: Int64 = 0
        /// Whether it has counted as played.
        var counted = false
        /// The last sample while it was current.
        var last: PlayerStatus
    }

    private var listening: Listening?

    /// Takes the next sample of the player's status, `unixTime` being the wall clock's seconds then, and
    /// returns what it completes. Samples older than the last one taken are ignored.
    mutating func note(_ status: PlayerStatus, unixTime: Int64) -> [PlayEvent] {
        var events: [PlayEvent] = []
        if var listening = self.listening {
            let last = listening.last
            guard status.sampledAt >= last.sampledAt else { return [] }
            let format = last.format
            let length = format.flatMap { format in last.lengthFrames.map { format.nanoseconds(forFrames: $0) } }
            let heard = format.map { $0.nanoseconds(forFrames: last.heardFrames) } ?? 0
            let written = format.map { $0.nanoseconds(forFrames: last.writtenFrames) } ?? 0
            let wall = status.sampledAt - last.sampledAt
            let sameSong = status.entry?.id == listening.entryID
            let seeked = status.seekCount != last.seekCount
            // The same song from its start again without a seek: repeat single, or `play` of itself.
            let restarted =
                sameSong && !seeked && format != nil && status.format == format
                && status.writtenFrames < format!.sampleRate
                && status.writtenFrames + format!.sampleRate / 2 < last.writtenFrames
            let goesOn = sameSong && status.state != .stop && !restarted
            // Whether the decoder had reached the end when the song was left: it ended by itself.
            let reachedEnd = length.map { written &+ wall &+ Self.endTolerance >= $0 } ?? false
            if last.state == .play, let format {
                if goesOn && !seeked {
                    let now = format.nanoseconds(forFrames: status.heardFrames)
                    listening.heard += max(0, now - heard)
                } else {
                    // Left, or moved within, between two samples: it was heard on in real time until
                    // then, up to its end; a song that ended by itself was heard to its end.
                    let remaining = length.map { max(0, $0 - heard) } ?? .max
                    listening.heard += !goesOn && reachedEnd ? remaining : min(max(0, wall), remaining)
                }
            }
            if !listening.counted && listening.heard >= Self.threshold(length) {
                listening.counted = true
                events.append(.played(path: listening.path, startedAt: listening.startedAt))
            }
            if goesOn {
                listening.last = status
                self.listening = listening
                return events
            }
            let byAnother = status.entry != nil && status.state != .stop
            if !listening.counted && listening.heard > 0 && byAnother && !(last.state == .play && reachedEnd) {
                events.append(.skipped(path: listening.path, at: unixTime))
            }
            self.listening = nil
        }
        if let entry = status.entry, status.state != .stop {
            self.listening = Listening(entryID: entry.id, path: entry.path, startedAt: unixTime, last: status)
        }
        return events
    }

    /// What a song of `length` nanoseconds (nil when unknown) must be heard for to count as played.
    static func threshold(_ length: Int64?) -> Int64 {
        guard let length else { return Self.longest }
        return min(length / 2, Self.longest)
    }
}

/// playerd's own play statistics, kept as stickers with myMPD's names and values: `playCount` and
/// `skipCount` (decimal counts), `lastPlayed` (when the song began) and `lastSkipped` (when it was left),
/// Unix seconds. Songs inside the music directory only: stickers name songs by their URI there.
///
/// The engine's observer, on the audio thread, only hands the status over; a thread of its own follows
/// it (sampling it four times a second while a song plays, and not at all otherwise), writes the
/// stickers and sends idle `sticker`, as MPD sends it for every change.
final class PlayStatistics: Sendable {
    private let engine: AudioEngine
    private let stickers: StickerDatabase
    private let hub: ChangeHub
    private let musicDirectory: String
    private let logger: Logger
    private let pending = Mutex<(samples: [PlayerStatus], stopped: Bool)>(([], false))
    private let wakeUp = DispatchSemaphore(value: 0)
    private let thread = Mutex<pthread_t?>(nil)

    /// How often the status is sampled while a song plays.
    static let sampleInterval = DispatchTimeInterval.milliseconds(250)
    /// Samples waiting at most (the thread takes them within milliseconds; this only bounds a stall).
    static let maximumPending = 256

    init(engine: AudioEngine, stickers: StickerDatabase, hub: ChangeHub, musicDirectory: String, logger: Logger) {
        self.engine = engine
        self.stickers = stickers
        self.hub = hub
        var directory = musicDirectory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        self.musicDirectory = directory
        self.logger = logger
        self.pending.withLock { $0.samples.reserveCapacity(Self.maximumPending) }
    }

    /// Starts following the engine.
    func start() {
        let engine = self.engine
        engine.observe { [weak self] changes in
            guard changes.contains(.player), let self else { return }
            self.take(engine.status)
        }
        let thread = startThread { [self] in self.run() }
        self.thread.withLock { $0 = thread }
    }

    /// Stops the thread and waits for it; what it had counted is written.
    func stop() {
        self.pending.withLock { $0.stopped = true }
        self.wakeUp.signal()
        if let thread = self.thread.withLock({ $0.take() }) {
            pthread_join(thread, nil)
        }
    }

    private func take(_ status: PlayerStatus) {
        let taken = self.pending.withLock { pending -> Bool in
            guard pending.samples.count < Self.maximumPending else { return false }
            pending.samples.append(status)
            return true
        }
        if taken { self.wakeUp.signal() }
    }

    private func run() {
        var tally = PlayTally()
        var playing = self.engine.status.state == .play
        _ = tally.note(self.engine.status, unixTime: Int64(time(nil)))
        while true {
            // While a song plays, the status is sampled on a timer too: the moment it has been heard
            // long enough to count comes with no change.
            let woken: Bool
            if playing {
                woken = self.wakeUp.wait(timeout: .now() + Self.sampleInterval) == .success
            } else {
                self.wakeUp.wait()
                woken = true
            }
            let (samples, stopped) = self.pending.withLock { pending in
                // The room stays (made here, off the audio thread), so that handing a sample over
                // never allocates there.
                defer { pending.samples.removeAll(keepingCapacity: true) }
                return (pending.samples, pending.stopped)
            }
            var events: [PlayEvent] = []
            for sample in samples {
                events += tally.note(sample, unixTime: Int64(time(nil)))
            }
            if !woken || samples.isEmpty {
                let sample = self.engine.status
                events += tally.note(sample, unixTime: Int64(time(nil)))
            }
            playing = self.engine.status.state == .play
            self.record(events)
            if stopped { return }
        }
    }

    private func record(_ events: [PlayEvent]) {
        var recorded = false
        for event in events {
            let (path, counter, timestampName, timestamp) =
                switch event {
                case .played(let path, let startedAt): (path, "playCount", "lastPlayed", startedAt)
                case .skipped(let path, let at): (path, "skipCount", "lastSkipped", at)
                }
            guard let uri = self.uri(of: path) else { continue }
            do {
                try self.stickers.count(uri: uri, counter: counter, timestampName: timestampName, timestamp: timestamp)
                recorded = true
            } catch {
                self.logger.warning("play statistics of \(uri) not recorded: \(error)")
            }
        }
        if recorded {
            self.hub.broadcast([.sticker])
        }
    }

    /// The song's URI in the library, or nil for a file outside the music directory.
    private func uri(of path: String) -> String? {
        let prefix = self.musicDirectory == "/" ? "/" : self.musicDirectory + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }
}
