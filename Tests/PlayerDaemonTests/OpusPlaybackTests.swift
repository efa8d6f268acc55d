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

    /// The RMS level of 16-bit PCM.
    private static func rms(_ pcm: Data) -> Double {
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(max(samples.count, 1))).squareRoot()
    }

    /// mpd 0.23 run by hand on these two files with `replaygain "track"` and a pipe output played them
    /// at +5.01 dB and -0.98 dB against the source: 5 dB for a file without R128 gains, and the
    /// OpusHead's -6 dB output gain plus those 5 dB.
    @Test("replay_gain_mode track: levels as mpd plays them, with and without an OpusHead output gain")
    func trackGainLikeMPD() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/tone.wav"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "48000", "-c", "2", "-b", "16", wav, "synth", "1", "sine", "440", "vol", "0.3"])
        #expect(sox.status == 0, "\(sox)")
        let plain = directory + "/plain.opus"
        let encoder = try runProgram("/usr/bin/opusenc", ["--quiet", wav, plain])
        #expect(encoder.status == 0, "\(encoder)")
        // The same file with an output gain of -6 dB (Q7.8) in its OpusHead, the page's CRC made again.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let body = 27 + Int(bytes[26])
        let pageEnd = body + bytes[27..<body].reduce(0) { $0 + Int($1) }
        bytes[body + 16] = UInt8(truncatingIfNeeded: -1536)
        bytes[body + 17] = UInt8(truncatingIfNeeded: -1536 >> 8)
        bytes.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        var crc: UInt32 = 0
        for byte in bytes[0..<pageEnd] {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04c1_1db7 : crc << 1 }
        }
        bytes.replaceSubrange(22..<26, with: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) })
        let gained = directory + "/gained.opus"
        try Data(bytes).write(to: URL(fileURLWithPath: gained))

        let played = directory + "/played.wav"
        var options = RunningPlayerd.Options()
        options.output = "wav:\(played)"
        options.stateFile = directory + "/state"
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("replay_gain_mode track") == ["OK"])
            #expect(try client.command("add \"\(plain)\"").last == "OK")
            #expect(try client.command("add \"\(gained)\"").last == "OK")
            #expect(try client.command("play").last == "OK")
            let deadline = ContinuousClock.now + .seconds(15)
            Thread.sleep(forTimeInterval: 0.3)
            while try !client.command("status").contains("state: stop"), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        let pcm = try Self.wavData(played)
        #expect(pcm.count == 2 * 48000 * 4)
        let source = Self.rms(try Self.wavData(wav))
        let first = 20 * log10(Self.rms(pcm.prefix(48000 * 4)) / source)
        let second = 20 * log10(Self.rms(pcm.dropFirst(48000 * 4)) / source)
        #expect(abs(first - 5) < 0.1, "played at \(first) dB")
        #expect(abs(second - -1) < 0.1, "played at \(second) dB")
    }
}
