import Audio
import Testing

@testable import PlayerCore

let stereo = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)

/// A context with three songs queued, driven into `kind` the way the engine would drive it.
func context(in kind: PlayerStateKind, releasesOutputOnPause: Bool = false) throws -> PlayerContext {
    var queue = Queue()
    try queue.add(["/music/a.mp3", "/music/b.mp3", "/music/c.mp3"])
    var context = PlayerContext(queue: queue, releasesOutputOnPause: releasesOutputOnPause)
    if kind == .stop { return context }
    _ = try context.handle(.play, now: 0)
    if kind == .prepare { return context }
    _ = context.handle(.songOpened(song(context.state.entry!)))
    if kind == .play { return context }
    _ = try context.handle(.pause, now: 0)
    return context
}

func song(_ entry: QueueEntry, frames: Int = 441_000) -> OpenSong {
    OpenSong(entry: entry, format: stereo, lengthFrames: frames)
}

/// What a request should do in a state: move to a kind, or be refused with a message.
enum Outcome: Sendable, CustomStringConvertible {
    case becomes(PlayerStateKind)
    case refused(String)

    var description: String {
        switch self {
        case .becomes(let kind): "becomes \(kind)"
        case .refused(let message): "refused: \(message)"
        }
    }
}

struct RequestCase: Sendable, CustomTestStringConvertible {
    let request: PlayerRequest
    let state: PlayerStateKind
    let outcome: Outcome
    var testDescription: String { "\(self.request) while \(self.state) \(self.outcome)" }
}

/// Every request in every state: the table the issue asks for.
let requestTable: [RequestCase] = {
    let second: Int64 = 1_000_000_000
    let rows: [(PlayerRequest, [PlayerStateKind: Outcome])] = [
        (
            .play,
            [.stop: .becomes(.prepare), .prepare: .becomes(.prepare), .play: .becomes(.play), .pause: .becomes(.play)]
        ),
        (
            .playPosition(2),
            [
                .stop: .becomes(.prepare), .prepare: .becomes(.prepare), .play: .becomes(.prepare),
                .pause: .becomes(.prepare),
            ]
        ),
        (
            .playPosition(7),
            [
                .stop: .refused("cannot play: no song at position 7"),
                .prepare: .refused("cannot play: no song at position 7"),
                .play: .refused("cannot play: no song at position 7"),
                .pause: .refused("cannot play: no song at position 7"),
            ]
        ),
        (
            .playID(99),
            [
                .stop: .refused("cannot play: no song with id 99"),
                .prepare: .refused("cannot play: no song with id 99"),
                .play: .refused("cannot play: no song with id 99"), .pause: .refused("cannot play: no song with id 99"),
            ]
        ),
        (
            .pause,
            [
                .stop: .becomes(.stop), .prepare: .becomes(.prepare),
                .play: .becomes(.pause),
                .pause: .becomes(.pause),
            ]
        ),
        (
            .resume,
            [
                .stop: .becomes(.stop), .prepare: .becomes(.prepare),
                .play: .becomes(.play),
                .pause: .becomes(.play),
            ]
        ),
        (
            .togglePause,
            [
                .stop: .becomes(.stop), .prepare: .becomes(.prepare),
                .play: .becomes(.pause), .pause: .becomes(.play),
            ]
        ),
        (.stop, [.stop: .becomes(.stop), .prepare: .becomes(.stop), .play: .becomes(.stop), .pause: .becomes(.stop)]),
        (
            .next,
            [
                .stop: .refused("cannot skip to the next song: player is stopped"), .prepare: .becomes(.prepare),
                .play: .becomes(.prepare), .pause: .becomes(.prepare),
            ]
        ),
        (
            .previous,
            [
                .stop: .refused("cannot go back to the previous song: player is stopped"), .prepare: .becomes(.prepare),
                .play: .becomes(.prepare), .pause: .becomes(.prepare),
            ]
        ),
        (
            .seek(offset: 2 * second),
            [
                .stop: .refused("cannot seek: player is stopped"), .prepare: .becomes(.prepare), .play: .becomes(.play),
                .pause: .becomes(.pause),
            ]
        ),
        (
            .seek(offset: 60 * second),
            [
                .stop: .refused("cannot seek: player is stopped"), .prepare: .becomes(.prepare),
                .play: .becomes(.play), .pause: .becomes(.pause),
            ]
        ),
        (
            .seek(offset: -1),
            [
                .stop: .refused("cannot seek: player is stopped"),
                .prepare: .refused("cannot seek: negative position"),
                .play: .refused("cannot seek: negative position"), .pause: .refused("cannot seek: negative position"),
            ]
        ),
        (
            // The song the player is on (the first): a seek within it; from stop, it is prepared.
            .seekPosition(0, offset: 2 * second),
            [.stop: .becomes(.prepare), .prepare: .becomes(.prepare), .play: .becomes(.play), .pause: .becomes(.pause)]
        ),
        (
            // Another song: prepared from the offset, paused when the player was (see `seekElsewhile*`).
            .seekPosition(2, offset: 2 * second),
            [
                .stop: .becomes(.prepare), .prepare: .becomes(.prepare), .play: .becomes(.prepare),
                .pause: .becomes(.prepare),
            ]
        ),
        (
            .seekPosition(7, offset: 0),
            [
                .stop: .refused("cannot seek: no song at position 7"),
                .prepare: .refused("cannot seek: no song at position 7"),
                .play: .refused("cannot seek: no song at position 7"),
                .pause: .refused("cannot seek: no song at position 7"),
            ]
        ),
        (
            .seekID(99, offset: 0),
            [
                .stop: .refused("cannot seek: no song with id 99"),
                .prepare: .refused("cannot seek: no song with id 99"),
                .play: .refused("cannot seek: no song with id 99"), .pause: .refused("cannot seek: no song with id 99"),
            ]
        ),
        (
            .pauseFor(duration: 5 * second),
            [
                .stop: .refused("cannot pause for a while: player is stopped"),
                .prepare: .refused("cannot pause for a while: player is preparing"), .play: .becomes(.pause),
                .pause: .becomes(.pause),
            ]
        ),
        (
            .sleepAfter(duration: 60 * second),
            [
                .stop: .refused("cannot set a sleep timer: player is stopped"), .prepare: .becomes(.prepare),
                .play: .becomes(.play), .pause: .becomes(.pause),
            ]
        ),
        (
            .sleepAtEndOfSong,
            [
                .stop: .refused("cannot set a sleep timer: player is stopped"), .prepare: .becomes(.prepare),
                .play: .becomes(.play), .pause: .becomes(.pause),
            ]
        ),
        (
            .cancelSleep,
            [.stop: .becomes(.stop), .prepare: .becomes(.prepare), .play: .becomes(.play), .pause: .becomes(.pause)]
        ),
    ]
    return rows.flatMap { request, outcomes in
        PlayerStateKind.allCases.map { RequestCase(request: request, state: $0, outcome: outcomes[$0]!) }
    }
}()

