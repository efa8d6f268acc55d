import Audio
import Foundation
import Testing

/// An Ogg Vorbis song played by the real daemon: what reaches a WAV output is what oggdec decodes, and
/// `status` shows the song as mpd 0.23.12 shows it (but for the sample format: see MPD-DIFFERENCES.md).
@Suite(.serialized)
struct VorbisPlaybackTests {
    @Test("playerd plays Ogg Vorbis bit for bit as oggdec decodes it; status shows its format and duration")
    func playsLikeOggdec() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/tone.wav"
        let song = directory + "/tone.ogg"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "3", "sine", "440", "sine", "660", "vol", "0.5"])
        #expect(sox.status == 0, "\(sox)")
        let oggenc = try runProgram("/usr/bin/oggenc", ["-Q", "-q", "5", "-o", song, wav])
        #expect(oggenc.status == 0, "\(oggenc)")
        let reference = directory + "/reference.raw"
        let oggdec = try runProgram("/usr/bin/oggdec", ["-Q", "-R", "-o", reference, song])
        #expect(oggdec.status == 0, "\(oggdec)")
        let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
        #expect(expected.count == 3 * 44100 * 4)

        let recording = directory + "/recorded.wav"
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = ["--output", "wav:\(recording),name=Recorder"]
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("add \"\(song)\"").last == "OK")
            #expect(try client.command("play").last == "OK")
            try expectEventually("the song to play") { try client.fields("status")["state"] == "play" }
            let playing = try client.fields("status")
            // mpd 0.23.12 on this file shows `duration: 3.000` and `audio: 44100:f:2` (its Vorbis plugin
            // decodes to floats); playerd plays oggdec's 16-bit integers.
            #expect(playing["duration"] == "3.000")
            #expect(playing["audio"] == "44100:16:2")
            // mpd shows `bitrate: 0` for Vorbis; playerd what libvorbisfile measures (a tone takes a few dozen).
            let bitrate = Int(playing["bitrate"] ?? "") ?? 0
            #expect((1...500).contains(bitrate), "bitrate \(bitrate)")
            try expectEventually("the song to end", within: .seconds(15)) {
                try client.fields("status")["state"] == "stop"
            }
            #expect(try client.fields("status")["error"] == nil)
        }
        let recorded = try Data(contentsOf: URL(fileURLWithPath: recording))
        #expect(recorded.count == 44 + expected.count)
        #expect(recorded.dropFirst(44) == expected)
    }

    @Test("replay_gain_mode track: the samples played are oggdec's scaled by the stored track gain")
    func replayGain() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let wav = directory + "/tone.wav"
        let song = directory + "/gain.ogg"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "48000", "-c", "2", "-b", "16", wav, "synth", "1", "sine", "440", "vol", "0.5"])
        #expect(sox.status == 0, "\(sox)")
        let comments = [
            "REPLAYGAIN_TRACK_GAIN=-6.00 dB", "REPLAYGAIN_TRACK_PEAK=0.5", "REPLAYGAIN_ALBUM_GAIN=-3.00 dB",
            "REPLAYGAIN_ALBUM_PEAK=0.5",
        ]
        let oggenc = try runProgram(
            "/usr/bin/oggenc", ["-Q", "-q", "4"] + comments.flatMap { ["-c", $0] } + ["-o", song, wav])
        #expect(oggenc.status == 0, "\(oggenc)")
        let reference = directory + "/reference.raw"
        #expect(try runProgram("/usr/bin/oggdec", ["-Q", "-R", "-o", reference, song]).status == 0)
        var expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: reference)))
        #expect(expected.count == 48000 * 4)
        expected.withUnsafeMutableBytes { PCMGain.apply(pow(10, -6.0 / 20), to: $0, format: .signed16) }

        let recording = directory + "/recorded.wav"
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = ["--output", "wav:\(recording),name=Recorder"]
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("replay_gain_mode track").last == "OK")
            #expect(try client.command("add \"\(song)\"").last == "OK")
            #expect(try client.command("play").last == "OK")
            try expectEventually("the song to play") { try client.fields("status")["state"] == "play" }
            try expectEventually("the song to end", within: .seconds(15)) {
                try client.fields("status")["state"] == "stop"
            }
        }
        let recorded = try Data(contentsOf: URL(fileURLWithPath: recording))
        #expect(recorded.count == 44 + expected.count)
        #expect([UInt8](recorded.dropFirst(44)) == expected)
    }
}
