import Audio
import Foundation
import Synchronization
import Testing

@testable import PlayerCore

let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

func fixture(_ name: String) -> String {
    fixturesDirectory.appendingPathComponent(name).path
}

/// A clock that moves only when an output sleeps on it or a test advances it.
final class VirtualClock: PacingClock {
    private let time = Mutex<Int64>(1_000_000_000)

    func now() -> Int64 { self.time.withLock { $0 } }

    func sleep(until deadline: Int64) {
        self.time.withLock { $0 = max($0, deadline) }
    }

    func advance(by nanoseconds: Int64) {
        self.time.withLock { $0 += nanoseconds }
    }
}

/// A virtual clock whose `stallAt`-th sleep overshoots its deadline by `stall` nanoseconds, as a thread
/// held up by a busy system would.
final class StallingClock: PacingClock {
    private let state = Mutex<(time: Int64, sleeps: Int)>((1_000_000_000, 0))
    let stallAt: Int
    let stall: Int64

    init(stallAt: Int, by stall: Int64) {
        self.stallAt = stallAt
        self.stall = stall
    }

    func now() -> Int64 { self.state.withLock { $0.time } }

    func sleep(until deadline: Int64) {
        self.state.withLock { state in
            state.sleeps += 1
            state.time = max(state.time, deadline + (state.sleeps == self.stallAt ? self.stall : 0))
        }
    }
}

/// A virtual clock that holds a sleeper at a gate: a sleep past `gate` stops the time there and
/// returns only once the test calls `open()`, so that the test can act at a known moment.
final class GatedClock: PacingClock {
    private let state = Mutex<(time: Int64, gate: Int64?)>((1_000_000_000, nil))

    func now() -> Int64 { self.state.withLock { $0.time } }

    func sleep(until deadline: Int64) {
        while true {
            let held = self.state.withLock { state -> Bool in
                if let gate = state.gate, deadline > gate {
                    state.time = max(state.time, gate)
                    return true
                }
                state.time = max(state.time, deadline)
                return false
            }
            guard held else { return }
            usleep(1000)
        }
    }

    /// Holds sleepers at `time` from now on.
    func close(at time: Int64) { self.state.withLock { $0.gate = time } }

    /// Lets sleepers go on.
    func open() { self.state.withLock { $0.gate = nil } }
}

/// What a `RecordingOutput` saw, readable from the test's thread.
final class Recording: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let calls = Mutex<[String]>([])
    private let open = Mutex<Bool>(false)
    private let writes = Mutex<[WriteRecord]>([])

    var data: [UInt8] { self.bytes.withLock { $0 } }
    var log: [String] { self.calls.withLock { $0 } }
    var isOpen: Bool { self.open.withLock { $0 } }
    /// Every write, in order.
    var writeRecords: [WriteRecord] { self.writes.withLock { $0 } }

    func append(_ pcm: UnsafeRawBufferPointer) { self.bytes.withLock { $0 += pcm } }
    func note(_ call: String) { self.calls.withLock { $0.append(call) } }
    func setOpen(_ value: Bool) { self.open.withLock { $0 = value } }
    func noteWrite(_ record: WriteRecord) { self.writes.withLock { $0.append(record) } }
}

/// One write as the output saw it.
struct WriteRecord: Sendable {
    /// The clock's time when the write came.
    let time: Int64
    /// Frames written.
    let frames: Int
    /// What the output said it could take without blocking just before; nil when it cannot tell.
    let writableFrames: Int?

    /// True when the write had to wait for the device.
    var blocked: Bool { self.writableFrames.map { $0 < self.frames } ?? false }
}

/// How many writes came together, at one clock time, burst after burst.
func burstSizes(_ writes: [WriteRecord]) -> [Int] {
    var sizes: [Int] = []
    var last: Int64?
    for write in writes {
        if write.time == last {
            sizes[sizes.count - 1] += 1
        } else {
            sizes.append(1)
            last = write.time
        }
    }
    return sizes
}

/// An output that passes everything to another output and records it; it can be told to fail.
final class RecordingOutput: AudioOutput {
    let inner: any AudioOutput
    let recording: Recording
    /// Writes after which every write fails as if the device had vanished.
    let failAfterWrites: Int?
    /// The clock writes are time-stamped with.
    let clock: any PacingClock
    private var writes = 0

