import Foundation
import PlayerClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension Paths {
    /// The per-user MPRIS bridge, built beside playerd.
    static let playerdMPRIS: String = {
        URL(fileURLWithPath: playerd).deletingLastPathComponent().appendingPathComponent("playerd-mpris").path
    }()

    /// Debian's stock mpDris2 (package mpdris2): another MPD-to-MPRIS bridge that must work with playerd.
    static let mpDris2 = "/usr/bin/mpDris2"
}

/// playerd's MPRIS on a private session bus, driven by the desktop's own clients: Debian's playerctl
/// (by its full path), busctl and dbus-monitor, with mpc and PlayerClient as the MPD clients making
/// changes from the other side. Each test has its own bus and daemon.
@Suite("MPRIS on a private session bus: the desktop's playerctl, busctl, dbus-monitor, mpDris2", .serialized)
struct MPRISTests {
    /// A daemon exporting MPRIS on `bus`.
    private static func options(_ bus: PrivateSessionBus) -> RunningPlayerd.Options {
        var options = RunningPlayerd.Options()
        options.mpris = true
        options.environment = bus.environment
        return options
    }

    /// Waits until playerd's player is on the bus and sees a queue (CanPlay: the desktop's playerctl
    /// skips a player that cannot play).
    private static func waitUntilControllable(
        _ bus: PrivateSessionBus, busName: String = "org.mpris.MediaPlayer2.playerd"
    )
        throws
    {
        try eventually("\(busName) on the bus with CanPlay true") {
            try bus.playerProperty("CanPlay", busName: busName) == "b true"
        }
    }

    private static func status(_ daemon: RunningPlayerd) throws -> Status {
        try MPDConnection(socketPath: daemon.socketPath).status()
    }

    private static func mpc(_ daemon: RunningPlayerd, _ arguments: String...) throws {
        let result = try runProgram(Paths.mpc, ["--host", daemon.socketPath] + arguments)
        guard result.status == 0 else { throw HarnessError("mpc \(arguments): \(result)") }
    }

    /// The D-Bus signals dbus-monitor printed, one block each: the `signal ...` line and its arguments.
    private static func signals(_ monitor: BackgroundProgram) -> [String] {
        monitor.stdout.components(separatedBy: "\nsignal ").map { "signal " + $0 }.filter { $0.contains("member=") }
    }

    /// The positions, in seconds, of the Seeked signals dbus-monitor has seen.
    private static func seekedPositions(_ monitor: BackgroundProgram) -> [Double] {
        Self.signals(monitor).filter { $0.contains("member=Seeked") }.compactMap { block in
            block.split(separator: "\n").first { $0.contains("int64") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 / 1_000_000 }
        }
    }

