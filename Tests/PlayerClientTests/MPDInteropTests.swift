import Foundation
import PlayerClient
import Testing

/// `status --json`, with the types the JSON must have: JSONDecoder refuses a number where a Bool is
/// expected and the other way round.
private struct StatusJSON: Decodable {
    /// `single` is a boolean, or "oneshot".
    enum Single: Decodable, Equatable {
        case flag(Bool)
        case word(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else {
                self = .word(try container.decode(String.self))
            }
        }
    }

    static let keys: Set<String> = [
        "state", "file", "title", "artist", "album", "elapsed", "duration", "volume", "song", "queue_length",
        "repeat", "random", "single", "consume", "error", "resumes_in", "stops_in", "stops_at_end",
    ]

    let state: String
    let file: String?
    let title: String?
    let artist: String?
    let album: String?
    let elapsed: Double?
    let duration: Double?
    let volume: Int?
    let song: Int?
    let queueLength: Int
    let `repeat`: Bool
    let random: Bool
    let single: Single
    let consume: Bool
    let error: String?

    private enum CodingKeys: String, CodingKey {
        case state, file, title, artist, album, elapsed, duration, volume, song, `repeat`, random, single, consume
        case error
        case queueLength = "queue_length"
    }
}

@Suite("playerctl against Debian's real mpd", .serialized)
final class MPDInteropTests {
    let mpd: MPDServer

    init() throws {
        self.mpd = try MPDServer()
    }

    private func ctl(_ arguments: String...) throws -> CommandResult {
        try playerctl(["--socket", self.mpd.socketPath] + arguments)
    }

    /// Runs a verb that must succeed silently.
    private func run(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try playerctl(["--socket", self.mpd.socketPath] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, sourceLocation: sourceLocation)
    }

    private func status(sourceLocation: SourceLocation = #_sourceLocation) throws -> StatusJSON {
        let result = try self.ctl("status", "--json")
        #expect(result.status == 0, sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(Set(object?.keys.map { $0 } ?? []) == StatusJSON.keys, sourceLocation: sourceLocation)
        return try JSONDecoder().decode(StatusJSON.self, from: Data(result.stdout.utf8))
    }

    @Test("play FILE... replaces the queue with absolute paths and starts it; status shows it as mpc does")
    func playAndStatus() throws {
        try self.run("queue", "add", fixture("one-second.mp3"))
        // The first song plays over and over, however slow the machine is.
        try self.run("repeat", "on")
        try self.run("single", "on")
        // A relative path is resolved against playerctl's own directory, not the daemon's.
        let played = try playerctl(
            ["--socket", self.mpd.socketPath, "play", "tagged-id3v23.mp3", "./../Fixtures/stereo-44k-cbr.mp3"],
            directory: fixturesDirectory)
        #expect(played.status == 0, "\(played.stderr)")

        let text = try self.ctl("status")
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4)
        #expect(lines.first == "Café Noir — Ünïcødé ☃ - Björk & Sigur Rós")
        #expect(lines.dropFirst().first?.hasPrefix("[playing] #1/2   0:0") == true)
        #expect(lines.dropFirst().first?.contains("/0:02 (") == true)
        #expect(lines.dropFirst(2).first == "volume:100%   repeat: on   random: off   single: on   consume: off")
        #expect(lines.last == "")

        let status = try self.status()
        #expect(status.state == "playing")
        #expect(status.file == "tagged-id3v23.mp3")  // mpd names files inside its music directory relatively
        #expect(status.title == "Café Noir — Ünïcødé ☃")
        #expect(status.artist == "Björk & Sigur Rós")
        #expect(status.album == "日本語のアルバム")
        #expect(status.duration == 2)
        #expect(status.song == 1)
        #expect(status.queueLength == 2)
        #expect(status.volume == 100)
        #expect(status.repeat && !status.random && !status.consume)
        #expect(status.single == .flag(true))
        #expect(status.error == nil)
        #expect((status.elapsed ?? -1) >= 0)

