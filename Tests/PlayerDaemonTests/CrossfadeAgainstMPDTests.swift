import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `crossfade`, `mixrampdb`, `mixrampdelay` and `rangeid` sent to Debian's mpd and to playerd side by
/// side on one library: the answers must be the same, line for line, but for what differs anyway
/// between the two (ids, file formats, modification times).
@Suite("crossfade, MixRamp and rangeid against mpd", .serialized)
struct CrossfadeAgainstMPDTests {
    /// The lines of the answers to `requests` on one daemon: `ID1` and `ID2` stand for the ids of the
    /// songs at positions 0 and 1; `status` answers are cut to the lines `keptStatus` keeps; song blocks
    /// lose their `Id:`, `Format:` and `Last-Modified:` lines.
    private static func answers(
        _ requests: [String], on client: LineClient, keptStatus: Set<String>
    ) throws -> [String] {
        let ids = try client.command("playlistinfo").filter { $0.hasPrefix("Id: ") }.map { $0.dropFirst(4) }
        var lines: [String] = []
        for request in requests {
            var line = request
            if ids.count >= 2 {
                line = line.replacingOccurrences(of: "ID1", with: ids[0]).replacingOccurrences(
                    of: "ID2", with: ids[1])
            }
            if line.hasPrefix("sleep ") {
                usleep(UInt32(Double(line.dropFirst(6))! * 1_000_000))
                continue
            }
            lines.append("> " + request)
            for answer in try client.command(line) {
                let key = answer.split(separator: ":", maxSplits: 1).first.map(String.init) ?? answer
                if request == "status" && answer != "OK" && !keptStatus.contains(key) { continue }
                if ["Id", "Format", "Last-Modified"].contains(key) { continue }
                lines.append(answer)
            }
        }
        return lines
    }

    private static func compare(
        _ requests: [String], on pair: DaemonPair, keptStatus: Set<String>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let mpd = try answers(requests, on: pair.mpdClient, keptStatus: keptStatus)
        let playerd = try answers(requests, on: pair.playerdClient, keptStatus: keptStatus)
        guard mpd != playerd else { return }
        let first =
            (0..<min(mpd.count, playerd.count)).first { mpd[$0] != playerd[$0] } ?? min(mpd.count, playerd.count)
        Issue.record(
            "answers differ from line \(first): mpd \(Array(mpd[first...].prefix(6))), playerd \(Array(playerd[first...].prefix(6)))",
            sourceLocation: sourceLocation)
    }

    @Test("settings, status lines, ACKs, idle events and a ranged song's playback as mpd's")
    func sideBySide() async throws {
        try await onOwnThread {
            let music = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: music) }
            try PairedMusic.make(in: music)
            let pair = try DaemonPair(music: music)
            defer { _ = try? pair.playerd.stop() }
            try pair.reset()

            let settings = [
                "status", "crossfade 5", "mixrampdb -17.5", "mixrampdelay 2.25", "status", "crossfade -1",
                "crossfade 1.5", "crossfade abc", "crossfade 4294967296", "crossfade 4294967295", "status",
                "crossfade 3", "mixrampdb abc", "mixrampdb 1e40", "status", "mixrampdb nan", "mixrampdelay nan",
                "status", "mixrampdb 0.1", "mixrampdelay 0.1", "status", "mixrampdelay -3", "mixrampdb -0",
                "mixrampdb 1e-7", "mixrampdelay 1e16", "status", "mixrampdelay 1e15", "status", "mixrampdb  +5",
                "mixrampdelay 0x10", "status", "mixrampdb 2 3", "crossfade", "mixrampdelay", "mixrampdb 0",
                "mixrampdelay -1", "crossfade 0", "status",
            ]
            try Self.compare(settings, on: pair, keptStatus: ["mixrampdb", "xfade", "mixrampdelay"])

            for (request, subsystem) in [
                ("crossfade 2", "options"), ("crossfade 2", "options"), ("mixrampdb -3", "options"),
                ("mixrampdelay 1", "options"), ("crossfade 0", "options"), ("rangeid ID1 1:2", "playlist"),
            ] {
                let ids = try pair.mpdClient.command("playlistid").filter { $0.hasPrefix("Id: ") }.map {
                    $0.dropFirst(4)
                }
                let pids = try pair.playerdClient.command("playlistid").filter { $0.hasPrefix("Id: ") }.map {
                    $0.dropFirst(4)
                }
                let mpdRequest = request.replacingOccurrences(of: "ID1", with: ids[0])
                let playerdRequest = request.replacingOccurrences(of: "ID1", with: pids[0])
                let mpdIdle = try pair.mpd.connect()
                let playerdIdle = try pair.playerd.connect()
                try mpdIdle.send(line: "idle \(subsystem) player")
                try playerdIdle.send(line: "idle \(subsystem) player")
                usleep(100_000)
                _ = try pair.mpdClient.command(mpdRequest)
                _ = try pair.playerdClient.command(playerdRequest)
                let mpd = try mpdIdle.readAnswer()
                let playerd = try playerdIdle.readAnswer()
                #expect(mpd == ["changed: \(subsystem)", "OK"], "mpd after \(request)")
                #expect(playerd == mpd, "after \(request)")
            }

