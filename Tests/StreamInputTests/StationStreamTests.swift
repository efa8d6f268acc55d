import Audio
import Foundation
import Testing

@testable import StreamInput

// Serialized: timings are asserted, and two cores are shared with the compiler and other tests.
@Suite("StationStream against a loopback server", .serialized)
struct StationStreamTests {
    @Test("ICY: name and genre from the head, titles arrive and change (UTF-8, Latin-1, quotes), audio clean")
    func icyTitles() async throws {
        try await StreamTestServer.with { server in
            let titles = "One|It's Me|Björk - Jóga"
            for encoding in ["utf-8", "latin1"] {
                let query = [
                    "metaint=1000", "titles=\(titles)", "enc=\(encoding)", "rate=100000", "name=Radio Ä",
                    "genre=Jazz",
                ].joined(separator: "&").addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!
                let station = Listener(server.url("/stream?" + query), limits: testLimits(prebuffer: 2000))
                defer { station.stream.cancel() }
                // Reads smaller than the metadata interval: each title is seen as its audio is read.
                station.readSize = 500
                try await station.read(until: {
                    $0.titlesRead.last == "Björk - Jóga" && $0.segments[0].count >= 5000
                })
                #expect(station.titlesRead.compactMap { $0 } == ["One", "It's Me", "Björk - Jóga"], "\(encoding)")
                #expect(station.stream.info.name == "Radio Ä")
                #expect(station.stream.info.genre == "Jazz")
                #expect(station.stream.info.state == .playing)
                #expect(station.stream.contentType == "audio/mpeg")
                #expect(station.segments.count == 1)
                let audio = station.segments[0]
                #expect(audio == pattern(0..<audio.count), "the metadata blocks are taken out exactly")
            }
        }
    }

    @Test("an empty StreamTitle clears the title")
    func emptyTitle() async throws {
        try await StreamTestServer.with { server in
            let station = Listener(
                server.url("/stream?metaint=500&titles=Only&empty=1&rate=50000"), limits: testLimits(prebuffer: 600))
            defer { station.stream.cancel() }
            station.readSize = 200
            try await station.read(until: { $0.titlesRead.contains("Only") && $0.titlesRead.last == .some(nil) })
            #expect(station.titlesRead.compactMap { $0 } == ["Only"])
            #expect(station.stream.info.title == nil)
        }
    }

    @Test("a title takes effect when the audio before it has been read, not when it arrives")
    func titleTakesEffectWithItsAudio() async throws {
        try await StreamTestServer.with { server in
            let station = Listener(
                server.url("/stream?metaint=1000&titles=A|B&rate=100000"), limits: testLimits(prebuffer: 600))
            defer { station.stream.cancel() }
            // Both blocks (after audio bytes 1000 and 2000) have arrived; nothing has been read.
            try await station.wait(until: { $0.stream.bufferedBytes >= 2500 })
            #expect(station.stream.info.title == nil)
            #expect(station.drain(limit: 999) == 999)
            #expect(station.stream.info.title == nil)
            #expect(station.drain(limit: 1) == 1)
            #expect(station.stream.info.title == "A")
            #expect(station.drain(limit: 999) == 999)
            #expect(station.stream.info.title == "A")
            #expect(station.drain(limit: 1) == 1)
            #expect(station.stream.info.title == "B")
            #expect(station.stream.titleChanges == 2)
        }
    }

    @Test(
        "finite bodies are read whole and end: Content-Length, chunked (odd chunk sizes), shorter than the prebuffer",
        arguments: [
            "framing=length&bytes=100000", "framing=chunked&bytes=100000", "framing=length&bytes=1000",
            "icy=1&framing=chunked&bytes=1000",
        ])
    func finiteBodies(_ query: String) async throws {
        try await StreamTestServer.with { server in
            let station = Listener(server.url("/stream?" + query), limits: testLimits(prebuffer: 16 * 1024))
            defer { station.stream.cancel() }
            try await station.read(until: { $0.ended })
            let count = Int(query.split(separator: "=").last!)!
            #expect(station.segments == [pattern(0..<count)])
            #expect(station.states.last == .ended)
            #expect(station.states.contains(.playing), "playing is reported before the end")
            #expect(station.stream.failure == nil)
        }
    }

