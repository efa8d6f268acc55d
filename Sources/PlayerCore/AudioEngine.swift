import Audio
import StreamInput
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's settings.
public struct EngineConfiguration: Sendable {
    /// The outputs, in order: the first enabled one that works leads (elapsed time and pacing follow
    /// it); the others follow on threads of their own.
    public var outputs: [OutputDefinition]
    /// The clock that times pauses, sleep timers and elapsed-time samples.
    public var clock: any PacingClock
    /// How much audio one decode-and-write step carries: a command waits at most about this long.
    public var periodNanoseconds: Int64
    /// The sample format decoders produce.
    public var sampleFormat: SampleFormat
    /// How long an output that failed waits before it is tried again (while others play).
    public var outputRetryNanoseconds: Int64 = 10_000_000_000
    /// Whether the engine scales the samples by the volume (software volume, the default). False when
    /// a sound card's mixer sets the loudness, or nothing does: the samples then pass as decoded.
    public var scalesVolume = true
    /// Bounds on network streams: buffers, headers, redirects, waits (internet radio).
    public var streamLimits = StreamLimits()

    /// Settings for an engine playing on `outputs`.
    public init(
        outputs: [OutputDefinition],
        clock: any PacingClock = MonotonicClock(),
        periodNanoseconds: Int64 = 20_000_000,
        sampleFormat: SampleFormat = .signed16
    ) {
        precondition(!outputs.isEmpty, "an engine needs at least one output")
        self.outputs = outputs
        self.clock = clock
        self.periodNanoseconds = periodNanoseconds
        self.sampleFormat = sampleFormat
    }

    /// Settings for an engine playing on the output `spec` names.
    public init(
        output spec: OutputSpec,
        clock: any PacingClock = MonotonicClock(),
        periodNanoseconds: Int64 = 20_000_000,
        sampleFormat: SampleFormat = .signed16
    ) {
        self.init(
            outputs: [OutputDefinition(ConfiguredOutput(spec: spec))], clock: clock,
            periodNanoseconds: periodNanoseconds, sampleFormat: sampleFormat)
    }

    /// Settings for an engine playing on whatever output `makeOutput` makes.
    public init(
        makeOutput: @escaping @Sendable () -> any AudioOutput,
        clock: any PacingClock = MonotonicClock(),
        periodNanoseconds: Int64 = 20_000_000,
        sampleFormat: SampleFormat = .signed16
    ) {
        self.init(
            outputs: [OutputDefinition(name: "output", plugin: "custom", makeOutput: makeOutput)], clock: clock,
            periodNanoseconds: periodNanoseconds, sampleFormat: sampleFormat)
    }
}

/// Plays the queue. A dedicated audio thread owns the decoder and the output (it creates and destroys
/// them itself) and the `PlayerContext`; it decodes one period at a time, applies the volume, writes
/// to the output and, between periods, takes commands from its mailbox, so that a command takes
/// effect within one period. On an output that reports its free room, it fills the buffer with
/// several periods at once and then waits on its mailbox, which a command interrupts, until half the
/// buffer has drained. Every other thread talks to it through `Sendable` commands and reads
/// `Sendable` status snapshots; none touches a C handle.
public final class AudioEngine: Sendable {
    private let mailbox = Mailbox()
    private let shared = EngineShared()
    private let thread = Mutex<pthread_t?>(nil)
    private let clock: any PacingClock

    /// Starts the audio thread with `context` (a queue restored from disk, say) on a stopped player.
    public init(configuration: EngineConfiguration, context: PlayerContext = PlayerContext()) {
        self.clock = configuration.clock
        let mailbox = self.mailbox
        let shared = self.shared
        var status = EngineCore.status(of: context, at: configuration.clock.now())
        status.outputs = configuration.outputs.enumerated().map { id, output in
            OutputStatus(id: id, name: output.name, plugin: output.plugin, isEnabled: output.isEnabled)
        }
        shared.published.withLock { $0 = status }
        let handle = startThread {
            let core = EngineCore(configuration: configuration, context: context, shared: shared)
            core.run(mailbox)
        }
        self.thread.withLock { $0 = handle }
    }

    deinit {
        self.shutdown()
    }

    /// The latest status snapshot.
    public var status: PlayerStatus { self.shared.published.withLock { $0 } }

    /// The engine clock's time, for `PlayerStatus.elapsed(at:)`.
    public func now() -> Int64 { self.clock.now() }

    /// Counts turns of the audio thread's loop; a count that stops moving means the thread is stuck.
    public var heartbeat: UInt64 { self.shared.beats.load(ordering: .relaxed) }

