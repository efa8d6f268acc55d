import Testing

/// The transcript runner must fail when the daemon says something the transcript did not: otherwise a
/// green transcript proves nothing.
@Suite("Transcript runner")
struct TranscriptRunnerTests {
    private func transcript(_ text: String) throws -> Transcript {
        try Transcript(parsing: text, name: "inline.transcript")
    }

    @Test("the parser knows every marker and directive and refuses others")
    func parsing() throws {
        let parsed = try self.transcript(
            """
            # comment
            = playerd --output null:unpaced

            > status
            ...
            < OK
            ~ ACK \\[\\d+@0\\].*
            = wait 250ms
            = wait 1.5s
            = wait-until state: play
            = wait-until 20s ~ elapsed: 1\\..*
            = client 2 raw
            = disconnect
            = closed
            > add "$FIXTURES/one-second.mp3"
            """)
        #expect(parsed.daemonArguments == ["--output", "null:unpaced"])
        #expect(parsed.steps.count == 12)
        #expect(parsed.steps.map(\.line) == [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
        guard case .send(let line) = parsed.steps.last?.step else {
            Issue.record("the last step is not a send")
            return
        }
        #expect(line == "add \"\(Paths.fixtures)/one-second.mp3\"")
        for bad in ["status", "? x", "= sleep 1", "= wait soon", "~ (unclosed", "= client 0", "> ping\n= playerd -x"] {
            #expect(throws: HarnessError.self, "\(bad)") { try self.transcript(bad) }
        }
    }

    @Test(
        "a transcript fails on a wrong line, an unread answer, a skip past OK, or a line nobody expected",
        arguments: [
            "> ping\n< OK\n> getvol\n< volume: 99\n< OK",
            "> status\n< volume: 100",
            "> getvol\n...\n< volume: 5\n> ping\n< OK",
            "> command_list_begin\n> ping\n> ping\n> command_list_end",
            "> idle\n",
            "> ping\n> ping\n< OK",
            "> status\n= closed",
        ])
    func failures(_ text: String) throws {
        let transcript = try self.transcript(text)
        #expect(throws: HarnessError.self) { try runTranscript(transcript) }
    }

    @Test("a matching transcript passes")
    func success() throws {
        try runTranscript(
            try self.transcript(
                "> getvol\n< volume: 100\n< OK\n> idle\n> noidle\n< OK\n= client 2\n> ping\n< OK\n= client 1\n> ping\n~ O.\n"
            ))
    }
}
