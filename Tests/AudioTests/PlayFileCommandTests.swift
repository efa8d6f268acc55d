import Foundation
import Testing

/// The `playfile` executable built beside the test bundle (`swift build` builds it with the tests).
private func playfilePath() throws -> String {
    let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let path = URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("playfile").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw PlayfileMissing(path: path)
    }
    return path
}

private struct PlayfileMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "\(self.path) is not built: run `swift build` before `swift test`" }
}

@Suite("playfile, the built command")
struct PlayFileCommandTests {
    @Test("plays files into a WAV output, gaplessly, and reports them")
    func playsToWAV() throws {
        let scratch = try ScratchDirectory()
        let wav = scratch.path("out.wav")
        let result = try run(
            try playfilePath(), ["--output", "wav:\(wav)", fixture("gapless-a.mp3"), fixture("gapless-b.mp3")])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let printed = String(decoding: result.stdout, as: UTF8.self)
        #expect(printed.contains("Playing \(fixture("gapless-a.mp3"))"))
        #expect(printed.contains("44100 Hz stereo s16, 256 kbps, 0:01 on wav:\(wav)"))
        #expect(printed.contains("0:01 / 0:01 [##############################]"))
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wav)))
        let expected = try referencePCM(fixture("gapless-a.mp3")) + referencePCM(fixture("gapless-b.mp3"))
        expectSamePCM(Array(file.dropFirst(44)), expected)
    }

    @Test("a bad file is reported by name and reason; the next file still plays; exit status 1")
    func badFileThenGoodFile() throws {
        let result = try run(
            try playfilePath(),
            [
                "--quiet", "--output", "null:unpaced", fixture("random.mp3"), fixture("missing.mp3"),
                fixture("one-second.mp3"),
            ])
        #expect(result.status == 1)
        #expect(
            result.stderr == """
                playfile: \(fixture("random.mp3")): not an MP3 stream (no MPEG audio frames found)
                playfile: \(fixture("missing.mp3")): file not found

                """)
        #expect(result.stdout.isEmpty)
    }

    @Test("a bad output spec is a usage error listing the valid forms")
    func badOutputSpec() throws {
        let result = try run(try playfilePath(), ["--output", "speaker", fixture("one-second.mp3")])
        #expect(result.status == 64)
        #expect(result.stderr.contains("invalid output \"speaker\": expected one of alsa, alsa:DEVICE"))
    }

    @Test("without a sound card, the default falls back to the null output with a one-line warning")
    func fallsBackToNull() throws {
        // An ALSA configuration with no devices at all stands in for a machine without a sound card.
        let scratch = try ScratchDirectory()
        let config = scratch.path("asound.conf")
        try "pcm.default { type hw card 99 }\n".write(toFile: config, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["ALSA_CONFIG_PATH"] = config
        let result = try run(try playfilePath(), [fixture("one-second.mp3")], environment: environment)
        #expect(result.status == 0)
        let warnings = result.stderr.split(separator: "\n")
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("playfile: no usable sound card (alsa:default: cannot open") == true)
        #expect(warnings.first?.hasSuffix("playing on the null output instead") == true)
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("on null\n"))
    }
}
