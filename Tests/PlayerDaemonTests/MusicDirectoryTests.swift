import Foundation
import Testing

/// A music directory that is not there: said at start, and by `playerctl update` (issue 22).
@Suite("a missing music directory")
struct MusicDirectoryTests {
    @Test("a music directory that is missing is named at start, and update --wait says why it found nothing")
    func missingMusicDirectory() throws {
        let music = try Paths.makeTemporaryDirectory() + "/music"
        defer { try? FileManager.default.removeItem(atPath: (music as NSString).deletingLastPathComponent) }
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", music]
        try withPlayerd(options) { daemon in
            #expect(daemon.log.contains("music directory \(music): No such file or directory"), "\(daemon.logTail)")
            let update = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "update", "--wait"])
            #expect(update.status == 1, "\(update)")
            #expect(update.stderr.contains("the music directory \(music) does not exist"), "\(update)")
            // Once it is there, an update finds its songs and says nothing more.
            try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: music + "/a.mp3")
            let found = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "update", "--wait"])
            #expect(found.status == 0, "\(found)")
            #expect(found.stdout.contains("added 1 song"), "\(found)")
            #expect(found.stderr.isEmpty, "\(found)")
        }
    }
}
