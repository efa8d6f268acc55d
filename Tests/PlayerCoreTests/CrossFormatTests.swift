import Audio
import Foundation
import Testing

@testable import PlayerCore

/// Songs of every format in one queue, through the engine: gapless joins, format changes, full resolution.
/// The material is made at test time (sox, then each format's encoder) and the expected PCM comes from
/// each format's reference decoder: `flac -d`, `opusdec --no-dither`, `mpg123 -s`, `oggdec`.
@Suite("Formats side by side in the engine")
struct CrossFormatTests {
    /// A scratch directory with encoded songs and their reference PCM.
    final class Material {
        let directory: URL

        init() throws {
            self.directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "playerd-formats-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: self.directory) }

        func path(_ name: String) -> String { self.directory.appendingPathComponent(name).path }

        /// A source of `seconds` of two tones at `rate`, `bits` deep, stereo.
        func source(_ name: String, seconds: Double, rate: Int, bits: Int = 16, frequency: Int) throws -> String {
            let path = self.path(name + ".wav")
            try tool(
                "/usr/bin/sox",
                [
                    "-n", "-r", "\(rate)", "-c", "2", "-b", "\(bits)", path, "synth", "\(seconds)", "sine",
                    "\(frequency)", "sine", "\(frequency * 3 / 2)", "gain", "-4",
                ])
            return path
        }

        /// `name.flac` from `source`, and what `flac -d` makes of it (raw little-endian, the file's depth).
        func flac(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
            let path = self.path(name + ".flac")
            try tool("/usr/bin/flac", ["-s", "-f", "-o", path, source])
            let raw = self.path(name + ".flac.raw")
            try tool(
                "/usr/bin/flac",
                ["-d", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed", "-o", raw, path])
            return (path, try Self.bytes(raw))
        }

        /// `name.opus` from `source`, and what `opusdec --rate 48000 --no-dither` makes of it.
        func opus(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
            let path = self.path(name + ".opus")
            try tool("/usr/bin/opusenc", ["--quiet", source, path])
            let raw = self.path(name + ".opus.raw")
            try tool("/usr/bin/opusdec", ["--quiet", "--rate", "48000", "--no-dither", path, raw])
            return (path, try Self.bytes(raw))
        }

        /// `name.mp3` from `source` (LAME writes the gapless Info header), and what `mpg123 -s` makes of it.
        func mp3(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
            let path = self.path(name + ".mp3")
            try tool("/usr/bin/lame", ["--quiet", "-b", "128", source, path])
            return (path, try referencePCM(path))
        }

        /// `name.ogg` from `source`, and what `oggdec` makes of it (raw).
        func vorbis(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
            let path = self.path(name + ".ogg")
            try tool("/usr/bin/oggenc", ["-Q", "-o", path, source])
            let raw = self.path(name + ".ogg.raw")
            try tool("/usr/bin/oggdec", ["-Q", "-R", "-o", raw, path])
            return (path, try Self.bytes(raw))
        }

        static func bytes(_ path: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    /// Runs a tool to its end; a failure is the test's.
    static func tool(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailure(
                description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    /// The frames in a WAV file, as `soxi -s` counts them.
    static func frames(_ path: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/soxi")
        process.arguments = ["-s", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    struct ToolFailure: Error, CustomStringConvertible {
        let description: String
    }

    @Test("FLAC → Opus → MP3 → Vorbis at 48 kHz join without a gap or an extra sample, on one open output")
    func gaplessAcrossFormats() async throws {
        let material = try Material()
        // Lengths that end mid-frame and mid-block in every format.
        let flac = try material.flac("a", from: material.source("a", seconds: 1.1234, rate: 48000, frequency: 330))
        let opus = try material.opus("b", from: material.source("b", seconds: 0.9871, rate: 48000, frequency: 440))
        let mp3 = try material.mp3("c", from: material.source("c", seconds: 1.5013, rate: 48000, frequency: 550))
        let vorbis = try material.vorbis("d", from: material.source("d", seconds: 1.7707, rate: 48000, frequency: 660))
        let songs = [flac, opus, mp3, vorbis]
        // Each reference decoder gives back exactly the source's frames (Opus's pre-skip and end trimmed).
        for (song, name) in zip(songs, ["a", "b", "c", "d"]) {
            let frames = try Self.frames(material.path(name + ".wav"))
            #expect(song.pcm.count == frames * 4, "\(song.path)")
        }

        let (engine, recording) = try makeEngine(songs.map(\.path))
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        expectSamePCM(recording.data, songs.flatMap(\.pcm))
        // One format all along: the output opened once and never drained between songs.
        #expect(recording.log == ["open 48000:16:2", "drain", "drop", "close"])
    }

    @Test("24-bit 96 kHz FLAC reaches the output at 24 bits and 96 kHz, then 16-bit Vorbis after a format change")
    func fullResolution() async throws {
        let material = try Material()
        let hires = try material.flac(
            "hires", from: material.source("hires", seconds: 0.75, rate: 96000, bits: 24, frequency: 1000))
        let vorbis = try material.vorbis(
            "after", from: material.source("after", seconds: 0.5, rate: 44100, frequency: 500))
        let (engine, recording) = try makeEngine([hires.path, vorbis.path])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(recording.log == ["open 96000:24:2", "drain", "close", "open 44100:16:2", "drain", "drop", "close"])
        // flac -d writes three bytes a sample; the engine carries each in a sign-extended 32-bit word.
        let samples24 = hires.pcm.count / 3
        #expect(samples24 == 72000 * 2)
        var widened: [UInt8] = []
        widened.reserveCapacity(samples24 * 4)
        for index in 0..<samples24 {
            let low = hires.pcm[index * 3..<index * 3 + 3]
            widened += low
            widened.append(low.last! & 0x80 == 0 ? 0 : 0xff)
        }
        expectSamePCM(recording.data, widened + vorbis.pcm)
    }
}
