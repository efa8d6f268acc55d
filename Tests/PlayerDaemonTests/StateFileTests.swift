import PlayerDaemon
import Testing

/// A state file that is whole and valid but for its `elapsed:` line.
private func stateFile(elapsed: String) -> String {
    "playerd-state 1\nvolume: 80\nstate: pause\ncurrent: 0\nelapsed: \(elapsed)\nsong: /music/a.mp3\nend\n"
}

@Suite("Reading the state file")
struct StateFileTests {
    @Test("reads a state file as the daemon writes it, and writes it back the same")
    func roundTrip() throws {
        var state = SavedState()
        state.paths = ["/music/a.mp3", "/music/caf\u{e9}: \u{201c}Live\u{201d}.mp3"]
        state.current = 1
        state.elapsed = 61.042
        state.state = .pause
        state.volume = 70
        state.single = .oneshot
        let text = state.encoded()
        let read = try SavedState(decoding: text)
        #expect(read == state)
        #expect(read.encoded() == text)
        #expect(read.offset == 61_042_000_000 || read.offset == 61_041_999_999)
    }

    // Seen while writing the statefile fuzz target (Fuzz/Corpus/statefile/elapsed-*): a huge position was
    // accepted, and the daemon trapped at every start converting it to nanoseconds, or when saving it
    // again, instead of keeping the file aside.
    @Test(
        "a position no song can have makes the file corrupt, not a crash",
        arguments: ["1e10", "9223372037", "1e16", "1e300", "179769313486231570000000000000000000000000000000"])
    func hugeElapsed(_ elapsed: String) {
        #expect(throws: StateFileError.corrupt(reason: "line 5: elapsed must be seconds")) {
            try SavedState(decoding: stateFile(elapsed: elapsed))
        }
    }

    @Test("the largest position accepted still converts and saves", arguments: ["1e9", "999999999.999", "0"])
    func largestElapsed(_ elapsed: String) throws {
        let state = try SavedState(decoding: stateFile(elapsed: elapsed))
        #expect(state.offset == Int64(Double(elapsed)! * 1e9))
        #expect(try SavedState(decoding: state.encoded()).elapsed == Double(elapsed)!)
    }

    @Test(
        "a damaged output line is skipped and reported; the queue and the good outputs survive",
        arguments: ["maybe", "2:Kitchen", ":Kitchen", "yes:Kitchen", ""])
    func damagedOutputLine(_ value: String) throws {
        let text =
            "playerd-state 1\noutput: 1:Speakers\noutput: \(value)\noutput: 0:Snapcast\ncurrent: 0\n"
            + "song: /music/a.mp3\nend\n"
        let state = try SavedState(decoding: text)
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.current == 0)
        #expect(
            state.outputs == [
                SavedOutput(name: "Speakers", isEnabled: true), SavedOutput(name: "Snapcast", isEnabled: false),
            ])
        #expect(
            state.skippedLines == ["line 3: output must be 0 or 1, a colon and the output's name, not \"\(value)\""])
    }
}
