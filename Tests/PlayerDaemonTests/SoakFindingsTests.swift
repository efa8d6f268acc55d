import Testing

/// Daemon bugs that the soak (`scripts/soak.sh`) found, each shown by a transcript in
/// `Transcripts/bugs/` or by a test of its own, so that none comes back.
@Suite("Bugs the soak found")
struct SoakFindingsTests {
    private func run(_ name: String) throws {
        try runTranscript(try TranscriptFile(path: Paths.transcripts + "/bugs/" + name).load())
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
}
