import Testing

/// Transcripts in `Transcripts/regressions/`: each pins down one reported daemon bug, fixed, with what
/// MPD does in its header, so that it stays fixed. Each is its own test, named after the behaviour.
@Suite("Regressions: reported daemon bugs, fixed")
struct RegressionTests {
    private func run(_ name: String) throws {
        try runTranscript(try TranscriptFile(path: Paths.transcripts + "/regressions/" + name).load())
    }

    @Test("an argument's ACK names its command: {play}, not {}")
    func ackNamesTheCommand() throws {
        try self.run("ack-names-the-command.transcript")
    }

    @Test(
        "play clears the error a bad file left in status")
    func playClearsTheError() throws {
        try self.run("play-clears-the-error.transcript")
    }

    @Test("clearerror exists and clears the error")
    func clearError() throws {
        try self.run("clearerror.transcript")
    }

    @Test(
        "a relative path cannot leave the music directory with ..")
    func relativePathsStayInTheMusicDirectory() throws {
        try self.run("relative-paths-stay-in-the-music-dir.transcript")
    }

    @Test(
        "random mode: play N goes on with the songs not played yet")
    func randomPlayKeepsTheRest() throws {
        try self.run("random-play-keeps-the-rest.transcript")
    }

    @Test("add refuses a single file that is not an MP3")
    func addRefusesWhatItCannotPlay() throws {
        try self.run("add-refuses-what-it-cannot-play.transcript")
    }

    @Test(
        "stop cancels the sleep timer, as it cancels a timed pause")
    func stopCancelsTheSleepTimer() throws {
        try self.run("stop-cancels-the-sleep-timer.transcript")
    }

    @Test(
        "an explicit pause 1 during pausefor keeps the player paused")
    func pauseEndsATimedPause() throws {
        try self.run("pause-ends-a-timed-pause.transcript")
    }

    @Test("add of /proc or /sys is refused at once: kernel file systems are never walked")
    func kernelFileSystemsAreNotWalked() throws {
        try self.run("kernel-file-systems-are-not-walked.transcript")
    }

    @Test("a song that failed before does not stop a new play of a queue with a playable song")
    func aFailedPlayDoesNotPoisonTheNext() throws {
        try self.run("a-failed-play-does-not-poison-the-next.transcript")
    }

    @Test("playnow changes nothing unless one of its songs can play")
    func playnowChangesNothingUnlessItCanPlay() throws {
        try self.run("playnow-changes-nothing-unless-it-can-play.transcript")
    }
}
