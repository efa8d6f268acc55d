import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where stored playlists go when `--playlist-dir` is not given: beside the state file in use, and
/// nowhere with `--state-file none` (issue 22).
@Suite("stored playlists beside the state file")
struct PlaylistDirectoryTests {
    @Test("without --playlist-dir, stored playlists live beside the --state-file given")
    func playlistsBesideTheStateFile() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/cwd", withIntermediateDirectories: true)
        let daemon = try PlainPlayerd(
            in: directory + "/cwd", socket: directory + "/socket",
            ["--state-file", directory + "/state/state", "--library", "none"])
        // The directory is made at start; only then is saving safe to try (elsewhere it would go to the
        // user's or the system's playlists).
        try #require(
            FileManager.default.fileExists(atPath: directory + "/state/playlists"),
            "\(contents(of: directory + "/state"))")
        let client = try daemon.connect()
        #expect(try client.command("add \"\(Paths.fixture("one-second.mp3"))\"") == ["OK"])
        #expect(try client.command("save mix") == ["OK"])
        #expect(contents(of: directory + "/state/playlists") == ["mix.m3u"])
        #expect(contents(of: directory + "/cwd").isEmpty)
    }

    @Test("--state-file none keeps no playlists either, and nothing is written where playerd runs")
    func noStateNoPlaylists() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try PlainPlayerd(
            in: directory, socket: directory + "/socket", ["--state-file", "none", "--library", "none"])
        let client = try daemon.connect()
        // Asked without writing: a playerd that had a playlist directory would answer ACK 50.
        #expect(
            try client.command("listplaylist playerd-test-probe")
                == ["ACK [5@0] {listplaylist} Stored playlists are disabled"])
        #expect(try client.command("listplaylists") == ["OK"])
        #expect(contents(of: directory) == ["socket"])
    }

    @Test("--playlist-dir none is no directory named none (the stray none/x.m3u at the root came from it)")
    func playlistDirNone() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try PlainPlayerd(
            in: directory, socket: directory + "/socket",
            ["--state-file", "none", "--library", "none", "--playlist-dir", "none"])
        let client = try daemon.connect()
        #expect(try client.command("save x") == ["ACK [5@0] {save} Stored playlists are disabled"])
        #expect(contents(of: directory) == ["socket"])
    }
}