    @Test("every verb of the desktop's playerctl acts on playerd, and what it reads back is playerd's state")
    func everyVerb() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        let alpha = try songs.song(
            "alpha.mp3", title: "Alpha", artists: ["Ann", "Bob"], album: "First", albumArtists: ["Various", "Ann"],
            track: "3/12")
        let beta = try songs.song("beta.mp3", title: "Beta", artists: ["Cy"])
        let gamma = try songs.song("gamma ß.mp3", title: "Gamma")
        let cover: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 20_000)
        try songs.file("cover.png", cover)
        try withPlayerd(Self.options(bus)) { daemon in
            let client = try MPDConnection(socketPath: daemon.socketPath)
            _ = try client.command("add", [alpha])
            _ = try client.command("add", [beta])
            try Self.waitUntilControllable(bus)
            #expect(try bus.players() == ["playerd"])
            #expect(try bus.output(of: ["status"]) == "Stopped")

            _ = try bus.output(of: ["play"])
            try eventually("playerd plays") { try client.status().state == .play }
            #expect(try bus.output(of: ["status"]) == "Playing")
            #expect(try bus.output(of: ["metadata", "--format", "{{ artist }} - {{ title }}"]) == "Ann, Bob - Alpha")
            #expect(try bus.output(of: ["metadata", "xesam:album"]) == "First")
            #expect(try bus.output(of: ["metadata", "xesam:trackNumber"]) == "3")
            let duration = try #require(try client.status().duration)
            #expect(try bus.output(of: ["metadata", "mpris:length"]) == String(Int64((duration * 1e6).rounded())))
            #expect(try bus.output(of: ["metadata", "xesam:url"]) == "file://" + alpha)
            // The cover of the song's directory, written where the desktop can read it.
            let artURL = try bus.output(of: ["metadata", "mpris:artUrl"])
            #expect(artURL.hasPrefix("file://" + bus.directory + "/playerd-mpris/"))
            let artPath = try #require(URL(string: artURL)?.path)
            #expect(FileManager.default.contents(atPath: artPath).map(Array.init) == cover)
            // Types a desktop relies on: the track id is an object path, artists are a list.
            let metadata = try bus.playerProperty("Metadata")
            #expect(metadata.contains("\"mpris:trackid\" o \"/org/playerd/track/"), "\(metadata)")
            #expect(metadata.contains("\"xesam:artist\" as 2 \"Ann\" \"Bob\""), "\(metadata)")
            #expect(metadata.contains("\"xesam:albumArtist\" as 2 \"Various\" \"Ann\""), "\(metadata)")
            #expect(metadata.contains("\"mpris:length\" x "), "\(metadata)")

            _ = try bus.output(of: ["pause"])
            try eventually("paused") { try client.status().state == .pause }
            #expect(try bus.output(of: ["status"]) == "Paused")
            _ = try bus.output(of: ["play-pause"])
            try eventually("playing again") { try client.status().state == .play }
            _ = try bus.output(of: ["play-pause"])
            try eventually("paused again") { try client.status().state == .pause }

            // Positions, while paused so that they are exact: absolute, forward, back, read.
            _ = try bus.output(of: ["position", "10"])
            try eventually("at 10 s") { try client.status().elapsed == 10 }
            _ = try bus.output(of: ["position", "5+"])
            try eventually("at 15 s") { try client.status().elapsed == 15 }
            _ = try bus.output(of: ["position", "3-"])
            try eventually("at 12 s") { try client.status().elapsed == 12 }
            #expect(try bus.output(of: ["position"]) == "12.000000")
            // Before the start is the start; past the end is the next track (MPRIS's Seek).
            _ = try bus.output(of: ["position", "100-"])
            try eventually("at 0 s") { try client.status().elapsed == 0 }
            _ = try bus.output(of: ["position", "100+"])
            try eventually("on to beta") { try client.currentSong()?.title == "Beta" }
            #expect(try bus.output(of: ["metadata", "title"]) == "Beta")

            _ = try bus.output(of: ["previous"])
            try eventually("back to alpha") { try client.currentSong()?.title == "Alpha" }
            _ = try bus.output(of: ["next"])
            try eventually("beta again") { try client.currentSong()?.title == "Beta" }
            #expect(try bus.output(of: ["metadata", "--format", "{{ artist }} - {{ title }}"]) == "Cy - Beta")

            _ = try bus.output(of: ["stop"])
            try eventually("stopped") { try client.status().state == .stop }
            #expect(try bus.output(of: ["status"]) == "Stopped")
            _ = try bus.output(of: ["play"])
            try eventually("playing from stopped") { try client.status().state == .play }

            _ = try bus.output(of: ["volume", "0.5"])
            try eventually("volume 50") { try client.status().volume == 50 }
            #expect(try bus.output(of: ["volume"]) == "0.500000")

            for (loop, repeats, single) in [
                ("Track", true, Status.Single.on), ("Playlist", true, .off), ("None", false, .off),
            ] {
                _ = try bus.output(of: ["loop", loop])
                try eventually("loop \(loop)") {
                    let status = try client.status()
                    return status.repeat == repeats && status.single == single
                }
                #expect(try bus.output(of: ["loop"]) == loop)
            }
            _ = try bus.output(of: ["shuffle", "On"])
            try eventually("random on") { try client.status().random }
            #expect(try bus.output(of: ["shuffle"]) == "On")
            _ = try bus.output(of: ["shuffle", "Off"])
            try eventually("random off") { try !client.status().random }

            // open: a percent-encoded file:// URI (space, ß); the queue becomes that song, playing.
            #expect(gamma.hasSuffix("/gamma ß.mp3"))
            _ = try bus.output(of: ["open", "file://" + gamma.dropLast("gamma ß.mp3".count) + "gamma%20%C3%9F.mp3"])
            try eventually("gamma plays alone") {
                try client.currentSong()?.title == "Gamma" && client.status().state == .play
                    && client.status().playlistLength == 1
            }
            #expect(try bus.output(of: ["metadata", "title"]) == "Gamma")
            #expect(try bus.output(of: ["metadata", "xesam:url"]).hasSuffix("/gamma%20%C3%9F.mp3"))

            // A song named relative to the music directory (the fixtures) gets its file:// URL there.
            _ = try client.command("playnow", ["tagged-id3v24.mp3"])
            try eventually("the fixture plays") { try bus.output(of: ["metadata", "xesam:url"]).contains("Fixtures") }
            let url = try bus.output(of: ["metadata", "xesam:url"])
            #expect(URL(string: url)?.path == Paths.fixture("tagged-id3v24.mp3"), "\(url)")
        }
    }

    @Test("introspection: the interfaces, the types, and which properties signal their changes")
    func introspection() throws {
        let bus = try PrivateSessionBus()
        try withPlayerd(Self.options(bus)) { _ in
            try eventually("playerd on the bus") { try bus.players().contains("playerd") }
            let result = try bus.busctl(["introspect", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2"])
            #expect(result.status == 0, "\(result)")
            var members: [String: String] = [:]
            for line in result.stdout.split(separator: "\n") where line.hasPrefix(".") {
                let name = String(line.split(separator: " ").first ?? "")
                members[name] = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            }
            for method in [".Play", ".Pause", ".PlayPause", ".Stop", ".Next", ".Previous", ".Raise", ".Quit"] {
                #expect(members[method]?.hasPrefix("\(method) method - -") == true, "\(members[method] ?? "missing")")
            }
            #expect(members[".Seek"]?.hasPrefix(".Seek method x -") == true)
            #expect(members[".SetPosition"]?.hasPrefix(".SetPosition method ox -") == true)
            #expect(members[".OpenUri"]?.hasPrefix(".OpenUri method s -") == true)
            #expect(members[".Seeked"]?.hasPrefix(".Seeked signal x") == true)
            // Position never signals (clients extrapolate it); what changes does.
            #expect(members[".Position"]?.hasPrefix(".Position property x ") == true)
            #expect(members[".Position"]?.hasSuffix(" -") == true, "\(members[".Position"] ?? "")")
            for changing in [".PlaybackStatus", ".Metadata", ".CanPlay", ".CanSeek"] {
                #expect(members[changing]?.hasSuffix("emits-change") == true, "\(members[changing] ?? "missing")")
            }
            for writable in [".Volume", ".LoopStatus", ".Shuffle"] {
                #expect(members[writable]?.hasSuffix("emits-change writable") == true, "\(members[writable] ?? "")")
            }
            #expect(members[".Metadata"]?.hasPrefix(".Metadata property a{sv} ") == true)
            #expect(members[".Identity"] == ".Identity property s \"playerd\" const")
            #expect(members[".SupportedUriSchemes"] == ".SupportedUriSchemes property as 1 \"file\" const")
            #expect(members[".SupportedMimeTypes"]?.contains("\"audio/mpeg\"") == true)
            #expect(members[".CanControl"] == ".CanControl property b true const")
            // Nothing queued: stopped, nothing to play, no track.
            #expect(try bus.playerProperty("PlaybackStatus") == "s \"Stopped\"")
            #expect(try bus.playerProperty("CanPlay") == "b false")
            #expect(
                try bus.playerProperty("Metadata")
                    == "a{sv} 1 \"mpris:trackid\" o \"/org/mpris/MediaPlayer2/TrackList/NoTrack\"")
        }
    }

    @Test("changes MPD clients make reach D-Bus at once: -F follow, volume both ways, one PropertiesChanged, Seeked")
    func changesFromOtherClients() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        let alpha = try songs.song("alpha.mp3", title: "Alpha", artists: ["Ann"])
        let beta = try songs.song("beta.mp3", title: "Beta", artists: ["Bob"])
        try withPlayerd(Self.options(bus)) { daemon in
            let client = try MPDConnection(socketPath: daemon.socketPath)
            _ = try client.command("add", [alpha])
            _ = try client.command("add", [beta])
            try Self.waitUntilControllable(bus)
            let monitor = try BackgroundProgram(
                PrivateSessionBus.dbusMonitor,
                ["--address", bus.address, "type='signal',path='/org/mpris/MediaPlayer2'"])
            // dbus-monitor is told of its own name once it listens.
            try eventually("dbus-monitor listens") { monitor.stdout.contains("NameLost") }

            try Self.mpc(daemon, "play")
            try eventually("one PropertiesChanged with the new PlaybackStatus and Metadata together") {
                Self.signals(monitor).contains { block in
                    block.contains("member=PropertiesChanged") && block.contains("\"PlaybackStatus\"")
                        && block.contains("string \"Playing\"") && block.contains("\"Metadata\"")
                        && block.contains("string \"Alpha\"")
                }
            }
            let follow = try BackgroundProgram(
                PrivateSessionBus.desktopPlayerctl, ["-p", "playerd", "-F", "metadata", "--format", "{{ title }}"],
                environment: bus.environment)
            try eventually("-F shows the current title") { follow.stdout.split(separator: "\n").contains("Alpha") }
            try Self.mpc(daemon, "next")
            try eventually("-F shows mpc's next") { follow.stdout.split(separator: "\n").contains("Beta") }
            let followStatus = try BackgroundProgram(
                PrivateSessionBus.desktopPlayerctl, ["-p", "playerd", "-F", "status"], environment: bus.environment)
            try eventually("-F status: playing") { followStatus.stdout.split(separator: "\n").last == "Playing" }
            try Self.mpc(daemon, "pause")
            try eventually("-F status: mpc's pause") { followStatus.stdout.split(separator: "\n").last == "Paused" }

            // Volume both ways.
            try Self.mpc(daemon, "volume", "30")
            try eventually("MPRIS Volume follows mpc") { try bus.output(of: ["volume"]) == "0.300000" }
            _ = try bus.output(of: ["volume", "0.7"])
            try eventually("playerd's volume follows MPRIS") { try client.status().volume == 70 }

            // Seeked carries the new position, whoever seeks: an MPD client, MPRIS's Seek and SetPosition.
            try Self.mpc(daemon, "seek", "20")
            try eventually("Seeked 20 s after mpc's seek") { Self.seekedPositions(monitor).last == 20 }
            let seek = try bus.busctl([
                "call", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                "Seek", "x", "3000000",
            ])
            #expect(seek.status == 0, "\(seek)")
            try eventually("Seeked 23 s after Seek +3 s") { Self.seekedPositions(monitor).last == 23 }
            #expect(try client.status().elapsed == 23)
            _ = try bus.output(of: ["position", "7"])
            try eventually("Seeked 7 s after SetPosition") { Self.seekedPositions(monitor).last == 7 }
            #expect(Self.seekedPositions(monitor).suffix(3) == [20, 23, 7])
            // A stale track id is ignored (MPRIS): nothing moves.
            let stale = try bus.busctl([
                "call", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                "SetPosition", "ox", "/org/playerd/track/999", "1000000",
            ])
            #expect(stale.status == 0, "\(stale)")
            #expect(try client.status().elapsed == 7)
            // Position is read, never signalled.
            #expect(!Self.signals(monitor).contains { $0.contains("\"Position\"") })
        }
    }

    @Test("a refused call is a D-Bus error with playerd's message; OpenUri of a URL playerd cannot open is refused")
    func refusals() throws {
        let bus = try PrivateSessionBus()
        try withPlayerd(Self.options(bus)) { _ in
            try eventually("playerd on the bus") { try bus.players().contains("playerd") }
            let missing = try bus.busctl([
                "call", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                "OpenUri", "s", "file:///nonexistent/nothing.mp3",
            ])
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("nothing.mp3"), "\(missing)")
            let remote = try bus.busctl([
                "call", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                "OpenUri", "s", "https://example.com/a.mp3",
            ])
            #expect(remote.status != 0)
            #expect(remote.stderr.contains("local files only"), "\(remote)")
            let loop = try bus.busctl([
                "set-property", "org.mpris.MediaPlayer2.playerd", "/org/mpris/MediaPlayer2",
                "org.mpris.MediaPlayer2.Player", "LoopStatus", "s", "Sometimes",
            ])
            #expect(loop.status != 0)
            #expect(loop.stderr.contains("None, Track or Playlist"), "\(loop)")
        }
    }

    @Test("a tag that is not UTF-8 reaches D-Bus cleaned (U+FFFD), and Metadata still reads")
    func invalidUTF8Tag() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        // "Café" in Latin-1, then a byte that is never UTF-8, in a frame that says it is UTF-8.
        let bad = try songs.song("bad.mp3", rawTitle: [0x43, 0x61, 0x66, 0xE9, 0x20, 0xFF], artists: ["Ann"])
        try withPlayerd(Self.options(bus)) { daemon in
            _ = try MPDConnection(socketPath: daemon.socketPath).command("playnow", [bad])
            try Self.waitUntilControllable(bus)
            #expect(try bus.output(of: ["metadata", "title"]) == "Caf\u{FFFD} \u{FFFD}")
            #expect(
                try bus.output(of: ["metadata", "--format", "{{ artist }}: {{ title }}"]) == "Ann: Caf\u{FFFD} \u{FFFD}"
            )
            #expect(try bus.playerProperty("Metadata").contains("\"xesam:title\" s \"Caf"))
        }
    }

    @Test("no session bus: playerd runs and answers, and says so in one line")
    func noSessionBus() throws {
        var options = RunningPlayerd.Options()
        options.mpris = true
        let log = try withPlayerd(options) { daemon throws -> String in
            #expect(try Self.status(daemon).state == .stop)
            return daemon.log
        }
        let lines = log.split(separator: "\n").filter { $0.contains("MPRIS") }
        #expect(lines.count == 1, "\(log)")
        #expect(lines.first?.contains("no session bus") == true, "\(log)")
    }

    @Test("a second playerd on the bus takes org.mpris.MediaPlayer2.playerd.instancePID")
    func secondInstance() throws {
        let bus = try PrivateSessionBus()
        try withPlayerd(Self.options(bus)) { first in
            try eventually("the first is playerd") { try bus.players().contains("playerd") }
            try withPlayerd(Self.options(bus)) { second in
                let instance = "playerd.instance\(second.processIdentifier)"
                try eventually("the second is \(instance)") { try Set(bus.players()) == ["playerd", instance] }
                #expect(try bus.output(of: ["status"], player: instance) == "Stopped")
                _ = try MPDConnection(socketPath: second.socketPath).command(
                    "add", [Paths.fixture("tagged-id3v24.mp3")])
                try Self.waitUntilControllable(bus, busName: "org.mpris.MediaPlayer2." + instance)
                #expect(try bus.playerProperty("CanPlay") == "b false")
                _ = first
            }
        }
    }

    @Test(
        "playerd-mpris bridges a playerd socket to the session bus, and follows playerd through a crash and a restart")
    func bridge() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        let alpha = try songs.song("alpha.mp3", title: "Alpha", artists: ["Ann"])
        let first = try RunningPlayerd()
        let bridge = try BackgroundProgram(
            Paths.playerdMPRIS, ["--socket", first.socketPath], environment: bus.environment)
        try eventually("the bridge is on the bus") { try bus.players().contains("playerd") }
        #expect(try bus.output(of: ["status"]) == "Stopped")
        _ = try MPDConnection(socketPath: first.socketPath).command("add", [alpha])
        try Self.waitUntilControllable(bus)
        _ = try bus.output(of: ["play"])
        try eventually("playing through the bridge") { try Self.status(first).state == .play }
        #expect(try bus.output(of: ["metadata", "title"]) == "Alpha")

        // playerd dies: the bridge shows a stopped player with nothing to play, and waits.
        first.kill()
        try eventually("stopped while playerd is away") {
            try bus.playerProperty("PlaybackStatus") == "s \"Stopped\"" && bus.playerProperty("CanPlay") == "b false"
        }
        #expect(try bus.playerProperty("Metadata") == "a{sv} 0")
        #expect(bridge.isRunning)

        // A new playerd on the same socket (it replaces the dead one's file): the bridge reconnects.
        var options = RunningPlayerd.Options()
        options.socketPath = first.socketPath
        let second = try RunningPlayerd(options)
        _ = try MPDConnection(socketPath: second.socketPath).command("add", [alpha])
        try Self.waitUntilControllable(bus)
        _ = try bus.output(of: ["play"])
        try eventually("the new playerd plays through the bridge") { try Self.status(second).state == .play }

        // It stops (saving its state) and comes back with it: paused on alpha, shown so.
        try second.stop()
        try eventually("stopped again") { try bus.playerProperty("PlaybackStatus") == "s \"Stopped\"" }
        options.stateFile = second.directory + "/state"
        try withPlayerd(options) { third in
            try eventually("the bridge shows the restored state") {
                try bus.playerProperty("PlaybackStatus") == "s \"Paused\""
            }
            #expect(try bus.output(of: ["metadata", "title"]) == "Alpha")
            _ = try bus.output(of: ["play"])
            try eventually("playing again") { try Self.status(third).state == .play }
        }
        kill(bridge.process.processIdentifier, SIGTERM)
        let ended = try bridge.finish(within: .seconds(5))
        #expect(ended.status == 0, "\(ended)")
        #expect(ended.stderr.contains("connected to playerd at \(first.socketPath) again"), "\(ended)")
    }

    @Test("stock mpDris2 bridges playerd's socket too: status, metadata and control through playerctl -p mpd")
    func mpDris2() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        let alpha = try songs.song("alpha.mp3", title: "Alpha", artists: ["Ann"])
        try withPlayerd { daemon in
            // Its own empty configuration directory, so that no user configuration is read.
            let configuration = bus.directory + "/config"
            try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
            var environment = bus.environment
            environment["XDG_CONFIG_HOME"] = configuration
            let bridge = try BackgroundProgram(Paths.mpDris2, ["--host", daemon.socketPath], environment: environment)
            try eventually("mpDris2 is on the bus") { try bus.players().contains("mpd") }
            let client = try MPDConnection(socketPath: daemon.socketPath)
            _ = try client.command("add", [alpha])
            try Self.mpc(daemon, "play")
            try eventually("mpDris2 shows playing") { try bus.output(of: ["status"], player: "mpd") == "Playing" }
            try eventually("mpDris2 shows the song") {
                try bus.output(of: ["metadata", "--format", "{{ artist }} - {{ title }}"], player: "mpd")
                    == "Ann - Alpha"
            }
            _ = try bus.output(of: ["pause"], player: "mpd")
            try eventually("paused through mpDris2") { try client.status().state == .pause }
            #expect(bridge.isRunning, "\(bridge.stderr)")
        }
    }

    @Test("our playerctl hands the desktop's command lines to /usr/bin/playerctl, and keeps its own")
    func twoPlayerctls() throws {
        let bus = try PrivateSessionBus()
        let songs = try TestSongs()
        let alpha = try songs.song("alpha.mp3", title: "Alpha", artists: ["Ann"])
        // A directory whose playerctl is ours (a symlink): it is skipped, being the same file.
        let shadow = bus.directory + "/bin"
        try FileManager.default.createDirectory(atPath: shadow, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: shadow + "/playerctl", withDestinationPath: Paths.playerctl)
        try withPlayerd(Self.options(bus)) { daemon in
            _ = try MPDConnection(socketPath: daemon.socketPath).command("add", [alpha])
            try Self.waitUntilControllable(bus)
            var environment = bus.environment
            environment["PATH"] = shadow + ":/usr/bin:/bin"
            func ours(_ arguments: [String]) throws -> ProgramResult {
                try runProgram(shadow + "/playerctl", arguments, environment: environment)
            }
            let list = try ours(["-l"])
            #expect(list.status == 0 && list.stdout == "playerd\n", "\(list)")
            #expect(try ours(["-p", "playerd", "status"]).stdout == "Stopped\n")
            _ = try ours(["--player=playerd", "play"])
            try eventually("playing") { try Self.status(daemon).state == .play }
            #expect(try ours(["metadata", "title"]).stdout == "Alpha\n")
            #expect(try ours(["-p", "playerd", "metadata", "--format", "{{ title }}"]).stdout == "Alpha\n")
            #expect(try ours(["loop"]).stdout == "None\n")
            #expect(try ours(["shuffle"]).stdout == "Off\n")
            // Ours: its own verbs on playerd's socket.
            let own = try ours(["--socket", daemon.socketPath, "metadata", "--json"])
            #expect(own.status == 0 && own.stdout.contains("\"title\": \"Alpha\""), "\(own)")
            let pause = try ours(["--socket", daemon.socketPath, "pause"])
            #expect(pause.status == 0, "\(pause)")
            try eventually("paused by ours") { try Self.status(daemon).state == .pause }

            // No desktop playerctl on PATH: a clear error, status 2.
            environment["PATH"] = shadow
            let none = try ours(["-l"])
            #expect(none.status == 2, "\(none)")
            #expect(none.stderr.contains("apt install playerctl"), "\(none)")
        }
    }
}
