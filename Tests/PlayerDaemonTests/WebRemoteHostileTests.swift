import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Clients of the web remote (`playerd --http`) that mean harm or are broken: oversized and malformed
/// bodies, absurd numbers, header floods, slow and idle connections, WebSockets that come and go or
/// never read. None may crash the daemon, and none may keep another client from being served.
@Suite("Web remote: hostile HTTP and WebSocket clients")
struct WebRemoteHostileTests {
    /// The daemon answers MPD's `ping` on its socket and HTTP on its port.
    static func expectAlive(_ daemon: RunningPlayerd, _ port: Int, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        #expect(daemon.isRunning, sourceLocation: sourceLocation)
        #expect(try daemon.connect().command("ping") == ["OK"], sourceLocation: sourceLocation)
        #expect(try WebClient(port: port).get("/api/status").status == 200, sourceLocation: sourceLocation)
    }

    /// A TCP connection to 127.0.0.1:`port` with a receive buffer of `receiveBuffer` bytes, for a client
    /// that never reads.
    static func rawConnection(port: Int, receiveBuffer: Int32) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError.system("socket", errno) }
        var size = receiveBuffer
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw HarnessError.system("connect", code)
        }
        return descriptor
    }

    /// The daemon's open file descriptors.
    static func openDescriptors(_ daemon: RunningPlayerd) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.processIdentifier)/fd").count) ?? -1
    }

    /// What a connection that has sent a request gets within `limit`: `HTTP STATUS`, `closed` (without an
    /// answer), or `nothing`.
    static func outcome(_ connection: LineClient, within limit: Duration) -> String {
        if let response = try? WebClient.readResponse(connection, method: "GET", timeout: limit) {
            return "HTTP \(response.status)"
        }
        return connection.isClosedByPeer(within: .milliseconds(100)) ? "closed" : "nothing"
    }

    @Test("a body over 64 KiB is 413, malformed JSON is 400 naming the problem, absurd numbers are 400")
    func badBodies() throws {
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            #expect(try mpd.command("add stereo-44k-cbr.mp3").last == "OK")
            let id = try #require(try mpd.values("playlistinfo", "Id").first)

            // Too big: 413, whether the body is sent or only announced.
            let big = #"{"uri": ""# + String(repeating: "a", count: 70 * 1024) + #""}"#
            var answer = try web.post("/api/queue", big)
            #expect(answer.status >= 400 && answer.status < 500, "\(answer)")
            #expect(answer.errorText?.isEmpty == false, "\(answer)")
            #expect(answer.status == 413, "\(answer)")
            let announced = try LineClient(host: "127.0.0.1", port: port)
            try announced.send(
                bytes: Array(
                    "POST /api/queue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{"
                        .utf8))
            let refused = Self.outcome(announced, within: .seconds(3))
            #expect(refused == "HTTP 413", "a body of 1 GB announced")
            announced.close()
            // Just under the limit is no problem of size.
            let fits = #"{"name": ""# + String(repeating: "b", count: 60 * 1024) + #""}"#
            answer = try web.post("/api/queue/save", fits)
            #expect(answer.status != 413, "\(answer)")

            // Malformed JSON: 400, and the error says what is wrong.
            for body in [
                "{", "{\"uri\": }", "not json", "[1, 2", "{\"uri\": \"a\"} trailing", "\u{FEFF}{}",
                "{\"uri\": \"\\uZZZZ\"}", "",
            ] {
                answer = try web.post("/api/queue", body)
                #expect(answer.status == 400, "\(body): \(answer)")
                #expect((answer.errorText ?? "").count > 5, "\(body): \(answer)")
            }
            answer = try web.post("/api/player", "{\"action\": ")
            #expect(answer.errorText?.lowercased().contains("json") == true, "names the problem: \(answer)")
            answer = try web.post("/api/player", #"{"action": "dance"}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(
                answer.errorText?.contains("dance") == true || answer.errorText?.contains("action") == true, "\(answer)"
            )
            answer = try web.request(
                "POST", "/api/player", json: #"{"action": "stop"}"#, headers: [("Content-Type", "text/plain")])
            #expect([200, 400, 415].contains(answer.status), "\(answer)")

            // Huge and odd numbers: 400, never a crash, nothing changed.
            let before = try mpd.fields("status")
            let numbers: [(String, String, String)] = [
                ("PUT", "/api/volume", #"{"volume": 1e300}"#),
                ("PUT", "/api/volume", #"{"volume": -1}"#),
                ("PUT", "/api/volume", #"{"volume": 101}"#),
                ("PUT", "/api/volume", #"{"volume": 50.5}"#),
                ("PUT", "/api/volume", #"{"volume": "50"}"#),
                ("PUT", "/api/volume", #"{"volume": null}"#),
                ("PUT", "/api/volume", #"{"volume": 99999999999999999999999}"#),
                ("POST", "/api/player", #"{"action": "play", "position": 99999999999}"#),
                ("POST", "/api/player", #"{"action": "play", "position": -1}"#),
                ("POST", "/api/player", #"{"action": "play", "id": -1}"#),
                ("POST", "/api/player", #"{"action": "play", "id": 1e300}"#),
                ("POST", "/api/seek", #"{"seconds": 1e300}"#),
                ("POST", "/api/seek", #"{"seconds": -5}"#),
                ("POST", "/api/queue/\(id)/move", #"{"to": 99999999999}"#),
                ("POST", "/api/queue/\(id)/move", #"{"to": -1}"#),
                ("POST", "/api/queue/\(id)/move", #"{"to": 0.5}"#),
                ("PUT", "/api/timers", #"{"sleep": 1e300}"#),
                ("PUT", "/api/timers", #"{"sleep": -1}"#),
                ("PUT", "/api/timers", #"{"pauseFor": 1e300}"#),
                ("PUT", "/api/options", #"{"single": 1}"#),
                ("PUT", "/api/outputs/0", #"{"enabled": 1}"#),
            ]
            for (method, target, body) in numbers {
                answer = try web.request(method, target, json: body)
                #expect(answer.status == 400, "\(method) \(target) \(body): \(answer)")
                #expect(answer.errorText?.isEmpty == false, "\(method) \(target) \(body): \(answer)")
            }
            for target in [
                "/api/queue/-1", "/api/queue/99999999999999999999999", "/api/queue/1e3", "/api/queue/%00",
                "/api/outputs/-1",
            ] {
                answer = try web.request(
                    target.hasPrefix("/api/outputs") ? "PUT" : "DELETE", target,
                    json: target.hasPrefix("/api/outputs") ? #"{"enabled": true}"# : nil)
                #expect([400, 404].contains(answer.status), "\(target): \(answer)")
            }
            // A NUL in a query value, a playlist name as long as a file name may be: 400, never a server
            // error, nor the playlist directory's path.
            for target in ["/api/library/songs?artist=%00&album=x", "/api/library/albums?artist=a%00"] {
                let refused = try web.get(target)
                #expect(refused.status == 400, "\(target): \(refused)")
            }
            let longName = try web.post("/api/queue/save", #"{"name": "\#(String(repeating: "0", count: 255))"}"#)
            #expect(longName.status == 400, "\(longName)")
            #expect(!longName.text.contains(daemon.directory), "\(longName)")
            let longURI = try web.post("/api/queue", #"{"uri": "\#(String(repeating: "0", count: 300))"}"#)
            #expect(!longURI.text.contains(daemon.directory), "\(longURI)")
            #expect(longURI.status == 404, "no such song or playlist: \(longURI)")
            let after = try mpd.fields("status")
            for key in ["volume", "state", "playlistlength", "playlist"] {
                #expect(after[key] == before[key], "\(key) changed: \(before) → \(after)")
            }
            try Self.expectAlive(daemon, port)
        }
    }

    @Test("a header flood and a 1 MB URL are refused, and the daemon goes on serving")
    func headerFloodAndHugeURL() throws {
        try withWebPlayerd(library: false) { daemon, port in
            // 1 MB of headers.
            let flood = try LineClient(host: "127.0.0.1", port: port)
            var head = "GET /api/status HTTP/1.1\r\nHost: x\r\n"
            for index in 0..<10_000 {
                head += "X-Flood-\(index): " + String(repeating: "f", count: 90) + "\r\n"
            }
            head += "\r\n"
            // The daemon may stop reading and close before the whole flood is in: either ends it.
            try? flood.send(bytes: Array(head.utf8))
            let flooded = Self.outcome(flood, within: .seconds(3))
            // A 1 MB URL.
            let long = try LineClient(host: "127.0.0.1", port: port)
            try? long.send(
                bytes: Array(
                    ("GET /api/search?q=" + String(repeating: "u", count: 1 << 20) + " HTTP/1.1\r\nHost: x\r\n\r\n")
                        .utf8))
            let lengthy = Self.outcome(long, within: .seconds(3))
            // Garbage that is not HTTP.
            let garbage = try LineClient(host: "127.0.0.1", port: port)
            try? garbage.send(bytes: (0..<4096).map { _ in UInt8.random(in: 0...255) } + Array("\r\n\r\n".utf8))
            let garbled = Self.outcome(garbage, within: .seconds(3))
            // Each is answered 400, 414 or 431, or its connection closed.
            #expect(["HTTP 400", "HTTP 431", "closed"].contains(flooded), "1 MB of headers: \(flooded)")
            #expect(["HTTP 400", "HTTP 414", "HTTP 431", "closed"].contains(lengthy), "a 1 MB URL: \(lengthy)")
            #expect(["HTTP 400", "closed"].contains(garbled), "4 KiB of garbage: \(garbled)")
            // Meanwhile others are served, on HTTP and on the MPD socket.
            try Self.expectAlive(daemon, port)
            for connection in [flood, long, garbage] {
                connection.close()
            }
        }
    }

    @Test("a slow-loris client and 200 idle connections do not slow another client's requests")
    func slowAndIdleClients() throws {
        try withWebPlayerd(library: false) { daemon, port in
            // 200 idle connections from one host, and one that sends a request a byte a second.
            var idle: [LineClient] = []
            for _ in 0..<200 {
                idle.append(try LineClient(host: "127.0.0.1", port: port, from: "127.0.0.2"))
            }
            let loris = try LineClient(host: "127.0.0.1", port: port, from: "127.0.0.3")
            let request = Array("GET /api/status HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
            var sent = 0
            var answered: [Duration] = []
            let web = WebClient(port: port)
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(6) {
                if sent < request.count {
                    try? loris.send(bytes: [request[sent]])
                    sent += 1
                } else {
                    try? loris.send(bytes: [UInt8(ascii: "z")])
                }
                for _ in 0..<3 {
                    let before = ContinuousClock.now
                    let answer = try web.get("/api/status")
                    answered.append(ContinuousClock.now - before)
                    #expect(answer.status == 200, "\(answer)")
                }
                let next = ContinuousClock.now
                while ContinuousClock.now - next < .seconds(1) {
                    usleep(50_000)
                }
            }
            let slowest = answered.max() ?? .zero
            #expect(answered.count >= 15)
            #expect(slowest < .milliseconds(500), "the slowest of \(answered.count) requests took \(slowest)")
            // A WebSocket still hears a change.
            let socket = try WebSocketClient(port: port)
            #expect(try socket.readChanges() == [])
            #expect(try daemon.connect().command("setvol 30").last == "OK")
            #expect(try socket.readChanges(timeout: .seconds(2)).contains("mixer"))
            try Self.expectAlive(daemon, port)
            #expect(try socket.close() == .close(code: 1000))
            idle.removeAll()
            loris.close()
        }
    }

    @Test(
        "100 WebSockets opened and dropped leave nothing behind; one that never reads while changes flood does not stop the others"
    )
    func webSocketsThatMisbehave() throws {
        try withWebPlayerd(library: false) { daemon, port in
            let mpd = try daemon.connect()
            #expect(try mpd.command("setvol 50").last == "OK")
            // Warm up (the first WebSocket and request allocate what every one reuses).
            let warm = try WebSocketClient(port: port)
            #expect(try warm.readChanges() == [])
            #expect(try warm.close() == .close(code: 1000))
            let descriptorsBefore = Self.openDescriptors(daemon)
            let memoryBefore = try daemon.residentKilobytes()

            // 100 opened, half dropped without a close frame at once, half after their first frame.
            for index in 0..<100 {
                let socket = try WebSocketClient(port: port)
                if index % 2 == 0 {
                    #expect(try socket.readChanges() == [])
                }
                socket.connection.close()
            }
            try expectEventually("the dropped WebSockets' descriptors are closed", within: .seconds(10)) {
                Self.openDescriptors(daemon) <= descriptorsBefore + 2
            }

            // One that never reads, with a small receive buffer, and one that does, while setvol floods.
            let stuck = try Self.rawConnection(port: port, receiveBuffer: 2048)
            let upgrade =
                "GET /api/events HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            #expect(send(stuck, upgrade, upgrade.utf8.count, Int32(MSG_NOSIGNAL)) == upgrade.utf8.count)
            let reader = try WebSocketClient(port: port)
            #expect(try reader.readChanges() == [])
            let flooder = try daemon.connect()
            var heard = 0
            for round in 0..<40 {
                // 250 setvols at once, then their answers.
                let lines = (0..<250).map { "setvol \(10 + ($0 + round) % 80)\n" }.joined()
                try flooder.send(bytes: Array(lines.utf8))
                for _ in 0..<250 {
                    #expect(try flooder.readAnswer() == ["OK"])
                }
                while try reader.hasInput(within: .milliseconds(1)) {
                    if try reader.readChanges().contains("mixer") { heard += 1 }
                }
            }
            #expect(heard >= 10, "the reading client heard \(heard) mixer frames while the other never read")
            // After the flood, a change still reaches the reader promptly.
            while try reader.hasInput(within: .milliseconds(200)) {
                _ = try reader.readChanges()
            }
            let start = ContinuousClock.now
            #expect(try mpd.command("setvol 99").last == "OK")
            _ = try WebRemoteAPITests.frameNaming("mixer", on: reader, since: start, within: .seconds(2))
            #expect(ContinuousClock.now - start < .milliseconds(250))
            let memoryAfter = try daemon.residentKilobytes()
            #expect(memoryAfter - memoryBefore < 32 * 1024, "RSS grew from \(memoryBefore) KiB to \(memoryAfter) KiB")
            try Self.expectAlive(daemon, port)
            // All go: the daemon is left as it was before them, and exits promptly.
            close(stuck)
            #expect(try reader.close() == .close(code: 1000))
            flooder.close()
            #expect(try mpd.command("setvol 98").last == "OK", "a change, for a write to find a gone peer")
            let released =
                (try? expectEventually("the WebSockets' descriptors are closed", within: .seconds(5)) {
                    Self.openDescriptors(daemon) <= descriptorsBefore
                }) != nil
            withKnownIssue(
                "sometimes a WebSocket that stopped reading while changes flooded is not released when it closes",
                isIntermittent: true
            ) {
                #expect(released, "\(Self.openDescriptors(daemon)) descriptors open, \(descriptorsBefore) before")
            }
        }
    }
}

extension WebRemoteHostileTests {
    @Test("one host making session after session gets 200 or 429, never a crash, and leaves other hosts served")
    func sessionFlood() throws {
        try withWebPlayerd(library: false) { daemon, port in
            let first = WebClient(port: port, from: "127.0.0.7")
            #expect(try first.get("/api/status").status == 200)
            var statuses: [Int: Int] = [:]
            for _ in 0..<200 {
                let answer = try WebClient(port: port, from: "127.0.0.8").get("/api/status")
                statuses[answer.status, default: 0] += 1
                #expect(answer.status == 200 || answer.status == 429, "\(answer)")
            }
            #expect(Set(statuses.keys).isSubset(of: [200, 429]), "\(statuses)")
            // Another host's session lives on, and new ones are made.
            let session = first.session
            #expect(try first.get("/api/status").status == 200)
            #expect(first.session == session, "the other host's session was not taken")
            #expect(try WebClient(port: port, from: "127.0.0.9").get("/api/session").status == 200)
            try Self.expectAlive(daemon, port)
        }
    }
}
