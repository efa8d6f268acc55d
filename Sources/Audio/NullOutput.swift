/// An output that plays into nothing. Paced, it takes frames at the stream's rate against absolute
/// monotonic deadlines and reports a delay, as a sound card with a buffer would; unpaced, it takes
/// them as fast as they come (for fast tests and benchmarks).
public final class NullOutput: AudioOutput {
    /// True when writes are paced in real time.
    public let isPaced: Bool
    /// How much audio the emulated device buffers before a write blocks.
    public let bufferNanoseconds: Int64
    public private(set) var format: AudioFormat?

    private let clock: any PacingClock
    /// Frames accepted since the output was opened.
    private var framesWritten = 0
    /// The playback anchor: at `anchorTime` the device had played `anchorPlayed` frames and was running.
    private var anchorTime: Int64 = 0
    private var anchorPlayed = 0
    /// Frames played when `pause()` stopped the device; nil while running.
    private var pausedPlayed: Int?

    /// Creates a null output; `paced` picks real-time pacing, `bufferNanoseconds` the emulated buffer.
    public init(
        paced: Bool, clock: any PacingClock = MonotonicClock(),
        bufferNanoseconds: Int64 = defaultDeviceBufferNanoseconds
    ) {
        self.isPaced = paced
        self.clock = clock
        self.bufferNanoseconds = bufferNanoseconds
    }

    public var name: String { self.isPaced ? "null" : "null:unpaced" }

    public func open(format: AudioFormat) throws(OutputError) {
        if self.format == format { return }
        self.format = format
        self.framesWritten = 0
        self.anchorTime = self.clock.now()
        self.anchorPlayed = 0
        self.pausedPlayed = nil
    }

    public func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let format = self.format else { throw .notOpen(output: self.name) }
        let count = frames.count / format.bytesPerFrame
        guard self.isPaced else {
            self.framesWritten += count
            return
        }
        let now = self.clock.now()
        if self.pausedPlayed == nil && self.played(at: now, format) >= self.framesWritten {
            // The device ran dry (or never started): it starts again with these frames.
            self.anchorTime = now
            self.anchorPlayed = self.framesWritten
        }
        self.framesWritten += count
        if let pausedPlayed = self.pausedPlayed {
            // A paused device's buffer still fills; past that the writer would wait forever.
            precondition(
                self.framesWritten - pausedPlayed <= self.bufferFrames(format) + count,
                "writing to a paused null output past its buffer")
            return
        }
        let excess = self.framesWritten - self.bufferFrames(format)
        if excess > self.anchorPlayed {
            // A writer that asked `writableFrames` first finds the deadline already past: no system call.
            let deadline = self.anchorTime + format.nanoseconds(forFrames: excess - self.anchorPlayed)
            if deadline > now {
                self.clock.sleep(until: deadline)
            }
        }
    }

    public func pause() throws(OutputError) {
        guard let format = self.format else { throw .notOpen(output: self.name) }
        guard self.pausedPlayed == nil else { return }
        self.pausedPlayed = self.played(at: self.clock.now(), format)
    }

    public func resume() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
        guard let pausedPlayed = self.pausedPlayed else { return }
        self.anchorTime = self.clock.now()
        self.anchorPlayed = pausedPlayed
        self.pausedPlayed = nil
    }

    public func drain() throws(OutputError) {
        guard let format = self.format else { throw .notOpen(output: self.name) }
        guard self.isPaced else { return }
        try self.resume()
        let remaining = self.framesWritten - self.played(at: self.clock.now(), format)
        if remaining > 0 {
            self.clock.sleep(
                until: self.anchorTime + format.nanoseconds(forFrames: self.framesWritten - self.anchorPlayed))
        }
    }

    public func drop() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
        self.anchorTime = self.clock.now()
        self.anchorPlayed = self.framesWritten
        if self.pausedPlayed != nil {
            self.pausedPlayed = self.framesWritten
        }
    }

    public var delayFrames: Int {
        guard self.isPaced, let format = self.format else { return 0 }
        let played = self.pausedPlayed ?? self.played(at: self.clock.now(), format)
        return self.framesWritten - played
    }

    public var writableFrames: Int? {
        guard self.isPaced, let format = self.format else { return nil }
        return max(0, self.bufferFrames(format) - self.delayFrames)
    }

    public var capacityFrames: Int? {
        guard self.isPaced, let format = self.format else { return nil }
        return self.bufferFrames(format)
    }

    public func close() {
        self.format = nil
        self.pausedPlayed = nil
    }

    private func bufferFrames(_ format: AudioFormat) -> Int {
        format.frames(inNanoseconds: self.bufferNanoseconds)
    }

    /// Frames the running device has played by `now`: it plays at the stream's rate from the anchor
    /// and stops when it runs out of written frames.
    private func played(at now: Int64, _ format: AudioFormat) -> Int {
        min(self.framesWritten, self.anchorPlayed + format.frames(inNanoseconds: max(0, now - self.anchorTime)))
    }
}
