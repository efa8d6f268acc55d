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
}
