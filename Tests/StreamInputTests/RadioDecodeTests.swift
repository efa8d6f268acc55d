import Audio
import Foundation
import Testing

@testable import StreamInput

/// StationStream as the engine uses it: a real MP3 station from Tests/RadioServer/radio_server.py,
/// decoded by StreamDecoders while it is read.
@Suite("A real MP3 station through StreamDecoders", .serialized)
struct RadioDecodeTests {
    @Test("decoded across a drop: each connection's whole frames, as mpg123 decodes the bytes it was sent")
    func decodedAcrossADrop() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let radio = root.appendingPathComponent("Tests/RadioServer/radio_server.py").path
        let audio = root.appendingPathComponent("Fixtures/one-second.mp3").path
        let dump = FileManager.default.temporaryDirectory.appendingPathComponent("streaminput-dump-\(getpid())")
        try FileManager.default.createDirectory(at: dump, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dump) }
        try await StreamTestServer.with(script: (radio, ["--audio", audio, "--dump", dump.path])) { server in
            let url = server.url("/drop.mp3?after=60000&times=1&pace=0&every=0")
            let station = Listener(url, limits: testLimits(buffer: 128 * 1024, prebuffer: 32 * 1024))
            defer { station.stream.cancel() }
            try await station.wait(until: { $0.states.contains(.playing) })
            let decoder = try StreamDecoders.open(source: station.stream)
            var pcm: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096 * 4)
            let deadline = ContinuousClock.now + .seconds(10)
            var prepared = false
            // Three seconds of audio, the drop (after 60000 bytes, about 3.7 s) and a second past it.
            while pcm.count < 44100 * 4 * 5, ContinuousClock.now < deadline {
                if !prepared {
                    prepared = try decoder.prepare()
                    if !prepared {
                        try await Task.sleep(for: .milliseconds(2))
                        continue
                    }
                }
                let result = try buffer.withUnsafeMutableBytes { try decoder.read(into: $0) }
                switch result {
                case .frames(let count): pcm += buffer[0..<count * 4]
                case .waiting: try await Task.sleep(for: .milliseconds(2))
                case .ended: Issue.record("the station ended")
                }
                if case .ended = result { break }
            }
            station.stream.cancel()
            #expect(decoder.format == AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16))
            #expect(station.states.contains { if case .reconnecting = $0 { true } else { false } })
            #expect(station.stream.info.name == "playerd test radio")
            #expect(station.stream.info.title != nil, "an ICY title took effect as its audio was decoded")

            // What each connection was sent, decoded by mpg123.
            var decoded: [[UInt8]] = []
            for connection in 1...2 {
                let sent = dump.appendingPathComponent("conn-\(connection).bin").path
                // The server writes a connection's dump, whole, once it notices the connection ended.
                let limit = ContinuousClock.now + .seconds(10)
                while !FileManager.default.fileExists(atPath: sent), ContinuousClock.now < limit {
                    try await Task.sleep(for: .milliseconds(20))
                }
                let raw = dump.appendingPathComponent("conn-\(connection).raw").path
                #expect(runProgram(["/usr/bin/mpg123", "-q", "-s", sent], output: raw) == 0)
                decoded.append(Array(try Data(contentsOf: URL(fileURLWithPath: raw))))
            }
            let first = decoded[0]
            let second = decoded[1]
            try #require(pcm.count > first.count)
            #expect(Array(pcm[0..<first.count]) == first, "the first connection's frames")
            let rest = Array(pcm[first.count...])
            try #require(rest.count <= second.count)
            #expect(rest == Array(second[0..<rest.count]), "then the second's, from its first whole frame")
        }
    }
}
