import Foundation
import Testing

/// `playerctl play` against the real daemon: a play that cannot happen changes nothing and says why,
/// one that can happens whatever failed before, and a missing sound card is said at once.
@Suite("playerctl play: nothing lost")
struct PlayRequestTests {
    private func playerctl(_ daemon: RunningPlayerd, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(Paths.playerctl, ["--socket", daemon.socketPath] + arguments)
    }

    /// The queue's files, the current song's id, the state and the position, paused so that it stays.
    private func snapshot(_ client: LineClient) throws -> [String] {
        let status = try client.fields("status")
        let files = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
        return files + ["songid=\(status["songid"] ?? "")", "state=\(status["state"] ?? "")"]
            + ["elapsed=\(status["elapsed"] ?? "")", "error=\(status["error"] ?? "")"]
    }

    @Test("a play FILE that is refused leaves the queue, the song, the position and the state as they were")
    func refusedPlayChangesNothing() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            for song in ["one-second.mp3", "stereo-44k-cbr.mp3", "tagged-id3v1.mp3"] {
                _ = try client.command("add \(song)")
            }
            _ = try client.command("play 1")
            _ = try client.command("pause 1")
            let before = try self.snapshot(client)
            #expect(before.contains("state=pause"))

            let missing = try self.playerctl(daemon, ["play", Paths.fixture("nosuch.mp3")])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("nosuch.mp3"))
            #expect(missing.stderr.contains("No such file"))

            let notMP3 = try self.playerctl(daemon, ["play", Paths.fixture("random.mp3")])
            #expect(notMP3.status == 1)
            #expect(notMP3.stderr.contains("random.mp3: not an MP3 stream"))

            let noneOfThem = try self.playerctl(
                daemon, ["play", Paths.fixture("random.mp3"), Paths.fixture("empty.mp3")])
            #expect(noneOfThem.status == 1)
            #expect(noneOfThem.stderr.contains("random.mp3: not an MP3 stream"))
            #expect(noneOfThem.stderr.contains("empty.mp3"))

            // One good path among missing ones is still refused whole: every path is checked first.
            let oneMissing = try self.playerctl(
                daemon, ["play", Paths.fixture("one-second.mp3"), Paths.fixture("nosuch.mp3")])
            #expect(oneMissing.status == 1)

            #expect(try self.snapshot(client) == before)
        }
    }

    @Test("a play that can happen happens, whatever failed before; it exits once the song plays")
    func failuresDoNotPoisonTheNextPlay() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            // As the issue tried it: a text file with an .mp3 name, through MPD's own clear + add + play.
            _ = try client.command("command_list_begin\nclear\nadd random.mp3\nplay\ncommand_list_end")
            #expect(try client.fields("status")["error"]?.contains("random.mp3") == true)

            let played = try self.playerctl(
                daemon, ["play", Paths.fixture("random.mp3"), Paths.fixture("one-second.mp3")])
            #expect(played.status == 0, "\(played)")
            let status = try client.fields("status")
            #expect(status["state"] == "play")
            #expect(status["song"] == "1")
            #expect(status["error"] == nil)

            // And the same through MPD's commands alone: the bad song is skipped, the good one plays.
            _ = try client.command("stop")
            _ = try client.command("command_list_begin\nclear\nadd random.mp3\nplay\ncommand_list_end")
            _ = try client.command(
                "command_list_begin\nclear\nadd random.mp3\nadd one-second.mp3\nplay\ncommand_list_end")
            #expect(try client.fields("status")["state"] == "play")

            _ = try client.command("stop")
            let resumed = try self.playerctl(daemon, ["play"])
            #expect(resumed.status == 0, "\(resumed)")
            #expect(try client.fields("status")["state"] == "play")
        }
    }

    @Test("playerctl play exits 1 naming every song when none in the queue can play")
    func nothingPlayable() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            _ = try client.command("command_list_begin\nadd random.mp3\nadd empty.mp3\ncommand_list_end")
            let result = try self.playerctl(daemon, ["play"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("random.mp3: not an MP3 stream"))
            #expect(result.stderr.contains("empty.mp3"))

            _ = try client.command("clear")
            let empty = try self.playerctl(daemon, ["play"])
            #expect(empty.status == 1)
            #expect(empty.stderr.contains("the queue is empty"))
        }
    }

    @Test("an ALSA device that cannot open is said at start, and play exits 1 with the reason")
    func missingSoundCard() throws {
        var options = RunningPlayerd.Options()
        options.output = "alsa:playerd_no_such_device"
        try withPlayerd(options) { daemon in
            let warnings = daemon.log.split(separator: "\n").filter { $0.contains("warning") }
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("alsa:playerd_no_such_device: cannot open") == true)
            #expect(warnings.first?.contains("--output null") == true)

            let result = try self.playerctl(daemon, ["play", Paths.fixture("one-second.mp3")])
            #expect(result.status == 1)
            #expect(result.stderr.contains("alsa:playerd_no_such_device: cannot open"))
        }
    }
}
