import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Internet radio where mpd's behaviour is the specification (/work/briefs/radio-facts.md keeps the
/// lines mpd 0.23.12 answers): each test runs on Debian's mpd and on playerd, against the loopback
/// radio server (Tests/RadioServer/radio_server.py).
@Suite("Internet radio: what playerd shares with mpd", .serialized)
struct RadioAgainstMPDTests {
    /// The daemons every test here runs on.
    static let kinds: [RadioDaemon.Kind] = [.mpd, .playerd]

    /// `text` escaped for a URL's query.
    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test(
        "An ICY station: Title from StreamTitle, Name from icy-name, no duration; a title change is an idle player",
        .timeLimit(.minutes(1)), arguments: Self.kinds)
    func icyTitles(kind: RadioDaemon.Kind) throws {
        let first = "Station One - Opening"
        let second = "O'Neil - It's \"Quoted\""
        try withRadio(kind) { daemon, server in
            let client = try daemon.connect()
            let url = server.url("/icy.mp3?every=4&titles=\(Self.query(first))|\(Self.query(second))")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            let song = try eventually("the first title in currentsong", within: .seconds(15)) {
                let song = try client.fields("currentsong")
                return song["Title"] == first ? song : nil
            }
            #expect(song["file"] == url)
            #expect(song["Name"] == "playerd test radio")
            #expect(song["Time"] == nil && song["duration"] == nil && song["Artist"] == nil, "\(song)")
            let status = try client.fields("status")
            #expect(status["state"] == "play")
            #expect(status["duration"] == nil, "\(status)")
            #expect(status["time"]?.hasSuffix(":0") == true, "\(status)")
            #expect(try client.fields("playlistinfo")["Title"] == first)

            // The change: idle answers until currentsong shows the second title.
            let idler = try daemon.connect()
            var changes: [String] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while try client.field("currentsong", "Title") != second {
                guard ContinuousClock.now < deadline else {
                    throw HarnessError("no title change within 20 s; idle said \(changes)")
                }
                try idler.send(line: "idle")
                let answer = try idler.readAnswer(timeout: .seconds(10))
                #expect(answer.last == "OK", "\(answer)")
                changes += answer.dropLast()
            }
            // mpd tells `playlist` and `player` for a title, not always in one answer: what is still
            // pending comes within 3 s.
            if !changes.contains("changed: player") {
                try idler.send(line: "idle")
                if try !idler.hasInput(within: .seconds(3)) {
                    try idler.send(line: "noidle")
                }
                changes += try idler.readAnswer().dropLast()
            }
            #expect(changes.contains("changed: player"), "\(changes)")
            #expect(try client.field("playlistinfo", "Title") == second)
            #expect(try client.field("currentsong", "Name") == "playerd test radio")
        }
    }

