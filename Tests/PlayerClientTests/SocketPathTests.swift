import Foundation
import PlayerClient
import Testing

@Suite("where playerd listens by default")
struct SocketPathTests {
    @Test(
        "PLAYERD_SOCKET, then XDG_RUNTIME_DIR, then /run for root, then /run/user/UID",
        arguments: [
            (["PLAYERD_SOCKET": "/tmp/p.sock", "XDG_RUNTIME_DIR": "/run/user/7"], 1000, "/tmp/p.sock"),
            (["PLAYERD_SOCKET": "relative.sock"], 0, "relative.sock"),
            (["XDG_RUNTIME_DIR": "/run/user/1000"], 1000, "/run/user/1000/playerd/socket"),
            (["XDG_RUNTIME_DIR": "/run/user/1000/"], 1000, "/run/user/1000/playerd/socket"),
            (["XDG_RUNTIME_DIR": "/run/user/0"], 0, "/run/user/0/playerd/socket"),
            ([:], 0, "/run/playerd/socket"),
            ([:], 1000, "/run/user/1000/playerd/socket"),
            (["PLAYERD_SOCKET": "", "XDG_RUNTIME_DIR": ""], 1001, "/run/user/1001/playerd/socket"),
            (["PLAYERD_SOCKET": "", "XDG_RUNTIME_DIR": "/xdg"], 0, "/xdg/playerd/socket"),
        ] as [([String: String], UInt32, String)])
    func defaultPath(environment: [String: String], userID: UInt32, expected: String) {
        #expect(defaultSocketPath(environment: environment, userID: userID) == expected)
    }

    @Test("not running: a unit is suggested only for the socket it listens on, the system's or the user's")
    func startAdviceFollowsTheSocket() {
        #expect(
            startAdvice(socketPath: "/run/playerd/socket", userID: 0, runtimeDirectory: nil)
                == "start it with: systemctl start playerd.socket, or by hand: playerd --socket /run/playerd/socket")
        // A user pointed at the system service's socket: the user unit would listen elsewhere.
        #expect(
            startAdvice(socketPath: "/run/playerd/socket", userID: 1000, runtimeDirectory: "/run/user/1000")
                == "start it with: sudo systemctl start playerd.socket, or by hand: playerd --socket /run/playerd/socket"
        )
        #expect(
            startAdvice(socketPath: "/run/user/1000/playerd/socket", userID: 1000, runtimeDirectory: "/run/user/1000")
                == "start it with: systemctl --user start playerd.socket, or by hand: playerd --socket /run/user/1000/playerd/socket"
        )
        #expect(
            startAdvice(socketPath: "/xdg/playerd/socket", userID: 0, runtimeDirectory: "/xdg")
                == "start it with: systemctl --user start playerd.socket, or by hand: playerd --socket /xdg/playerd/socket"
        )
        // Any other socket is one started by hand: no unit listens there.
        #expect(
            startAdvice(socketPath: "/tmp/s", userID: 1000, runtimeDirectory: "/run/user/1000")
                == "start it by hand: playerd --socket /tmp/s")
        #expect(
            startAdvice(socketPath: "/tmp/s", userID: 0, runtimeDirectory: nil)
                == "start it by hand: playerd --socket /tmp/s")
    }

    @Test("the shell completions offer every wait target, ready among them")
    func completionsOfferWaitReady() throws {
        let completions = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("completions")
        for name in ["playerctl.bash", "_playerctl", "playerctl.fish"] {
            let text = try String(contentsOf: completions.appendingPathComponent(name), encoding: .utf8)
            for target in ["ready", "play", "pause", "stop"] {
                #expect(
                    text.contains("'\(target)'") || text.contains(" \(target) ") || text.contains("'\(target) "),
                    "\(name): \(target)")
            }
        }
    }
}

@Suite("paths sent to the daemon")
struct SongPathTests {
    @Test(
        "relative paths join the current directory; dots and double slashes go; URLs stay",
        arguments: [
            ("song.mp3", "/home/me", "/home/me/song.mp3"),
            ("./music/../song.mp3", "/home/me", "/home/me/song.mp3"),
            ("../../../../x.mp3", "/home/me", "/x.mp3"),
            ("/a//b/./c/", "/ignored", "/a/b/c"),
            ("/", "/home", "/"),
            ("Albums/A \"quoted\" name", "/srv", "/srv/Albums/A \"quoted\" name"),
            ("http://radio.example/stream", "/home/me", "http://radio.example/stream"),
            ("file:///music/a.mp3", "/home/me", "file:///music/a.mp3"),
            ("not a url://x", "/d", "/d/not a url:/x"),
            ("song.mp3", "", "song.mp3"),
        ])
    func absolute(path: String, directory: String, expected: String) {
        #expect(absolutePath(path, currentDirectory: directory) == expected)
    }
}
