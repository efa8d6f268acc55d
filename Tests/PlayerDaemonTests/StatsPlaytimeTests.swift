import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `stats` carries MPD's `playtime`: the audio played since the daemon started, in whole seconds, every
/// song counted (ncmpc and Cantata show it). mpd 0.23.12, after its 3-second song played once on a paced
/// null output, answers `uptime: 16`, `playtime: 3`, in that order before the database's figures.
@Suite("stats: playtime")
struct StatsPlaytimeTests {
    @Test("playtime counts the audio played, song after song; uptime and playtime come first, as in MPD")
    func playtimeAddsUp() throws {
        var options = RunningPlayerd.Options()
        options.output = "null:unpaced"
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            let fresh = try client.command("stats")
            #expect(fresh.prefix(2).map { $0.split(separator: ":").first } == ["uptime", "playtime"], "\(fresh)")
            #expect(try client.fields("stats")["playtime"] == "0")
            // stereo-44k-cbr.mp3 is 132,300 frames at 44.1 kHz: exactly 3 seconds, twice.
            let song = Paths.fixture("stereo-44k-cbr.mp3")
            for _ in 0..<2 {
                #expect(try client.command("playnow \"\(song)\"") == ["OK"])
                try expectEventually("the song played to its end") {
                    try client.fields("status")["state"] == "stop"
                }
            }
            #expect(try client.fields("stats")["playtime"] == "6")
        }
    }

    @Test("playtime moves while a song plays on a paced output, and stands still while paused")
    func playtimeFollowsPlayback() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            #expect(try client.command("playnow \"\(Paths.fixture("stereo-44k-cbr.mp3"))\"") == ["OK"])
            usleep(1_500_000)
            #expect(try client.command("pause 1") == ["OK"])
            let paused = try #require(Int(try client.fields("stats")["playtime"] ?? ""))
            // 1.5 s heard, and at most the output's buffer more handed to it.
            #expect((1...2).contains(paused), "playtime \(paused)")
            usleep(1_200_000)
            #expect(try client.fields("stats")["playtime"] == String(paused))
        }
    }
}
