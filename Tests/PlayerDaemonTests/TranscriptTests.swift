import Testing

/// Every transcript in `Transcripts/`, each against its own fresh playerd. The format is described at
/// the top of `Support/TranscriptRunner.swift`.
@Suite("Transcripts")
struct TranscriptTests {
    @Test("transcript", arguments: TranscriptFile.all())
    func transcript(_ file: TranscriptFile) throws {
        try runTranscript(try file.load())
    }

    @Test("the Transcripts folder holds transcripts")
    func folderIsFound() {
        #expect(TranscriptFile.all().count >= 10, "no transcripts found in \(Paths.transcripts)")
    }
}
