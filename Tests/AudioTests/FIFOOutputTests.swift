import Foundation
import Testing

@testable import Audio

/// Where one test's FIFO goes: `path` in a fresh directory, removed with the value.
private final class ScratchFIFO {
    let directory: String
    let path: String

    /// A directory, and the FIFO itself when `makingTheFIFO` (else the output makes it).
    init(makingTheFIFO: Bool = false) throws {
        self.directory = NSTemporaryDirectory() + "playerd-test-fifo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: false)
        self.path = self.directory + "/snapfifo"
        if makingTheFIFO, mkfifo(self.path, 0o600) != 0 {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}

/// The read end of a FIFO, non-blocking: `readAll` takes whatever is in the pipe now. Closed by
/// `close()` (a test that needs the pipe held open calls it last) or with the value.
private final class FIFOReader {
    private(set) var descriptor: Int32

    init(path: String) {
        self.descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        precondition(self.descriptor >= 0, "cannot open \(path) for reading")
    }

    func readAll() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return bytes }
            bytes += buffer[0..<count]
        }
    }

    func close() {
        if self.descriptor >= 0 { _ = Glibc.close(self.descriptor) }
        self.descriptor = -1
    }

    deinit {
        self.close()
    }
}

/// Writes `seconds` of a 44.1 kHz stereo sine in chunks of 4410 frames, calling `afterEach` between.
private func writeSine(
    _ output: FIFOOutput, seconds: Double, afterEach: () -> Void = {}
) throws {
    let samples = sine(frequency: 440, rate: 44100, channels: 2, seconds: seconds)
    try samples.withUnsafeBytes { raw in
        for start in stride(from: 0, to: raw.count, by: 4410 * 4) {
            try output.write(UnsafeRawBufferPointer(rebasing: raw[start..<min(raw.count, start + 4410 * 4)]))
            afterEach()
        }
    }
}

@Suite("FIFO output", .serialized)
struct FIFOOutputTests {
    @Test("a reader that reads everything gets the resampled stream, byte for byte")
    func readerGetsTheResampledStream() throws {
        let scratch = try ScratchFIFO(makingTheFIFO: true)
        let path = scratch.path
        let reader = FIFOReader(path: path)
        defer { reader.close() }  // and the pipe stays open until the test's end
        let output = FIFOOutput(path: path, clock: VirtualClock())
        try output.open(format: stereo44)
        #expect(output.problem == nil)
        var received: [UInt8] = []
        try writeSine(output, seconds: 1) { received += reader.readAll() }
        try output.drain()
        received += reader.readAll()
        output.close()

        let expected = try Resampler(input: stereo44, output: .standard)
        var resampled: [UInt8] = []
        sine(frequency: 440, rate: 44100, channels: 2, seconds: 1).withUnsafeBytes { raw in
            for start in stride(from: 0, to: raw.count, by: 4410 * 4) {
                resampled += expected.process(
                    UnsafeRawBufferPointer(rebasing: raw[start..<min(raw.count, start + 4410 * 4)]))
            }
        }
        resampled += expected.flush()
        #expect(received == resampled)
        #expect(output.droppedFrames == 0)
        #expect(output.name == "fifo:\(path)")
    }

    @Test("with no reader it plays on, says so after a second, and a reader appearing gets the present at once")
    func noReaderThenAReader() throws {
        let scratch = try ScratchFIFO()
        let path = scratch.path
        let clock = VirtualClock()
        let output = FIFOOutput(path: path, clock: clock)
        try output.open(format: stereo44)  // makes the FIFO: the directory is not sticky
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(output.problem == nil)
        let started = ContinuousClock.now
        try writeSine(output, seconds: 2)
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(output.problem == "nothing has read \(path) for a second (is snapserver running?)")
        // The pipe holds at most its 128 KiB (0.68 s at 48 kHz); the rest was dropped or discarded.
        #expect(output.droppedFrames > 88200 - 31000)

        let reader = FIFOReader(path: path)
        defer { reader.close() }
        let waiting = reader.readAll()
        #expect(!waiting.isEmpty && waiting.count <= 131072)
        try writeSine(output, seconds: 0.1)
        #expect(output.problem == nil)
        #expect(!reader.readAll().isEmpty)
        output.close()
    }

    @Test("a reader that leaves causes no EPIPE and no SIGPIPE; the output says so, and a new reader gets data")
    func readerLeavesAndReturns() throws {
        let scratch = try ScratchFIFO(makingTheFIFO: true)
        let path = scratch.path
        let clock = VirtualClock()
        var reader = FIFOReader(path: path)
        let output = FIFOOutput(path: path, clock: clock)
        try output.open(format: stereo44)
        try writeSine(output, seconds: 0.2) { _ = reader.readAll() }
        reader.close()
        try writeSine(output, seconds: 2)
        #expect(output.problem == "nothing has read \(path) for a second (is snapserver running?)")
        #expect(output.droppedFrames > 0)

        reader = FIFOReader(path: path)
        defer { reader.close() }
        try writeSine(output, seconds: 0.2) { _ = reader.readAll() }
        #expect(output.problem == nil)
        output.close()
    }

