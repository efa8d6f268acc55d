import Foundation
import Testing

/// An Opus file played by the real daemon into a WAV file: the samples are opusdec's, and `status`
/// shows the format as mpd shows it for the same file, side by side.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/opusenc"), "needs opus-tools"))
struct OpusPlaybackTests {
    /// The `key: value` of `lines` for `key`.
    private static func field(_ key: String, _ lines: [String]) -> String? {
        lines.first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
    }

    /// The data chunk of a WAV file.
    private static func wavData(_ path: String) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let marker = data.range(of: Data("data".utf8)) else { throw HarnessError("\(path): no data chunk") }
        return Data(data[(marker.upperBound + 4)...])
    }

    /// Plays `song` (absolute) on `client` and returns `status` read while it plays.
    private static func statusWhilePlaying(_ client: LineClient, _ song: String) throws -> [String] {
        #expect(try client.command("add \"\(song)\"").last == "OK")
        #expect(try client.command("play").last == "OK")
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let status = try client.command("status")
            if status.contains("state: play"), Self.field("audio", status) != nil { return status }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw HarnessError("the song did not start playing")
    }

    @Test("plays an Opus file bit for bit as opusdec decodes it; status's audio as mpd's")
    func playsLikeOpusdec() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let music = directory + "/music"
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let wav = directory + "/tone.wav"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "48000", "-c", "2", "-b", "16", wav, "synth", "2", "sine", "440", "sine", "660", "vol", "0.5"])
        #expect(sox.status == 0, "\(sox)")
        let song = music + "/tone.opus"
        let encoder = try runProgram("/usr/bin/opusenc", ["--quiet", "--bitrate", "64", wav, song])
        #expect(encoder.status == 0, "\(encoder)")
        let reference = directory + "/reference.wav"
        let opusdec = try runProgram(
            "/usr/bin/opusdec", ["--quiet", "--rate", "48000", "--no-dither", song, reference])
        #expect(opusdec.status == 0, "\(opusdec)")

        let played = directory + "/played.wav"
        var options = RunningPlayerd.Options()
        options.output = "wav:\(played)"
        options.stateFile = directory + "/state"
        var ours: [String] = []
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            ours = try Self.statusWhilePlaying(client, song)
            let deadline = ContinuousClock.now + .seconds(15)
            while try !client.command("status").contains("state: stop"), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        let pcm = try Self.wavData(played)
        let expected = try Self.wavData(reference)
        #expect(pcm.count == 96000 * 4)
        #expect(pcm == expected, "\(pcm.count) bytes played against opusdec's \(expected.count)")

        let mpd = try RunningMPD(music: music)
        let theirs = try Self.statusWhilePlaying(try mpd.connect(), "tone.opus")
        #expect(Self.field("audio", ours) == "48000:16:2")
        #expect(Self.field("audio", ours) == Self.field("audio", theirs))
        // The exact length; mpd counts the pre-skip (312 frames) in (MPD-DIFFERENCES.md).
        #expect(Self.field("duration", ours) == "2.000")
        #expect(Self.field("duration", theirs) == "2.006")
    }
}
