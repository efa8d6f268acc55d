import FormatTestSupport
import Foundation
import Testing

/// The new formats through the real daemon and its WAV output: a queue of every format plays gaplessly,
/// bit for bit as each reference decoder decodes it, and `rangeid` cuts FLAC and Opus sample-exactly.
@Suite("Formats through the daemon's WAV output")
struct CrossFormatDaemonTests {
    /// The data chunk of a WAV file.
    static func data(ofWAV path: String) throws -> [UInt8] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let marker = bytes.range(of: Data("data".utf8)) else { throw HarnessError("\(path): no data chunk") }
        return [UInt8](bytes[(marker.upperBound + 4)...])
    }

    /// Plays what `setUp` queues to its end, on a daemon whose one output writes a WAV file beside the
    /// material; returns the WAV's data.
    static func play(in material: EncodedMaterial, _ setUp: (LineClient) throws -> Void) throws -> [UInt8] {
        let wav = material.path("played.wav")
        var options = RunningPlayerd.Options()
        options.output = "wav:\(wav)"
        options.stateFile = material.path("state")
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            try setUp(client)
            #expect(try client.command("play").last == "OK")
            let deadline = ContinuousClock.now + .seconds(30)
            while try !client.command("status").contains("state: stop"), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let status = try client.command("status")
            #expect(!status.contains { $0.hasPrefix("error:") }, "\(status)")
        }
        return try Self.data(ofWAV: wav)
    }

    @Test("FLAC, Opus, MP3 and Vorbis in one queue: the WAV output is their reference PCM end to end")
    func gaplessQueue() throws {
        let material = try EncodedMaterial()
        let songs = [
            try material.flac("a", from: material.source("a", seconds: 0.8123, rate: 48000, frequency: 330)),
            try material.opus("b", from: material.source("b", seconds: 0.6071, rate: 48000, frequency: 440)),
            try material.mp3("c", from: material.source("c", seconds: 0.9013, rate: 48000, frequency: 550)),
            try material.vorbis("d", from: material.source("d", seconds: 0.7707, rate: 48000, frequency: 660)),
        ]
        let played = try Self.play(in: material) { (client: LineClient) throws in
            for song in songs {
                #expect(try client.command("add \"\(song.path)\"").last == "OK")
            }
        }
        let difference = pcmDifference(played, songs.flatMap(\.pcm))
        #expect(difference == nil, "\(difference ?? "")")
    }

    @Test("rangeid plays exactly its slice of a FLAC and of an Opus song", arguments: ["flac", "opus"])
    func ranges(format: String) throws {
        let material = try EncodedMaterial()
        let source = try material.source("s", seconds: 1.3, rate: 48000, frequency: 880)
        let song = format == "flac" ? try material.flac("s", from: source) : try material.opus("s", from: source)
        let played = try Self.play(in: material) { (client: LineClient) throws in
            let answer = try client.command("addid \"\(song.path)\"")
            let id = try #require(answer.first { $0.hasPrefix("Id: ") }).dropFirst(4)
            #expect(try client.command("rangeid \(id) 0.25:0.75") == ["OK"])
        }
        // 0.25 s to 0.75 s at 48 kHz: frames 12,000 to 36,000, four bytes each.
        let difference = pcmDifference(played, Array(song.pcm[12000 * 4..<36000 * 4]))
        #expect(difference == nil, "\(difference ?? "")")
    }
}