    @Test("pause takes back what the reader has not read and resume writes it again; drop discards it")
    func pauseAndDrop() throws {
        let scratch = try ScratchFIFO(makingTheFIFO: true)
        let path = scratch.path
        let reader = FIFOReader(path: path)
        defer { reader.close() }  // and the pipe stays open until the test's end
        let output = FIFOOutput(path: path, clock: VirtualClock())
        try output.open(format: stereo44)
        try writeSine(output, seconds: 0.3)
        try output.pause()
        #expect(reader.readAll().isEmpty)
        try output.resume()
        let resumed = reader.readAll()
        #expect(resumed.count > 48000 * 4 / 4)

        try writeSine(output, seconds: 0.3)
        try output.drop()
        #expect(reader.readAll().isEmpty)
        #expect(output.droppedFrames == 0)
        output.close()
    }

    @Test("a reader that never reads never blocks the writer; what does not fit is counted as dropped")
    func stalledReader() throws {
        let scratch = try ScratchFIFO(makingTheFIFO: true)
        let path = scratch.path
        let reader = FIFOReader(path: path)
        defer { reader.close() }  // and the pipe stays open until the test's end
        let output = FIFOOutput(path: path, clock: VirtualClock())
        try output.open(format: stereo44)
        let started = ContinuousClock.now
        try writeSine(output, seconds: 5)
        #expect(ContinuousClock.now - started < .seconds(3))
        // The pipe holds the emulated half second (grown to 128 KiB, 0.68 s at 48 kHz); the rest is dropped.
        #expect(output.droppedFrames > 3 * 44100)
        #expect(output.droppedFrames < 5 * 44100)
        #expect(output.problem == "nothing has read \(path) for a second (is snapserver running?)")
        print("stalled reader: \(output.droppedFrames) of \(5 * 44100) frames dropped")
        output.close()
    }

    @Test("a FIFO removed and made again at the path is opened again within a second")
    func replacedFIFO() throws {
        let scratch = try ScratchFIFO()
        let path = scratch.path
        let clock = VirtualClock()
        let output = FIFOOutput(path: path, clock: clock)
        try output.open(format: stereo44)
        try writeSine(output, seconds: 0.2)
        #expect(unlink(path) == 0 && mkfifo(path, 0o600) == 0)
        let reader = FIFOReader(path: path)
        defer { reader.close() }
        try writeSine(output, seconds: 1.5)
        #expect(!reader.readAll().isEmpty)
        output.close()
    }

    @Test("frames stay whole for the reader through cut writes, stale discards, pause and drop (6-byte frames)")
    func framesStayAligned() throws {
        let scratch = try ScratchFIFO(makingTheFIFO: true)
        let path = scratch.path
        let reader = FIFOReader(path: path)
        defer { reader.close() }  // and the pipe stays open until the test's end
        // Stereo in, three channels out (the third silent), at the same rate: no soxr, and every frame
        // the reader gets must be (16384, -16384, 0). Pipe pages (4096 bytes) cut 6-byte frames.
        let format = try FIFOFormat(parsing: "48000:16:3")
        let input = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .signed16)
        let output = FIFOOutput(path: path, format: format, clock: VirtualClock())
        try output.open(format: input)
        let chunk: [Int16] = (0..<(4800 * 2)).map { $0 % 2 == 0 ? 16384 : -16384 }
        var received: [UInt8] = []
        func write(seconds: Double, reading: Bool) throws {
            for _ in 0..<Int(seconds * 10) {
                try chunk.withUnsafeBytes { try output.write($0) }
                if reading { received += reader.readAll() }
            }
        }
        try write(seconds: 1, reading: false)
        received += reader.readAll()  // may end inside a frame the output cut
        try write(seconds: 3, reading: false)  // nobody reads: stale audio discarded, frames cut again
        received += reader.readAll()
        try write(seconds: 1, reading: false)
        try output.pause()
        try output.resume()
        try write(seconds: 0.5, reading: true)
        try output.drop()
        try write(seconds: 1, reading: true)
        try output.drain()
        received += reader.readAll()
        output.close()

        #expect(output.droppedFrames > 0)
        #expect(received.count % 6 == 0)
        let frames = received.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count - 5, by: 6).map { offset in
                (0..<3).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: offset + $0 * 2, as: Int16.self)) }
            }
        }
        #expect(frames.count > 48000)
        #expect(frames.allSatisfy { $0 == [16384, -16384, 0] })
    }

    @Test("a path that is not a FIFO, or a missing FIFO in a sticky directory, is a clear error")
    func pathsThatCannotWork() throws {
        let scratch = try ScratchFIFO()
        let directory = scratch.directory
        let file = directory + "/regular"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let regular = FIFOOutput(path: file, clock: VirtualClock())
        #expect(throws: OutputError.self) { try regular.open(format: stereo44) }
        do throws(OutputError) {
            try regular.open(format: stereo44)
        } catch {
            #expect(error.description.contains("\(file) exists and is not a FIFO"))
        }

        let sticky = directory + "/sticky"
        try FileManager.default.createDirectory(atPath: sticky, withIntermediateDirectories: false)
        #expect(chmod(sticky, 0o1777) == 0)
        let inSticky = FIFOOutput(path: sticky + "/snapfifo", clock: VirtualClock())
        do throws(OutputError) {
            try inSticky.open(format: stereo44)
            Issue.record("opened a missing FIFO in a sticky directory")
        } catch {
            #expect(error.description.contains("sticky directory"))
            #expect(error.description.contains("/run/playerd"))
        }
        #expect(!FileManager.default.fileExists(atPath: sticky + "/snapfifo"))

        let missing = FIFOOutput(path: directory + "/absent/snapfifo", clock: VirtualClock())
        do throws(OutputError) {
            try missing.open(format: stereo44)
            Issue.record("opened a FIFO in a missing directory")
        } catch {
            #expect(error.description.contains("does not exist"))
        }
    }
}
