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

    @Test("an unknown mode is a corrupt file")
    func unknownMode() {
        #expect(throws: StateFileError.self) {
            try SavedState(decoding: "playerd-state 1\nreplay_gain_mode: loud\nend\n")
        }
    }
}