@Suite("PlayerContext: the state machine, without threads")
struct PlayerContextTests {
    @Test("every request in every state", arguments: requestTable)
    func requestInState(_ row: RequestCase) throws {
        var subject = try context(in: row.state)
        let before = subject.state
        switch row.outcome {
        case .becomes(let kind):
            _ = try subject.handle(row.request, now: 0)
            #expect(subject.state.kind == kind)
        case .refused(let message):
            let error = #expect(throws: PlayerError.self) { try subject.handle(row.request, now: 0) }
            #expect(error?.description == message)
            #expect(subject.state == before, "a refused request changes nothing")
        }
    }

    @Test(
        "the transition table",
        arguments: PlayerStateKind.allCases.flatMap { from in PlayerStateKind.allCases.map { (from, $0) } })
    func table(_ from: PlayerStateKind, _ to: PlayerStateKind) {
        let forbidden: Set<[PlayerStateKind]> = [[.stop, .play], [.stop, .pause]]
        #expect(PlayerContext.isValidNextState(from: from, to: to) == !forbidden.contains([from, to]))
    }

    @Test("an illegal move throws, names both states and changes nothing; canEnter only asks")
    func illegalEnter() throws {
        var subject = try context(in: .stop)
        let playing = PlayerState.play(PlayState(song: song(subject.queue.entry(at: 0)!)))
        #expect(!subject.canEnter(playing))
        #expect(subject.state.kind == .stop)
        let error = #expect(throws: PlayerError.self) { try subject.enter(playing) }
        #expect(error == .illegalTransition(from: .stop, to: .play))
        #expect(error?.description == "illegal transition from stopped to playing")
        #expect(subject.state.kind == .stop)
    }

