import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several outputs at once, driven as a person drives them: mpc, python-mpd2, playerctl and raw
/// requests, including an output that stalls and one that fails.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.mpc), "needs /usr/bin/mpc"))
struct OutputsTests {
    private static func mpc(_ daemon: RunningPlayerd, _ arguments: String...) throws -> ProgramResult {
        try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments, within: .seconds(20))
    }

    private static func playerctl(_ daemon: RunningPlayerd, _ arguments: String...) throws -> ProgramResult {
        try runProgram(Paths.playerctl, ["--socket", daemon.socketPath] + arguments)
    }

    /// A daemon playing on a paced null output named Speakers, followed by `more`.
    private static func options(_ more: [String], stateFile: String? = nil) -> RunningPlayerd.Options {
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = more.flatMap { ["--output", $0] }
        options.stateFile = stateFile
        return options
    }

    @Test("mpc outputs, enable, disable, toggle and python-mpd2 see the outputs as MPD shows them")
    func switchingOutputs() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/recorder.wav"
        let more = ["wav:\(wav),name=Recorder", "alsa:playerd_no_such_device,name=Broken"]
        try withPlayerd(Self.options(more)) { daemon in
            let listed = try Self.mpc(daemon, "outputs")
            #expect(
                listed.stdout
                    == "Output 1 (Speakers) is enabled\nOutput 2 (Recorder) is enabled\nOutput 3 (Broken) is enabled\n",
                "\(listed)")
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(
                try client.command("outputs") == [
                    "outputid: 0", "outputname: Speakers", "plugin: null", "outputenabled: 1",
                    "outputid: 1", "outputname: Recorder", "plugin: wav", "outputenabled: 1",
                    "outputid: 2", "outputname: Broken", "plugin: alsa", "outputenabled: 1", "OK",
                ])

            // Every switch is told to idle clients as `output`.
            let watcher = try LineClient.greeted(daemon.socketPath)
            try watcher.send(line: "idle output")
            #expect(try Self.mpc(daemon, "disable", "3").status == 0)
            #expect(try watcher.readAnswer() == ["changed: output", "OK"])
            #expect(try Self.mpc(daemon, "outputs").stdout.contains("Output 3 (Broken) is disabled\n"))
            #expect(try Self.mpc(daemon, "toggleoutput", "3").status == 0)
            #expect(try Self.mpc(daemon, "enable", "only", "Speakers").status == 0)
            #expect(
                try Self.mpc(daemon, "outputs").stdout
                    == "Output 1 (Speakers) is enabled\nOutput 2 (Recorder) is disabled\nOutput 3 (Broken) is disabled\n"
            )
            #expect(try Self.mpc(daemon, "enable", "Recorder", "Broken").status == 0)

            // MPD's refusals, word for word.
            #expect(try client.command("enableoutput 7") == ["ACK [50@0] {enableoutput} No such audio output"])
            #expect(try client.command("disableoutput x") == ["ACK [2@0] {disableoutput} Integer expected: x"])
            #expect(try client.command("outputset 0 foo bar") == ["ACK [2@0] {outputset} Unsupported attribute"])
            #expect(try client.command("outputset 0 fo-o bar") == ["ACK [2@0] {outputset} Illegal attribute name"])
            #expect(try client.command("outputset 5 dop 1") == ["ACK [50@0] {outputset} No such audio output"])

            // Playing: the broken output is marked and the others play; no error in status.
            #expect(try Self.mpc(daemon, "add", "one-second.mp3").status == 0)
            #expect(try Self.mpc(daemon, "play").status == 0)
            try expectEventually("the song to end") { try client.fields("status")["state"] == "stop" }
            #expect(try client.fields("status")["error"] == nil)
            let afterPlay = try Self.mpc(daemon, "outputs").stdout
            #expect(
                afterPlay.contains("Output 3 (Broken) is enabled\n\terror=\"alsa:playerd_no_such_device: cannot open"))
            #expect(daemon.log.contains("output \"Broken\" failed: alsa:playerd_no_such_device: cannot open"))

            // The recording beside the paced null output holds exactly the decoded frames.
            try expectRecording(wav, holdsDecoded: "one-second.mp3", scratch: directory)

            // python-mpd2 reads the list and switches.
            let script = """
                import mpd, sys
                c = mpd.MPDClient(); c.connect(sys.argv[1])
                c.disableoutput(1)
                print([(o['outputname'], o['plugin'], o['outputenabled']) for o in c.outputs()])
                try:
                    c.enableoutput(9)
                except mpd.CommandError as e:
                    print(e)
                """
            let python = try runProgram(Paths.python, ["-c", script, daemon.socketPath])
            #expect(
                python.stdout
                    == "[('Speakers', 'null', '1'), ('Recorder', 'wav', '0'), ('Broken', 'alsa', '1')]\n"
                    + "[50@0] {enableoutput} No such audio output\n", "\(python)")
        }
    }

    @Test("an output that stalls drops what it cannot take; the others keep time and every client is served")
    func stalledOutput() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A WAV written into a FIFO that is open for reading but never read: once the pipe is full, every
        // write into it blocks for good, as an output to a stalled reader does.
        let fifo = directory + "/stalled"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        try withPlayerd(Self.options(["wav:\(fifo),name=Stalled"])) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("add gapless-whole.mp3").last == "OK")
            #expect(try client.command("add stereo-44k-cbr.mp3").last == "OK")
            let start = ContinuousClock.now
            #expect(try client.command("play").last == "OK")
            // The stalled output's ring holds 3 s of this format; past that it drops.
            try expectEventually("the stalled output to drop frames", within: .seconds(10)) {
                try client.command("outputs").contains { $0.hasPrefix("attribute: dropped_frames=") }
            }
            // Meanwhile the leader kept time: the position is the time since play, within a margin.
            let status = try client.fields("status")
            let elapsed = Double(status["elapsed"] ?? "") ?? -1
            let played = (ContinuousClock.now - start) / .seconds(1)
            let position = (Double(status["song"] ?? "") ?? 0) * 3 + elapsed
            #expect(abs(position - played) < 0.5, "position \(position) s after \(played) s of wall time")
            #expect(daemon.log.contains("output \"Stalled\" cannot keep up"))

            // Switching it off answers at once, and another client is served at the same moment.
            let other = try LineClient.greeted(daemon.socketPath)
            let switchStart = ContinuousClock.now
            #expect(try client.command("disableoutput 1") == ["OK"])
            #expect(try other.command("ping") == ["OK"])
            #expect(ContinuousClock.now - switchStart < .seconds(1))
            let listed = try Self.mpc(daemon, "outputs").stdout
            #expect(
                listed.hasPrefix("Output 1 (Speakers) is enabled\nOutput 2 (Stalled) is disabled\n\tdropped_frames="))
            #expect(try client.fields("status")["state"] == "play")
        }
    }

    @Test("which outputs are on survives a restart; an output no longer configured is forgotten")
    func switchesSurviveRestart() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        try withPlayerd(Self.options(["null,name=Kitchen", "null,name=Garden"], stateFile: state)) { (daemon) throws in
            #expect(try Self.mpc(daemon, "disable", "Kitchen").status == 0)
            #expect(try Self.mpc(daemon, "disable", "Speakers").status == 0)
        }
        let saved = try String(contentsOfFile: state, encoding: .utf8)
        #expect(saved.contains("output: 0:Speakers\noutput: 0:Kitchen\noutput: 1:Garden\n"), "\(saved)")
        try withPlayerd(Self.options(["null,name=Garden", "null,name=Porch,enabled=no"], stateFile: state)) {
            (daemon) throws in
            #expect(
                try Self.mpc(daemon, "outputs").stdout
                    == "Output 1 (Speakers) is disabled\nOutput 2 (Garden) is enabled\nOutput 3 (Porch) is disabled\n")
        }
    }

    @Test("playerctl outputs lists and switches by name or number")
    func playerctlOutputs() throws {
        try withPlayerd(Self.options(["null,name=Living Room"])) { daemon in
            #expect(try Self.playerctl(daemon, "outputs").stdout == "1 Speakers (null): on\n2 Living Room (null): on\n")
            #expect(
                try Self.playerctl(daemon, "outputs", "disable", "Living Room").stdout
                    == "1 Speakers (null): on\n2 Living Room (null): off\n")
            #expect(try Self.playerctl(daemon, "outputs", "toggle", "1").stdout.hasPrefix("1 Speakers (null): off\n"))
            #expect(
                try Self.playerctl(daemon, "outputs", "--json").stdout
                    == """
                    {"number": 1, "name": "Speakers", "plugin": "null", "enabled": false, "error": null, "dropped_frames": 0}
                    {"number": 2, "name": "Living Room", "plugin": "null", "enabled": false, "error": null, "dropped_frames": 0}

                    """)
            let unknown = try Self.playerctl(daemon, "outputs", "enable", "Attic")
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr
                    == "playerctl: no output is named or numbered \"Attic\"; there are \"Speakers\", \"Living Room\"\n")
            #expect(try Self.playerctl(daemon, "outputs", "enable").status == 2)
        }
    }

    @Test("ncmpcpp's outputs screen lists the outputs and switches one", .timeLimit(.minutes(2)))
    func ncmpcppOutputs() throws {
        let ncmpcpp = "/usr/bin/ncmpcpp"
        try requireTool(ncmpcpp)
        try withPlayerd(Self.options(["null,name=Garden Speakers"])) { daemon in
            let session = try TmuxSession([ncmpcpp, "-h", daemon.socketPath])
            try session.waitFor(all: ["Playlist (0 items)"])
            // 7: the outputs screen.
            try session.send("7")
            let screen = try session.waitFor(all: ["Outputs", "Speakers", "Garden Speakers"])
            #expect(!screen.contains("MPD error"), "\(screen)")
            // Enter on the first row switches it off; ncmpcpp says so, and the server agrees.
            try session.send("Enter")
            try session.waitFor(all: ["Output \"Speakers\" disabled"])
            try expectEventually("Speakers to be off") {
                try Self.mpc(daemon, "outputs").stdout.hasPrefix("Output 1 (Speakers) is disabled\n")
            }
            try session.send("Enter")
            try session.waitFor(all: ["Output \"Speakers\" enabled"])
        }
    }

    @Test("bad --output values are refused at start, naming the value and the reason")
    func badOutputs() throws {
        let cases: [([String], String)] = [
            (["null,name=A", "null,name=A"], "invalid output \"null,name=A\": another output is already named \"A\""),
            (["null,enabled=maybe"], "invalid output \"null,enabled=maybe\": enabled= takes yes or no, not \"maybe\""),
            (["null", "null"], "invalid output \"null\": another output is already named \"null\""),
            (["speakers"], "invalid output \"speakers\": expected one of"),
            (["null,format=44100:16:2"], "invalid output \"null,format=44100:16:2\": format= is for fifo outputs only"),
        ]
        for (outputs, message) in cases {
            let result = try runProgram(
                Paths.playerd,
                outputs.flatMap { ["--output", $0] } + ["--socket", "/nonexistent/s", "--state-file", "none"])
            #expect(result.status == 64, "\(outputs): \(result)")
            #expect(result.stderr.contains(message), "\(outputs): \(result)")
        }
    }
}
