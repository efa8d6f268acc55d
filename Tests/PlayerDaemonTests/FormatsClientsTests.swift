import Foundation
import Testing

/// Real clients on a library of FLAC, Ogg Vorbis, Opus and MP3 (`FormatsMusic`): Debian's mpc prints
/// for playerd what it prints for mpd on the same files, python-mpd2 sees the new formats as it sees
/// MP3, and playerctl plays a FLAC by its path.
@Suite("Clients with FLAC, Ogg Vorbis and Opus in the library")
struct FormatsClientsTests {
    /// playerd on `FormatsMusic` with its library scanned, for `body`.
    private func withFormatsLibrary(_ body: (RunningPlayerd, String) throws -> Void) throws {
        let music = try FormatsMusic.path()
        var options = RunningPlayerd.Options()
        options.output = "null"
        options.library = true
        options.extraArguments = ["--music-dir", music]
        try withPlayerd(options) { daemon in
            try updateDatabase(try daemon.connect())
            try body(daemon, music)
        }
    }

    /// What `mpc --host SOCKET ARGUMENTS...` prints; it must succeed, quietly.
    private static func mpc(
        _ socket: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try runProgram(Paths.mpc, ["--host", socket] + arguments, within: .seconds(20))
        #expect(result.status == 0, "mpc \(arguments): \(result)", sourceLocation: sourceLocation)
        #expect(result.stderr == "", "mpc \(arguments): \(result)", sourceLocation: sourceLocation)
        return result.stdout
    }

