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

    @Test("priorities are kept as MPD keeps them: a prio line before its song; a bad one is read past")
    func priorities() throws {
        var state = SavedState()
        state.paths = ["/music/a.mp3", "/music/b.mp3", "/music/c.mp3"]
        state.priorities = [0: 255, 2: 1]
        let text = state.encoded()
        #expect(text.contains("prio: 255\nsong: /music/a.mp3\nsong: /music/b.mp3\nprio: 1\nsong: /music/c.mp3\n"))
        let read = try SavedState(decoding: text)
        #expect(read == state)
        let damaged = try SavedState(
            decoding: "playerd-state 1\nprio: 256\nsong: /music/a.mp3\nprio: 0\nsong: /music/b.mp3\nend\n")
        #expect(damaged.paths == ["/music/a.mp3", "/music/b.mp3"])
        #expect(damaged.priorities.isEmpty)
        #expect(damaged.skippedLines.count == 2)
    }

    // Seen while writing the statefile fuzz target (Fuzz/Corpus/statefile/elapsed-*): a huge position was
    // accepted, and the daemon trapped at every start converting it to nanoseconds, or when saving it
    // again. Now the line is read past: the song is kept, and plays from its start.
    @Test(
        "a position no song can have is read past, not a crash; the queue stays",
        arguments: ["1e10", "9223372037", "1e16", "1e300", "179769313486231570000000000000000000000000000000"])
    func hugeElapsed(_ elapsed: String) throws {
        let state = try SavedState(decoding: stateFile(elapsed: elapsed))
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.current == 0 && state.elapsed == 0 && state.offset == 0)
        #expect(state.skippedLines == ["line 5: elapsed must be seconds, at most 1000000000, not \"\(elapsed)\""])
    }

    @Test(
        "a damaged setting or position is read past, keeping its default; the queue and the rest survive",
        arguments: [
            ("volume: 180", "volume must be 0 to 100"), ("muted: yes", "muted must be 0 or 1"),
            ("repeat: 2", "repeat must be 0 or 1"), ("random: ", "random must be 0 or 1"),
            ("consume: on", "consume must be 0 or 1"), ("single: twice", "single must be 0, 1 or oneshot"),
            ("replay_gain_mode: loud", "replay_gain_mode must be off, track, album or auto"),
            ("state: dancing", "state must be a player state (play, pause or stop)"),
            ("current: -1", "current must be a position in the queue"),
        ])
    func damagedSetting(line: String, complaint: String) throws {
        let text =
            "playerd-state 1\nrandom: 1\n\(line)\nstate: pause\ncurrent: 1\nelapsed: 2.5\n"
            + "song: /music/a.mp3\nsong: /music/b.mp3\nend\n"
        let state = try SavedState(decoding: text)
        let value = String(line[line.index(line.firstIndex(of: ":")!, offsetBy: 2)...])
        #expect(state.skippedLines == ["line 3: \(complaint), not \"\(value)\""])
        #expect(state.paths == ["/music/a.mp3", "/music/b.mp3"])
        #expect(state.random && state.volume == 100 && !state.isMuted && !state.repeatMode && !state.consume)
        #expect(state.single == .off && state.replayGainMode == .off)
        // The lines after the damaged one still count.
        #expect(state.state == .pause && state.current == 1 && state.elapsed == 2.5)
    }

    @Test("a current position past the queue loses where playback was, not the queue")
    func currentPastTheQueue() throws {
        let text = "playerd-state 1\nstate: play\ncurrent: 5\nelapsed: 3\nsong: /music/a.mp3\nend\n"
        let state = try SavedState(decoding: text)
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.current == nil && state.state == .stop && state.elapsed == 0)
        #expect(state.skippedLines == ["the current position 5 is past the 1 songs"])
    }

    @Test(
        "a file that is not whole is corrupt",
        arguments: [
            ("volume: 80\nend\n", "it does not start with \"playerd-state 1\""),
            ("playerd-state 1\nsong: /music/a.mp3\n", "it is cut short (no \"end\" line)"),
            ("playerd-state 1\nsong /music/a.mp3\nend\n", "line 2 is not \"key: value\""),
        ])
    func notWhole(text: String, reason: String) {
        #expect(throws: StateFileError.corrupt(reason: reason)) { try SavedState(decoding: text) }
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
