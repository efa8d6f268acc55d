import Audio
import Synchronization

/// An output call, as the probe hears of it.
enum OutputCall: Sendable {
    /// `write`.
    case write
    /// `pause()`.
    case pause
    /// `drop()`.
    case drop
}

/// What a command is expected to cause at the output.
enum OutputEffect: Sendable {
    /// The next `write`: audio reaching the device.
    case write
    /// `pause()`.
    case pause
    /// The first `write` after a `drop()`: the new position reaching the device.
    case writeAfterDrop
}

/// Waits, on the bench's side, for the audio thread to cause an effect at the output, and says when.
/// Armed before the command is sent, so that the effect cannot slip past unseen.
final class Probe: Sendable {
    private struct State {
        var expected: OutputEffect?
        var dropped = false
        var firedAt: Int64?
        var waiter: CheckedContinuation<Int64, Never>?
    }

    private let state = Mutex(State())
    /// True from `arm` until the effect has happened: the output's calls skip the probe (its lock and
    /// the time stamp) otherwise, so that a CPU run, which arms nothing, measures the engine alone.
    private let armed = Atomic<Bool>(false)
    private let underrunCount = Atomic<Int>(0)
    private let leastQueued = Atomic<Int>(Int.max)

    /// Writes that found the device had run dry since the previous one: the listener heard a gap.
    var underruns: Int { self.underrunCount.load(ordering: .relaxed) }

    /// The least audio the device still held when a write came, in frames: how close the writer came
    /// to letting it run dry. A writer held up by anything (another output, say) shows here first.
    var leastQueuedFrames: Int { self.leastQueued.load(ordering: .relaxed) }

    /// Called by the output with what the device still held at a write.
    func noteQueued(_ frames: Int) {
        _ = self.leastQueued.min(frames, ordering: .relaxed)
    }

    /// Called by the output when a write finds the device run dry.
    func noteUnderrun() {
        self.underrunCount.add(1, ordering: .relaxed)
    }

    /// Expects `effect` from now on; a previous expectation is forgotten.
    func arm(_ effect: OutputEffect) {
        self.state.withLock { $0 = State(expected: effect) }
        self.armed.store(true, ordering: .releasing)
    }

    /// When the expected effect happened, monotonic nanoseconds; nil until it has.
    var firedAt: Int64? { self.state.withLock { $0.firedAt } }

    /// The monotonic time of the expected effect, once it has happened.
    func fired() async -> Int64 {
        await withCheckedContinuation { continuation in
            let firedAt = self.state.withLock { state -> Int64? in
                if let firedAt = state.firedAt { return firedAt }
                state.waiter = continuation
                return nil
            }
            if let firedAt {
                continuation.resume(returning: firedAt)
            }
        }
    }

    /// True while an effect is expected: the output stamps and notes its calls only then.
    var isArmed: Bool { self.armed.load(ordering: .acquiring) }

    /// Called by the output, on the audio thread, as a call reaches it.
    func note(_ call: OutputCall, at time: Int64) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Int64, Never>? in
            switch (state.expected, call) {
            case (.write, .write), (.pause, .pause):
                break
            case (.writeAfterDrop, .write) where state.dropped:
                break
            case (.writeAfterDrop, .drop):
                state.dropped = true
                return nil
            default:
                return nil
            }
            state.expected = nil
            self.armed.store(false, ordering: .releasing)
            state.firedAt = time
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: time)
    }
}

/// Passes every call to another output and tells a probe, with a monotonic time stamp, when the calls
/// the bench waits for reach it.
final class TimingOutput: AudioOutput {
    private let inner: any AudioOutput
    private let probe: Probe
    private let clock = MonotonicClock()
    /// True once frames have been written since the device was opened or emptied on purpose.
    private var primed = false

    init(inner: any AudioOutput, probe: Probe) {
        self.inner = inner
        self.probe = probe
    }

    var name: String { self.inner.name }
    var format: AudioFormat? { self.inner.format }
    var delayFrames: Int { self.inner.delayFrames }
    var writableFrames: Int? { get throws(OutputError) { try self.inner.writableFrames } }
    var capacityFrames: Int? { self.inner.capacityFrames }

    func open(format: AudioFormat) throws(OutputError) {
        if self.inner.format != format {
            self.primed = false
        }
        try self.inner.open(format: format)
    }

    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        if self.probe.isArmed { self.probe.note(.write, at: self.clock.now()) }
        if self.primed && self.inner.capacityFrames != nil {
            let queued = self.inner.delayFrames
            if queued == 0 { self.probe.noteUnderrun() }
            self.probe.noteQueued(queued)
        }
        self.primed = true
        try self.inner.write(frames)
    }

    func pause() throws(OutputError) {
        if self.probe.isArmed { self.probe.note(.pause, at: self.clock.now()) }
        try self.inner.pause()
    }

    func resume() throws(OutputError) { try self.inner.resume() }

    func drain() throws(OutputError) {
        self.primed = false
        try self.inner.drain()
    }

    func drop() throws(OutputError) {
        if self.probe.isArmed { self.probe.note(.drop, at: self.clock.now()) }
        self.primed = false
        try self.inner.drop()
    }

    func close() {
        self.primed = false
        self.inner.close()
    }
}