    init(inner: any AudioOutput, recording: Recording, clock: any PacingClock, failAfterWrites: Int? = nil) {
        self.inner = inner
        self.recording = recording
        self.clock = clock
        self.failAfterWrites = failAfterWrites
    }

    var name: String { self.inner.name }
    var format: AudioFormat? { self.inner.format }
    var delayFrames: Int { self.inner.delayFrames }
    var writableFrames: Int? { get throws(OutputError) { try self.inner.writableFrames } }
    var capacityFrames: Int? { self.inner.capacityFrames }

    func open(format: AudioFormat) throws(OutputError) {
        if self.inner.format != format {
            self.recording.note("open \(format)")
        }
        try self.inner.open(format: format)
        self.recording.setOpen(true)
    }

    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        self.writes += 1
        if let limit = self.failAfterWrites, self.writes > limit {
            throw .callFailed(output: self.name, call: "snd_pcm_writei", code: -19, reason: "No such device")
        }
        self.recording.append(frames)
        self.recording.noteWrite(
            WriteRecord(
                time: self.clock.now(), frames: frames.count / (self.inner.format?.bytesPerFrame ?? 1),
                writableFrames: try self.inner.writableFrames))
        try self.inner.write(frames)
    }

    func pause() throws(OutputError) {
        self.recording.note("pause")
        try self.inner.pause()
    }

    func resume() throws(OutputError) {
        self.recording.note("resume")
        try self.inner.resume()
    }

    func drain() throws(OutputError) {
        self.recording.note("drain")
        try self.inner.drain()
    }

    func drop() throws(OutputError) {
        self.recording.note("drop")
        try self.inner.drop()
    }

    func close() {
        if self.inner.format != nil {
            self.recording.note("close")
        }
        self.inner.close()
        self.recording.setOpen(false)
    }
}

/// An engine on a recording null output, paced or not, with `files` queued.
func makeEngine(
    _ files: [String],
    paced: Bool = false,
    clock: any PacingClock = MonotonicClock(),
    bufferNanoseconds: Int64 = 200_000_000,
    failAfterWrites: Int? = nil,
    releasesOutputOnPause: Bool = false,
    configure: (inout Queue) -> Void = { _ in }
) throws -> (AudioEngine, Recording) {
    let recording = Recording()
    var queue = Queue()
    try queue.add(files)
    configure(&queue)
    let configuration = EngineConfiguration(
        makeOutput: {
            RecordingOutput(
                inner: NullOutput(paced: paced, clock: clock, bufferNanoseconds: bufferNanoseconds),
                recording: recording, clock: clock, failAfterWrites: failAfterWrites)
        },
        clock: clock)
    let engine = AudioEngine(
        configuration: configuration,
        context: PlayerContext(queue: queue, releasesOutputOnPause: releasesOutputOnPause))
    return (engine, recording)
}

/// Waits (polling, with a generous limit) until the engine's status satisfies `condition`.
func waitUntil(
    _ engine: AudioEngine,
    timeout: Duration = .seconds(10),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: (PlayerStatus) -> Bool
) async throws {
    try await waitUntil(timeout: timeout, what: "status: \(engine.status)", sourceLocation: sourceLocation) {
        condition(engine.status)
    }
}

/// Waits (polling every 5 ms) until `condition` holds; after `timeout` records an issue naming `what`.
func waitUntil(
    timeout: Duration, what: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("timed out; \(what())", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// What `mpg123 -s` prints for a fixture: the reference PCM.
func referencePCM(_ path: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/mpg123")
    process.arguments = ["-q", "-s", path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return [UInt8](data)
}

/// Expects equal PCM, reporting sizes and the first difference instead of whole arrays.
func expectSamePCM(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard actual != expected else { return }
    let common = min(actual.count, expected.count)
    let first = (0..<common).first { actual[$0] != expected[$0] } ?? common
    Issue.record(
        "PCM differs: \(actual.count) bytes against \(expected.count), first difference at byte \(first)",
        sourceLocation: sourceLocation)
}
