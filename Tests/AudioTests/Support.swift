import Audio
import Foundation
import Synchronization
import Testing

/// The repository's Fixtures folder, found from this source file so tests run from any directory.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

/// The absolute path of a fixture.
func fixture(_ name: String) -> String {
    fixturesDirectory.appendingPathComponent(name).path
}

/// A good fixture and the figures Fixtures/README.md gives for it.
struct GoodFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let sampleRate: Int
    let channels: Int
    let frames: Int

    var path: String { fixture(self.name) }
    var testDescription: String { self.name }

    static let all: [GoodFixture] = [
        GoodFixture(name: "stereo-44k-cbr.mp3", sampleRate: 44100, channels: 2, frames: 132_300),
        GoodFixture(name: "mono-48k-vbr.mp3", sampleRate: 48000, channels: 1, frames: 144_000),
        GoodFixture(name: "one-second.mp3", sampleRate: 44100, channels: 2, frames: 44100),
        GoodFixture(name: "gapless-whole.mp3", sampleRate: 44100, channels: 2, frames: 132_300),
        GoodFixture(name: "gapless-a.mp3", sampleRate: 44100, channels: 2, frames: 57777),
        GoodFixture(name: "gapless-b.mp3", sampleRate: 44100, channels: 2, frames: 74523),
        GoodFixture(name: "tagged-id3v23.mp3", sampleRate: 44100, channels: 2, frames: 88200),
        GoodFixture(name: "tagged-id3v24.mp3", sampleRate: 44100, channels: 2, frames: 88200),
        GoodFixture(name: "tagged-id3v1.mp3", sampleRate: 44100, channels: 2, frames: 88200),
        GoodFixture(name: "big-id3.mp3", sampleRate: 44100, channels: 2, frames: 88200),
    ]
}

/// What a program printed and how it ended.
struct ProcessResult {
    let status: Int32
    let stdout: Data
    let stderr: String
}

/// Runs a program to its end, collecting both output streams without risking a pipe deadlock.
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment {
        process.environment = environment
    }
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("playerd-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outURL = scratch.appendingPathComponent("out")
    let errURL = scratch.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: try Data(contentsOf: outURL),
        stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
    )
}

/// What the `mpg123` command-line program (the reference) prints for a file: `mpg123 -q -s`, or
/// `-e f32` for float.
func referencePCM(_ path: String, _ sampleFormat: SampleFormat = .signed16) throws -> [UInt8] {
    var arguments = ["-q", "-s"]
    if sampleFormat == .float32 {
        arguments += ["-e", "f32"]
    }
    let result = try run("/usr/bin/mpg123", arguments + [path])
    return [UInt8](result.stdout)
}

/// Decodes the rest of a song with `MP3Decoder`, in reads of `chunkFrames`.
func decodeAll(_ decoder: MP3Decoder, chunkFrames: Int = 1000) throws -> [UInt8] {
    var pcm: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: chunkFrames * decoder.format.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let frames = try decoder.read(into: buffer)
        if frames == 0 { break }
        pcm += buffer[0..<frames * decoder.format.bytesPerFrame]
    }
    return pcm
}

/// Decodes up to `frames` frames from the decoder's position.
func decode(_ decoder: MP3Decoder, frames: Int) throws -> [UInt8] {
    let bytesPerFrame = decoder.format.bytesPerFrame
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: frames * bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var filled = 0
    while filled < frames {
        let got = try decoder.read(
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled * bytesPerFrame..<frames * bytesPerFrame]))
        if got == 0 { break }
        filled += got
    }
    return [UInt8](buffer[0..<filled * bytesPerFrame])
}

/// A temporary directory removed when the value is dropped.
final class ScratchDirectory {
    let url: URL

    init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("playerd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: self.url)
    }

    func path(_ name: String) -> String {
        self.url.appendingPathComponent(name).path
    }
}

/// Expects two PCM byte strings to be equal, reporting their sizes and the first difference rather
/// than both arrays.
func expectSamePCM(
    _ actual: [UInt8],
    _ expected: [UInt8],
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    let common = min(actual.count, expected.count)
    let firstDifference = (0..<common).first { actual[$0] != expected[$0] } ?? common
    let note = comment.map { " (\($0))" } ?? ""
    Issue.record(
        "PCM differs: \(actual.count) bytes against \(expected.count) expected, first difference at byte \(firstDifference)\(note)",
        sourceLocation: sourceLocation)
}

/// How much resident memory and how many open descriptors `cycle` leaves behind: run 20 times to warm
/// the allocator up, then measured across `rounds` more. Both figures are the whole process's, so the
/// leak tests take turns (one lock): run beside each other, each saw the others' files and buffers.
func leakGrowth(rounds: Int, _ cycle: () -> Void) -> (bytes: Int, descriptors: Int) {
    leakMeasurement.withLock { _ in
        for _ in 0..<20 { cycle() }
        let memoryBefore = residentBytes()
        let descriptorsBefore = openDescriptors()
        for _ in 0..<rounds { cycle() }
        return (residentBytes() - memoryBefore, openDescriptors() - descriptorsBefore)
    }
}

private let leakMeasurement = Mutex(())

private func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = Int(statm.split(separator: " ").dropFirst().first ?? "0") ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

private func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}