    @Test(
        "An empty StreamTitle clears the title; the station's Name stays", .timeLimit(.minutes(1)),
        arguments: Self.kinds)
    func emptyTitleClears(kind: RadioDaemon.Kind) throws {
        try withRadio(kind) { daemon, server in
            let client = try daemon.connect()
            #expect(try client.command("add \"\(server.url("/icy.mp3?every=3&titles=Something|"))\"") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            _ = try eventually("the title", within: .seconds(15)) {
                try client.field("currentsong", "Title") == "Something" ? true : nil
            }
            let song = try eventually("the title cleared", within: .seconds(15)) {
                let song = try client.fields("currentsong")
                return song["Title"] == nil ? song : nil
            }
            #expect(song["Name"] == "playerd test radio")
            #expect(try client.field("status", "state") == "play")
        }
    }

    @Test(
        "load of a station list URL (m3u, extended m3u, pls) queues its streams with their names",
        .timeLimit(.minutes(1)), arguments: Self.kinds)
    func remoteStationLists(kind: RadioDaemon.Kind) throws {
        try withRadio(kind) { daemon, server in
            let client = try daemon.connect()
            let streams = [server.url("/icy.mp3"), server.url("/plain.mp3")]
            for (list, nameKey) in [("/station.m3u", nil), ("/station-ext.m3u", "Name"), ("/station.pls", "Title")] {
                #expect(try client.command("clear") == ["OK"])
                #expect(try client.command("load \"\(server.url(list))\"") == ["OK"], "load \(list)")
                let answer = try client.command("playlistinfo")
                let files = answer.filter { $0.hasPrefix("file: ") }.map { String($0.dropFirst(6)) }
                #expect(files == streams, "\(list): \(answer)")
                if let nameKey {
                    let names = answer.filter { $0.hasPrefix(nameKey + ": ") }.map {
                        String($0.dropFirst(nameKey.count + 2))
                    }
                    #expect(names == ["Test Station 1", "Test Station 2"], "\(list): \(answer)")
                } else {
                    #expect(
                        !answer.contains { $0.hasPrefix("Name: ") || $0.hasPrefix("Title: ") }, "\(list): \(answer)")
                }
            }
            // A URL that is no list, and a list that is not there.
            #expect(
                try client.command("load \"\(server.url("/404.m3u"))\"").last?.hasPrefix("ACK [50@0] {load}") == true)
        }
    }

    @Test("A chain of 5 redirects plays, the queue keeps the URL added", .timeLimit(.minutes(1)), arguments: Self.kinds)
    func redirectChain(kind: RadioDaemon.Kind) throws {
        try withRadio(kind) { daemon, server in
            let client = try daemon.connect()
            let url = server.url("/redirect?to=/icy.mp3&n=5")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            _ = try eventually("playing through 5 redirects", within: .seconds(15)) {
                let status = try client.fields("status")
                return (Double(status["elapsed"] ?? "") ?? 0) > 0.5 && status["state"] == "play" ? true : nil
            }
            let song = try client.fields("currentsong")
            #expect(song["file"] == url)
            #expect(song["Name"] == "playerd test radio")
            #expect(server.connections(to: "/redirect").count == 5)
        }
    }

    /// A station that cannot be played, and what the error must name besides its URL.
    struct GoneStation: Sendable, CustomStringConvertible {
        var path: String
        var reason: [RadioDaemon.Kind: String]
        var description: String { self.path }
    }

    static let goneStations: [GoneStation] = [
        GoneStation(path: "/404", reason: [.mpd: "404", .playerd: "404"]),
        GoneStation(path: "/500", reason: [.mpd: "500", .playerd: "500"]),
        GoneStation(path: "/loop", reason: [.mpd: "redirects", .playerd: "redirects"]),
        GoneStation(path: "/html", reason: [.mpd: "Invalid data", .playerd: "HTML"]),
        GoneStation(path: "refused", reason: [.mpd: "connect", .playerd: "refused"]),
    ]

    @Test(
        "A gone station stops playback with an error naming it; with a song after it, that song plays",
        .timeLimit(.minutes(2)), arguments: Self.kinds, Self.goneStations)
    func goneStation(kind: RadioDaemon.Kind, station: GoneStation) throws {
        try withRadio(kind) { daemon, server in
            let client = try daemon.connect()
            // Port 1 on loopback: nothing listens there.
            let url = station.path == "refused" ? "http://127.0.0.1:1/radio.mp3" : server.url(station.path)
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            expectPlayAccepted(try client.command("play"), kind: kind)
            let status = try eventually("\(url) given up", within: .seconds(45)) {
                let status = try client.fields("status")
                return status["state"] == "stop" ? status : nil
            }
            let error = status["error"] ?? ""
            #expect(error.contains(url), "\(status)")
            #expect(error.contains(station.reason[kind] ?? "?"), "\(status)")
            #expect(status["song"] == "0", "\(status)")

            // The same with a local song after it: the queue moves on to it.
            #expect(try client.command("clearerror") == ["OK"])
            #expect(try client.command("add station.mp3") == ["OK"])
            expectPlayAccepted(try client.command("play 0"), kind: kind)
            _ = try eventually("the song after \(url) playing", within: .seconds(45)) {
                let status = try client.fields("status")
                return status["song"] == "1" && status["state"] == "play" ? true : nil
            }
            #expect(try client.field("currentsong", "file") == "station.mp3")
        }
    }

    /// `play` of a station that fails: playerd answers OK and reports the failure in `status`. mpd's
    /// `play` waits for its decoder to start (PlayerControl::SeekLocked) and rethrows the decoder's
    /// error when the station failed by then, so on a busy machine it may answer an ACK instead: a
    /// race in mpd, not a behaviour to copy. Either way the queue goes on as the test then checks.
    private func expectPlayAccepted(_ reply: [String], kind: RadioDaemon.Kind) {
        if kind == .mpd, reply.count == 1, reply[0].hasPrefix("ACK ["), reply[0].contains("{play}") {
            return
        }
        #expect(reply == ["OK"], "\(kind): \(reply)")
    }

    @Test("Network clients may add streams; file:// stays local", .timeLimit(.minutes(1)), arguments: Self.kinds)
    func tcpClientsAddStreams(kind: RadioDaemon.Kind) throws {
        try withRadio(kind, tcp: true) { daemon, server in
            let client = try daemon.connectTCP()
            let url = server.url("/icy.mp3")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            let added = try client.command("addid \"\(server.url("/plain.mp3"))\"")
            #expect(added.count == 2 && added[0].hasPrefix("Id: ") && added[1] == "OK", "\(added)")
            #expect(try client.command("load \"\(server.url("/station.pls"))\"") == ["OK"])
            #expect(try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }.count == 4)
            let local = try client.command("add \"file://\(try RadioMusic.station())\"")
            // mpd: `Access denied`; playerd names the path and why.
            #expect(local.last?.hasPrefix("ACK [4@0] {add} ") == true, "\(local)")
            let handlers = try client.command("urlhandlers")
            #expect(handlers.contains("handler: http://") && handlers.contains("handler: https://"), "\(handlers)")
            #expect(!handlers.contains("handler: file://"), "\(handlers)")
            // A local client sees file:// among them.
            #expect(try daemon.connect().command("urlhandlers").contains("handler: file://"))
        }
    }

    @Test("mpc shows a station as Name: Title", .timeLimit(.minutes(1)), arguments: Self.kinds)
    func mpcCurrent(kind: RadioDaemon.Kind) throws {
        try requireTool(Paths.mpc)
        try withRadio(kind) { daemon, server in
            let socket = daemon.socketPath
            let added = try runProgram(
                Paths.mpc, ["--host", socket, "add", server.url("/icy.mp3?titles=Artist%20-%20Song")])
            #expect(added.status == 0, "\(added)")
            #expect(try runProgram(Paths.mpc, ["--host", socket, "-q", "play"]).status == 0)
            let current = try eventually("mpc current with the title", within: .seconds(15)) {
                let current = try runProgram(Paths.mpc, ["--host", socket, "current"]).stdout
                // The title comes with the audio it was sent before (the first ICY block), after the name.
                return current.hasPrefix("playerd test radio:") ? current : nil
            }
            #expect(current == "playerd test radio: Artist - Song\n")
            let status = try runProgram(Paths.mpc, ["--host", socket]).stdout
            #expect(status.contains("[playing] #1/1"), "\(status)")
        }
    }

    @Test(
        "python-mpd2: a station added, its title and name in currentsong, playlistinfo and status",
        .timeLimit(.minutes(1)), arguments: Self.kinds)
    func pythonMPD2(kind: RadioDaemon.Kind) throws {
        try requireTool(Paths.python)
        try withRadio(kind) { daemon, server in
            let script = """
                import sys, time
                from mpd import MPDClient
                client = MPDClient()
                client.connect(sys.argv[1])
                url = sys.argv[2]
                def check(what, got, expected):
                    if got != expected:
                        print("FAIL %s: %r, expected %r" % (what, got, expected))
                        sys.exit(1)
                    print("ok: " + what)
                client.clear()
                song_id = client.addid(url)
                check("queued", client.playlistinfo()[0]["file"], url)
                client.playid(song_id)
                deadline = time.monotonic() + 15
                while client.currentsong().get("title") != "Python - Title" and time.monotonic() < deadline:
                    time.sleep(0.1)
                song = client.currentsong()
                check("title", song.get("title"), "Python - Title")
                check("name", song.get("name"), "playerd test radio")
                check("id", song.get("id"), song_id)
                check("no duration in currentsong", "duration" in song, False)
                check("playlistinfo title", client.playlistinfo()[0].get("title"), "Python - Title")
                status = client.status()
                check("state", status["state"], "play")
                check("no duration in status", "duration" in status, False)
                check("bitrate", status.get("bitrate"), "128")
                check("audio rate and channels", status.get("audio", "").split(":")[::2], ["48000", "2"])
                client.stop()
                print("all checks passed")
                """
            let url = server.url("/icy.mp3?titles=Python%20-%20Title")
            let result = try runProgram(Paths.python, ["-c", script, daemon.socketPath, url], within: .seconds(40))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.hasSuffix("all checks passed\n"), "\(result)")
        }
    }

    @Test(
        "Ogg Vorbis, Ogg Opus and FLAC stations play, with their name",
        .timeLimit(.minutes(1)), arguments: Self.kinds)
    func otherFormats(kind: RadioDaemon.Kind) throws {
        let server = try RadioServer(extraArguments: try RadioMusic.otherFormats())
        try withRadio(kind, server: server) { daemon, server in
            let client = try daemon.connect()
            for path in ["/vorbis.ogg", "/opus.ogg", "/flac"] {
                #expect(try client.command("clear") == ["OK"])
                #expect(try client.command("add \"\(server.url(path))\"") == ["OK"])
                #expect(try client.command("play") == ["OK"])
                let status = try eventually("\(path) playing", within: .seconds(15)) { () -> [String: String]? in
                    let status = try client.fields("status")
                    if let error = status["error"] { throw HarnessError("\(path): \(error)") }
                    return (Double(status["elapsed"] ?? "") ?? 0) > 1 ? status : nil
                }
                #expect(status["state"] == "play", "\(path): \(status)")
                let audio = status["audio"]?.split(separator: ":").map(String.init) ?? []
                #expect(audio.count == 3 && audio[0] == "48000" && audio[2] == "2", "\(path): \(status)")
                #expect(try client.field("currentsong", "Name") == "playerd test radio", "\(path)")
            }
        }
    }
}
