import Foundation
import PulseTestSupport
import Testing

/// `--mixer hardware` with partitions: the card's mixer goes with the output whose device it belongs to
/// (ALSA's `pulse` control over a private pulseaudio's null sink, as in HardwareVolumeTests).
@Suite(
    .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio"),
        "needs pulseaudio (scripts/setup.sh test)"))
struct PartitionMixerTests {
    @Test(
        "the card's level is the volume of the partition holding the card's output, and moves with it; a restart keeps it there"
    )
    func mixerFollowsItsOutput() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "40%")
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = ["--output", "alsa:pulse,name=Card", "--mixer", "hardware"]
        options.stateFile = directory + "/state"
        options.environment = ["PULSE_SERVER": pulse.address]
        try withPlayerd(options) { daemon in
            let main = try daemon.connect()
            let room = try daemon.connect()
            #expect(try main.fields("status")["volume"] == "40")
            #expect(try room.command("newpartition room") == ["OK"])
            #expect(try room.command("partition room") == ["OK"])
            #expect(try room.fields("status")["volume"] == nil)
            #expect(try room.command("setvol 30") == ["ACK [5@0] {setvol} No mixer"])
            #expect(try room.command("moveoutput Card") == ["OK"])
            try expectEventually("the room to read the card") { try room.fields("status")["volume"] == "40" }
            #expect(try main.fields("status")["volume"] == nil)
            #expect(try main.command("setvol 30") == ["ACK [5@0] {setvol} No mixer"])
            #expect(try room.command("setvol 30") == ["OK"])
            #expect(try pulse.sinkPercent() == 30)
            // The default partition's clients were told that its volume went.
            #expect(try main.command("idle mixer") == ["changed: mixer", "OK"])
            // Another program's change reaches the room's clients, not the default partition's.
            try main.send(line: "idle mixer")
            try room.send(line: "idle mixer")
            _ = try pulse.pactl("set-sink-volume", "@DEFAULT_SINK@", "55%")
            #expect(try room.readAnswer() == ["changed: mixer", "OK"])
            // The card may report the level it was set to by `setvol` late, before this one.
            try expectEventually("the room to read the new level") { try room.fields("status")["volume"] == "55" }
            #expect(try !main.hasInput(within: .milliseconds(300)))
            #expect(try main.command("noidle") == ["OK"])
        }
        // The state file put the card's output back in the room, and the card's level with it.
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            #expect(try client.fields("status")["volume"] == nil)
            #expect(try client.command("partition room") == ["OK"])
            #expect(try client.fields("status")["volume"] == "55")
        }
    }
}
