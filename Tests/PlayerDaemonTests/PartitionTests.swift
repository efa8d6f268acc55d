import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's partitions end to end: each one a player of its own, playing its own songs on its own
/// outputs at the same time as the others; idle events that stay in their partition; `delpartition`,
/// `moveoutput`, a restart that keeps them; and the answers compared with the real mpd's.
@Suite(.serialized)
struct PartitionTests {
    /// playerd with the paced null outputs `names`, and `more` flags.
    private static func options(_ names: [String], _ more: [String] = [], stateFile: String? = nil)
        -> RunningPlayerd.Options
    {
        var options = RunningPlayerd.Options()
        options.output = "null,name=\(names[0])"
        options.extraArguments = names.dropFirst().flatMap { ["--output", "null,name=\($0)"] } + more
        options.stateFile = stateFile
        return options
    }

    /// The data bytes of a WAV file (what follows its 44-byte header).
    private static func wavDataBytes(_ path: String) -> Int {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = attributes[.size] as? Int
        else { return -1 }
        return size - 44
    }

    @Test("two partitions play different songs at once, each on its own outputs, recorded frame for frame")
    func twoRoomsPlayAtOnce() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kitchen = directory + "/kitchen.wav"
        let hall = directory + "/hall.wav"
        // Each room: a paced null output that keeps time, and a recorder following it.
        let more = ["--output", "wav:\(kitchen),name=KitchenRecorder", "--output", "wav:\(hall),name=HallRecorder"]
        try withPlayerd(Self.options(["Kitchen", "Hall"], more)) { daemon in
            let first = try daemon.connect()
            let second = try daemon.connect()
            #expect(try second.command("newpartition hall") == ["OK"])
            #expect(try second.command("partition hall") == ["OK"])
            #expect(try second.command("moveoutput Hall") == ["OK"])
            #expect(try second.command("moveoutput HallRecorder") == ["OK"])
            #expect(
                try second.command("outputs") == [
                    "outputid: 0", "outputname: Hall", "plugin: null", "outputenabled: 1",
                    "outputid: 1", "outputname: HallRecorder", "plugin: wav", "outputenabled: 1", "OK",
                ])
            #expect(
                try first.command("outputs") == [
                    "outputid: 0", "outputname: Kitchen", "plugin: null", "outputenabled: 1",
                    "outputid: 1", "outputname: Hall", "plugin: dummy", "outputenabled: 0",
                    "outputid: 2", "outputname: KitchenRecorder", "plugin: wav", "outputenabled: 1",
                    "outputid: 3", "outputname: HallRecorder", "plugin: dummy", "outputenabled: 0", "OK",
                ])
            #expect(try first.command("add stereo-44k-cbr.mp3") == ["OK"])
            #expect(try second.command("add tagged-id3v23.mp3") == ["OK"])
            #expect(try first.command("play") == ["OK"])
            #expect(try second.command("play") == ["OK"])
            let kitchenStatus = try first.fields("status")
            let hallStatus = try second.fields("status")
            #expect(kitchenStatus["partition"] == "default")
            #expect(hallStatus["partition"] == "hall")
            #expect(kitchenStatus["state"] == "play")
            #expect(hallStatus["state"] == "play")
            #expect(kitchenStatus["duration"] == "3.000")
            #expect(hallStatus["duration"] == "2.000")
            #expect(try first.fields("currentsong")["file"] == "stereo-44k-cbr.mp3")
            #expect(try second.fields("currentsong")["file"] == "tagged-id3v23.mp3")
            // Each queue is its own.
            #expect(try first.fields("status")["playlistlength"] == "1")
            #expect(try second.command("playlistinfo").first == "file: tagged-id3v23.mp3")
            try expectEventually("both songs to end") {
                try first.fields("status")["state"] == "stop" && second.fields("status")["state"] == "stop"
            }
            // Each recorder holds exactly its room's song: 132,300 and 88,200 stereo 16-bit frames.
            #expect(Self.wavDataBytes(kitchen) == 132_300 * 4)
            #expect(Self.wavDataBytes(hall) == 88_200 * 4)
        }
    }

    @Test("a partition's changes reach only its clients; the daemon's reach everyone")
    func idleIsolation() throws {
        try withPlayerd(Self.options(["A", "B"])) { daemon in
            let control = try daemon.connect()
            #expect(try control.command("newpartition other") == ["OK"])
            let watcherDefault = try daemon.connect()
            let watcherOther = try daemon.connect()
            #expect(try watcherOther.command("partition other") == ["OK"])
            // Entering a partition reports everything a partition has, as MPD does.
            #expect(
                try watcherOther.command("idle") == [
                    "changed: playlist", "changed: player", "changed: mixer", "changed: output", "changed: options",
                    "OK",
                ])
            try watcherDefault.send(line: "idle playlist player options")
            try watcherOther.send(line: "idle playlist player options")
            // The default partition's queue changes: only its watcher hears.
            #expect(try control.command("add one-second.mp3") == ["OK"])
            #expect(try watcherDefault.readAnswer() == ["changed: playlist", "OK"])
            #expect(try !watcherOther.hasInput(within: .milliseconds(500)))
            // The other partition's modes change: only its watcher hears.
            try watcherDefault.send(line: "idle playlist player options")
            #expect(try control.command("partition other") == ["OK"])
            #expect(try control.command("repeat 1") == ["OK"])
            #expect(try watcherOther.readAnswer() == ["changed: options", "OK"])
            #expect(try !watcherDefault.hasInput(within: .milliseconds(500)))
            #expect(try watcherDefault.command("noidle") == ["OK"])
            // A new partition is the daemon's change: everyone hears.
            try watcherDefault.send(line: "idle partition")
            try watcherOther.send(line: "idle partition")
            #expect(try control.command("newpartition third") == ["OK"])
            #expect(try watcherDefault.readAnswer() == ["changed: partition", "OK"])
            #expect(try watcherOther.readAnswer() == ["changed: partition", "OK"])
            // Modes are the partition's own.
            #expect(try control.fields("status")["repeat"] == "1")
            #expect(try watcherDefault.fields("status")["repeat"] == "0")
            // So are channels (MPD's): a subscription is told to the partition's clients only.
            try watcherDefault.send(line: "idle subscription")
            try watcherOther.send(line: "idle subscription")
            #expect(try control.command("subscribe news") == ["OK"])
            #expect(try watcherOther.readAnswer() == ["changed: subscription", "OK"])
            #expect(try !watcherDefault.hasInput(within: .milliseconds(500)))
            #expect(try watcherDefault.command("noidle") == ["OK"])
        }
    }

    @Test("a playing partition is deleted once its output and its client have left; the others play on")
    func deletePlayingPartition() throws {
        try withPlayerd(Self.options(["A", "B"])) { daemon in
            let living = try daemon.connect()
            let leaving = try daemon.connect()
            #expect(try leaving.command("newpartition gone") == ["OK"])
            #expect(try leaving.command("partition gone") == ["OK"])
            #expect(try leaving.command("moveoutput B") == ["OK"])
            #expect(try leaving.command("add stereo-44k-cbr.mp3") == ["OK"])
            #expect(try leaving.command("play") == ["OK"])
            #expect(try living.command("add stereo-44k-cbr.mp3") == ["OK"])
            #expect(try living.command("play") == ["OK"])
            #expect(try living.command("delpartition gone") == ["ACK [5@0] {delpartition} partition still has clients"])
            #expect(try leaving.command("partition default") == ["OK"])
            #expect(try living.command("delpartition gone") == ["ACK [5@0] {delpartition} partition still has outputs"])
            // Taken back, the output leaves the partition without one: it pauses, as MPD's does.
            #expect(try living.command("moveoutput B") == ["OK"])
            #expect(try living.command("delpartition gone") == ["OK"])
            #expect(try living.command("listpartitions") == ["partition: default", "OK"])
            #expect(try leaving.command("partition gone") == ["ACK [50@0] {partition} partition does not exist"])
            let status = try living.fields("status")
            #expect(status["state"] == "play")
            #expect(status["partition"] == "default")
            #expect(
                try living.command("outputs") == [
                    "outputid: 0", "outputname: A", "plugin: null", "outputenabled: 1",
                    "outputid: 1", "outputname: B", "plugin: null", "outputenabled: 1", "OK",
                ])
            try expectEventually("the deleted partition's player to be shut down") {
                daemon.log.contains("partition gone deleted")
            }
        }
    }

    @Test("moves of one output from two partitions at once leave it playing in one of them only")
    func concurrentMoves() throws {
        try withPlayerd(Self.options(["A", "B"])) { daemon in
            let clients = [try daemon.connect(), try daemon.connect()]
            for (number, client) in clients.enumerated() {
                #expect(try client.command("newpartition room\(number)") == ["OK"])
                #expect(try client.command("partition room\(number)") == ["OK"])
                #expect(try client.command("add stereo-44k-cbr.mp3") == ["OK"])
            }
            // Both ask for the output over and over, with switches between, without waiting for answers.
            let burst = String(repeating: "moveoutput B\ntoggleoutput 0\ntoggleoutput 0\n", count: 40)
            for client in clients {
                try client.send(line: String(burst.dropLast()))
            }
            for client in clients {
                for _ in 0..<120 {
                    #expect(try client.readAnswer() == ["OK"])
                }
            }
            let lists = try clients.map { try $0.command("outputs") }
            let holders = lists.indices.filter { lists[$0].contains("plugin: null") }
            #expect(holders.count == 1, "\(lists)")
            // The toggles may have left it off wherever it is: switched on where it is listed, it plays
            // in that partition only; the other has no output that can.
            for holder in holders {
                #expect(try clients[holder].command("enableoutput 0") == ["OK"])
            }
            for client in clients {
                #expect(try client.command("play") == ["OK"])
            }
            let states = try clients.map { try $0.fields("status")["state"] ?? "" }
            #expect(states.sorted() == ["pause", "play"], "\(states)")
        }
    }

    @Test("a restart brings the partitions back with their queues, positions, modes and outputs")
    func restartKeepsPartitions() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        try withPlayerd(Self.options(["A", "B", "C"], stateFile: state)) { daemon in
            let client = try daemon.connect()
            #expect(try client.command("add one-second.mp3") == ["OK"])
            #expect(try client.command("newpartition upstairs") == ["OK"])
            #expect(try client.command("partition upstairs") == ["OK"])
            #expect(try client.command("moveoutput B") == ["OK"])
            #expect(try client.command("moveoutput C") == ["OK"])
            #expect(try client.command("disableoutput 0") == ["OK"])
            #expect(try client.command("add tagged-id3v23.mp3") == ["OK"])
            #expect(try client.command("add tagged-id3v24.mp3") == ["OK"])
            #expect(try client.command("random 1") == ["OK"])
            #expect(try client.command("setvol 40") == ["OK"])
            #expect(try client.command("seek 1 1") == ["OK"])
            #expect(try client.command("pause 1") == ["OK"])
        }
        let text = try String(contentsOfFile: state, encoding: .utf8)
        // A reader that knows no partitions reads the default partition's lines alone, every output's
        // switch among them.
        #expect(text.contains("output: 1:A\noutput: 0:B\noutput: 1:C\n"), "\(text)")
        #expect(text.contains("partition: upstairs\n"))
        let songs = text.split(separator: "\n").filter { $0.hasPrefix("song: ") }
        #expect(songs == ["song: \(Paths.fixtures)/one-second.mp3"])
        try withPlayerd(Self.options(["A", "B", "C"], stateFile: state)) { daemon in
            let client = try daemon.connect()
            #expect(try client.command("listpartitions") == ["partition: default", "partition: upstairs", "OK"])
            #expect(try client.fields("status")["playlistlength"] == "1")
            #expect(
                try client.command("outputs") == [
                    "outputid: 0", "outputname: A", "plugin: null", "outputenabled: 1",
                    "outputid: 1", "outputname: B", "plugin: dummy", "outputenabled: 0",
                    "outputid: 2", "outputname: C", "plugin: dummy", "outputenabled: 0", "OK",
                ])
            #expect(try client.command("partition upstairs") == ["OK"])
            let status = try client.fields("status")
            #expect(status["partition"] == "upstairs")
            #expect(status["playlistlength"] == "2")
            #expect(status["random"] == "1")
            #expect(status["volume"] == "40")
            #expect(status["state"] == "pause")
            #expect(status["song"] == "1")
            let elapsed = status["elapsed"].flatMap(Double.init) ?? -1
            #expect(elapsed >= 0.9 && elapsed <= 1.6, "\(status)")
            #expect(
                try client.command("outputs") == [
                    "outputid: 0", "outputname: B", "plugin: null", "outputenabled: 0",
                    "outputid: 1", "outputname: C", "plugin: null", "outputenabled: 1", "OK",
                ])
            // Played from there, on its own output.
            #expect(try client.command("play") == ["OK"])
            #expect(try client.fields("status")["state"] == "play")
        }
    }

    /// One step of a transcript: which connection sends what.
    private struct Step: CustomStringConvertible {
        var client: Int
        var line: String
        var description: String { "client \(self.client): \(self.line)" }
    }

    /// What a `status` answer shows that must match: the partition, the volume, the queue's length,
    /// the state and error (times and versions vary).
    private static func comparable(_ line: String, _ answer: [String]) -> [String] {
        guard line == "status" else { return answer }
        let kept = ["volume", "partition", "playlistlength", "state", "error"]
        return answer.filter { entry in kept.contains { entry.hasPrefix("\($0): ") } || !entry.contains(": ") }
    }

    @Test("partition commands answer as mpd answers them, step for step on the same outputs")
    func answersMatchMPD() throws {
        let music = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let outputs = ["A", "B", "C"]
        let mpd = try RunningMPD(music: music, outputs: outputs)
        let options = Self.options(outputs)
        let steps: [Step] =
            [
                Step(client: 0, line: "listpartitions"),
                Step(client: 0, line: "newpartition p1"),
                Step(client: 0, line: "newpartition p1"),
                Step(client: 0, line: "newpartition default"),
                Step(client: 0, line: "newpartition a.b"),
                Step(client: 0, line: "newpartition \"\""),
                Step(client: 0, line: "newpartition"),
                Step(client: 0, line: "listpartitions"),
                Step(client: 0, line: "partition nope"),
                Step(client: 1, line: "idle partition"),
                Step(client: 1, line: "partition p1"),
                Step(client: 1, line: "idle"),
                Step(client: 1, line: "status"),
                Step(client: 1, line: "outputs"),
                Step(client: 1, line: "setvol 50"),
                Step(client: 1, line: "enableoutput 0"),
                Step(client: 1, line: "moveoutput B"),
                Step(client: 1, line: "moveoutput B"),
                Step(client: 1, line: "moveoutput nope"),
                Step(client: 1, line: "outputs"),
                Step(client: 1, line: "status"),
                Step(client: 1, line: "setvol 50"),
                Step(client: 1, line: "status"),
                Step(client: 1, line: "moveoutput A"),
                Step(client: 1, line: "outputs"),
                // Channels are a partition's: the default partition's client sees none of p1's.
                Step(client: 1, line: "subscribe room"),
                Step(client: 0, line: "channels"),
                Step(client: 0, line: "sendmessage room hello"),
                Step(client: 1, line: "readmessages"),
                Step(client: 0, line: "idle output"),
                Step(client: 0, line: "outputs"),
                Step(client: 0, line: "enableoutput 0"),
                Step(client: 0, line: "outputset 1 a b"),
                Step(client: 0, line: "outputset 2 a b"),
                Step(client: 0, line: "delpartition default"),
                Step(client: 0, line: "delpartition nope"),
                Step(client: 0, line: "delpartition a.b"),
                Step(client: 0, line: "delpartition p1"),
                Step(client: 1, line: "partition default"),
                // Its subscriptions came with it.
                Step(client: 0, line: "channels"),
                Step(client: 0, line: "sendmessage room again"),
                Step(client: 1, line: "readmessages"),
                Step(client: 0, line: "delpartition p1"),
                Step(client: 1, line: "moveoutput B"),
                Step(client: 1, line: "moveoutput A"),
                Step(client: 0, line: "outputs"),
                Step(client: 0, line: "delpartition p1"),
                Step(client: 0, line: "listpartitions"),
                Step(client: 0, line: "command_list_ok_begin\npartition default\nlistpartitions\ncommand_list_end"),
            ]
            + (1...16).map { Step(client: 0, line: "newpartition q\($0)") }
            + [Step(client: 0, line: "listpartitions")]
        try withPlayerd(options) { daemon in
            let mpdClients = [try mpd.connect(), try mpd.connect()]
            let playerdClients = [try daemon.connect(), try daemon.connect()]
            var differences: [String] = []
            for step in steps {
                let mpdAnswer = Self.comparable(step.line, try mpdClients[step.client].command(step.line))
                let playerdAnswer = Self.comparable(step.line, try playerdClients[step.client].command(step.line))
                if mpdAnswer != playerdAnswer {
                    differences.append("\(step): mpd \(mpdAnswer), playerd \(playerdAnswer)")
                }
            }
            #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        }
    }

    @Test(
        "python-mpd2's partition calls: what it makes of mpd's answers, it makes of playerd's",
        .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.python), "needs /usr/bin/python3"))
    func pythonMPD2() throws {
        let music = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let outputs = ["A", "B", "C"]
        let mpd = try RunningMPD(music: music, outputs: outputs)
        let script = Paths.testsDirectory + "/python/mpd2_partitions.py"
        try withPlayerd(Self.options(outputs)) { daemon in
            let results = try [mpd.socketPath, daemon.socketPath].map { socket in
                try runProgram(Paths.python, [script, socket], within: .seconds(60))
            }
            for result in results {
                #expect(result.status == 0, "\(result)")
            }
            let lines = results.map { $0.stdout.split(separator: "\n").map(String.init) }
            #expect(lines[0].count == 25, "\(results[0])")
            #expect(lines[1] == lines[0], "mpd:\n\(results[0].stdout)playerd:\n\(results[1].stdout)")
            #expect(
                lines[1].contains(
                    "1 outputs () -> [{'outputid': '0', 'outputname': 'C', 'plugin': 'null', 'outputenabled': '1'}, {'outputid': '1', 'outputname': 'A', 'plugin': 'null', 'outputenabled': '1'}]"
                ),
                "\(results[1].stdout)")
        }
    }
}
