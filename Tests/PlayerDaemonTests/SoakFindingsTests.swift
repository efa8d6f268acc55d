import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Daemon bugs that the soak (`scripts/soak.sh`) found, each shown by a transcript in
/// `Transcripts/regressions/` or by a test of its own, so that none comes back.
@Suite("Bugs the soak found")
struct SoakFindingsTests {
    private func run(_ name: String) throws {
        try runTranscript(try TranscriptFile(path: Paths.transcripts + "/regressions/" + name).load())
    }

    @Test("move START: with START past the end of the queue is refused; the daemon used to trap")
    func moveOpenRangePastTheEnd() throws {
        try self.run("move-open-range-past-the-end.transcript")
    }

    /// Lines the framer cannot hand over as text: one past the 64 KiB limit, one that is not UTF-8.
    static let unreadableLines: [(name: String, bytes: [UInt8], message: String)] = [
        ("too long", Array(("add " + String(repeating: "a", count: 70_000) + "\n").utf8), "line too long"),
        ("not UTF-8", Array("add \"".utf8) + [0xFF, 0xFE, 0x80] + Array(".mp3\"\n".utf8), "invalid UTF-8"),
    ]

    @Test(
        "a line too long or not UTF-8 inside a command list fails at its index: the list has one answer",
        arguments: [false, true], [0, 1])
    func unreadableLineInAList(okMode: Bool, which: Int) throws {
        let unreadable = Self.unreadableLines[which]
        try withPlayerd { daemon in
            let client = try daemon.connect()
            try client.send(
                bytes: Array((okMode ? "command_list_ok_begin\nping\n" : "command_list_begin\nping\n").utf8))
            try client.send(bytes: unreadable.bytes)
            try client.send(bytes: Array("ping\ncommand_list_end\n".utf8))
            let answer = try client.readAnswer()
            let expected = okMode ? ["list_OK", "ACK [2@1] {} "] : ["ACK [2@1] {} "]
            #expect(answer.count == expected.count, "\(unreadable.name): \(answer)")
            #expect(
                answer.last?.hasPrefix(expected.last!) == true && answer.last?.contains(unreadable.message) == true,
                "\(unreadable.name): \(answer)")
            // Nothing else is owed: the next answer is the next request's.
            #expect(try client.command("ping") == ["OK"], "\(unreadable.name)")
        }
    }

    @Test("a line too long or not UTF-8 while idling ends the connection, as any line but noidle does")
    func unreadableLineWhileIdling() throws {
        try withPlayerd { daemon in
            for unreadable in Self.unreadableLines {
                let client = try daemon.connect()
                try client.send(line: "idle")
                try client.send(bytes: unreadable.bytes)
                #expect(try client.readToEnd() == "", "\(unreadable.name)")
            }
            #expect(try daemon.connect().command("ping") == ["OK"])
        }
    }

    @Test("a long command list takes turns with the other clients instead of holding the event loop")
    func longListTakesTurns() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let b = try daemon.connect()
            // 32,768 status answers, 4 MB: far more than the socket and the channel hold while A does not
            // read, so that the list cannot end before A reads on.
            let count = 32768
            try a.send(
                bytes: Array(
                    ("command_list_begin\n" + String(repeating: "status\n", count: count)
                        + "command_list_end\n").utf8))
            #expect(try a.readLine() == "volume: 100", "the list has started")
            // The list ran all at once before B's request was even read, so every status said 100.
            #expect(try b.command("setvol 7") == ["OK"])
            var volumes: [String] = []
            while let line = try a.readLine(), line != "OK" {
                if line.hasPrefix("volume: ") { volumes.append(line) }
            }
            #expect(volumes.count == count - 1)
            #expect(volumes.last == "volume: 7", "B's setvol ran between turns of A's list: \(Set(volumes))")
        }
    }

    @Test("requests sent by the thousand in one write take turns with the other clients")
    func pipelineTakesTurns() throws {
        try withPlayerd { daemon in
            let b = try daemon.connect()
            #expect(try b.command("ping") == ["OK"])
            // A sends 200,000 pings, a megabyte, from another thread and reads nothing: each 64 KiB read
            // of them held every other client for ~0.5 s (debug build), as its 13,000 lines ran in a row.
            let socketPath = daemon.socketPath
            let sent = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                let a = try? LineClient.greeted(socketPath)
                try? a?.send(bytes: Array(String(repeating: "ping\n", count: 200_000).utf8), timeout: .seconds(60))
                sent.signal()
                done.wait()
            }
            defer { done.signal() }
            var worst = Duration.zero
            var count = 0
            while sent.wait(timeout: .now()) == .timedOut && count < 500 {
                let start = ContinuousClock.now
                #expect(try b.command("ping") == ["OK"])
                worst = max(worst, ContinuousClock.now - start)
                count += 1
                usleep(10_000)
            }
            // A generous bound: a turn of 64 lines takes a few milliseconds.
            #expect(worst < .milliseconds(250), "B waited \(worst) for a ping (\(count) pings) beside A's 200,000")
        }
    }

    @Test("a command list whose client does not read its answers waits for it, and holds little memory")
    func unreadListWaits() throws {
        try withPlayerd { daemon in
            let a = try daemon.connect()
            let before = try daemon.residentKilobytes()
            // 65,536 answers of ~1.5 kB each: 100 MB if the daemon kept them all for a client that never reads.
            try a.send(
                bytes: Array(
                    ("command_list_begin\n" + String(repeating: "commands\n", count: 65536)
                        + "command_list_end\n").utf8))
            usleep(3_000_000)
            let b = try daemon.connect()
            #expect(try b.command("ping") == ["OK"])
            let growth = try daemon.residentKilobytes() - before
            #expect(growth < 16 * 1024, "the daemon grew by \(growth) kB for one client's unread answers")
        }
    }

    @Test("the memory a crowd of clients used comes back once they have gone")
    func crowdMemoryComesBack() throws {
        try withPlayerd { daemon in
            let stays = try daemon.connect()
            for _ in 0..<4 {
                _ = try daemon.connect().command("status")
            }
            usleep(500_000)
            let before = try daemon.residentKilobytes()
            // 40 open command lists of 20,000 commands each, all held at once, then run and answered.
            let crowd = try (0..<40).map { _ in try daemon.connect() }
            let list = "command_list_ok_begin\n" + String(repeating: "ping\ngetvol\n", count: 10000)
            for client in crowd {
                try client.send(bytes: Array(list.utf8))
                #expect(try stays.command("ping") == ["OK"])
            }
            for client in crowd {
                try client.send(line: "command_list_end")
            }
            for client in crowd {
                #expect(try client.readAnswer(timeout: .seconds(60)).last == "OK")
            }
            let peak = try daemon.residentKilobytes()
            for client in crowd {
                client.close()
            }
            usleep(4_000_000)
            let after = try daemon.residentKilobytes()
            #expect(
                after - before < 8 * 1024,
                "RSS before the crowd \(before) kB, with it \(peak) kB, 4 s after it left \(after) kB")
        }
    }

    @Test("playerd's threads share two heaps (glibc arenas), not one each")
    func twoArenas() throws {
        try withPlayerd { daemon in
            // Work for each kind of thread: the event loop, Swift's pool, the walks, the audio thread.
            let clients = try (0..<6).map { _ in try daemon.connect() }
            for (number, client) in clients.enumerated() {
                try client.send(line: number % 2 == 0 ? "add \"\"" : "add one-second.mp3")
            }
            for client in clients {
                _ = try client.readAnswer()
                #expect(try client.command("play").last == "OK")
                #expect(try client.command("playlistinfo").last == "OK")
            }
            let heaps = try Self.arenaHeaps(of: daemon.processIdentifier)
            #expect(heaps <= 2, "\(heaps) heaps")
        }
    }

    /// How many heaps of glibc's arenas other than the main one a process has: anonymous writable
    /// mappings that start on a 64 MiB boundary, where glibc places them.
    static func arenaHeaps(of pid: Int32) throws -> Int {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        return maps.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, fields[1].hasPrefix("rw"),
                let start = UInt64(fields[0].prefix(while: { $0 != "-" }), radix: 16)
            else { return false }
            return start % (64 << 20) == 0
        }.count
    }
}