    @Test("a close-delimited body that ends is a drop: reconnected, and each connection's bytes follow a discontinuity")
    func closeDelimitedEnd() async throws {
        try await StreamTestServer.with { server in
            let station = Listener(server.url("/stream?bytes=20000"), limits: testLimits(reconnect: 1))
            defer { station.stream.cancel() }
            try await station.read(until: { $0.segments.count >= 3 })
            #expect(station.segments[0] == pattern(0..<20000))
            #expect(station.segments[1] == pattern(0..<20000))
            #expect(station.states.contains { if case .reconnecting = $0 { true } else { false } })
        }
    }

    @Test("a drop mid-play: reconnecting, then a discontinuity, bytes again from the new connection, playing")
    func dropAndReconnect() async throws {
        try await StreamTestServer.with { server in
            let station = Listener(
                server.url("/stream?drop=40000&times=1&key=drop\(UInt32.random(in: 0...UInt32.max))&rate=400000"),
                limits: testLimits())
            defer { station.stream.cancel() }
            try await station.read(until: { $0.segments.count == 2 && $0.segments[1].count >= 30000 })
            #expect(station.segments[0] == pattern(0..<40000))
            #expect(station.segments[1] == pattern(0..<station.segments[1].count))
            let states = station.states
            let lost = try #require(states.firstIndex { if case .reconnecting = $0 { true } else { false } })
            #expect(states[..<lost].last == .playing)
            #expect(states[lost...].contains(.playing), "playing again after the reconnection")
            if case .reconnecting(let attempt, let reason) = states[lost] {
                #expect(attempt == 1)
                #expect(reason == "the server ended the stream")
            }
            #expect(station.stream.info.state == .playing)
        }
    }

    @Test("a stall: the connection is dropped after stallSeconds and made again")
    func stall() async throws {
        try await StreamTestServer.with { server in
            let key = "stall\(UInt32.random(in: 0...UInt32.max))"
            let station = Listener(
                server.url("/stream?stall=30000&for=20&times=1&key=\(key)&rate=400000"),
                limits: testLimits(stall: 0.5))
            defer { station.stream.cancel() }
            try await station.read(until: { $0.segments.count == 2 && $0.segments[1].count > 10000 })
            // 30000 bytes at 400 kB/s take 75 ms; then nothing for 0.5 s.
            let playing = try #require(station.time(of: { $0 == .playing }))
            let lost = try #require(station.time(of: { if case .reconnecting = $0 { true } else { false } }))
            #expect(lost - playing > .milliseconds(500), "not before stallSeconds")
            #expect(lost - playing < .milliseconds(2000), "within stallSeconds and a margin (the stall lasts 20 s)")
            let reasons = station.states.compactMap { state -> String? in
                if case .reconnecting(_, let reason) = state { reason } else { nil }
            }
            #expect(reasons.first == "no data for 0.5 s")
            #expect(station.segments[0] == pattern(0..<30000))
        }
    }

    @Test("when the station never comes back, it is given up after reconnectSeconds, its bytes played out first")
    func givenUp() async throws {
        try await StreamTestServer.with { server in
            let key = "gone\(UInt32.random(in: 0...UInt32.max))"
            let url = server.url("/stream?drop=20000&times=1&then=503&key=\(key)")
            let station = Listener(url, limits: testLimits(reconnect: 1))
            defer { station.stream.cancel() }
            try await station.wait(until: { $0.isFailed })
            let lost = try #require(station.time(of: { if case .reconnecting = $0 { true } else { false } }))
            let failed = try #require(station.time(of: { if case .failed = $0 { true } else { false } }))
            let took = failed - lost
            #expect(took > .milliseconds(600) && took < .milliseconds(2500), "\(took)")
            #expect(station.failureMessage == "\(url): HTTP 503 Gone Away")
            let attempts = station.states.compactMap { state -> Int? in
                if case .reconnecting(let attempt, _) = state { attempt } else { nil }
            }
            #expect(attempts.count >= 3 && attempts == Array(1...attempts.count), "\(attempts)")
            // What was buffered is still read whole, then the end.
            try await station.read(until: { $0.ended })
            #expect(station.segments == [pattern(0..<20000)])
        }
    }

