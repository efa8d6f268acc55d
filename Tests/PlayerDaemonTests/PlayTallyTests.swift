import Audio
import PlayerCore
import Testing

@testable import PlayerDaemon

/// The play statistics' rule on made-up status samples: what counts as played, what as skipped.
@Suite("Play tally")
struct PlayTallyTests {
    static let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)
    static let second: Int64 = 1_000_000_000

    /// A sample of `entry` (id and path `song<id>`) `state`, `heard` and `written` seconds into a song of
    /// `length` seconds, taken at `at` seconds.
    static func sample(
        _ id: Int?, _ state: PlayerStateKind, heard: Double = 0, written: Double? = nil, length: Double = 10,
        at: Double, seeks: Int = 0
    ) -> PlayerStatus {
        var status = PlayerStatus()
        status.state = state
        status.entry = id.map { QueueEntry(id: $0, path: "/music/song\($0).mp3") }
        if state != .stop, id != nil {
            status.format = Self.format
            status.lengthFrames = Int(length * 44100)
            status.heardFrames = Int(heard * 44100)
            status.writtenFrames = Int((written ?? heard + 0.2) * 44100)
        }
        status.sampledAt = Int64(at * 1e9)
        status.seekCount = seeks
        return status
    }

    /// Feeds samples 0.25 s apart of song `id` playing from `from` to `to` seconds in, starting at clock
    /// time `start`; returns the events and the clock time of the last sample.
    static func play(
        _ tally: inout PlayTally, _ id: Int, from: Double, to: Double, length: Double = 10, start: Double
    ) -> ([PlayEvent], Double) {
        var events: [PlayEvent] = []
        var position = from
        var clock = start
        while position <= to + 1e-9 {
            events += tally.note(Self.sample(id, .play, heard: position, length: length, at: clock), unixTime: 1000)
            position += 0.25
            clock += 0.25
        }
        return (events, clock - 0.25)
    }

    @Test("played once half is heard, once only; the next song by itself is no skip")
    func playedPastHalf() {
        var tally = PlayTally()
        var (events, clock) = Self.play(&tally, 1, from: 0, to: 4.75, start: 0)
        #expect(events.isEmpty)
        (events, clock) = Self.play(&tally, 1, from: 5, to: 9.75, start: clock + 0.25)
        #expect(events == [.played(path: "/music/song1.mp3", startedAt: 1000)])
        // The decoder reached the end: song 2 follows by itself.
        events = tally.note(Self.sample(2, .play, heard: 0, written: 0.1, at: clock + 0.25), unixTime: 1010)
        #expect(events.isEmpty)
    }

    @Test("next before half is a skip; the skipped song's time is when it was left")
    func skipped() {
        var tally = PlayTally()
        let (_, clock) = Self.play(&tally, 1, from: 0, to: 2, start: 0)
        let events = tally.note(Self.sample(2, .play, at: clock + 0.01), unixTime: 1002)
        #expect(events == [.skipped(path: "/music/song1.mp3", at: 1002)])
    }

    @Test("a short song that ends by itself between samples counts as played, not skipped")
    func shortSongEndsBetweenSamples() {
        var tally = PlayTally()
        // A 1 s song sampled at 0 and 0.3 s; song 2 starts at 1.0 s.
        _ = tally.note(Self.sample(1, .play, heard: 0, length: 1, at: 0), unixTime: 1000)
        _ = tally.note(Self.sample(1, .play, heard: 0.3, written: 0.6, length: 1, at: 0.3), unixTime: 1000)
        let events = tally.note(Self.sample(2, .play, heard: 0, at: 1.0), unixTime: 1001)
        #expect(events == [.played(path: "/music/song1.mp3", startedAt: 1000)])
    }

    @Test("a seek past the middle does not count what was jumped over")
    func seekDoesNotCount() {
        var tally = PlayTally()
        var (events, clock) = Self.play(&tally, 1, from: 0, to: 1, start: 0)
        // Seek to 8 s: the samples jump, the seek count moves.
        events += tally.note(Self.sample(1, .play, heard: 8, at: clock + 0.05, seeks: 1), unixTime: 1001)
        events += tally.note(Self.sample(1, .play, heard: 8.25, at: clock + 0.3, seeks: 1), unixTime: 1001)
        #expect(events.isEmpty)
        // Then `next` at 8.3 s: 1.6 s heard of a 10 s song is a skip.
        events = tally.note(Self.sample(2, .play, at: clock + 0.35), unixTime: 1002)
        #expect(events == [.skipped(path: "/music/song1.mp3", at: 1002)])
    }

    @Test("pausing stops the count; stop and clear are no skips; a song never heard is no skip")
    func pausesStopsAndClears() {
        var tally = PlayTally()
        var (events, clock) = Self.play(&tally, 1, from: 0, to: 2, start: 0)
        // Paused for a minute: nothing is heard meanwhile.
        events += tally.note(Self.sample(1, .pause, heard: 2, at: clock + 0.1), unixTime: 1002)
        events += tally.note(Self.sample(1, .pause, heard: 2, at: clock + 60), unixTime: 1062)
        #expect(events.isEmpty)
        events = tally.note(Self.sample(1, .stop, at: clock + 61), unixTime: 1063)
        #expect(events.isEmpty)
        (events, clock) = Self.play(&tally, 1, from: 0, to: 1, start: clock + 62)
        events += tally.note(Self.sample(nil, .stop, at: clock + 0.1), unixTime: 1070)
        #expect(events.isEmpty)
        // `next` while paused at the very start of a song: nothing was heard.
        events = tally.note(Self.sample(3, .pause, heard: 0, at: clock + 1), unixTime: 1071)
        events += tally.note(Self.sample(4, .pause, heard: 0, at: clock + 2), unixTime: 1072)
        #expect(events.isEmpty)
    }

    @Test("repeat single: each time round counts")
    func repeatSingle() {
        var tally = PlayTally()
        var events: [PlayEvent] = []
        var clock = 0.0
        for round in 0..<3 {
            var played: [PlayEvent]
            (played, clock) = Self.play(&tally, 1, from: 0, to: 0.75, length: 1, start: clock + 0.25)
            events += played
            #expect(events.count == round + 1)
        }
        #expect(Set(events) == [.played(path: "/music/song1.mp3", startedAt: 1000)])
    }

    @Test("songs longer than eight minutes count after four")
    func longSongs() {
        #expect(PlayTally.threshold(600 * Self.second) == 240 * Self.second)
        #expect(PlayTally.threshold(300 * Self.second) == 150 * Self.second)
        #expect(PlayTally.threshold(nil) == 240 * Self.second)
    }

    @Test("samples older than the last one are ignored")
    func staleSamples() {
        var tally = PlayTally()
        let (_, clock) = Self.play(&tally, 1, from: 0, to: 2, start: 0)
        #expect(tally.note(Self.sample(2, .play, at: clock - 1), unixTime: 1000).isEmpty)
        #expect(tally.note(Self.sample(2, .play, at: clock + 0.01), unixTime: 1002).count == 1)
    }
}