    @Test(
        "mpc: ls, listall, search, find, list, add, playlist, play, next, current: what it prints for mpd",
        .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.mpc), "needs /usr/bin/mpc"))
    func mpcWithFormats() throws {
        let music = try FormatsMusic.path()
        let mpd = try RunningMPD(music: music)
        try self.withFormatsLibrary { daemon, _ in
            let steps: [[String]] = [
                ["ls"], ["ls", "FLAC"], ["ls", "Ogg"], ["ls", "Opus"], ["listall"], ["search", "title", "bits"],
                ["find", "artist", "Two"], ["-f", "%file% %artist% %title% %time%", "search", "any", "song"],
                [
                    "-f", "[%albumartist%|%artist%] %album% %track% %disc% %date% %genre%", "find", "album",
                    "FLAC Album",
                ],
                ["list", "album"], ["list", "artist"], ["list", "albumartist"], ["list", "date"],
                ["add", "FLAC/24.flac"], ["add", "Opus"], ["add", "Ogg/vorbis.ogg"], ["add", "MP3/tone.mp3"],
                ["playlist"], ["-f", "%file% %title% %time%", "playlist"], ["play"], ["current"], ["next"],
                ["-f", "%file%", "current"], ["next"], ["next"], ["stop"], ["clear"],
            ]
            var same = 0
            for step in steps {
                let expected = try Self.mpc(mpd.socketPath, step)
                var printed = try Self.mpc(daemon.socketPath, step)
                if ["play", "next"].contains(step[0]) {
                    // Two lines: the song and `[playing] #N/M   0:00/0:06 (0%)`: the time is the moment's.
                    printed = printed.split(separator: "\n").prefix(1).joined() + "\n"
                    let first = expected.split(separator: "\n").prefix(1).joined() + "\n"
                    #expect(printed == first, "mpc \(step)")
                    if printed == first { same += 1 }
                    continue
                }
                #expect(printed == expected, "mpc \(step)")
                if printed == expected { same += 1 }
            }
            #expect(same == steps.count)
            let status =
                try Self.mpc(daemon.socketPath, ["add", "FLAC/16.flac"]) + Self.mpc(daemon.socketPath, ["play"])
            #expect(status.hasPrefix("One - Sixteen Bits\n[playing] #1/1   0:00/0:06 (0%)\n"), "\(status)")
        }
    }

    @Test(
        "python-mpd2: lsinfo, find, list, readpicture, readcomments, decoders, status while each format plays",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Paths.python), "needs /usr/bin/python3 with python3-mpd")
    )
    func pythonMPD2WithFormats() throws {
        try self.withFormatsLibrary { daemon, _ in
            let script = """
                import sys, time
                from mpd import MPDClient
                client = MPDClient()
                client.connect(sys.argv[1])
                def check(what, got, expected):
                    if got != expected:
                        print("FAIL %s: %r, expected %r" % (what, got, expected))
                        sys.exit(1)
                    print("ok: " + what)
                songs = client.lsinfo("FLAC")
                check("lsinfo files", [s["file"] for s in songs], ["FLAC/16.flac", "FLAC/24.flac"])
                check("two artists", songs[0]["artist"], ["One", "Two"])
                check("track without total", songs[0]["track"], "1")
                check("16-bit format", songs[0]["format"], "44100:16:2")
                check("24-bit format", songs[1]["format"], "96000:24:2")
                vorbis = client.find("title", "Vorbis Song")
                check("vorbis format", vorbis[0]["format"], "44100:f:2")
                check("vorbis duration", vorbis[0]["duration"], "6.000")
                opus = client.find("file", "Opus/r128.opus")
                check("opus format", opus[0]["format"], "48000:16:2")
                check("list album", [a["album"] for a in client.list("album")],
                      ["", "FLAC Album", "MP3 Album", "Ogg Album", "Opus Album"])
                picture = client.readpicture("FLAC/16.flac")
                check("flac cover type", picture.get("type"), "image/jpeg")
                check("flac cover size", len(picture["binary"]), 20000)
                ogg = client.readpicture("Ogg/vorbis.ogg")
                check("ogg cover same bytes", ogg["binary"], picture["binary"])
                check("no cover", client.readpicture("Opus/r128.opus"), {})
                comments = client.readcomments("FLAC/16.flac")
                check("replaygain comment", comments.get("replaygain_track_gain"), "-3.50 dB")
                plugins = [d["plugin"] for d in client.decoders()]
                check("decoders", [p for p in plugins if p in ("mpg123", "flac", "vorbis", "opus")],
                      ["mpg123", "vorbis", "flac", "opus"])
                for uri, audio in [("FLAC/24.flac", "96000:24:2"), ("Ogg/mono.ogg", None),
                                   ("Opus/r128.opus", "48000:16:2"), ("MP3/tone.mp3", "44100:16:2")]:
                    client.clear()
                    client.add(uri)
                    client.play(0)
                    time.sleep(0.5)
                    status = client.status()
                    check("playing " + uri, status["state"], "play")
                    if audio:
                        check("audio of " + uri, status["audio"], audio)
                    check("duration of " + uri, float(status["duration"]) > 5.9, True)
                    check("current " + uri, client.currentsong()["file"], uri)
                client.stop()
                print("all checks passed")
                """
            let result = try runProgram(Paths.python, ["-c", script, daemon.socketPath], within: .seconds(60))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.hasSuffix("all checks passed\n"), "\(result)")
        }
    }

    @Test("playerctl play song.flac plays it; playnow refuses files none of which can play, naming each")
    func playerctlPlaysAFLAC() throws {
        try self.withFormatsLibrary { daemon, music in
            let result = try runProgram(
                Paths.playerctl, ["--socket", daemon.socketPath, "play", music + "/FLAC/24.flac"], within: .seconds(20))
            #expect(result.status == 0, "\(result)")
            let client = try daemon.connect()
            let status = try client.fields("status")
            #expect(status["state"] == "play")
            #expect(status["audio"] == "96000:24:2")
            #expect(try client.fields("currentsong")["Title"] == "Twenty-four Bits")
            let bad = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bad) }
            try Data("fLaC and nothing".utf8).write(to: URL(fileURLWithPath: bad + "/bad.flac"))
            try Data("OggS".utf8).write(to: URL(fileURLWithPath: bad + "/bad.opus"))
            let refused = try client.command("playnow \"\(bad)/bad.flac\" \"\(bad)/bad.opus\"")
            #expect(refused.count == 1)
            #expect(refused.first?.hasPrefix("ACK [50@0] {playnow} ") == true, "\(refused)")
            #expect(refused.first?.contains("bad.flac: ") == true, "\(refused)")
            #expect(refused.first?.contains("bad.opus: ") == true, "\(refused)")
            #expect(try client.fields("status")["state"] == "play")
        }
    }
}
