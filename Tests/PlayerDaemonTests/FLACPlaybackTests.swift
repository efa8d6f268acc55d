import Foundation
import Testing

/// A 24-bit FLAC file through the real daemon: the WAV output receives it at full resolution, bit for
/// bit what `flac -d` writes, and `status` shows its format and length as MPD shows them.
@Suite struct FLACPlaybackTests {
    /// The `fmt ` chunk's channels, rate and bits, and the `data` chunk's bytes, of a WAV file.
    private static func wav(_ path: String) throws -> (channels: Int, rate: Int, bits: Int, data: Data) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        func le(_ offset: Int, _ count: Int) -> Int {
            (0..<count).reduce(0) { $0 | Int(bytes[bytes.startIndex + offset + $1]) << (8 * $1) }
        }
        guard let format = bytes.range(of: Data("fmt ".utf8)), let data = bytes.range(of: Data("data".utf8))
        else { throw HarnessError("\(path): no fmt or data chunk") }
        let fmt = format.upperBound - bytes.startIndex + 4
        let start = data.upperBound + 4
        return (le(fmt + 2, 2), le(fmt + 4, 4), le(fmt + 14, 2), bytes[start...])
    }

    @Test("a 24-bit 96 kHz FLAC plays to the WAV output as 24-bit 96 kHz, equal to flac -d; status as MPD's")
    func hiResToWAV() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/source.wav"
        let song = directory + "/hi-res.flac"
        let reference = directory + "/reference.wav"
        let sox = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "96000", "-b", "24", "-c", "2", source, "synth", "1.5", "sine", "440", "pinknoise"])
        #expect(sox.status == 0, "\(sox)")
        #expect(try runProgram("/usr/bin/flac", ["-s", "-f", "-o", song, source]).status == 0)
        #expect(try runProgram("/usr/bin/flac", ["-s", "-d", "-f", "-o", reference, song]).status == 0)

        let played = directory + "/played.wav"
        var options = RunningPlayerd.Options()
        // A paced output beside the WAV file, so that the song plays in real time and status sees it.
        options.output = "null,name=Speakers"
        options.extraArguments = ["--output", "wav:\(played),name=Recorder"]
        try withPlayerd(options) { daemon in
            let client = try LineClient.greeted(daemon.socketPath)
            #expect(try client.command("add \"\(song)\"").last == "OK")
            #expect(try client.command("play").last == "OK")
            var status: [String: String] = [:]
            try expectEventually("the song to play") {
                status = try client.fields("status")
                return status["audio"] != nil || status["state"] == "stop"
            }
            // What mpd 0.23.12 shows for this file (checked with mpd on the same file).
            #expect(status["audio"] == "96000:24:2")
            #expect(status["duration"] == "1.500")
            #expect(status["error"] == nil)
            try expectEventually("the song to end") { try client.fields("status")["state"] == "stop" }
            #expect(try client.fields("status")["error"] == nil)
        }
        let output = try Self.wav(played)
        let expected = try Self.wav(reference)
        #expect(output.bits == 24)
        #expect(output.rate == 96000)
        #expect(output.channels == 2)
        #expect(expected.data.count == 144_000 * 6)
        #expect(output.data.count == expected.data.count)
        #expect(output.data == expected.data, "the WAV output's samples differ from flac -d's")
    }
}