        let metadata = try self.ctl("metadata")
        #expect(metadata.stdout.contains("file: tagged-id3v23.mp3\n"))
        #expect(metadata.stdout.contains("Title: Café Noir — Ünïcødé ☃\n"))
        #expect(metadata.stdout.contains("Genre: Électronique\n"))
        let json = try self.ctl("metadata", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["track"] as? String == "3")
        #expect(object?["position"] as? Int == 1)
    }

    @Test("pause, play-pause, play, stop, and wait for each state")
    func pauseAndToggle() throws {
        try self.run("play", fixture("stereo-44k-cbr.mp3"))
        try self.run("repeat", "on")
        try self.run("wait", "playing", "--timeout", "5s")
        try self.run("pause")
        try self.run("wait", "pause", "--timeout", "5s")
        #expect(try self.status().state == "paused")
        try self.run("play-pause")
        #expect(try self.status().state == "playing")
        try self.run("play-pause")
        #expect(try self.status().state == "paused")
        try self.run("play")
        #expect(try self.status().state == "playing")
        try self.run("stop")
        try self.run("wait", "stopped", "--timeout", "5s")
        let stopped = try self.ctl("status")
        #expect(stopped.stdout == "volume:100%   repeat: on   random: off   single: off   consume: off\n")
        // From stop, play-pause plays.
        try self.run("play-pause")
        #expect(try self.status().state == "playing")
    }

    @Test("wait returns as soon as the state changes, and gives up with exit 1 after --timeout")
    func wait() throws {
        try self.run("queue", "add", fixture("stereo-44k-cbr.mp3"))
        try self.run("repeat", "on")
        let waiting = try RunningCommand(["--socket", self.mpd.socketPath, "wait", "play", "--timeout", "20s"])
        // Let it connect and idle first; the test passes either way, as wait checks the status before idling.
        usleep(200_000)
        #expect(waiting.process.isRunning)
        let started = ContinuousClock.now
        try self.run("play")
        let result = try waiting.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(ContinuousClock.now - started < .seconds(5))

        let timedOut = try self.ctl("wait", "stop", "--timeout", "0.3")
        #expect(timedOut.status == 4)
        #expect(
            timedOut.stderr == "playerctl: timed out after 0.3s waiting for the player to be stopped; it is playing\n")
    }

    @Test("next and previous (alias prev) move through the queue")
    func nextAndPrevious() throws {
        try self.run("play", fixture("stereo-44k-cbr.mp3"), fixture("gapless-whole.mp3"), fixture("mono-48k-vbr.mp3"))
        try self.run("pause")
        try self.run("next")
        #expect(try self.status().song == 2)
        try self.run("next")
        #expect(try self.status().song == 3)
        try self.run("previous")
        #expect(try self.status().song == 2)
        try self.run("prev")
        let status = try self.status()
        #expect(status.song == 1)
        #expect(status.file == "stereo-44k-cbr.mp3")
    }

    @Test("seek to a time or by one; position prints it")
    func seek() throws {
        try self.run("play", fixture("stereo-44k-cbr.mp3"))
        try self.run("pause")
        try self.run("seek", "2")
        #expect(try self.ctl("position", "--seconds").stdout == "2.000\n")
        try self.run("seek", "-1")
        #expect(try self.ctl("position", "--seconds").stdout == "1.000\n")
        try self.run("seek", "+0.5")
        #expect(try self.ctl("position", "--seconds").stdout == "1.500\n")
        try self.run("seek", "0:02")
        #expect(try self.ctl("position").stdout == "0:02\n")
        try self.run("seek", "--", "-1s")
        #expect(try self.ctl("position", "--seconds").stdout == "1.000\n")
    }

    @Test("volume: print, set, change by +N and -N")
    func volume() throws {
        try self.run("play", fixture("stereo-44k-cbr.mp3"))
        #expect(try self.ctl("volume").stdout == "100%\n")
        try self.run("volume", "70")
        #expect(try self.ctl("volume").stdout == "70%\n")
        try self.run("volume", "+5")
        #expect(try self.status().volume == 75)
        try self.run("volume", "-10")
        #expect(try self.status().volume == 65)
    }

    @Test("repeat, random, single and consume: on, off, oneshot, and toggle")
    func options() throws {
        try self.run("repeat", "on")
        try self.run("random", "on")
        try self.run("single", "oneshot")
        try self.run("consume", "on")
        var status = try self.status()
        #expect(status.repeat && status.random && status.consume)
        #expect(status.single == .word("oneshot"))
        let text = try self.ctl("status")
        #expect(text.stdout == "volume:100%   repeat: on   random: on   single: oneshot   consume: on\n")
        try self.run("repeat")
        try self.run("random", "off")
        try self.run("single")
        try self.run("consume")
        status = try self.status()
        #expect(!status.repeat && !status.random && !status.consume)
        #expect(status.single == .flag(false))
        try self.run("single")
        #expect(try self.status().single == .flag(true))
    }

    @Test("queue add, list, move, remove, clear")
    func queue() throws {
        try self.run(
            "queue", "add", fixture("stereo-44k-cbr.mp3"), fixture("tagged-id3v23.mp3"), fixture("one-second.mp3"),
            fixture("mono-48k-vbr.mp3"))
        #expect(
            try self.ctl("queue", "list").stdout == """
                  1. stereo-44k-cbr.mp3 (0:03)
                  2. Björk & Sigur Rós - Café Noir — Ünïcødé ☃ (0:02)
                  3. one-second.mp3 (0:01)
                  4. mono-48k-vbr.mp3 (0:03)

                """)
        try self.run("play")
        try self.run("pause")
        try self.run("queue", "move", "4", "1")
        try self.run("queue", "remove", "2", "4")
        // Removing the current song makes the next one current, as mpd does; `queue` alone lists.
        #expect(
            try self.ctl("queue").stdout == """
                  1. mono-48k-vbr.mp3 (0:03)
                > 2. Björk & Sigur Rós - Café Noir — Ünïcødé ☃ (0:02)

                """)
        try self.run("queue", "clear")
        #expect(try self.ctl("queue", "list").stdout == "")
        #expect(try self.status().queueLength == 0)
    }

    @Test("status --follow on a terminal redraws one line until Ctrl-C, then ends it and exits 0")
    func follow() throws {
        try self.run("play", fixture("stereo-44k-cbr.mp3"))
        try self.run("repeat", "on")
        let following = try RunningCommand(
            ["--socket", self.mpd.socketPath, "status", "--follow"], onTerminal: true)
        usleep(1_000_000)
        try self.run("pause")
        usleep(300_000)
        following.process.interrupt()
        let result = try following.finish()
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("\r[playing] stereo-44k-cbr.mp3  0:0"))
        #expect(result.stdout.contains("\r[paused] stereo-44k-cbr.mp3  0:0"))
        #expect(result.stdout.contains("/0:03 [#"))
        #expect(result.stdout.hasSuffix("%\u{1B}[K\n"))
        // Several redraws while playing, a quarter second apart, and no line breaks but the last.
        #expect(result.stdout.split(separator: "\r").count >= 3)
        #expect(result.stdout.filter { $0 == "\n" }.count == 1)
    }

    @Test("a refused command exits 1 with mpd's message")
    func refusals() throws {
        let seek = try self.ctl("seek", "10")
        #expect(seek.status == 1)
        #expect(seek.stderr == "playerctl: Not playing\n")
        #expect(seek.stdout.isEmpty)

        let remove = try self.ctl("queue", "remove", "9")
        #expect(remove.status == 1)
        #expect(remove.stderr == "playerctl: Bad song index\n")

        let missing = try self.ctl("play", "/nonexistent/song.mp3")
        #expect(missing.status == 1)
        #expect(missing.stderr == "playerctl: Failed to access /nonexistent/song.mp3: No such file or directory\n")
    }

    @Test(
        "playerd's own verbs get mpd's unknown-command ACK: a clean exit 1",
        arguments: [
            (["pause", "--for", "1m30s"], "pausefor"), (["stop", "--after", "20m"], "sleeptimer"),
            (["stop", "--at-end"], "sleeptimer"), (["stop", "--cancel-timer"], "sleeptimer"),
        ])
    func playerdOnlyVerbs(arguments: [String], command: String) throws {
        let result = try playerctl(["--socket", self.mpd.socketPath] + arguments)
        #expect(result.status == 1)
        #expect(result.stderr == "playerctl: unknown command \"\(command)\"\n")
    }

    @Test("PlayerClient reads mpd's answers, refusals and idle events")
    func client() throws {
        let connection = try self.mpd.connect()
        #expect(connection.protocolVersion.hasPrefix("0.23."))
        let watcher = try self.mpd.connect()
        _ = try connection.commandList([
            ("add", [fixture("tagged-id3v23.mp3")]), ("add", [fixture("one-second.mp3")]), ("repeat", ["1"]),
            ("play", ["1"]),
        ])
        let status = try connection.status()
        #expect(status.state == .play)
        #expect(status.song == 1)
        #expect(status.playlistLength == 2)
        // mpd reports the format once its decoder has started, a moment after `play` returns.
        var audio = status.audio
        let deadline = ContinuousClock.now + .seconds(5)
        while audio == nil && ContinuousClock.now < deadline {
            usleep(10_000)
            audio = try connection.status().audio
        }
        #expect(audio == "44100:16:2")
        #expect(try connection.currentSong()?.file == "one-second.mp3")
        let queue = try connection.playlistInfo()
        #expect(queue.map(\.file) == ["tagged-id3v23.mp3", "one-second.mp3"])
        #expect(queue.first?.title == "Café Noir — Ünïcødé ☃")
        #expect(queue.first?.track == "3")
        #expect(queue.first?.duration == 2)
        // The watcher connected before the changes, so mpd has them pending for it.
        #expect(
            Set(try watcher.idle(["player", "playlist", "options"])).isSubset(of: ["player", "playlist", "options"]))
        #expect(throws: ClientError.refused(code: 5, command: "", message: "unknown command \"frobnicate\"")) {
            try connection.command("frobnicate")
        }
        #expect(throws: ClientError.refused(code: 2, command: "setvol", message: "Number too large: 101")) {
            try connection.command("setvol", ["101"])
        }
        // The connection is still good after a refusal.
        #expect(try connection.status().state == .play)
        // Nothing changes for the watcher now, so its idle gives up with noidle and returns nothing.
        _ = try watcher.idle(["stored_playlist"], timeout: .milliseconds(100))
        #expect(try watcher.status().playlistLength == 2)
    }
}