    /// Calls `observer` on the audio thread after every change, with the subsystems that changed.
    /// Observers must return quickly.
    public func observe(_ observer: @escaping @Sendable (PlayerChanges) -> Void) {
        self.shared.observers.withLock { $0.append(observer) }
    }

    /// Carries out a request.
    /// - Throws: `PlayerError` when it is not allowed in the current state.
    public func handle(_ request: PlayerRequest) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            try core.apply { context, now throws(PlayerError) in try context.handle(request, now: now) }
        }
    }

    /// Carries out requests in order, as one step: nothing plays between them. Stops at the first
    /// refusal, which it throws; the requests before it stay done.
    public func handle(_ requests: [PlayerRequest]) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            for request in requests {
                try core.apply { context, now throws(PlayerError) in try context.handle(request, now: now) }
            }
        }
    }

    /// Replaces the queue with `paths` and plays the song at `position` among them, as one step; a
    /// refusal leaves the queue and the player as they were.
    public func replaceQueue(with paths: [String], playingFrom position: Int) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            try core.apply { context, now throws(PlayerError) in
                try context.replaceQueue(with: paths, playingFrom: position, now: now)
            }
        }
    }

    /// Seeks `delta` nanoseconds from the position heard now (negative goes back), clamped to the song.
    public func seek(by delta: Int64) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            let target = max(0, core.heardOffset().clampedAdding(delta))
            let clamped = core.songLengthOffset().map { min($0, target) } ?? target
            try core.apply { context, now throws(PlayerError) in try context.handle(.seek(offset: clamped), now: now) }
        }
    }

    /// Sets the software volume, 0 to 100.
    public func setVolume(_ volume: Int) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            try core.apply { context, _ throws(PlayerError) in
                try context.setVolume(volume)
                return []
            }
        }
    }

    /// Records the volume a mixer outside the engine reads; nil when there is none (see
    /// `PlayerContext.mirrorVolume`). Clients see it in `status` and are told of the change.
    public func mirrorVolume(_ volume: Int?) async {
        await self.mirrorVolume(if: { true }, reading: { volume })
    }

    /// Like `mirrorVolume(_:)`, with the reading taken on the engine's queue, in order with every
    /// other change, and only when `applies` still holds there: a mixer that has moved to another
    /// partition's engine since the mirror was asked for leaves this one's volume alone.
    public func mirrorVolume(if applies: @escaping @Sendable () -> Bool, reading: @escaping @Sendable () -> Int?)
        async
    {
        try? await self.submit { core throws(PlayerError) in
            guard applies() else { return }
            try core.apply { context, _ in
                context.mirrorVolume(reading())
                return []
            }
        }
    }

    /// Mutes or unmutes.
    public func setMuted(_ muted: Bool) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            try core.apply { context, _ in
                context.setMuted(muted)
                return []
            }
        }
    }

    /// Runs `body` on the audio thread against the context (queue edits, queue reads, modes) and
    /// performs the effects it returns.
    public func withContext<Result: Sendable>(
        _ body: @escaping @Sendable (inout PlayerContext) throws(PlayerError) -> (Result, [PlayerEffect])
    ) async throws(PlayerError) -> Result {
        try await self.submit { core throws(PlayerError) in
            var result: Result?
            try core.apply { context, _ throws(PlayerError) in
                let (value, effects) = try body(&context)
                result = value
                return effects
            }
            guard let result else { throw .shutDown }
            return result
        }
    }

    /// Switches output `id` (its number, from 0) on, off, or over when `enabled` is nil; one switched on
    /// mid-song joins in step with the others. Returns false when there is no such output.
    public func setOutput(_ id: Int, enabled: Bool?, announcingMixer: Bool = false) async -> Bool {
        (try? await self.submit { core in core.setOutput(id, enabled: enabled, announcingMixer: announcingMixer) })
            ?? false
    }

    /// Makes the audio thread look at the clock now (after a test moved a virtual clock).
    public func wake() {
        self.mailbox.post(Job(run: { _ in }, cancel: {}))
    }

    /// Stops playback, releases the device and ends the audio thread. Safe to call twice.
    public func shutdown() {
        self.mailbox.post(Job(run: { core in core.shutDown() }, cancel: {}))
        let handle = self.thread.withLock { handle in
            defer { handle = nil }
            return handle
        }
        if let handle {
            pthread_join(handle, nil)
        }
    }

    private func submit<Result: Sendable>(
        _ body: @escaping @Sendable (EngineCore) throws(PlayerError) -> Result
    ) async throws(PlayerError) -> Result {
        let outcome: Swift.Result<Result, PlayerError> = await withCheckedContinuation { continuation in
            let job = Job(
                run: { core in
                    do throws(PlayerError) {
                        continuation.resume(returning: .success(try body(core)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                },
                cancel: { continuation.resume(returning: .failure(.shutDown)) })
            self.mailbox.post(job)
        }
        return try outcome.get()
    }
}

/// One command for the audio thread: `run` there, or `cancel` if the thread has ended.
struct Job: Sendable {
    let run: @Sendable (EngineCore) -> Void
    let cancel: @Sendable () -> Void
}

/// Commands waiting for the audio thread, and the condition that wakes it, so that the thread can wait
/// for a deadline of the engine's clock and still be woken at once by a command.
final class Mailbox: @unchecked Sendable {
    // @unchecked: `pending` and `closed` are only touched with `lock` held.
    private let lock = ConditionLock()
    private var pending: [Job] = []
    private var closed = false

    func post(_ job: Job) {
        let accepted = self.lock.locked {
            if self.closed { return false }
            self.pending.append(job)
            self.lock.signal()
            return true
        }
        if !accepted {
            job.cancel()
        }
    }

    /// The jobs waiting, in order; none are left behind. With none waiting (the thread's turn while
    /// it plays) nothing is allocated or freed.
    func takeAll() -> [Job] {
        self.lock.locked {
            if self.pending.isEmpty { return [] }
            defer { self.pending = [] }
            return self.pending
        }
    }

    var isEmpty: Bool { self.lock.locked { self.pending.isEmpty } }

    /// Returns when a job is waiting (at once if one already is) or `nanoseconds` have passed.
    func wait(nanoseconds: Int64) {
        self.wait(until: MonotonicClock().now() + max(0, nanoseconds))
    }

    /// Returns when a job is waiting (at once if one already is) or `CLOCK_MONOTONIC` has reached
    /// `deadline` (nanoseconds, as `MonotonicClock` reads it).
    func wait(until deadline: Int64) {
        self.lock.locked {
            while self.pending.isEmpty && !self.closed {
                if !self.lock.wait(until: deadline) { break }
            }
        }
    }

    /// Refuses further jobs and cancels the ones still waiting.
    func close() {
        let left = self.lock.locked {
            self.closed = true
            defer { self.pending.removeAll() }
            return self.pending
        }
        for job in left {
            job.cancel()
        }
    }
}

/// What the audio thread shares with every other thread: the published status, the observers, the
/// heartbeat.
final class EngineShared: Sendable {
    let published = Mutex(PlayerStatus())
    let observers = Mutex<[@Sendable (PlayerChanges) -> Void]>([])
    let beats = Atomic<UInt64>(0)

    /// Publishes `status` and tells the observers what changed since the last one.
    func publish(_ status: PlayerStatus) {
        let previous = self.published.withLock { published in
            defer { published = status }
            return published
        }
        self.tell(PlayerChanges.between(previous, status))
    }

    /// Writes `sample` into the status last published, in place (the rest of it stands), and tells the
    /// observers if an output changed noticeably: nothing else can.
    func publish(_ sample: StatusSample) {
        let changes: PlayerChanges = self.published.withLock { status in
            status.sampledAt = sample.sampledAt
            status.playedNanoseconds = sample.playedNanoseconds
            if let position = sample.position, status.format != nil {
                status.heardFrames = position.heardFrames
                status.writtenFrames = position.writtenFrames
                status.bitrate = position.bitrate
            }
            guard status.outputs != sample.outputs else { return [] }
            defer { status.outputs = sample.outputs }
            return PlayerChanges.between(outputs: status.outputs, sample.outputs)
        }
        self.tell(changes)
    }

    private func tell(_ changes: PlayerChanges) {
        if !changes.isEmpty {
            for observer in self.observers.withLock({ $0 }) {
                observer(changes)
            }
        }
    }
}

/// What the audio thread samples while a song plays on: the parts of the status that change by
/// themselves.
struct StatusSample {
    /// Where the decoder and the listener are, when a song is open.
    struct Position {
        var heardFrames: Int
        var writtenFrames: Int
        var bitrate: Int

        init(heardFrames: Int, decoder: SongDecoder) {
            self.heardFrames = heardFrames
            self.writtenFrames = decoder.position
            self.bitrate = decoder.bitrate
        }
    }

    var sampledAt: Int64
    var playedNanoseconds: Int64
    var position: Position?
    var outputs: [OutputStatus]
}
