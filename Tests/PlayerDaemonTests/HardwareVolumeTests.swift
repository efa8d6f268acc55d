import Foundation
import PulseTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--mixer hardware` and `--mixer none`, driven as a person drives them: mpc sets the volume,
/// pactl plays the other program moving the card's level, the desktop's playerctl reads MPRIS. The
/// card is ALSA's `pulse` control plugin over a private pulseaudio's null sink (a `Master` control
/// without a sound card).
@Suite(
    .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio")
            && FileManager.default.isExecutableFile(atPath: Paths.mpc),
        "needs pulseaudio and mpc (scripts/setup.sh test)"))
struct HardwareVolumeTests {
    private static func mpc(_ daemon: RunningPlayerd, _ arguments: String...) throws -> ProgramResult {
        try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments)
    }

    /// A daemon on the pulse server's card, playing on ALSA's `pulse` device (the mixer's device is
    /// taken from it) and recording into `wav` beside it.
    private static func options(
        _ pulse: PulseServer, wav: String, stateFile: String, bus: PrivateSessionBus? = nil
    ) -> RunningPlayerd.Options {
        var options = RunningPlayerd.Options()
        options.output = "alsa:pulse,name=Card"
        options.extraArguments = ["--output", "wav:\(wav),name=Recorder", "--mixer", "hardware"]
        options.stateFile = stateFile
        options.environment = ["PULSE_SERVER": pulse.address]
        if let bus {
            options.mpris = true
            options.environment.merge(bus.environment) { _, bus in bus }
        }
        return options
    }

    @Test(
        "the card's level is the volume: mpc sets it, pactl's changes reach status, idle and MPRIS, the samples pass unscaled, a restart keeps the card's level"
    )
    func cardVolume() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let bus = try PrivateSessionBus()
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/recorder.wav"
        let stateFile = directory + "/state"
        _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "40%")

        try withPlayerd(Self.options(pulse, wav: wav, stateFile: stateFile, bus: bus)) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.fields("status")["volume"] == "40")
            #expect(daemon.log.contains("volume: mixer \"pulse\" control \"Master\", at 40%"))

            #expect(try Self.mpc(daemon, "volume", "37").status == 0)
            #expect(try pulse.sinkPercent() == 37)
            #expect(try client.fields("status")["volume"] == "37")
            #expect(try client.command("getvol") == ["volume: 37", "OK"])

            // Another program moves the card: idle clients hear `mixer`, status and MPRIS show it.
            let watcher = try LineClient.greeted(daemon.socketPath)
            try watcher.send(line: "idle mixer")
            _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "61%")
            #expect(try watcher.readAnswer() == ["changed: mixer", "OK"])
            #expect(try client.fields("status")["volume"] == "61")
            try eventually("MPRIS Volume follows the card") { try bus.output(of: ["volume"]) == "0.610000" }
            _ = try bus.output(of: ["volume", "0.25"])
            try eventually("the card follows MPRIS") { try pulse.sinkPercent() == 25 }
            #expect(try Self.mpc(daemon, "volume", "+5").status == 0)
            #expect(try pulse.sinkPercent() == 30)

            // The card scales; playerd does not: the recording holds exactly the decoded frames.
            #expect(try Self.mpc(daemon, "add", "one-second.mp3").status == 0)
            #expect(try Self.mpc(daemon, "play").status == 0)
            try expectEventually("the song to end") { try client.fields("status")["state"] == "stop" }
            #expect(try client.fields("status")["error"] == nil)
            try expectRecording(wav, holdsDecoded: "one-second.mp3", scratch: directory)
        }

        // The state file does not put its volume back over what the card has meanwhile.
        _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "20%")
        try withPlayerd(Self.options(pulse, wav: wav, stateFile: stateFile)) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.fields("status")["volume"] == "20")
            #expect(try pulse.sinkPercent() == 20)
        }
    }

    @Test(
        "a card that goes away: no volume and MPD's refusals while it is gone, playback goes on, it is back within 10 s of returning"
    )
    func cardGoesAway() throws {
        var pulse = try PulseServer()
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = ["--mixer", "hardware", "--mixer-device", "pulse"]
        options.environment = ["PULSE_SERVER": pulse.address]
        _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "55%")
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.fields("status")["volume"] == "55")
            #expect(try Self.mpc(daemon, "add", "stereo-44k-cbr.mp3").status == 0)
            #expect(try Self.mpc(daemon, "play").status == 0)

            let watcher = try LineClient.greeted(daemon.socketPath)
            try watcher.send(line: "idle mixer")
            let socket = pulse.socket
            pulse.stop()
            #expect(try watcher.readAnswer() == ["changed: mixer", "OK"])
            let status = try client.fields("status")
            #expect(status["volume"] == nil, "\(status)")
            #expect(status["state"] == "play")
            #expect(status["error"] == nil)
            let refused = try client.command("setvol 20")
            #expect(
                refused.count == 1 && refused[0].hasPrefix("ACK [5@0] {setvol} Failed to set mixer: "), "\(refused)")
            #expect(refused.first?.contains("went away") == true, "\(refused)")
            #expect(try client.command("volume +5") == ["ACK [52@0] {volume} No mixer"])
            #expect(try client.command("getvol") == ["OK"])
            #expect(try Self.mpc(daemon, "volume").stdout == "volume: n/a\n")
            #expect(daemon.log.contains("mixer \"pulse\" went away"))

            // The server comes back (on the same socket): within the 10 s retry, so does the volume.
            pulse = try PulseServer(socket: socket)
            _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "45%")
            try expectEventually("the volume is back", within: .seconds(15)) {
                try client.fields("status")["volume"] == "45"
            }
            #expect(try client.command("setvol 50") == ["OK"])
            #expect(try pulse.sinkPercent() == 50)
        }
        pulse.stop()
    }

    @Test("--mixer none: no volume line, MPD's \"No mixer\", full-level samples; a missing control names the card's")
    func noMixer() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/recorder.wav"
        // A software volume saved earlier scales nothing without a mixer.
        try "playerd-state 1\nvolume: 30\nend\n".write(toFile: directory + "/state", atomically: true, encoding: .utf8)
        var options = RunningPlayerd.Options()
        options.output = "null:unpaced"
        options.stateFile = directory + "/state"
        options.extraArguments = ["--output", "wav:\(wav)", "--mixer", "none"]
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.fields("status")["volume"] == nil)
            #expect(try client.command("setvol 50") == ["ACK [5@0] {setvol} No mixer"])
            #expect(try client.command("volume -5") == ["ACK [52@0] {volume} No mixer"])
            #expect(try client.command("getvol") == ["OK"])
            let mpc = try Self.mpc(daemon, "volume", "30")
            #expect(mpc.status != 0 && mpc.stderr.contains("No mixer"), "\(mpc)")

            #expect(try Self.mpc(daemon, "add", "one-second.mp3").status == 0)
            #expect(try Self.mpc(daemon, "play").status == 0)
            try expectEventually("the song to end") { try client.fields("status")["state"] == "stop" }
            try expectRecording(wav, holdsDecoded: "one-second.mp3", scratch: directory)
        }
        // The file keeps its software volume for a later start with software volume.
        let saved = try String(contentsOfFile: directory + "/state", encoding: .utf8)
        #expect(saved.contains("\nvolume: 30\n"), "\(saved)")

        let pulse = try PulseServer()
        defer { pulse.stop() }
        var missing = RunningPlayerd.Options()
        missing.extraArguments = ["--mixer", "hardware:Headphone", "--mixer-device", "pulse"]
        missing.environment = ["PULSE_SERVER": pulse.address]
        try withPlayerd(missing) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.fields("status")["volume"] == nil)
            let refused = try client.command("setvol 50")
            #expect(
                refused == [
                    "ACK [5@0] {setvol} Failed to set mixer: mixer \"pulse\" has no control \"Headphone\" (its playback volume controls: \"Master\")"
                ])
            #expect(daemon.log.contains("has no control \"Headphone\""))
        }
    }

    @Test(
        "bad --mixer values are refused with the value and the reason",
        arguments: [
            (["--mixer", "loud"], "invalid --mixer \"loud\": expected software, hardware, hardware:CONTROL or none"),
            (["--mixer", "hardware:"], "invalid --mixer \"hardware:\": the control's name is empty"),
            (["--mixer-device", "hw:0"], "--mixer-device \"hw:0\" needs --mixer hardware"),
        ])
    func badMixerFlags(_ arguments: [String], _ message: String) throws {
        let result = try runProgram(Paths.playerd, ["--socket", "/nonexistent/socket", "--output", "null"] + arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
