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
}