            let ranges = [
                "rangeid ID1 :", "rangeid ID1 5.5:12.25", "rangeid ID2 3:", "prioid 7 ID2", "playlistinfo",
                "prioid 0 ID2", "rangeid ID1 abc",
                "rangeid ID1 5:3", "rangeid ID1 5:5", "rangeid ID1 -1:3", "rangeid ID1 1:-3", "rangeid 999 1:2",
                "rangeid ID1 30:", "rangeid x 1:2", "rangeid -1 1:2", "rangeid ID1 1", "rangeid ID1 19:30",
                "playlistid ID1", "rangeid ID1 1.2345:2.0009", "playlistid ID1", "rangeid ID1 :",
                "playlistid ID1", "rangeid ID1 nan:", "rangeid ID1 1:nan", "playlistid ID1", "rangeid ID1 0:0",
                "rangeid ID1 :5", "playlistid ID1", "rangeid ID1 1e10:", "rangeid ID1 2:1e10", "playlistid ID1",
                "rangeid ID1 6.5:12.25", "plchanges 0", "play 0", "rangeid ID1 1:2", "rangeid ID2 1:15",
                "pause 1", "rangeid ID1 1:2", "pause 0", "sleep 1.5", "status", "currentsong", "stop",
                "rangeid ID1 1:2", "playlistinfo",
            ]
            try Self.compare(ranges, on: pair, keptStatus: ["state", "song", "duration", "nextsong"])
            try pair.reset()
        }
    }

    @Test("a ranged song ends at its end and the next one follows; elapsed counts from the range's start")
    func rangedPlayback() async throws {
        try await onOwnThread {
            let music = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: music) }
            try PairedMusic.make(in: music)
            let pair = try DaemonPair(music: music)
            defer { _ = try? pair.playerd.stop() }
            try pair.reset()
            try Self.compare(["rangeid ID1 8:10", "rangeid ID2 :15"], on: pair, keptStatus: [])
            // Both start together, and are asked together 3 s later: the 2 s song has ended, and both
            // are about 1 s into the next.
            _ = try pair.mpdClient.command("play 0")
            _ = try pair.playerdClient.command("play 0")
            sleep(3)
            let mpd = try pair.mpdClient.fields("status")
            let playerd = try pair.playerdClient.fields("status")
            #expect(mpd["song"] == "1" && playerd["song"] == "1")
            #expect(mpd["duration"] == "15.000" && playerd["duration"] == "15.000")
            let mpdElapsed = Double(mpd["elapsed"] ?? "") ?? -1
            let playerdElapsed = Double(playerd["elapsed"] ?? "") ?? -1
            #expect(abs(playerdElapsed - mpdElapsed) < 1.5, "mpd \(mpdElapsed), playerd \(playerdElapsed)")
            #expect(playerdElapsed > 0.5 && playerdElapsed < 2.5)
            try pair.reset()
        }
    }

    @Test("crossfade 5: the next song takes over at the current one's end, 5 s into itself, as in mpd")
    func crossfadeTimeline() async throws {
        try await onOwnThread {
            let music = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: music) }
            try PairedMusic.make(in: music)
            let pair = try DaemonPair(music: music)
            defer { _ = try? pair.playerd.stop() }
            try pair.reset()
            for client in [pair.mpdClient, pair.playerdClient] {
                for request in ["crossfade 5", "play 0"] {
                    #expect(try client.command(request).last == "OK")
                }
            }
            // 13 s into the 20 s songs: the fade begins 2 s later and ends 7 s later.
            _ = try pair.mpdClient.command("seekcur 13")
            _ = try pair.playerdClient.command("seekcur 13")
            var samples: [(mpd: [String: String], playerd: [String: String])] = []
            for wait in [1, 8] {
                sleep(UInt32(wait - (samples.isEmpty ? 0 : 1)))
                samples.append((try pair.mpdClient.fields("status"), try pair.playerdClient.fields("status")))
            }
            for (index, (mpd, playerd)) in samples.enumerated() {
                let expected = index == 0 ? ("0", 14.0) : ("1", 6.0)
                #expect(mpd["song"] == expected.0 && playerd["song"] == expected.0, "mpd \(mpd), playerd \(playerd)")
                let mpdElapsed = Double(mpd["elapsed"] ?? "") ?? -1
                let playerdElapsed = Double(playerd["elapsed"] ?? "") ?? -1
                #expect(abs(mpdElapsed - expected.1) < 0.8, "mpd \(mpdElapsed)")
                #expect(abs(playerdElapsed - mpdElapsed) < 0.8, "mpd \(mpdElapsed), playerd \(playerdElapsed)")
                #expect(mpd["xfade"] == "5" && playerd["xfade"] == "5")
            }
            _ = try pair.mpdClient.command("crossfade 0")
            _ = try pair.playerdClient.command("crossfade 0")
            try pair.reset()
        }
    }

    @Test("MixRamp: tagged songs overlap where their ramps meet mixrampdb, less the delay, as in mpd")
    func mixRampTimeline() async throws {
        try await onOwnThread {
            let music = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: music) }
            try PairedMusic.make(in: music)
            // The first song's end ramp reaches -20 dB 2 s before its end, the second's start ramp 1.5 s
            // in: with a delay of 1 s they overlap by 2.5 s.
            try Self.tag(
                music + "/" + PairedMusic.fileName(0), ["MIXRAMP_END": "-30.00 1.00;-20.00 2.00;-10.00 3.00;"])
            try Self.tag(
                music + "/" + PairedMusic.fileName(1), ["MIXRAMP_START": "-30.00 0.50;-20.00 1.50;-10.00 2.00;"])
            let pair = try DaemonPair(music: music)
            defer { _ = try? pair.playerd.stop() }
            try pair.reset()
            for client in [pair.mpdClient, pair.playerdClient] {
                for request in ["crossfade 5", "mixrampdb -20", "mixrampdelay 1", "play 0"] {
                    #expect(try client.command(request).last == "OK")
                }
            }
            _ = try pair.mpdClient.command("seekcur 15")
            _ = try pair.playerdClient.command("seekcur 15")
            // The overlap begins 2.5 s before the end (17.5 s) and the second song takes over at 20 s,
            // 2.5 s into itself; 1 s later it is 3.5 s in.
            sleep(6)
            let mpd = try pair.mpdClient.fields("status")
            let playerd = try pair.playerdClient.fields("status")
            #expect(mpd["song"] == "1" && playerd["song"] == "1", "mpd \(mpd), playerd \(playerd)")
            let mpdElapsed = Double(mpd["elapsed"] ?? "") ?? -1
            let playerdElapsed = Double(playerd["elapsed"] ?? "") ?? -1
            #expect(abs(mpdElapsed - 3.5) < 0.8, "mpd \(mpdElapsed)")
            #expect(abs(playerdElapsed - mpdElapsed) < 0.8, "mpd \(mpdElapsed), playerd \(playerdElapsed)")
            for client in [pair.mpdClient, pair.playerdClient] {
                for request in ["crossfade 0", "mixrampdb 0", "mixrampdelay -1"] {
                    _ = try client.command(request)
                }
            }
            try pair.reset()
        }
    }

    /// Puts an ID3v2.3 tag of `TXXX` frames in front of the MP3 at `path`.
    private static func tag(_ path: String, _ frames: [String: String]) throws {
        var body: [UInt8] = []
        for (description, value) in frames {
            let content = [0] + Array(description.utf8) + [0] + Array(value.utf8)
            let size = content.count
            body += Array("TXXX".utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF)]
            body += [UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + content
        }
        let size = body.count
        let header =
            Array("ID3".utf8) + [3, 0, 0]
            + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
        let audio = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data(header + body + [UInt8](audio)).write(to: URL(fileURLWithPath: path))
    }

    @Test("crossfade, MixRamp settings and ranges survive a restart")
    func persisted() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.stateFile = directory + "/state"
        var playerd = try RunningPlayerd(options)
        var client = try playerd.connect()
        for request in [
            "add stereo-44k-cbr.mp3", "add one-second.mp3", "crossfade 4", "mixrampdb -12.5", "mixrampdelay 1.5",
        ] {
            #expect(try client.command(request).last == "OK")
        }
        let id = try client.fields("playlistinfo 1")["Id"] ?? ""
        #expect(try client.command("rangeid \(id) 0.25:0.75").last == "OK")
        _ = try playerd.stop()
        let text = try String(contentsOfFile: directory + "/state", encoding: .utf8)
        #expect(text.contains("\ncrossfade: 4\nmixrampdb: -12.500000\nmixrampdelay: 1.500000\n"))
        #expect(text.contains("one-second.mp3\nrange: 250-750\n"))
        playerd = try RunningPlayerd(options)
        client = try playerd.connect()
        let status = try client.fields("status")
        #expect(status["xfade"] == "4" && status["mixrampdb"] == "-12.5" && status["mixrampdelay"] == "1.5")
        let song = try client.command("playlistinfo 1")
        #expect(song.contains("Range: 0.250-0.750") && song.contains("duration: 0.500"))
        _ = try playerd.stop()
    }
}

/// Runs `body` on a thread of its own: the tests block in reads and sleeps, which must not hold up the
/// few threads Swift's concurrency runs on.
private func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