    @Test("redirects are followed, relative ones too; a loop and a chain too long fail")
    func redirects() async throws {
        try await StreamTestServer.with { server in
            let target = "/stream?framing=length&bytes=5000".addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
            let followed = Listener(server.url("/redirect?n=5&to=\(target)"), limits: testLimits())
            defer { followed.stream.cancel() }
            try await followed.read(until: { $0.ended })
            #expect(followed.segments == [pattern(0..<5000)])

            let tooLong = Listener(server.url("/redirect?n=6&to=\(target)"), limits: testLimits())
            defer { tooLong.stream.cancel() }
            try await tooLong.wait(until: { $0.isFailed })
            #expect(
                tooLong.failureMessage == server.url("/redirect?n=6&to=\(target)")
                    + ": too many redirects (more than 5)")

            let loop = Listener(server.url("/loop"), limits: testLimits())
            defer { loop.stream.cancel() }
            try await loop.wait(until: { $0.isFailed })
            #expect(loop.failureMessage?.contains("too many redirects") == true)
            #expect(loop.drain() == 0)
            #expect(loop.ended, "read says .end after a failure")
        }
    }

    @Test(
        "a gone or wrong station fails at once with a message naming it and the reason",
        arguments: [
            ("/status?code=404", "HTTP 404 Not Found"), ("/status?code=500", "HTTP 500 Internal Server Error"),
            ("/html", "an HTML page, not audio"),
            ("/stream?type=text/plain", "a text document (text/plain), not audio"),
            ("/giant", "response head too large (more than 16384 bytes)"),
            ("/endless", "response head too large (more than 16384 bytes)"),
        ])
    func refused(_ path: String, _ reason: String) async throws {
        try await StreamTestServer.with { server in
            let station = Listener(server.url(path), limits: testLimits())
            defer { station.stream.cancel() }
            try await station.wait(until: { $0.isFailed })
            #expect(try #require(station.timeToFailure) < .milliseconds(2000), "at once, not retried for 4 s")
            #expect(station.failureMessage == "\(server.url(path)): \(reason)")
            #expect(station.stream.failure == station.failureMessage)
            #expect(station.states == [.failed(station.failureMessage!)])
        }
    }

    @Test("a refused port is retried with backoff, then fails within firstAudioSeconds")
    func connectionRefused() async throws {
        let port = try closedPort()
        let station = Listener("http://127.0.0.1:\(port)/stream", limits: testLimits(firstAudio: 1))
        defer { station.stream.cancel() }
        try await station.wait(until: { $0.isFailed })
        let took = try #require(station.timeToFailure)
        #expect(took <= .milliseconds(1700), "\(took)")
        #expect(took >= .milliseconds(300), "retried for a while first: \(took)")
        #expect(station.failureMessage == "http://127.0.0.1:\(port)/stream: connection refused")
    }

    @Test("a host that does not exist fails within firstAudioSeconds, naming it")
    func hostNotFound() async throws {
        // .invalid never resolves (RFC 6761); a resolver slower than the limit still ends at the limit.
        let station = Listener("http://nonexistent.invalid/stream", limits: testLimits(firstAudio: 1))
        defer { station.stream.cancel() }
        try await station.wait(until: { $0.isFailed })
        #expect(try #require(station.timeToFailure) < .milliseconds(1500))
        let message = try #require(station.failureMessage)
        #expect(
            message == "http://nonexistent.invalid/stream: host not found (nonexistent.invalid)"
                || message.hasPrefix("http://nonexistent.invalid/stream: no audio within 1 s"), "\(message)")
    }

    @Test("a server that accepts and sends nothing fails within connectSeconds")
    func slowLoris() async throws {
        try await StreamTestServer.with { server in
            let station = Listener(server.url("/slowloris"), limits: testLimits(connect: 0.5))
            defer { station.stream.cancel() }
            try await station.wait(until: { $0.isFailed })
            let took = try #require(station.timeToFailure)
            #expect(took >= .milliseconds(500) && took < .milliseconds(1500), "\(took)")
            #expect(station.failureMessage?.hasSuffix(": no response within 0.5 s") == true)
        }
    }

    @Test("absurd limits (not numbers, negative, zero) neither crash nor hang: the station fails or plays")
    func absurdLimits() async throws {
        try await StreamTestServer.with { server in
            for value in [Double.nan, -1, 0, .infinity] {
                var limits = StreamLimits()
                limits.bufferBytes = value.isNaN ? 0 : -5
                limits.prebufferBytes = -1
                limits.connectSeconds = value
                limits.firstAudioSeconds = value
                limits.stallSeconds = value
                limits.reconnectSeconds = value
                limits.backoffSeconds = value
                limits.maxRedirects = -3
                limits.maxHeaderBytes = 0
                let station = Listener(server.url("/stream?metaint=10&titles=A"), limits: limits)
                try await Task.sleep(for: .milliseconds(100))
                station.drain()
                station.stream.cancel()
                #expect(station.stream.bufferedBytes <= 1, "\(value)")
            }
        }
    }

    @Test("an address that is not http(s) fails at once")
    func badAddress() async throws {
        let station = Listener("ftp://example.com/x", limits: testLimits())
        defer { station.stream.cancel() }
        try await station.wait(until: { $0.isFailed })
        #expect(station.failureMessage == "ftp://example.com/x: not an http or https URL")
    }

    @Test("the buffer is bounded: a fast server and a reader that stops; reading again resumes the same connection")
    func bounded() async throws {
        try await StreamTestServer.with { server in
            let limits = testLimits(buffer: 64 * 1024, prebuffer: 8 * 1024, stall: 0.3)
            let station = Listener(server.url("/stream"), limits: limits)
            defer { station.stream.cancel() }
            try await station.wait(until: { $0.stream.info.state == .playing })
            var most = 0
            for _ in 0..<100 {
                most = max(most, station.stream.bufferedBytes)
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(most <= limits.bufferBytes)
            #expect(most == limits.bufferBytes, "filled up while not read")
            // A full buffer is not a stall: still the same connection, nothing lost.
            try await station.read(until: { $0.segments[0].count >= 1_000_000 }, timeout: 20)
            #expect(station.segments.count == 1)
            #expect(station.segments[0] == pattern(0..<station.segments[0].count))
            #expect(station.states == [.playing])
        }
    }

    @Test(
        "cancel() in every phase returns promptly and leaves no socket or thread",
        arguments: [
            "/slowloris", "/stream?rate=100000", "/stream?drop=20000", "/status?code=404",
            "/stream?framing=length&bytes=100",
            "/stream",
        ])
    func cancelInEveryPhase(_ path: String) async throws {
        try await StreamTestServer.with { server in
            // The shared event loop exists before counting.
            let warm = Listener(server.url("/status?code=404"), limits: testLimits())
            try await warm.wait(until: { $0.isFailed })
            warm.stream.cancel()
            let threads = eventLoopThreads()
            for delay in [0, 20, 100, 300] {
                let station = Listener(server.url(path), limits: testLimits(buffer: 32 * 1024, reconnect: 10))
                try await Task.sleep(for: .milliseconds(delay))
                let start = ContinuousClock.now
                station.stream.cancel()
                #expect(ContinuousClock.now - start < .milliseconds(500))
                let changes = station.changes.count
                #expect(socketsConnected(toPort: server.port) == 0, "\(path) after \(delay) ms")
                station.stream.cancel()  // idempotent
                try await Task.sleep(for: .milliseconds(50))
                #expect(station.changes.count == changes, "no onChange after cancel")
            }
            #expect(eventLoopThreads() == threads)
            #expect(threads == 1)
        }
    }
}

/// A loopback port nobody listens on.
func closedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
