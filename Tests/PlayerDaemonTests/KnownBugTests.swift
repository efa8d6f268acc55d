import Testing

/// Transcripts in `Transcripts/bugs/`: each shows one reported daemon bug, with what MPD does in its
/// header. Each is its own test so that one still open can be disabled with its reason while the rest run.
@Suite("Reported daemon bugs")
struct KnownBugTests {
    private func run(_ name: String) throws {
        try runTranscript(try TranscriptFile(path: Paths.transcripts + "/bugs/" + name).load())
    }

    @Test(
        "an argument's ACK names its command: {play}, not {}", )
    func ackNamesTheCommand() throws {
        try self.run("ack-names-the-command.transcript")
    }

    @Test(
        "play clears the error a bad file left in status", )
    func playClearsTheError() throws {
        try self.run("play-clears-the-error.transcript")
    }

    @Test("clearerror exists and clears the error")
    func clearError() throws {
        try self.run("clearerror.transcript")
    }

    @Test(
        "a relative path cannot leave the music directory with ..", )
    func relativePathsStayInTheMusicDirectory() throws {
        try self.run("relative-paths-stay-in-the-music-dir.transcript")
    }

    @Test(
        "random mode: play N goes on with the songs not played yet", )
    func randomPlayKeepsTheRest() throws {
        try self.run("random-play-keeps-the-rest.transcript")
    }

    @Test("add refuses a single file that is not an MP3")
    func addRefusesWhatItCannotPlay() throws {
        try self.run("add-refuses-what-it-cannot-play.transcript")
    }

    @Test(
        "stop cancels the sleep timer, as it cancels a timed pause", )
    func stopCancelsTheSleepTimer() throws {
        try self.run("stop-cancels-the-sleep-timer.transcript")
    }

    @Test(
        "an explicit pause 1 during pausefor keeps the player paused", )
    func pauseEndsATimedPause() throws {
        try self.run("pause-ends-a-timed-pause.transcript")
    }
}
