import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Clients against a real playerd: idle between connections, and the connection edge cases a daemon
/// must survive (long lines, bad bytes, clients that vanish or half-close, too many clients).
@Suite("Connections")
struct ConnectionTests {
    // MARK: - idle

    @Test("idle player: client A is told of client B's play, with changed: player and OK")
    func idleSeesAnotherClientsPlay() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let b = try daemon.connect()
            #expect(try b.command("add stereo-44k-cbr.mp3") == ["OK"])
            try a.send(line: "idle player")
            // Nothing has happened to the player yet: A waits.
            #expect(try !a.hasInput(within: .milliseconds(300)))
            #expect(try b.command("play") == ["OK"])
            #expect(try a.readAnswer() == ["changed: player", "OK"])
            #expect(try b.command("stop") == ["OK"])
        }
    }

    @Test("idle with no arguments waits for any subsystem; the queue change comes as changed: playlist")
    func idleWithoutArguments() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let b = try daemon.connect()
            try a.send(line: "idle")
            #expect(try !a.hasInput(within: .milliseconds(300)))
            #expect(try b.command("add one-second.mp3") == ["OK"])
            #expect(try a.readAnswer() == ["changed: playlist", "OK"])
            try a.send(line: "idle")
            #expect(try b.command("setvol 10") == ["OK"])
            #expect(try a.readAnswer() == ["changed: mixer", "OK"])
            try a.send(line: "idle")
            #expect(try b.command("consume 1") == ["OK"])
            #expect(try a.readAnswer() == ["changed: options", "OK"])
        }
    }

    @Test("noidle ends an idle at once with a bare OK; the connection goes on")
    func noidleEndsIdle() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            try a.send(line: "idle")
            #expect(try !a.hasInput(within: .milliseconds(200)))
            try a.send(line: "noidle")
            #expect(try a.readAnswer() == ["OK"])
            #expect(try a.command("ping") == ["OK"])
            // noidle with no idle running is ignored without an answer, as MPD does.
            try a.send(line: "noidle")
            #expect(try a.command("ping") == ["OK"])
        }
    }

    @Test("changes made while a client was not idling are reported at its next idle, immediately")
    func missedChangesComeAtTheNextIdle() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let b = try daemon.connect()
            for command in ["add stereo-44k-cbr.mp3", "play", "stop", "repeat 1", "setvol 50"] {
                #expect(try b.command(command) == ["OK"], "\(command)")
            }
            // MPD's order of subsystems, each once however often it changed.
            #expect(
                try a.command("idle", timeout: .seconds(2))
                    == ["changed: playlist", "changed: player", "changed: mixer", "changed: options", "OK"])
            // They were reported: the next idle waits again.
            try a.send(line: "idle")
            #expect(try !a.hasInput(within: .milliseconds(300)))
            try a.send(line: "noidle")
            #expect(try a.readAnswer() == ["OK"])
            // An idle that answers forgets the changes it was not asked for, as mpd 0.23 does
            // (Client::IdleNotify clears every flag): the volume's change is not told later.
            #expect(try b.command("setvol 60") == ["OK"])
            #expect(try b.command("repeat 0") == ["OK"])
            #expect(try a.command("idle options", timeout: .seconds(2)) == ["changed: options", "OK"])
            try a.send(line: "idle mixer")
            #expect(try !a.hasInput(within: .milliseconds(300)))
            try a.send(line: "noidle")
            #expect(try a.readAnswer() == ["OK"])
            // One not asked for while no idle answers stays pending: `noidle` forgets nothing.
            #expect(try b.command("setvol 70") == ["OK"])
            try a.send(line: "idle options")
            #expect(try !a.hasInput(within: .milliseconds(300)))
            try a.send(line: "noidle")
            #expect(try a.readAnswer() == ["OK"])
            #expect(try a.command("idle mixer", timeout: .seconds(2)) == ["changed: mixer", "OK"])
        }
    }

    @Test("a song ending by itself wakes idle player, for every waiting client")
    func songEndWakesEveryIdler() throws {
        try withPlayerd { daemon in
            let control = try daemon.connect()
            let idlers = try (0..<3).map { _ in try daemon.connect() }
            #expect(try control.command("add one-second.mp3") == ["OK"])
            #expect(try control.command("play") == ["OK"])
            for idler in idlers {
                // The play itself may or may not be reported first; wait until a stop shows.
                var stopped = false
                for _ in 0..<3 where !stopped {
                    #expect(try idler.command("idle player", timeout: .seconds(10)) == ["changed: player", "OK"])
                    stopped = try idler.fields("status")["state"] == "stop"
                }
                #expect(stopped)
            }
        }
    }

    @Test("repeat on a one-song queue: each time the song starts again wakes idle player, as with mpd")
    func repeatedSongWakesIdle() throws {
        try withPlayerd { daemon in
            let control = try daemon.connect()
            let idler = try daemon.connect()
            #expect(try control.command("add one-second.mp3") == ["OK"])
            #expect(try control.command("repeat 1") == ["OK"])
            #expect(try control.command("play") == ["OK"])
            let first = try #require(try idler.fields("status")["songid"])
            // Two restarts of the same song, each told (the first idle may also carry the play).
            for _ in 0..<2 {
                #expect(try idler.command("idle player", timeout: .seconds(5)) == ["changed: player", "OK"])
            }
            let status = try idler.fields("status")
            #expect(status["state"] == "play")
            #expect(status["songid"] == first)
        }
    }

    // MARK: - Bad input

    @Test("a line over 64 KiB gets an ACK; the same connection and the others keep working")
    func overlongLine() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let b = try daemon.connect()
            let long = "add " + String(repeating: "a", count: 70_000) + "\n"
            try a.send(bytes: Array(long.utf8))
            let answer = try a.readAnswer()
            #expect(answer.count == 1)
            #expect(answer[0].hasPrefix("ACK [2@0]") && answer[0].contains("line too long"), "\(answer)")
            #expect(try a.command("ping") == ["OK"])
            #expect(try b.command("ping") == ["OK"])

            // The same arriving in pieces, with the next request right behind it in the last piece.
            let bytes = Array(long.utf8)
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 8192, bytes.count)
                try a.send(bytes: Array(bytes[offset..<end]))
                offset = end
                usleep(2000)
            }
            try a.send(line: "getvol")
            let second = try a.readAnswer()
            #expect(second.count == 1 && second[0].contains("line too long"), "\(second)")
            #expect(try a.readAnswer() == ["volume: 100", "OK"])
            #expect(try b.fields("status")["state"] == "stop")
        }
    }

    @Test("a line of exactly 64 KiB is still a request")
    func lineAtTheLimit() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            let line = "add \"" + String(repeating: "x", count: 65536 - 6) + "\""
            #expect(line.utf8.count == 65536)
            let answer = try client.command(line)
            // Too long for a file name, but read as a request: the answer is about the file.
            #expect(answer.count == 1 && answer[0].hasPrefix("ACK [50@0] {add}"), "\(answer)")
            #expect(try client.command("ping") == ["OK"])
        }
    }

    @Test("invalid UTF-8 in a request gets an ACK and the connection goes on")
    func invalidUTF8() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            for _ in 0..<3 {
                try client.send(bytes: Array("add \"".utf8) + [0xFF, 0xFE, 0x80] + Array(".mp3\"\n".utf8))
                let answer = try client.readAnswer()
                #expect(answer.count == 1 && answer[0].hasPrefix("ACK ") && answer[0].contains("UTF-8"), "\(answer)")
            }
            #expect(try client.command("ping") == ["OK"])
            #expect(try client.fields("status")["playlistlength"] == "0")
            // Each bad line is answered, but the log names the client's noise once.
            try daemon.stop()
            #expect(daemon.log.components(separatedBy: "refused a request").count == 2, "\(daemon.log)")
        }
    }

    @Test("a request ending in \\r\\n (a Windows line ending) is understood")
    func carriageReturn() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            try client.send(bytes: Array("ping\r\nsetvol 7\r\ngetvol\r\n".utf8))
            #expect(try client.readAnswer() == ["OK"])
            #expect(try client.readAnswer() == ["OK"])
            #expect(try client.readAnswer() == ["volume: 7", "OK"])
        }
    }

    @Test("a request that is not MPD (an empty line, an HTTP request) ends that connection only")
    func notMPD() throws {
        try withPlayerd { daemon in
            let other = try daemon.connect()
            for request in ["\n", "GET / HTTP/1.1\r\n", "   \n"] {
                let client = try daemon.connect()
                try client.send(bytes: Array(request.utf8))
                #expect(try client.readToEnd() == "", "\(request.debugDescription)")
            }
            #expect(try other.command("ping") == ["OK"])
        }
    }

    @Test("many requests in one write are answered in order")
    func pipelinedRequests() throws {
        try withPlayerd(RunningPlayerd.Options(output: "null:unpaced")) { daemon in
            let client = try daemon.connect()
            var batch = ""
            for index in 0..<200 {
                batch += "add one-second.mp3\nsetvol \(index % 101)\ngetvol\n"
            }
            try client.send(bytes: Array(batch.utf8))
            for index in 0..<200 {
                #expect(try client.readAnswer() == ["OK"])
                #expect(try client.readAnswer() == ["OK"])
                #expect(try client.readAnswer() == ["volume: \(index % 101)", "OK"])
            }
            #expect(try client.fields("status")["playlistlength"] == "200")
        }
    }

    // MARK: - Clients that go away

    @Test("clients that vanish mid-command, mid-list, mid-idle or before an answer cost nothing")
    func vanishingClients() throws {
        try withPlayerd { daemon in
            let survivor = try daemon.connect()
            #expect(try survivor.command("add stereo-44k-cbr.mp3") == ["OK"])
            #expect(try survivor.command("play") == ["OK"])
            let halfLines = [
                "stat", "command_list_begin\nsetvol 5\n", "idle\n", "add big-id3.mp3\nplaylistinfo\n",
                "add \"unterminated", "command_list_ok_begin\nstatus\ncommand_list_end\n",
            ]
            for _ in 0..<5 {
                for text in halfLines {
                    let client = try daemon.connect()
                    try client.send(bytes: Array(text.utf8))
                    client.close()
                }
            }
            // A client closing without even reading the greeting.
            for _ in 0..<20 {
                try LineClient(socketPath: daemon.socketPath).close()
            }
            #expect(try survivor.command("ping") == ["OK"])
            let status = try survivor.fields("status")
            #expect(status["state"] == "play")
            // The unfinished list never ran.
            #expect(status["volume"] == "100")
            // The vanished `add big-id3.mp3` requests may have run (they were complete); nothing else
            // was added.
            #expect((1...6).contains(Int(status["playlistlength"] ?? "") ?? 0), "\(status)")
            // New clients are still welcome, and idle still works for them.
            let fresh = try daemon.connect()
            try fresh.send(line: "idle player")
            #expect(try survivor.command("stop") == ["OK"])
            #expect(try fresh.readAnswer() == ["changed: player", "OK"])
        }
    }

    @Test("a half-closed client (shutdown after `status\\n`) still gets the whole answer, then EOF")
    func halfClosedClient() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            try client.send(line: "status")
            try client.shutdownWrite()
            let text = try client.readToEnd()
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.first == "volume: 100")
            #expect(lines.contains("state: stop"))
            #expect(lines.last == "OK")
            #expect(text.hasSuffix("OK\n"))

            // Several requests, one of them deferred to the audio thread, then the half-close.
            let second = try daemon.connect()
            try second.send(bytes: Array("add one-second.mp3\nplaylistinfo\ngetvol\n".utf8))
            try second.shutdownWrite()
            let answers = try second.readToEnd()
            #expect(answers.hasPrefix("OK\nfile: one-second.mp3\n"), "\(answers)")
            #expect(answers.hasSuffix("volume: 100\nOK\n"), "\(answers)")
        }
    }

    @Test("close ends the connection without an answer")
    func closeCommand() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            try client.send(line: "close")
            #expect(try client.readToEnd() == "")
            #expect(try daemon.connect().command("ping") == ["OK"])
        }
    }

    // MARK: - The client limit

    @Test("--max-clients 3: the 4th client gets `too many clients` and is closed; a freed place is reused")
    func clientLimit() throws {
        var options = RunningPlayerd.Options()
        options.maxClients = 3
        try withPlayerd(options) { daemon in
            // The readiness probe's place is given back asynchronously: wait for it.
            var clients = [try Self.admitted(daemon)]
            clients.append(try Self.admitted(daemon))
            clients.append(try Self.admitted(daemon))
            for client in clients {
                #expect(try client.command("ping") == ["OK"])
            }
            let refused = try LineClient(socketPath: daemon.socketPath)
            let text = try refused.readToEnd()
            #expect(text.hasPrefix("ACK ") && text.contains("too many clients"), "\(text)")
            #expect(text.split(separator: "\n").count == 1, "\(text)")
            // The connected three are unaffected.
            for client in clients {
                #expect(try client.command("ping") == ["OK"])
            }
            clients.removeFirst().close()
            clients.append(try Self.admitted(daemon))
            #expect(try clients.last!.command("status").last == "OK")
            // Full again.
            let again = try LineClient(socketPath: daemon.socketPath)
            #expect(try again.readToEnd().contains("too many clients"))
        }
    }

    /// A new connection that is greeted, retrying for a while if it is refused while a place is
    /// being given back.
    static func admitted(_ daemon: RunningPlayerd, within limit: Duration = .seconds(5)) throws -> LineClient {
        let deadline = ContinuousClock.now + limit
        while true {
            let client = try LineClient(socketPath: daemon.socketPath)
            let first = try client.readLine()
            if first == "OK MPD 0.23.5" {
                return client
            }
            guard first?.contains("too many clients") == true, ContinuousClock.now < deadline else {
                throw HarnessError("not admitted: \(first ?? "EOF")")
            }
            usleep(20_000)
        }
    }

    // MARK: - A client that never reads

    @Test(
        "a client that sends requests but never reads the answers cannot grow the daemon without bound")
    func unreadAnswersAreBounded() throws {
        try withPlayerd { daemon in
            // A queue of 100 songs makes each 13-byte `playlistinfo` ask for about 5 KB.
            let setup = try daemon.connect()
            let adds = "command_list_begin\n" + String(repeating: "add one-second.mp3\n", count: 100)
            try setup.send(bytes: Array((adds + "command_list_end\n").utf8))
            #expect(try setup.readAnswer() == ["OK"])
            let baseline = try daemon.residentKilobytes()
            // 60 000 requests for about 300 MB of answers, none of which is read. The daemon may refuse
            // to take them all (it stops reading, or hangs up): either way is bounded.
            let greedy = try LineClient(socketPath: daemon.socketPath)
            let chunk = Array(String(repeating: "playlistinfo\n", count: 1000).utf8)
            for _ in 0..<60 {
                guard (try? greedy.send(bytes: chunk, timeout: .seconds(2))) != nil else { break }
            }
            // MPD hangs up on a client with more than 8 MiB of answers waiting; allow four times that.
            let limit = 32 * 1024
            var grown = 0
            let deadline = ContinuousClock.now + .seconds(20)
            while grown < limit && ContinuousClock.now < deadline {
                usleep(250_000)
                grown = try daemon.residentKilobytes() - baseline
            }
            #expect(
                grown < limit,
                "the daemon grew by \(grown / 1024) MiB holding answers for a client that reads nothing")
            #expect(try setup.command("ping") == ["OK"])
            greedy.close()
        }
    }
}
