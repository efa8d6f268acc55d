import PlayerCore
import Testing

@testable import PlayerDaemon

@Suite("Crossfade, MixRamp and ranges in the state file")
struct CrossfadeStateTests {
    @Test("written in MPD's formats (crossfade %i, mixrampdb and mixrampdelay %f) and read back")
    func roundTrip() throws {
        var state = SavedState()
        state.paths = ["/music/a.mp3", "/music/b.mp3", "/music/c.mp3"]
        state.crossfade.seconds = 7
        state.crossfade.mixRampDB = -17.5
        state.crossfade.mixRampDelay = 2.25
        state.ranges = [0: SongRange(start: 6_500, end: 12_250), 2: SongRange(start: 1_000, end: nil)]
        let text = state.encoded()
        #expect(text.contains("\ncrossfade: 7\nmixrampdb: -17.500000\nmixrampdelay: 2.250000\n"))
        #expect(
            text.hasSuffix(
                "song: /music/a.mp3\nrange: 6500-12250\nsong: /music/b.mp3\nsong: /music/c.mp3\nrange: 1000-\nend\n"))
        let read = try SavedState(decoding: text)
        #expect(read == state)
        #expect(read.skippedLines.isEmpty)
    }

    @Test("the defaults: no crossfade, 0 dB, MixRamp off (-1, which MPD does not read back either)")
    func defaults() throws {
        let text = SavedState().encoded()
        #expect(text.contains("\ncrossfade: 0\nmixrampdb: 0.000000\nmixrampdelay: -1.000000\n"))
        #expect(try SavedState(decoding: text).crossfade == CrossfadeSettings())
    }

    @Test(
        "damaged lines are read past, the rest stays",
        arguments: [
            ("crossfade: x", "crossfade must be whole seconds, not \"x\""),
            ("crossfade: -3", "crossfade must be whole seconds, not \"-3\""),
            ("mixrampdb: loud", "mixrampdb must be decibels, not \"loud\""),
            ("range: 5-2", "range must be milliseconds START-END (END may be left out) after a song, not \"5-2\""),
            ("range: x-", "range must be milliseconds START-END (END may be left out) after a song, not \"x-\""),
        ])
    func damaged(_ line: String, _ reason: String) throws {
        let text = "playerd-state 1\nsong: /music/a.mp3\n\(line)\nend\n"
        let state = try SavedState(decoding: text)
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.crossfade == CrossfadeSettings())
        #expect(state.ranges.isEmpty)
        #expect(state.skippedLines == ["line 3: \(reason)"])
    }

    @Test("a huge crossfade is held at MPD's largest; a mixrampdelay not starting with a digit is ignored, as MPD")
    func limits() throws {
        let text = "playerd-state 1\ncrossfade: 99999999999\nmixrampdelay: nan\nend\n"
        let state = try SavedState(decoding: text)
        #expect(state.crossfade.seconds == Int(UInt32.max))
        #expect(state.crossfade.mixRampDelay == -1)
    }

    @Test(
        "what is read saves as the same text again, and reads back as the same state (the fuzz target's rule)",
        arguments: [
            "mixrampdb: 0.1234567", "mixrampdb: 3e38", "mixrampdb: -inf", "mixrampdelay: 1e-9",
            "mixrampdelay: 1e400", "mixrampdelay: 2.0000004", "crossfade: 4294967296",
        ])
    func stable(_ line: String) throws {
        let state = try SavedState(decoding: "playerd-state 1\n\(line)\nend\n")
        let saved = state.encoded()
        let reread = try SavedState(decoding: saved)
        #expect(reread == state)
        #expect(reread.encoded() == saved)
    }

    @Test("a NaN mixrampdb is read past (it would never equal itself)")
    func notANumber() throws {
        let state = try SavedState(decoding: "playerd-state 1\nmixrampdb: nan\nend\n")
        #expect(state.crossfade.mixRampDB == 0)
        #expect(state.skippedLines == ["line 2: mixrampdb must be decibels, not \"nan\""])
    }
}
