import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private D-Bus session bus for one test: `dbus-daemon --session` on a socket in a fresh
/// directory, killed (and the directory removed) when the value goes away. The desktop's programs
/// reach it through `environment`.
final class PrivateSessionBus {
    /// The bus's directory; also the runtime directory (`XDG_RUNTIME_DIR`) of the programs on it.
    let directory: String
    /// `unix:path=DIRECTORY/bus`.
    let address: String
    private let daemon: BackgroundProgram

    static let dbusDaemon = "/usr/bin/dbus-daemon"
    /// The desktop's playerctl (Debian's `playerctl`), by its full path: ours is called playerctl too.
    static let desktopPlayerctl = "/usr/bin/playerctl"
    static let busctl = "/usr/bin/busctl"
    static let dbusMonitor = "/usr/bin/dbus-monitor"

    init() throws {
        for program in [Self.dbusDaemon, Self.desktopPlayerctl, Self.busctl, Self.dbusMonitor] {
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw HarnessError("\(program) is missing: run scripts/setup.sh test")
            }
        }
        self.directory = try Paths.makeTemporaryDirectory()
        self.address = "unix:path=\(self.directory)/bus"
        // In the foreground, as our child: with --fork the daemon would keep the descriptor Foundation's
        // Process watches for its child's end, and the start would never seem to finish.
        let daemon = try BackgroundProgram(
            Self.dbusDaemon, ["--session", "--address=\(self.address)", "--nofork", "--nopidfile", "--print-address"])
        self.daemon = daemon
        // It prints its address once it listens.
        try eventually("dbus-daemon listens at \(self.address)") {
            daemon.stdout.contains(self.address) || !daemon.isRunning
        }
        guard daemon.isRunning else {
            throw HarnessError("dbus-daemon did not start: \(daemon.stderr)")
        }
    }

    deinit {
        // BackgroundProgram kills it; the directory goes with the bus.
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// What a program needs to find this bus (and a runtime directory for playerd's cover files).
    var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": self.address, "XDG_RUNTIME_DIR": self.directory]
    }

    /// Runs the desktop's playerctl on this bus.
    func playerctl(_ arguments: [String]) throws -> ProgramResult {
        try runProgram(Self.desktopPlayerctl, arguments, environment: self.environment)
    }

    /// The desktop's playerctl's output for `-p PLAYER ARGUMENTS`, which must succeed; without the
    /// final newline.
    func output(of arguments: [String], player: String = "playerd") throws -> String {
        let result = try self.playerctl(["-p", player] + arguments)
        guard result.status == 0 else {
            throw HarnessError("playerctl -p \(player) \(arguments.joined(separator: " ")) failed: \(result)")
        }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// Runs busctl on this bus.
    func busctl(_ arguments: [String]) throws -> ProgramResult {
        try runProgram(Self.busctl, ["--address=\(self.address)"] + arguments)
    }

    /// A Player property as busctl prints it (`s "Playing"`, `d 0.5`).
    func playerProperty(_ name: String, busName: String = "org.mpris.MediaPlayer2.playerd") throws -> String {
        let result = try self.busctl([
            "get-property", busName, "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", name,
        ])
        guard result.status == 0 else {
            throw HarnessError("busctl get-property \(name) failed: \(result)")
        }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// The names of the MPRIS players on the bus, as the desktop's `playerctl -l` lists them.
    func players() throws -> [String] {
        try self.playerctl(["-l"]).stdout.split(separator: "\n").map(String.init)
    }
}

/// Polls `condition` every 20 ms until it holds; throws with `description` (and the last problem it
/// threw, if any) when `limit` passes first. Tests wait for effects this way, never by sleeping.
func eventually(
    _ description: @autoclosure () -> String, within limit: Duration = .seconds(10), _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + limit
    var problem = ""
    while true {
        do {
            if try condition() { return }
        } catch {
            problem = " (last: \(error))"
        }
        guard ContinuousClock.now < deadline else {
            throw HarnessError("not within \(limit): \(description())\(problem)")
        }
        usleep(20_000)
    }
}

/// Songs made for a test, long enough to be caught playing (30 s of a quiet tone, made by sox and
/// lame), each with the ID3v2.4 tags it is given, in a fresh directory that is removed afterwards.
final class TestSongs {
    let directory: String
    private let audio: [UInt8]

    init() throws {
        self.directory = try Paths.makeTemporaryDirectory()
        let wave = self.directory + "/tone.wav"
        let mp3 = self.directory + "/tone.mp3"
        defer {
            unlink(wave)
            unlink(mp3)
        }
        let sox = try runProgram(
            "/usr/bin/sox", ["-n", "-r", "22050", "-c", "1", wave, "synth", "30", "sine", "440", "vol", "0.1"])
        let lame = try runProgram("/usr/bin/lame", ["--quiet", "-b", "32", wave, mp3])
        guard sox.status == 0, lame.status == 0, let audio = FileManager.default.contents(atPath: mp3) else {
            try? FileManager.default.removeItem(atPath: self.directory)
            throw HarnessError("cannot make test audio (sox and lame: scripts/setup.sh test)\n\(sox)\n\(lame)")
        }
        self.audio = Array(audio)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// Writes `name` with these tags and returns its path. Each value is UTF-8 unless given as raw
    /// bytes (`rawTitle`, for a title that is not UTF-8); several values of one tag share its frame,
    /// NUL-separated, as ID3v2.4 has it.
    @discardableResult
    func song(
        _ name: String, title: String? = nil, rawTitle: [UInt8]? = nil, artists: [String] = [], album: String? = nil,
        albumArtists: [String] = [], track: String? = nil
    ) throws -> String {
        var frames: [UInt8] = []
        func frame(_ id: String, _ text: [UInt8]) {
            let body = [0x03] + text
            frames += Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
        }
        if let rawTitle {
            frame("TIT2", rawTitle)
        } else if let title {
            frame("TIT2", Array(title.utf8))
        }
        if !artists.isEmpty {
            frame("TPE1", Array(artists.joined(separator: "\0").utf8))
        }
        if let album {
            frame("TALB", Array(album.utf8))
        }
        if !albumArtists.isEmpty {
            frame("TPE2", Array(albumArtists.joined(separator: "\0").utf8))
        }
        if let track {
            frame("TRCK", Array(track.utf8))
        }
        let tag = Array("ID3".utf8) + [4, 0, 0] + syncsafe(frames.count) + frames
        let path = self.directory + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data(tag + self.audio)) else {
            throw HarnessError("cannot write \(path)")
        }
        return path
    }

    /// Writes a file into the songs' directory (a cover).
    func file(_ name: String, _ bytes: [UInt8]) throws {
        guard FileManager.default.createFile(atPath: self.directory + "/" + name, contents: Data(bytes)) else {
            throw HarnessError("cannot write \(name)")
        }
    }
}

private func syncsafe(_ value: Int) -> [UInt8] {
    [UInt8((value >> 21) & 0x7F), UInt8((value >> 14) & 0x7F), UInt8((value >> 7) & 0x7F), UInt8(value & 0x7F)]
}
