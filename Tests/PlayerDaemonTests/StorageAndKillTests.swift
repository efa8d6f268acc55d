import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `listmounts`, `mount`, `unmount` and `kill`, as Debian's mpd 0.23.12 answers them with a local music
/// directory and no `cache_directory`: side by side with mpd, then what only playerd can be asked.
@Suite("Mounts and kill")
struct StorageAndKillTests {
    /// Every refusal of `mount` and `unmount` in MPD's order, and the idle `mount` a mount that a
    /// plugin takes sends before its database refuses it.
    static func mounts(_ talk: Conversation, music: String) throws {
        let a = try talk.connect("A")
        let watcher = try talk.connect("W")
        try a.ask("listmounts")
        for request in [
            "mount \"\" nfs://server/export", "mount a/b nfs://server/export", "mount foo/ nfs://server/export",
            "mount foo \"\(music)\"", "mount foo \"\(music)/\"", "mount foo /tmp", "mount foo file:///tmp",
            "mount foo ftp://server/x", "mount foo nfs://server", "mount foo nfs:/server/x",
            "unmount \"\"", "unmount foo", "unmount /", "unmount foo/bar",
        ] {
            try a.ask(request)
        }
        // Nothing that fails before a plugin takes the URI is told to idle clients.
        try watcher.send("idle mount")
        try a.ask("mount foo ftp://server/x")
        try watcher.recordSilence()
        for request in [
            "mount foo nfs://server/export", "mount . NFS://server/export", "mount foo smb://server/share",
            "mount foo SMB://", "mount foo http://server/dav", "mount foo https://server/dav",
        ] {
            try a.ask(request)
            try watcher.answer(timeout: .seconds(2))
            try watcher.send("idle mount")
        }
        try watcher.send("noidle")
        try watcher.answer()
        try a.ask("listmounts")
        try a.ask("command_list_ok_begin\nlistmounts\nunmount foo\ncommand_list_end")
    }

    @Test("listmounts, mount and unmount answer as mpd's, idle mount included")
    func mountsAsMPD() throws {
        let music = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: music) }
        try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: music + "/one-second.mp3")
        let pair = try DaemonPair(music: music)
        let mpd = Conversation { try pair.mpd.connect() }
        try Self.mounts(mpd, music: music)
        let playerd = Conversation { try pair.playerd.connect() }
        try Self.mounts(playerd, music: music)
        #expect(mpd.lines.contains("A: storage: \(music)"))
        let same = zip(mpd.lines, playerd.lines).filter { $0 == $1 }.count
        print("Mounts against mpd: \(same) of \(mpd.lines.count) recorded lines the same")
        if let difference = Conversation.difference(mpd.lines, playerd.lines) {
            Issue.record(Comment(rawValue: difference + "\n" + pair.logTails))
        }
    }

    @Test("listmounts shows the music directory's place only to clients on this machine")
    func listmountsOverTCP() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--listen", "127.0.0.1:0"]
        try withPlayerd(options) { daemon in
            let local = try daemon.connect()
            #expect(try local.command("listmounts") == ["mount: ", "storage: \(Paths.fixtures)", "OK"])
            let remote = try LineClient(host: "127.0.0.1", port: try daemon.boundPort("127.0.0.1")).checkingGreeting()
            #expect(try remote.command("listmounts") == ["mount: ", "OK"])
            #expect(try remote.command("mount foo nfs://server/export").first?.hasPrefix("ACK [50@0] {mount}") == true)
        }
    }

    /// mpd's and playerd's way of taking `kill`: the connection ends without a byte, and the daemon exits.
    static func killEndsConnection(_ client: LineClient, request: String) throws -> String {
        try client.send(bytes: Array(request.utf8))
        return try client.readToEnd(timeout: .seconds(5))
    }

    @Test("kill: the connection closes with no answer, pipelined and in a list, and mpd goes too")
    func killAsMPD() throws {
        let music = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: music) }
        for request in ["ping\nkill\n", "command_list_ok_begin\nping\nkill\nping\ncommand_list_end\n", "kill 1 2\n"] {
            let mpd = try RunningMPD(music: music)
            #expect(try Self.killEndsConnection(mpd.connect(), request: request) == "", "mpd: \(request)")
            try expectEventually("mpd exits after \(request)", within: .seconds(10)) { !mpd.isRunning }
            let playerd = try RunningPlayerd()
            #expect(try Self.killEndsConnection(playerd.connect(), request: request) == "", "playerd: \(request)")
            #expect(playerd.waitForExit(within: .seconds(10)), "playerd: \(request)")
            #expect(playerd.terminationStatus == 0)
            #expect(!FileManager.default.fileExists(atPath: playerd.socketPath))
        }
    }

    @Test("kill saves the state as SIGTERM does; other clients' connections end; it needs admin")
    func killSavesState() throws {
        let state = try Paths.makeTemporaryDirectory() + "/state"
        var options = RunningPlayerd.Options()
        options.stateFile = state
        let daemon = try RunningPlayerd(options)
        let bystander = try daemon.connect()
        let client = try daemon.connect()
        #expect(try client.command("add stereo-44k-cbr.mp3") == ["OK"])
        #expect(try client.command("repeat 1") == ["OK"])
        try bystander.send(line: "idle")
        try client.send(line: "kill")
        #expect(try client.readToEnd(timeout: .seconds(5)) == "")
        #expect(daemon.waitForExit(within: .seconds(10)))
        #expect(daemon.terminationStatus == 0)
        #expect(bystander.isClosedByPeer(within: .seconds(5)))
        #expect(daemon.log.contains("a client sent kill"))
        // The next start finds the queue and the mode.
        var again = RunningPlayerd.Options()
        again.stateFile = state
        try withPlayerd(again) { restarted in
            let check = try restarted.connect()
            let status = try check.fields("status")
            #expect(status["playlistlength"] == "1")
            #expect(status["repeat"] == "1")
        }

        let file = try Paths.makeTemporaryDirectory() + "/passwords"
        try "player@read,add,player,control\n".write(toFile: file, atomically: false, encoding: .utf8)
        #expect(chmod(file, 0o600) == 0)
        var guarded = RunningPlayerd.Options()
        guarded.extraArguments = ["--password-file", file]
        try withPlayerd(guarded) { running in
            let client = try running.connect()
            #expect(try client.command("password player") == ["OK"])
            #expect(try client.command("kill") == ["ACK [4@0] {kill} you don't have permission for \"kill\""])
            #expect(try client.command("ping") == ["OK"])
        }
    }
}
