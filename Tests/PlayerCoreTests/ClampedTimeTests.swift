import Testing

@testable import PlayerCore

/// Times a client chooses reach the player as nanoseconds that may be anything up to Int64's bounds
/// (`pausefor 1e11`, `seekcur -1e11`): a deadline or a position that would overflow is held at the bound
/// instead of trapping, which stopped the daemon.
@Suite("Times at Int64's bounds")
struct ClampedTimeTests {
    @Test("a sum past Int64's bounds is held at the bound it passed")
    func clampedAdding() {
        #expect(Int64(5).clampedAdding(7) == 12)
        #expect(Int64(5).clampedAdding(-7) == -2)
        #expect(Int64.max.clampedAdding(1) == .max)
        #expect(Int64(1).clampedAdding(.max) == .max)
        #expect(Int64.min.clampedAdding(-1) == .min)
        #expect(Int64(-2).clampedAdding(.min) == .min)
        #expect(Int64.max.clampedAdding(.min) == -1)
    }

    @Test("a timed pause or a sleep timer of Int64.max nanoseconds waits for ever, from any moment")
    func timersAtTheBound() throws {
        var subject = try context(in: .play)
        _ = try subject.handle(.pauseFor(duration: .max), now: 5_000_000_000)
        #expect(subject.state.kind == .pause)
        #expect(subject.nextDeadline == .max)
        _ = try subject.handle(.pauseFor(duration: .max), now: 6_000_000_000)
        #expect(subject.nextDeadline == .max)
        #expect(subject.tick(now: 1 << 62) == [])
        #expect(subject.state.kind == .pause)

        subject = try context(in: .play)
        _ = try subject.handle(.sleepAfter(duration: .max), now: 5_000_000_000)
        #expect(subject.sleepTimer == .at(.max))
        #expect(subject.tick(now: 1 << 62) == [])
        #expect(subject.state.kind == .play)
    }

    @Test("a relative seek of Int64's bounds goes to the song's end or its start")
    func relativeSeekAtTheBounds() async throws {
        let (engine, _) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true)
        defer { engine.shutdown() }
        // Paused a second in: the position stays where the seeks put it.
        try await engine.handle([.play, .pause, .seek(offset: 1_000_000_000)])
        try await engine.seek(by: .max)
        #expect(engine.status.heardFrames == 132_300)
        try await engine.seek(by: .min)
        #expect(engine.status.heardFrames == 0)
        try await engine.seek(by: 1_000_000_000)
        try await engine.seek(by: .min)
        #expect(engine.status.heardFrames == 0)
    }
}