    @Test("play from stop opens the first song; once open it opens the output")
    func playEffects() throws {
        var subject = try context(in: .stop)
        let first = subject.queue.entry(at: 0)!
        #expect(try subject.handle(.play, now: 0) == [.openDecoder(entry: first, startOffset: 0)])
        #expect(subject.handle(.songOpened(song(first))) == [.openOutput(stereo)])
        #expect(subject.state == .play(PlayState(song: song(first))))
    }

    @Test("pause keeps the device by default; release-on-pause rewinds and releases it; resume follows suit")
    func pauseEffects() throws {
        var keeping = try context(in: .play)
        #expect(try keeping.handle(.pause, now: 0) == [.pauseOutput])
        #expect(try keeping.handle(.resume, now: 0) == [.resumeOutput])
        var releasing = try context(in: .play, releasesOutputOnPause: true)
        #expect(try releasing.handle(.pause, now: 0) == [.rewindDecoderToHeard, .releaseOutput])
        #expect(try releasing.handle(.resume, now: 0) == [.openOutput(stereo)])
    }

    @Test("stop releases everything; a skip drops the buffer; a song boundary keeps it")
    func stopAndSkipEffects() throws {
        var playing = try context(in: .play)
        #expect(try playing.handle(.stop, now: 0) == [.dropOutput, .closeDecoder, .releaseOutput])
        #expect(try playing.handle(.stop, now: 0) == [])

        playing = try context(in: .play)
        let second = playing.queue.entry(at: 1)!
        #expect(
            try playing.handle(.next, now: 0) == [
                .dropOutput, .closeDecoder, .openDecoder(entry: second, startOffset: 0),
            ])

