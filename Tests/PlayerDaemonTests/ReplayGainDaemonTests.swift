import Foundation
import Testing

/// ReplayGain through the daemon: mpc sets the mode, the status and idle say so, the samples written
/// follow it, and the mode survives a restart.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: Paths.mpc), "needs /usr/bin/mpc"))
struct ReplayGainDaemonTests {
    /// A one-second tone tagged with a track gain of -6 dB and an album gain of -3 dB.
    private static func taggedTone(in directory: String) throws -> String {
        let wav = directory + "/tone.wav"
        let mp3 = directory + "/tagged.mp3"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "1", "sine", "440", "vol", "0.5"])
        #expect(sox.status == 0, "\(sox)")
        let lame = try runProgram(
            "/usr/bin/lame",
            [
                "--quiet", "--noreplaygain", "--tv", "TXXX=REPLAYGAIN_TRACK_GAIN=-6.00 dB", "--tv",
                "TXXX=REPLAYGAIN_TRACK_PEAK=0.5", "--tv", "TXXX=REPLAYGAIN_ALBUM_GAIN=-3.00 dB", "--tv",
                "TXXX=REPLAYGAIN_ALBUM_PEAK=0.5", wav, mp3,
            ])
        #expect(lame.status == 0, "\(lame)")
        return mp3
    }

    /// The RMS level of a 16-bit WAV file's data chunk.
    private static func rms(ofWAV path: String) throws -> Double {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let marker = data.range(of: Data("data".utf8)) else { throw HarnessError("\(path): no data chunk") }
        let samples = data[(marker.upperBound + 4)...]
        var sum = 0.0
        var count = 0
        var index = samples.startIndex
        while index + 1 < samples.endIndex {
            let value = Double(Int16(bitPattern: UInt16(samples[index]) | UInt16(samples[index + 1]) << 8))
            sum += value * value
            count += 1
            index += 2
        }
        return (sum / Double(max(count, 1))).squareRoot()
    }

    @Test("mpc replaygain track: status, idle options, the level played, and a restart")
    func trackModeEndToEnd() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let song = try Self.taggedTone(in: directory)
        let reference = directory + "/reference.wav"
        #expect(try runProgram("/usr/bin/mpg123", ["-q", "-w", reference, song]).status == 0)
        let played = directory + "/played.wav"
        var options = RunningPlayerd.Options()
        options.output = "wav:\(played)"
        options.stateFile = directory + "/state"
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("replay_gain_status") == ["replay_gain_mode: off", "OK"])
            #expect(
                try client.command("replay_gain_mode loud") == [
                    "ACK [2@0] {replay_gain_mode} Unrecognized replay gain mode"
                ])
            let watcher = try LineClient.greeted(daemon.socketPath)
            try watcher.send(line: "idle options")
            let mpc = try runProgram(Paths.mpc, ["--host", daemon.socketPath, "replaygain", "track"])
            #expect(mpc.status == 0, "\(mpc)")
            #expect(try watcher.readAnswer() == ["changed: options", "OK"])
            let shown = try runProgram(Paths.mpc, ["--host", daemon.socketPath, "replaygain"])
            #expect(shown.stdout == "replay_gain_mode: track\n", "\(shown)")
            #expect(try client.command("replay_gain_status") == ["replay_gain_mode: track", "OK"])

            #expect(try client.command("add \"\(song)\"").last == "OK")
            #expect(try client.command("play").last == "OK")
            let deadline = ContinuousClock.now + .seconds(15)
            while try !client.command("status").contains("state: stop"), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.1)
            }
            let measured = 20 * log10(try Self.rms(ofWAV: played) / Self.rms(ofWAV: reference))
            print("playerd played the track-gain song at \(measured) dB against mpg123 -w")
            #expect(abs(measured - -6.0) <= 0.05, "played at \(measured) dB against mpg123")
        }
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("replay_gain_status") == ["replay_gain_mode: track", "OK"])
            let shown = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "replaygain"])
            #expect(shown.status == 0 && shown.stdout == "track\n", "\(shown)")
            let set = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "replaygain", "auto"])
            #expect(set.status == 0 && set.stdout == "auto\n", "\(set)")
            let wrong = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "replaygain", "loud"])
            #expect(wrong.status == 2, "\(wrong)")
        }
    }
}
