import Foundation
import Testing

/// `playerctl play` judges whether a song was entered from what happened, also when the output is not
/// paced and the song is over before playerctl first looks (issue 22, item 5).
@Suite("playerctl play on outputs that are not paced")
struct PlayerctlPlayOutcomeTests {
    private func playerctl(_ socket: String, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(Paths.playerctl, ["--socket", socket] + arguments)
    }

    /// `null:unpaced`, or a WAV file in the daemon's directory (nil: the null output).
    private func options(wav: Bool) throws -> (RunningPlayerd.Options, String?) {
        var options = RunningPlayerd.Options()
        guard wav else {
            options.output = "null:unpaced"
            return (options, nil)
        }
        let directory = try Paths.makeTemporaryDirectory()
        options.output = "wav:\(directory)/out.wav"
        return (options, directory)
    }

    @Test("play FILE exits 0 when the song played to its end before playerctl looked", arguments: [false, true])
    func songOverBeforeLooking(wav: Bool) throws {
        let (options, directory) = try self.options(wav: wav)
        defer { directory.map { try? FileManager.default.removeItem(atPath: $0) } }
        try withPlayerd(options) { daemon in
            // A 0.3 s song decodes in a few milliseconds: it is over long before playerctl's first
            // `status`, every time.
            for _ in 0..<5 {
                let result = try self.playerctl(daemon.socketPath, ["play", Paths.fixture("short-22k-no-info.mp3")])
                #expect(result.status == 0, "\(result)")
                #expect(result.stderr.isEmpty, "\(result)")
            }
            // It did play: the player went through the song and stopped at the end of the queue.
            try expectEventually("the queue played to its end") {
                let fields = try daemon.connect().fields("status")
                return fields["state"] == "stop" && fields["song"] == nil && fields["error"] == nil
            }
            // Songs played, then a later one failed: the request to play was honoured. (Of one format: a
            // WAV file takes no other once it holds audio.)
            let later = try self.playerctl(
                daemon.socketPath, ["play", Paths.fixture("short-22k-no-info.mp3"), Paths.fixture("random.mp3")])
            #expect(later.status == 0, "\(later)")
            // `play` alone, starting the stopped queue again, is judged the same way.
            let again = try self.playerctl(daemon.socketPath, ["play"])
            #expect(again.status == 0, "\(again)")
        }
    }

    @Test("a file that cannot play still exits 1 with its reason, and so does an output that cannot open")
    func failuresStillFail() throws {
        var options = RunningPlayerd.Options()
        options.output = "null:unpaced"
        try withPlayerd(options) { daemon in
            let result = try self.playerctl(daemon.socketPath, ["play", Paths.fixture("random.mp3")])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("random.mp3: not an MP3 stream"), "\(result)")
        }
        options.output = "wav:/nonexistent/playerd-test/out.wav"
        try withPlayerd(options) { daemon in
            let result = try self.playerctl(daemon.socketPath, ["play", Paths.fixture("one-second.mp3")])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("wav:/nonexistent/playerd-test/out.wav: cannot open"), "\(result)")
        }
    }
}
