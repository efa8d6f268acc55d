import PlayerClient
import Testing

/// The project's own client library (used by playerctl) against the real daemon.
@Suite("PlayerClient against playerd")
struct PlayerClientAgainstDaemonTests {
    @Test("MPDConnection reads the greeting, status, the queue, and command lists")
    func connection() throws {
        try withPlayerd { daemon in
            let connection = try MPDConnection(socketPath: daemon.socketPath)
            #expect(connection.protocolVersion == "0.23.5")
            _ = try connection.command("add", ["tagged-id3v24.mp3"])
            _ = try connection.command("add", ["one-second.mp3"])
            let songs = try connection.playlistInfo()
            #expect(songs.map(\.file) == ["tagged-id3v24.mp3", "one-second.mp3"])
            #expect(songs.first?.title == "Ζωή σε 4/4 — Ελληνικά")
            #expect(songs.first?.duration == 2.0)
            let answers = try connection.commandList([("setvol", ["25"]), ("play", ["1"]), ("getvol", [])])
            #expect(answers.count == 3)
            let status = try connection.status()
            #expect(status.state == .play)
            #expect(status.song == 1)
            #expect(status.volume == 25)
            #expect(try connection.currentSong()?.file == "one-second.mp3")
            _ = try connection.command("stop")
        }
    }
}
