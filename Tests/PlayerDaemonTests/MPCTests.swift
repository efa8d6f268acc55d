import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's mpc (0.34, libmpdclient) against playerd: the commands people type, with their output as
/// mpc prints it.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: Paths.mpc), "needs /usr/bin/mpc"))
struct MPCTests {
    /// Runs `mpc --host SOCKET ARGUMENTS...` to its end.
    private static func mpc(_ daemon: RunningPlayerd, _ arguments: String...) throws -> ProgramResult {
        try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments, within: .seconds(20))
    }

    /// Runs mpc, expects exit status 0 and nothing on stderr, and returns its stdout.
    private static func mpcOK(
        _ daemon: RunningPlayerd, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments, within: .seconds(20))
        #expect(
            result.status == 0, "mpc \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderr == "", "mpc \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result.stdout
    }

    private static let idleStatusLine = "volume:100%   repeat: off   random: off   single: off   consume: off\n"

    @Test("mpc status, add, playlist, play, current, pause, toggle, seek, next, prev, stop")
    func playback() throws {
        try withPlayerd { daemon in
            #expect(try Self.mpcOK(daemon, "status") == Self.idleStatusLine)
            // Relative to the music directory.
            #expect(try Self.mpcOK(daemon, "add", "stereo-44k-cbr.mp3") == "")
            #expect(try Self.mpcOK(daemon, "add", "one-second.mp3") == "")
            #expect(try Self.mpcOK(daemon, "playlist") == "stereo-44k-cbr.mp3\none-second.mp3\n")

            let play = try Self.mpcOK(daemon, "play")
            #expect(play.hasPrefix("stereo-44k-cbr.mp3\n[playing] #1/2   0:00/0:03 (0%)\n"), "\(play)")
            #expect(play.hasSuffix(Self.idleStatusLine), "\(play)")
            #expect(try Self.mpcOK(daemon, "current") == "stereo-44k-cbr.mp3\n")

            let pause = try Self.mpcOK(daemon, "pause")
            #expect(pause.contains("\n[paused]  #1/2   0:0"), "\(pause)")
            let toggle = try Self.mpcOK(daemon, "toggle")
            #expect(toggle.contains("\n[playing] #1/2   0:0"), "\(toggle)")

            // Seeking while paused, so that the position shown is exact.
            _ = try Self.mpcOK(daemon, "pause")
            let seek = try Self.mpcOK(daemon, "seek", "0:01")
            #expect(seek.contains("\n[paused]  #1/2   0:01/0:03 (33%)\n"), "\(seek)")
            let forward = try Self.mpcOK(daemon, "seek", "+1")
            #expect(forward.contains("\n[paused]  #1/2   0:02/0:03 (66%)\n"), "\(forward)")
            let back = try Self.mpcOK(daemon, "seek", "-2")
            #expect(back.contains("\n[paused]  #1/2   0:00/0:03 (0%)\n"), "\(back)")

            let next = try Self.mpcOK(daemon, "next")
            #expect(next.hasPrefix("one-second.mp3\n[playing] #2/2   0:00/0:01 (0%)\n"), "\(next)")
            let previous = try Self.mpcOK(daemon, "prev")
            #expect(previous.hasPrefix("stereo-44k-cbr.mp3\n[playing] #1/2   0:00/0:03 (0%)\n"), "\(previous)")

            // Stopped: no song line, no [state] line.
            #expect(try Self.mpcOK(daemon, "stop") == Self.idleStatusLine)
            #expect(try Self.mpcOK(daemon, "status") == Self.idleStatusLine)
        }
    }

    @Test("mpc volume, volume +N, repeat on, clear")
    func volumeModesAndClear() throws {
        try withPlayerd { daemon in
            #expect(
                try Self.mpcOK(daemon, "volume", "50").hasSuffix(
                    "volume: 50%   repeat: off   random: off   single: off   consume: off\n"))
            #expect(try Self.mpcOK(daemon, "volume", "+10").contains("volume: 60%"))
            #expect(try Self.mpcOK(daemon, "volume", "-20").contains("volume: 40%"))
            #expect(try Self.mpcOK(daemon, "volume") == "volume: 40%\n")
            #expect(try Self.mpcOK(daemon, "repeat", "on").contains("repeat: on    random: off"))
            #expect(try Self.mpcOK(daemon, "random", "on").contains("random: on "))
            #expect(try Self.mpcOK(daemon, "single", "on").contains("single: on "))
            // mpc pads "on" to the width of "off".
            #expect(try Self.mpcOK(daemon, "consume", "on").hasSuffix("consume: on \n"))
            #expect(try Self.mpcOK(daemon, "repeat", "off").contains("repeat: off"))
            _ = try Self.mpcOK(daemon, "add", "one-second.mp3")
            _ = try Self.mpcOK(daemon, "add", "stereo-44k-cbr.mp3")
            #expect(try Self.mpcOK(daemon, "playlist").split(separator: "\n").count == 2)
            #expect(
                try Self.mpcOK(daemon, "clear")
                    == "volume: 40%   repeat: off   random: on    single: on    consume: on \n")
            #expect(try Self.mpcOK(daemon, "playlist") == "")
            // What playerd says about itself through mpc.
            #expect(try Self.mpcOK(daemon, "version") == "mpd version: 0.23.5\n")
            #expect(try Self.mpcOK(daemon, "outputs") == "Output 1 (null) is enabled\n")
        }
    }

    @Test("mpc shows the tags (UTF-8) and its format strings work")
    func tags() throws {
        try withPlayerd { daemon in
            _ = try Self.mpcOK(daemon, "add", "tagged-id3v24.mp3")
            _ = try Self.mpcOK(daemon, "add", "tagged-id3v23.mp3")
            #expect(
                try Self.mpcOK(daemon, "playlist")
                    == "Мумий Тролль - Ζωή σε 4/4 — Ελληνικά\nBjörk & Sigur Rós - Café Noir — Ünïcødé ☃\n")
            let formatted = try Self.mpcOK(daemon, "-f", "%position% %file% %time% %album% %track% %date%", "playlist")
            #expect(
                formatted
                    == "1 tagged-id3v24.mp3 0:02 Ça ira, mon cœur 7 2021-05-04\n"
                    + "2 tagged-id3v23.mp3 0:02 日本語のアルバム 3/12 2019\n")
            _ = try Self.mpcOK(daemon, "play", "2")
            #expect(try Self.mpcOK(daemon, "current") == "Björk & Sigur Rós - Café Noir — Ünïcødé ☃\n")
            _ = try Self.mpcOK(daemon, "stop")
        }
    }

    @Test("mpc reports the daemon's refusals with a non-zero exit status")
    func errors() throws {
        try withPlayerd { daemon in
            let missing = try Self.mpc(daemon, "add", "nonexistent.mp3")
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("error adding nonexistent.mp3"), "\(missing)")
            let play = try Self.mpc(daemon, "play", "9")
            #expect(play.status != 0)
            #expect(play.stderr.contains("MPD error"), "\(play)")
            let seek = try Self.mpc(daemon, "seek", "50%")
            #expect(seek.status != 0, "\(seek)")
            // The daemon goes on.
            #expect(try Self.mpcOK(daemon, "status") == Self.idleStatusLine)
        }
    }

    @Test("mpc idle prints `player` when another client starts playing")
    func idle() throws {
        try withPlayerd { daemon in
            _ = try Self.mpcOK(daemon, "add", "stereo-44k-cbr.mp3")
            let idle = try BackgroundProgram(Paths.mpc, ["--host", daemon.socketPath, "idle"])
            // mpc idle reports changes from the moment it is connected: keep changing the player until
            // it has seen one (the first change may come before it has connected).
            let deadline = ContinuousClock.now + .seconds(15)
            var playing = false
            while !idle.waitForExit(within: .milliseconds(500)) {
                guard ContinuousClock.now < deadline else { break }
                _ = try Self.mpcOK(daemon, playing ? "pause" : "play")
                playing.toggle()
            }
            let result = try idle.finish(within: .seconds(1))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "player\n", "\(result)")
            _ = try Self.mpcOK(daemon, "stop")

            // idle for a named subsystem ignores others.
            let mixer = try BackgroundProgram(Paths.mpc, ["--host", daemon.socketPath, "idle", "mixer"])
            var volume = 10
            while !mixer.waitForExit(within: .milliseconds(500)) {
                guard ContinuousClock.now < deadline + .seconds(15) else { break }
                _ = try Self.mpcOK(daemon, "repeat", volume % 20 == 0 ? "on" : "off")
                _ = try Self.mpcOK(daemon, "volume", String(volume))
                volume += 5
            }
            let mixerResult = try mixer.finish(within: .seconds(1))
            #expect(mixerResult.stdout == "mixer\n", "\(mixerResult)")
        }
    }
}
