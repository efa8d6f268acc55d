import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("playerctl's messages")
struct PlayerctlMessageTests {
    private func playerctl(_ arguments: [String], environment: [String: String] = [:]) throws -> ProgramResult {
        try runProgram(Paths.playerctl, arguments, environment: environment)
    }

    @Test("a playerd killed with SIGKILL: nobody answers on the socket left behind; no unit for a socket of one's own")
    func killedDaemon() throws {
        let daemon = try RunningPlayerd()
        let socket = daemon.socketPath
        daemon.kill()
        try #require(FileManager.default.fileExists(atPath: socket))
        let result = try self.playerctl(["--socket", socket, "status"])
        #expect(result.status == 3, "\(result)")
        #expect(
            result.stderr == """
                playerctl: playerd is not running: nobody answers on \(socket) (its socket file is left from a playerd that ended without removing it)
                playerctl: start it by hand: playerd --socket \(socket)

                """)
    }

    @Test("the default socket's absence points at the unit that listens there")
    func unitForTheDefaultSocket() throws {
        let runtime = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let result = try self.playerctl(["status"], environment: ["XDG_RUNTIME_DIR": runtime, "PLAYERD_SOCKET": ""])
        #expect(result.status == 3, "\(result)")
        #expect(
            result.stderr == """
                playerctl: playerd is not running: no socket at \(runtime)/playerd/socket
                playerctl: start it with: systemctl --user start playerd.socket, or by hand: playerd --socket \(runtime)/playerd/socket

                """)
    }

    @Test("a mistyped verb is called unknown, with the nearest verb; a wrong queue verb lists queue's verbs")
    func unknownSubcommands() throws {
        let typo = try self.playerctl(["plya"])
        #expect(typo.status == 2, "\(typo)")
        #expect(typo.stderr.hasPrefix("Error: Unknown subcommand 'plya'. Did you mean 'play'?\n"), "\(typo)")
        #expect(typo.stderr.contains("Subcommands: play, pause, play-pause,"), "\(typo)")

        let queue = try self.playerctl(["--socket", "/nonexistent/socket", "queue", "frobnicate"])
        #expect(queue.status == 2, "\(queue)")
        #expect(
            queue.stderr == """
                Error: Unknown subcommand 'frobnicate' of 'playerctl queue'.
                Subcommands: list (the default), add, clear, remove, move
                Usage: playerctl queue <subcommand>
                  See 'playerctl queue --help' for more information.

                """)
        // Nothing near: no guess.
        #expect(try self.playerctl(["xyzzy"]).stderr.hasPrefix("Error: Unknown subcommand 'xyzzy'.\n"))
        // Verbs and their options still reach the parser: an option's typo keeps its own suggestion.
        let option = try self.playerctl(["status", "--jsn"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("Unknown option '--jsn'. Did you mean '--json'?"), "\(option)")
    }

    @Test("status --follow into a pipe writes one plain line per change, no carriage returns or erasing")
    func followIntoAPipe() throws {
        try withPlayerd { daemon in
            let follow = try BackgroundProgram(Paths.playerctl, ["--socket", daemon.socketPath, "status", "--follow"])
            let client = try daemon.connect()
            try expectEventually("the first line") { follow.stdout.hasSuffix("\n") }
            #expect(try client.command("playnow \"\(Paths.fixture("stereo-44k-cbr.mp3"))\"") == ["OK"])
            try expectEventually("a line for playing") { follow.stdout.contains("[playing]") }
            #expect(try client.command("pause 1") == ["OK"])
            try expectEventually("a line for paused") { follow.stdout.contains("[paused]") }
            // Paused, nothing changes: no redraws.
            let settled = follow.stdout
            usleep(700_000)
            #expect(follow.stdout == settled)
            kill(follow.process.processIdentifier, SIGINT)
            let text = try follow.finish(within: .seconds(5)).stdout
            #expect(!text.contains("\r") && !text.contains("\u{1B}"), "\(text.debugDescription)")
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first == "[stopped]", "\(text)")
            #expect(lines.last == "", "\(text)")
            #expect(lines.count <= 6, "\(text)")
        }
    }
}