        playing = try context(in: .play)
        let first = playing.queue.entry(at: 0)!
        #expect(
            playing.handle(.songEnded(first, message: nil)) == [
                .closeDecoder, .openDecoder(entry: second, startOffset: 0),
            ])
        #expect(playing.handle(.songOpened(song(second))) == [.openOutput(stereo)])
    }

    @Test("seek while playing drops the buffer and seeks; while preparing it moves the start")
    func seekEffects() throws {
        var playing = try context(in: .play)
        #expect(
            try playing.handle(.seek(offset: 1_500_000_000), now: 0) == [
                .dropOutput, .seekDecoder(offset: 1_500_000_000),
            ])
        var preparing = try context(in: .prepare)
        #expect(try preparing.handle(.seek(offset: 1_500_000_000), now: 0) == [])
        guard case .prepare(let prepare) = preparing.state else {
            Issue.record("expected prepare")
            return
        }
        #expect(prepare.startOffset == 1_500_000_000)
    }

    @Test("the end of the queue stops after the output plays out")
    func endOfQueue() throws {
        var subject = try context(in: .play)
        for position in 0..<3 {
            let entry = subject.queue.entry(at: position)!
            if position > 0 {
                _ = subject.handle(.songOpened(song(entry)))
            }
            let effects = subject.handle(.songEnded(entry, message: nil))
            if position == 2 {
                #expect(effects == [.drainOutput, .dropOutput, .closeDecoder, .releaseOutput])
            }
        }
        #expect(subject.state.kind == .stop)
        #expect(subject.queue.count == 3)
    }

    @Test("a song that fails to open is skipped with its error recorded; when all fail, playback stops")
    func failingSongs() throws {
        var subject = try context(in: .prepare)
        let first = subject.queue.entry(at: 0)!
        let second = subject.queue.entry(at: 1)!
        #expect(
            subject.handle(.songFailed(first, message: "/music/a.mp3: file not found"))
                == [.closeDecoder, .openDecoder(entry: second, startOffset: 0)])
        #expect(subject.lastError == "/music/a.mp3: file not found")
        _ = subject.handle(.songFailed(second, message: "/music/b.mp3: empty file"))
        let third = subject.queue.entry(at: 2)!
        #expect(subject.state.entry == third)
        _ = subject.handle(.songFailed(third, message: "/music/c.mp3: empty file"))
        #expect(subject.state.kind == .stop)
        #expect(
            subject.lastError
                == "no song could be played: /music/a.mp3: file not found; /music/b.mp3: empty file; "
                + "/music/c.mp3: empty file")
        #expect(subject.queue.count == 3)
    }

    @Test("every new request to play starts afresh: songs that failed before it do not stop it")
    func failuresDoNotCarryOver() throws {
        var queue = Queue()
        try queue.add(["/music/notes.mp3"])
        var subject = PlayerContext(queue: queue)
        _ = try subject.handle(.play, now: 0)
        _ = subject.handle(.songFailed(subject.state.entry!, message: "/music/notes.mp3: not an MP3 stream"))
        #expect(subject.state.kind == .stop)
        #expect(subject.lastError == "/music/notes.mp3: not an MP3 stream")

        // The bad file again, now with a good one after it: the good one plays.
        _ = try subject.replaceQueue(with: ["/music/notes.mp3", "/music/good.mp3"], playingFrom: 0, now: 0)
        #expect(subject.lastError == nil)
        _ = subject.handle(.songFailed(subject.state.entry!, message: "/music/notes.mp3: not an MP3 stream"))
        #expect(subject.state.kind == .prepare)
        #expect(subject.state.entry?.path == "/music/good.mp3")
        _ = subject.handle(.songOpened(song(subject.state.entry!)))
        #expect(subject.state.kind == .play)

        // And `play` after a run that failed whole plays the queue again from its current song.
        _ = try subject.handle(.stop, now: 0)
        _ = try subject.handle(.playPosition(0), now: 0)
        _ = subject.handle(.songFailed(subject.state.entry!, message: "/music/notes.mp3: not an MP3 stream"))
        #expect(subject.state.entry?.path == "/music/good.mp3")
    }

    @Test("the error after a whole run failed names the first five songs and counts the rest")
    func failureSummary() {
        let messages = (1...7).map { "/music/\($0).mp3: empty file" }
        #expect(
            PlayerContext.summary(ofFailures: messages)
                == "no song could be played: " + messages.prefix(5).joined(separator: "; ") + "; and 2 more")
        #expect(PlayerContext.summary(ofFailures: ["x: y"]) == "no song could be played: x: y")
    }

    @Test("replacing the queue plays the chosen song; a refusal leaves queue, song and state as they were")
    func replaceQueue() throws {
        var subject = try context(in: .play)
        let before = (subject.queue.entries, subject.state, subject.queue.currentPosition)

        #expect(throws: PlayerError.self) {
            try subject.replaceQueue(with: ["/music/x.mp3"], playingFrom: 1, now: 0)
        }
        var small = PlayerContext(queue: Queue(maximumLength: 2))
        #expect(throws: PlayerError.self) {
            try small.replaceQueue(with: ["/1.mp3", "/2.mp3", "/3.mp3"], playingFrom: 0, now: 0)
        }
        #expect(small.queue.count == 0)
        #expect(subject.queue.entries == before.0)
        #expect(subject.state == before.1)
        #expect(subject.queue.currentPosition == before.2)

        let effects = try subject.replaceQueue(with: ["/music/x.mp3", "/music/y.mp3"], playingFrom: 1, now: 0)
        #expect(subject.queue.entries.map(\.path) == ["/music/x.mp3", "/music/y.mp3"])
        #expect(subject.state.kind == .prepare)
        #expect(subject.state.entry?.path == "/music/y.mp3")
        #expect(effects.contains(.openDecoder(entry: subject.state.entry!, startOffset: 0)))
    }

    @Test("an output failure pauses at the position heard, releasing the device, with the error recorded")
    func outputFailure() throws {
        var subject = try context(in: .play)
        let current = subject.state.entry
        #expect(
            subject.handle(.outputFailed(message: "alsa:default: snd_pcm_writei failed: No such device")) == [
                .rewindDecoderToHeard, .releaseOutput,
            ])
        #expect(subject.state.kind == .pause)
        #expect(subject.lastError == "alsa:default: snd_pcm_writei failed: No such device")
        #expect(subject.queue.count == 3)
        #expect(subject.queue.current == current)
        // `play` goes on from there, opening the output again, and forgets the error.
        #expect(try subject.handle(.play, now: 0) == [.openOutput(stereo)])
        #expect(subject.state.kind == .play)
        #expect(subject.lastError == nil)
        subject.clearError()
        #expect(subject.lastError == nil)
    }

    @Test("an output failure in a timed pause ends the timer; while preparing, the song still opens, paused")
    func outputFailureWhilePausedOrPreparing() throws {
        var paused = try context(in: .play)
        _ = try paused.handle(.pauseFor(duration: 5_000_000_000), now: 0)
        #expect(paused.handle(.outputFailed(message: "gone")) == [.releaseOutput])
        guard case .pause(let pause) = paused.state else {
            Issue.record("expected pause, not \(paused.state)")
            return
        }
        #expect(pause.resumesAt == nil && pause.releasedOutput)
        #expect(paused.tick(now: 6_000_000_000) == [])

        var preparing = try context(in: .prepare)
        let entry = preparing.state.entry!
        #expect(
            preparing.handle(.outputFailed(message: "gone")) == [
                .releaseOutput, .openDecoder(entry: entry, startOffset: 0),
            ])
        #expect(preparing.handle(.songOpened(song(entry))) == [])
        #expect(preparing.state.kind == .pause)
        #expect(preparing.lastError == "gone")
    }

    @Test("leaving a held pause for another song drops and resumes the device, which then plays the song")
    func pauseToAnotherSong() throws {
        for request in [PlayerRequest.next, .previous, .playPosition(2), .playID(3)] {
            var subject = try context(in: .play)
            _ = try subject.handle(.next, now: 0)
            _ = subject.handle(.songOpened(song(subject.state.entry!)))
            _ = try subject.handle(.pause, now: 0)
            let effects = try subject.handle(request, now: 0)
            let entry = subject.state.entry!
            #expect(
                effects == [.dropOutput, .resumeOutput, .closeDecoder, .openDecoder(entry: entry, startOffset: 0)],
                "\(request)")
            #expect(subject.handle(.songOpened(song(entry))) == [.openOutput(stereo)], "\(request)")
            #expect(subject.state.kind == .play, "\(request)")
        }
        // Released on pause: nothing is held, so nothing to resume.
        var releasing = try context(in: .pause, releasesOutputOnPause: true)
        let second = releasing.queue.entry(at: 1)!
        #expect(try releasing.handle(.next, now: 0) == [.closeDecoder, .openDecoder(entry: second, startOffset: 0)])
    }

    @Test("seek to another song keeps the player paused when it was, playing when it was; from stop it plays")
    func seekElsewhere() throws {
        let second: Int64 = 1_000_000_000
        var paused = try context(in: .pause)
        let third = paused.queue.entry(at: 2)!
        #expect(
            try paused.handle(.seekPosition(2, offset: 5 * second), now: 0) == [
                .dropOutput, .resumeOutput, .closeDecoder, .openDecoder(entry: third, startOffset: 5 * second),
            ])
        #expect(paused.handle(.songOpened(song(third))) == [])
        #expect(paused.state.kind == .pause)
        #expect(paused.queue.currentPosition == 2)

        var playing = try context(in: .play)
        _ = try playing.handle(.seekID(third.id, offset: 5 * second), now: 0)
        _ = playing.handle(.songOpened(song(third)))
        #expect(playing.state.kind == .play)

        var stopped = try context(in: .stop)
        #expect(
            try stopped.handle(.seekPosition(2, offset: 5 * second), now: 0) == [
                .openDecoder(entry: third, startOffset: 5 * second)
            ])
        _ = stopped.handle(.songOpened(song(third)))
        #expect(stopped.state.kind == .play)

        // The song the player is on: a plain seek, clamped to its end as MPD clamps it.
        var same = try context(in: .pause)
        #expect(
            try same.handle(.seekPosition(0, offset: 60 * second), now: 0) == [
                .dropOutput, .seekDecoder(offset: 10 * second),
            ])
        #expect(same.state.kind == .pause)
    }

    @Test("single mode at a song's end pauses at the start of the next song; oneshot then turns off")
    func singleAtSongEnd() throws {
        for mode in [SingleMode.on, .oneshot] {
            var subject = try context(in: .play)
            _ = try subject.editQueue("single") { queue in queue.single = mode }
            let first = subject.queue.entry(at: 0)!
            let second = subject.queue.entry(at: 1)!
            #expect(
                subject.handle(.songEnded(first, message: nil)) == [
                    .drainOutput, .closeDecoder, .openDecoder(entry: second, startOffset: 0),
                ])
            #expect(subject.handle(.songOpened(song(second))) == [])
            #expect(subject.state.kind == .pause, "\(mode)")
            #expect(subject.queue.currentPosition == 1)
            #expect(subject.queue.single == (mode == .on ? .on : .off))
            #expect(try subject.handle(.play, now: 0) == [.openOutput(stereo)])
        }
        // At the end of the queue it stops, and oneshot stays on (as in MPD).
        var last = try context(in: .stop)
        _ = try last.editQueue("single") { queue in queue.single = .oneshot }
        _ = try last.handle(.playPosition(2), now: 0)
        let third = last.queue.entry(at: 2)!
        _ = last.handle(.songOpened(song(third)))
        #expect(
            last.handle(.songEnded(third, message: nil)) == [.drainOutput, .dropOutput, .closeDecoder, .releaseOutput])
        #expect(last.state.kind == .stop)
        #expect(last.queue.single == .oneshot)
    }

    @Test("a timed pause resumes by itself when its time comes")
    func timedPause() throws {
        var subject = try context(in: .play)
        _ = try subject.handle(.pauseFor(duration: 5_000_000_000), now: 1_000)
        #expect(subject.state.kind == .pause)
        #expect(subject.nextDeadline == 5_000_001_000)
        #expect(subject.tick(now: 5_000_000_999) == [])
        #expect(subject.tick(now: 5_000_001_000) == [.resumeOutput])
        #expect(subject.state.kind == .play)
        #expect(subject.nextDeadline == nil)
    }

    @Test("the sleep timer stops at its time, or at the end of the song")
    func sleepTimer() throws {
        var subject = try context(in: .play)
        _ = try subject.handle(.sleepAfter(duration: 60_000_000_000), now: 0)
        #expect(subject.sleepTimer == .at(60_000_000_000))
        #expect(subject.tick(now: 59_999_999_999) == [])
        #expect(subject.tick(now: 60_000_000_000) == [.dropOutput, .closeDecoder, .releaseOutput])
        #expect(subject.state.kind == .stop)
        #expect(subject.sleepTimer == .off)

        subject = try context(in: .play)
        _ = try subject.handle(.sleepAtEndOfSong, now: 0)
        let first = subject.queue.entry(at: 0)!
        #expect(
            subject.handle(.songEnded(first, message: nil)) == [
                .drainOutput, .dropOutput, .closeDecoder, .releaseOutput,
            ])
        #expect(subject.state.kind == .stop)
        #expect(subject.sleepTimer == .off)
    }

    @Test("removing the playing song moves on to the song in its place; clearing stops")
    func queueEdits() throws {
        var subject = try context(in: .play)
        let second = subject.queue.entry(at: 1)!
        let ((), effects) = try subject.editQueue("delete") { queue throws(QueueError) in try queue.delete(position: 0)
        }
        #expect(effects == [.dropOutput, .closeDecoder, .openDecoder(entry: second, startOffset: 0)])
        let ((), cleared) = try subject.editQueue("clear") { queue in queue.clear() }
        #expect(cleared == [.dropOutput, .closeDecoder, .releaseOutput])
        #expect(subject.state.kind == .stop)
    }

    @Test("stopped, removing the current song leaves no song current (play starts at the first), as in MPD")
    func removingTheCurrentSongWhileStopped() throws {
        var subject = try context(in: .stop)
        _ = try subject.handle(.playPosition(1), now: 0)
        _ = try subject.handle(.stop, now: 0)
        #expect(subject.queue.currentPosition == 1)
        let ((), effects) = try subject.editQueue("delete") { queue throws(QueueError) in
            try queue.delete(position: 1)
        }
        #expect(effects == [])
        #expect(subject.queue.current == nil)
        // Another song removed keeps the current one current.
        _ = try subject.handle(.playPosition(1), now: 0)
        _ = try subject.handle(.stop, now: 0)
        let current = subject.queue.current
        _ = try subject.editQueue("delete") { queue throws(QueueError) in try queue.delete(position: 0) }
        #expect(subject.queue.current == current && current != nil)
    }

    @Test func volume() throws {
        var subject = try context(in: .stop)
        try subject.setVolume(0)
        try subject.setVolume(100)
        #expect(
            throws: PlayerError.badArgument(request: "set the volume", detail: "the volume must be between 0 and 100")
        ) {
            try subject.setVolume(101)
        }
        #expect(subject.volume == 100)
    }
}
