import Foundation

/// Songs of every format made at test time in a scratch directory (removed with the value), each with
/// the PCM its format's reference decoder makes of it: `flac -d`, `opusdec --rate 48000 --no-dither`,
/// `mpg123 -s`, `oggdec`. Sources are two tones made by sox, stereo.
public final class EncodedMaterial: @unchecked Sendable {
    /// Where the files are.
    public let directory: URL

    public init() throws {
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "playerd-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: self.directory) }

    /// The path of `name` in the directory.
    public func path(_ name: String) -> String { self.directory.appendingPathComponent(name).path }

    /// `name.wav`: `seconds` of two tones at `rate`, `bits` deep, stereo.
    public func source(_ name: String, seconds: Double, rate: Int, bits: Int = 16, frequency: Int) throws -> String {
        let path = self.path(name + ".wav")
        try Self.tool(
            "/usr/bin/sox",
            [
                "-n", "-r", "\(rate)", "-c", "2", "-b", "\(bits)", path, "synth", "\(seconds)", "sine",
                "\(frequency)", "sine", "\(frequency * 3 / 2)", "gain", "-4",
            ])
        return path
    }

    /// `name.flac` from `source`, and what `flac -d` makes of it (raw little-endian, the file's depth:
    /// three bytes a sample for 24 bits).
    public func flac(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
        let path = self.path(name + ".flac")
        try Self.tool("/usr/bin/flac", ["-s", "-f", "-o", path, source])
        let raw = self.path(name + ".flac.raw")
        try Self.tool(
            "/usr/bin/flac",
            ["-d", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed", "-o", raw, path])
        return (path, try Self.bytes(raw))
    }

    /// `name.opus` from `source`, and what `opusdec --rate 48000 --no-dither` makes of it (raw).
    public func opus(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
        let path = self.path(name + ".opus")
        try Self.tool("/usr/bin/opusenc", ["--quiet", source, path])
        let raw = self.path(name + ".opus.raw")
        try Self.tool("/usr/bin/opusdec", ["--quiet", "--rate", "48000", "--no-dither", path, raw])
        return (path, try Self.bytes(raw))
    }

    /// `name.mp3` from `source` (LAME writes the gapless Info header), and what `mpg123 -s` makes of it.
    public func mp3(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
        let path = self.path(name + ".mp3")
        try Self.tool("/usr/bin/lame", ["--quiet", "-b", "128", source, path])
        let raw = self.path(name + ".mp3.raw")
        try Self.tool("/usr/bin/mpg123", ["-q", "-s", "-w", raw, path])
        return (path, Array(try Self.bytes(raw).dropFirst(44)))
    }

    /// `name.ogg` from `source`, and what `oggdec` makes of it (raw).
    public func vorbis(_ name: String, from source: String) throws -> (path: String, pcm: [UInt8]) {
        let path = self.path(name + ".ogg")
        try Self.tool("/usr/bin/oggenc", ["-Q", "-o", path, source])
        let raw = self.path(name + ".ogg.raw")
        try Self.tool("/usr/bin/oggdec", ["-Q", "-R", "-o", raw, path])
        return (path, try Self.bytes(raw))
    }

    /// 24-bit samples packed in three bytes (as `flac -d` writes them) widened to sign-extended 32-bit
    /// words, as playerd carries them.
    public static func widen24(_ packed: [UInt8]) -> [UInt8] {
        var widened: [UInt8] = []
        widened.reserveCapacity(packed.count / 3 * 4)
        for index in 0..<packed.count / 3 {
            let low = packed[index * 3..<index * 3 + 3]
            widened += low
            widened.append(low.last! & 0x80 == 0 ? 0 : 0xff)
        }
        return widened
    }

    /// The frames in a WAV file, as `soxi -s` counts them; -1 when it cannot tell.
    public static func frames(_ path: String) throws -> Int {
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

    /// Runs a tool to its end, its output to nowhere.
    /// - Throws: `ToolFailure` when it exits with anything but 0.
    public static func tool(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailure(
                description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
}

/// A tool that made test material failed.
public struct ToolFailure: Error, CustomStringConvertible {
    public let description: String
}

/// How two PCM byte arrays differ, for a test's message: sizes and the first differing byte; nil when
/// they are equal.
public func pcmDifference(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
    guard actual != expected else { return nil }
    let common = min(actual.count, expected.count)
    let first = (0..<common).first { actual[$0] != expected[$0] } ?? common
    return "PCM differs: \(actual.count) bytes against \(expected.count), first difference at byte \(first)"
}
