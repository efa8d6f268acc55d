import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a script or a person reads from playerctl against the real daemon: timers, positions, a
/// readiness wait, and exit statuses of their own.
@Suite("playerctl for scripts and people")
struct PlayerctlScriptingTests {
    private func playerctl(_ socket: String, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(Paths.playerctl, ["--socket", socket] + arguments)
    }

    @Test("a timed pause and a sleep timer show in status, status --json and status --follow")
    func timersAreShown() throws {
        try withPlayerd { daemon in
            let socket = daemon.socketPath
            #expect(try self.playerctl(socket, ["play", Paths.fixture("stereo-44k-cbr.mp3")]).status == 0)
            #expect(try self.playerctl(socket, ["pause", "--for", "30s"]).status == 0)
            #expect(try self.playerctl(socket, ["stop", "--after", "20m"]).status == 0)

            let text = try self.playerctl(socket, ["status"]).stdout
            let timers = text.split(separator: "\n").last.map(String.init) ?? ""
            // Whole seconds, counting down: a moment has passed since the timers were set.
            #expect(timers.hasPrefix("resumes in 0:2") || timers.hasPrefix("resumes in 0:30"), "\(text)")
            #expect(timers.contains(", stops in 19:5") || timers.contains(", stops in 20:00"), "\(text)")

            let json =
                try JSONSerialization.jsonObject(
                    with: Data(try self.playerctl(socket, ["status", "--json"]).stdout.utf8)) as? [String: Any]
            let resumesIn = try #require(json?["resumes_in"] as? Double)
            let stopsIn = try #require(json?["stops_in"] as? Double)
            #expect(resumesIn > 25 && resumesIn <= 30)
            #expect(stopsIn > 1190 && stopsIn <= 1200)
            #expect(json?["stops_at_end"] as? Bool == false)

            #expect(try self.playerctl(socket, ["stop", "--at-end"]).status == 0)
            #expect(try self.playerctl(socket, ["status"]).stdout.contains("stops at the end of this song"))

            let follow = try BackgroundProgram(Paths.playerctl, ["--socket", socket, "status", "--follow"])
            usleep(600_000)
            kill(follow.process.processIdentifier, SIGINT)
            let line = try follow.finish(within: .seconds(5)).stdout
            #expect(line.contains("(resumes in 0:"), "\(line)")
            #expect(line.contains("stops at the end of this song)"), "\(line)")
        }
    }

    @Test("metadata counts Pos from 1, like the rest of playerctl")
    func metadataPositionFromOne() throws {
        try withPlayerd { daemon in
            // The 3 s song first: on a machine busy with other tests, a 1 s one could be over before
            // metadata asks.
            let files = ["stereo-44k-cbr.mp3", "one-second.mp3"].map(Paths.fixture)
            #expect(try self.playerctl(daemon.socketPath, ["play"] + files).status == 0)
            let lines = try self.playerctl(daemon.socketPath, ["metadata"]).stdout.split(separator: "\n")
            #expect(lines.contains("Pos: 1"))
        }
    }

    @Test("wait ready returns once a daemon started after it answers; a wait that times out exits 4")
    func waitReady() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nothing = try self.playerctl(directory + "/nobody", ["wait", "ready", "--timeout", "0.3"])
        #expect(nothing.status == 4)
        #expect(nothing.stderr.contains("timed out after 0.3s waiting for playerd to answer"))

        var options = RunningPlayerd.Options()
        options.socketPath = directory + "/socket"
        options.waitsForGreeting = false
        let waiting = try BackgroundProgram(
            Paths.playerctl, ["--socket", directory + "/socket", "wait", "ready", "--timeout", "60"])
        usleep(300_000)
        #expect(waiting.process.isRunning)
        try withPlayerd(options) { daemon in
            let ready = try waiting.finish(within: .seconds(30))
            #expect(ready.status == 0, "\(ready)")

            let state = try self.playerctl(daemon.socketPath, ["wait", "play", "--timeout", "0.2"])
            #expect(state.status == 4)
            #expect(state.stderr.contains("waiting for the player to be playing; it is stopped"))
        }
    }

    @Test("playerd not running: exit 3 at once, with how to start it; no unit listens on a socket of one's own")
    func notRunningHint() throws {
        let result = try self.playerctl("/tmp/playerd-no-such-socket", ["status"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("start it by hand: playerd --socket /tmp/playerd-no-such-socket"), "\(result)")
        #expect(!result.stderr.contains("systemctl"), "\(result)")
    }
}
