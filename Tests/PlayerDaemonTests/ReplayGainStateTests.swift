import PlayerCore
import PlayerDaemon
import Testing

@Suite("ReplayGain in the state file")
struct ReplayGainStateTests {
    @Test("the mode is written and read back", arguments: ReplayGainMode.allCases)
    func roundTrip(_ mode: ReplayGainMode) throws {
        var state = SavedState()
        state.replayGainMode = mode
        let text = state.encoded()
        #expect(text.contains("replay_gain_mode: \(mode.rawValue)\n"))
        #expect(try SavedState(decoding: text).replayGainMode == mode)
    }

    @Test("a file from before ReplayGain loads with the mode off")
    func olderFile() throws {
        let text = "playerd-state 1\nvolume: 80\nstate: stop\nsong: /music/a.mp3\nend\n"
        #expect(try SavedState(decoding: text).replayGainMode == .off)
    }

    @Test("an unknown mode is read past: the mode stays off and the line is reported")
    func unknownMode() throws {
        let state = try SavedState(decoding: "playerd-state 1\nreplay_gain_mode: loud\nsong: /music/a.mp3\nend\n")
        #expect(state.replayGainMode == .off)
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.skippedLines == ["line 2: replay_gain_mode must be off, track, album or auto, not \"loud\""])
    }
}
