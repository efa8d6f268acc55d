import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Internet radio where playerd goes beyond mpd (issue 26): it reconnects a dropped or stalled station
/// and plays on, with the audio continuous across the reconnection; Latin-1 titles; hostile servers
/// bounded. Driven through the real daemon against the loopback radio server
/// (Tests/RadioServer/radio_server.py).
@Suite("Internet radio: reconnection, continuity, hostile servers", .serialized)
struct RadioTests {
    /// Polls `status` until `condition` holds on it, and returns it.
    static func status(
        _ client: LineClient, _ what: String, within limit: Duration = .seconds(20),
        _ condition: @escaping ([String: String]) -> Bool
    ) throws -> [String: String] {
        try eventually(what, within: limit) {
            let status = try client.fields("status")
            return condition(status) ? status : nil
        }
    }

    static func elapsed(_ status: [String: String]) -> Double {
        Double(status["elapsed"] ?? "") ?? 0
    }

    @Test(
        "A dropped station reconnects: the same queue entry plays on, status says so meanwhile, the log once",
        .timeLimit(.minutes(1)))
    func dropReconnects() throws {
        try withRadio(.playerd) { daemon, server in
            let client = try daemon.connect()
            // 100,000 bytes is 6.25 s of audio (4 s of it in the first burst); the first connection alone
            // drops, then for 5 s the station refuses connections, then a connection goes on from the
            // byte where the first stopped (a live station that did not move on).
            let url = server.url("/drop.mp3?after=100000&times=1&down=5")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("add station.mp3") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            let playing = try Self.status(client, "the station playing") {
                $0["state"] == "play" && Self.elapsed($0) > 0
            }
            // The buffer runs dry while the station is down: status says what is going on.
            let starving = try Self.status(client, "an error while reconnecting", within: .seconds(20)) {
                $0["error"] != nil
            }
            #expect(starving["state"] == "play" && starving["songid"] == playing["songid"], "\(starving)")
            #expect(starving["error"]?.contains(url) == true, "\(starving)")
            // Then on: the same song, still the station, the error gone.
            let later = try Self.status(client, "playing past the drop", within: .seconds(30)) {
                $0["error"] == nil && Self.elapsed($0) > Self.elapsed(starving) + 2
            }
            #expect(later["songid"] == playing["songid"] && later["song"] == "0", "\(later)")
            #expect(later["state"] == "play")
            #expect(try client.field("currentsong", "file") == url)
            #expect(try client.field("currentsong", "Name") == "playerd test radio")
            let connections = server.connections(to: "/drop.mp3")
            #expect(connections.first?.how == "dropped" && connections.first?.audioBytes == 100_000, "\(connections)")
            #expect(connections.contains { $0.how == "down" }, "\(connections)")
            let log = daemon.log
            #expect(log.components(separatedBy: "connection lost").count == 2, "\(log)")
            #expect(log.contains("playing again"), "\(log)")
        }
    }