@Suite("playerctl without a daemon, and its usage errors")
struct PlayerctlErrorTests {
    @Test("no socket: exit 3 at once, saying how to start playerd")
    func notRunning() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("socket")
        let started = ContinuousClock.now
        let result = try playerctl(["--socket", path, "status"])
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(result.status == 3)
        #expect(
            result.stderr == """
                playerctl: playerd is not running: no socket at \(path)
                playerctl: \(startAdvice(socketPath: path, userID: geteuid()))

                """)
        #expect(result.stdout.isEmpty)

        // The default socket comes from PLAYERD_SOCKET.
        var environment = ProcessInfo.processInfo.environment
        environment["PLAYERD_SOCKET"] = path
        let fromEnvironment = try playerctl(["next"], environment: environment)
        #expect(fromEnvironment.status == 3)
        #expect(fromEnvironment.stderr.hasPrefix("playerctl: playerd is not running: no socket at \(path)\n"))
    }

    @Test(
        "usage errors exit 2 before connecting",
        arguments: [
            ["frobnicate"], ["seek"], ["seek", "abc"], ["seek", "1", "2"], ["volume", "200"], ["volume", "loud"],
            ["volume", "+101"], ["pause", "--for", "soon"], ["stop", "--after", "1m", "--at-end"],
            ["wait", "sleeping"],
            ["wait"], ["repeat", "maybe"], ["single", "twice"], ["queue", "remove", "0"], ["queue", "move", "1"],
            ["queue", "add"], ["status", "--json", "--follow"], ["wait", "play", "--timeout", "1:75"],
        ])
    func usage(arguments: [String]) throws {
        let scratch = try ScratchDirectory()
        let result = try playerctl(["--socket", scratch.file("socket")] + arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(result.stderr.contains("Usage: playerctl"))
    }

    @Test("--help exits 0 and lists the verbs")
    func help() throws {
        let result = try playerctl(["--help"])
        #expect(result.status == 0)
        for verb in ["play", "pause", "play-pause", "stop", "seek", "volume", "queue", "wait", "previous, prev"] {
            #expect(result.stdout.contains("  \(verb) "))
        }
    }
}