    @Test(
        "The WAV output across a reconnection is each connection's whole frames decoded back to back",
        .timeLimit(.minutes(1)))
    func continuityAcrossReconnection() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/out.wav"
        // 250 frames of 384 bytes (6 s), so that the cut falls between frames and each connection holds
        // whole ones; the second connection goes on from the byte where the first stopped.
        let cut = 250 * RadioMusic.frameBytes
        let server = try RadioServer()
        try withRadio(.playerd, extraArguments: ["--output", "wav:\(wav)"], server: server) { daemon, server in
            let client = try daemon.connect()
            // The station down for 5 s after the drop: the output starves meanwhile (and must not be fed).
            let url = server.url("/drop.mp3?after=\(cut)&times=1&down=5")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            _ = try Self.status(client, "9 s played", within: .seconds(40)) { Self.elapsed($0) > 9 }
            #expect(try client.command("stop") == ["OK"])
        }
        // The server logs a connection (and writes its dump) once the daemon has closed it.
        let connections = try eventually("the server's log of both connections", within: .seconds(5)) {
            let connections = server.connections(to: "/drop.mp3").filter { $0.status == 200 }
            return connections.count == 2 ? connections : nil
        }
        #expect(connections[0].how == "dropped" && connections[0].audioBytes == cut, "\(connections)")
        #expect(connections[1].offsetStart == cut, "\(connections)")
        let decoded = try connections.map { connection in
            let bytes = directory + "/conn-\(connection.id).mp3"
            try server.dumped(connection.id).write(to: URL(fileURLWithPath: bytes))
            let pcm = directory + "/conn-\(connection.id).raw"
            let result = try runProgram("/usr/bin/mpg123", ["-q", "-s", "-O", pcm, bytes])
            #expect(result.status == 0, "\(result)")
            return try Data(contentsOf: URL(fileURLWithPath: pcm))
        }
        // 250 frames of 1152 samples, 2 channels of 16 bits.
        #expect(decoded[0].count == 250 * 1152 * 4)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: wav)).dropFirst(44)
        #expect(recorded.count > decoded[0].count + 48_000 * 4, "recorded \(recorded.count) bytes")
        let first = recorded.prefix(decoded[0].count)
        #expect(first == decoded[0], "the first connection's audio differs from mpg123's")
        let rest = recorded.dropFirst(decoded[0].count)
        #expect(rest.count <= decoded[1].count)
        #expect(
            rest == decoded[1].prefix(rest.count), "the audio after the reconnection is not the second connection's")
    }

    @Test("A title in Latin-1 is decoded as Latin-1 (mpd shows '?' for each byte)", .timeLimit(.minutes(1)))
    func latin1Title() throws {
        try withRadio(.playerd) { daemon, server in
            let client = try daemon.connect()
            #expect(
                try client.command("add \"\(server.url("/icy.mp3?enc=latin1&titles=Caf%C3%A9%20M%C3%BCller"))\"") == [
                    "OK"
                ])
            #expect(try client.command("play") == ["OK"])
            let title = try eventually("a title", within: .seconds(15)) { try client.field("currentsong", "Title") }
            #expect(title == "Café Müller")
        }
    }

    @Test(
        "A stalled station is dropped and made again: status says so while the output starves, the same song plays on",
        .timeLimit(.minutes(2)))
    func stallReconnects() throws {
        // A stall of 3 s is a dropped connection here (the default is 10 s).
        try withRadio(.playerd, extraArguments: ["--stream-stall", "3"]) { daemon, server in
            let client = try daemon.connect()
            // The first connection sends 6.25 s of audio, then nothing for 60 s with the socket open.
            let url = server.url("/stall.mp3?after=100000&for=60&times=1")
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("add station.mp3") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            let starving = try Self.status(client, "an error while the station stalls", within: .seconds(30)) {
                $0["error"] != nil
            }
            #expect(starving["state"] == "play" && starving["song"] == "0", "\(starving)")
            #expect(starving["error"]?.contains(url) == true, "\(starving)")
            let again = try Self.status(client, "playing again", within: .seconds(40)) {
                $0["error"] == nil && Self.elapsed($0) > Self.elapsed(starving) + 2
            }
            #expect(again["song"] == "0" && again["songid"] == starving["songid"], "\(again)")
            #expect(
                server.connections(to: "/stall.mp3").contains {
                    $0.how == "stalled-client-gone" || $0.how == "client-gone"
                })
        }
    }

    /// A server that never gives audio, and what the error must say besides the URL.
    static let hostile: [(path: String, reason: String)] = [
        ("/slowloris", "no audio within 5 s"), ("/endless-headers", "no audio within 5 s"),
        ("/giant-headers", "response head too large"), ("/aac", "AAC"), ("/lie.mp3", "an HTML page, not audio"),
    ]

    @Test(
        "A hostile server fails in bounded time with an error naming it, and holds up no client meanwhile",
        .timeLimit(.minutes(2)), arguments: Self.hostile.map(\.path))
    func hostileServer(path: String) throws {
        // The first audio is waited for 5 s (the default is 15 s).
        try withRadio(.playerd, extraArguments: ["--stream-timeout", "5"]) { daemon, server in
            let client = try daemon.connect()
            let url = server.url(path)
            #expect(try client.command("add \"\(url)\"") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            let start = ContinuousClock.now
            var slowest = Duration.zero
            let status = try eventually("\(path) given up", within: .seconds(60)) { () -> [String: String]? in
                let asked = ContinuousClock.now
                let other = try daemon.connect()
                let status = try other.fields("status")
                slowest = max(slowest, ContinuousClock.now - asked)
                return status["state"] == "stop" ? status : nil
            }
            let took = ContinuousClock.now - start
            #expect(status["error"]?.contains(url) == true, "\(status)")
            let reason = Self.hostile.first { $0.path == path }?.reason ?? ""
            #expect(status["error"]?.contains(reason) == true, "\(status)")
            #expect(took < .seconds(20), "gave up after \(took)")
            #expect(slowest < .milliseconds(500), "a status took \(slowest)")
        }
    }
}
