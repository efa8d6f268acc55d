import Audio
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's settings.
public struct EngineConfiguration: Sendable {
    /// Makes the output; called once, on the audio thread, which then owns it.
    public var makeOutput: @Sendable () -> any AudioOutput
    /// The clock that times pauses, sleep timers and elapsed-time samples.
    public var clock: any PacingClock
    /// How much audio one decode-and-write step carries: a command waits at most about this long.
    public var periodNanoseconds: Int64
    /// The sample format decoders produce.
    public var sampleFormat: SampleFormat

    /// Settings for an engine playing on the output `spec` names.
    public init(
        output spec: OutputSpec,
        clock: any PacingClock = MonotonicClock(),
        periodNanoseconds: Int64 = 20_000_000,
        sampleFormat: SampleFormat = .signed16
    ) {
        self.init(
            makeOutput: { spec.makeOutput() }, clock: clock, periodNanoseconds: periodNanoseconds,
            sampleFormat: sampleFormat)
    }

    /// Settings for an engine playing on whatever output `makeOutput` makes.
    public init(
        makeOutput: @escaping @Sendable () -> any AudioOutput,
        clock: any PacingClock = MonotonicClock(),
        periodNanoseconds: Int64 = 20_000_000,
        sampleFormat: SampleFormat = .signed16
    ) {
        self.makeOutput = makeOutput
        self.clock = clock
        self.periodNanoseconds = periodNanoseconds
        self.sampleFormat = sampleFormat
    }
}

/// Plays the queue. A dedicated audio thread owns the decoder and the output (it creates and destroys
/// them itself) and the `PlayerContext`; it decodes one period at a time, applies the volume, writes
/// to the output and, between periods, takes commands from its mailbox, so that a command takes
/// effect within one period. Every other thread talks to it through `Sendable` commands and reads
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
        shared.published.withLock { $0 = EngineCore.status(of: context, at: configuration.clock.now()) }
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

    /// Seeks `delta` nanoseconds from the position heard now (negative goes back), clamped to the song.
    public func seek(by delta: Int64) async throws(PlayerError) {
        try await self.submit { core throws(PlayerError) in
            let target = max(0, core.heardOffset() + delta)
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

/// Commands waiting for the audio thread, and the signal that wakes it.
final class Mailbox: Sendable {
    private let jobs = Mutex<(pending: [Job], closed: Bool)>(([], false))
    private let signal = DispatchSemaphore(value: 0)

    func post(_ job: Job) {
        let accepted = self.jobs.withLock { jobs in
            if jobs.closed { return false }
            jobs.pending.append(job)
            return true
        }
        if accepted {
            self.signal.signal()
        } else {
            job.cancel()
        }
    }

    func takeAll() -> [Job] {
        self.jobs.withLock { jobs in
            defer { jobs.pending.removeAll(keepingCapacity: true) }
            return jobs.pending
        }
    }

    var isEmpty: Bool { self.jobs.withLock { $0.pending.isEmpty } }

    /// Waits for a job, for at most `nanoseconds` when given.
    func wait(nanoseconds: Int64?) {
        if let nanoseconds {
            _ = self.signal.wait(timeout: .now() + .nanoseconds(Int(max(0, nanoseconds))))
        } else {
            self.signal.wait()
        }
    }

    /// Refuses further jobs and cancels the ones still waiting.
    func close() {
        let left = self.jobs.withLock { jobs in
            jobs.closed = true
            defer { jobs.pending.removeAll() }
            return jobs.pending
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
        let changes = PlayerChanges.between(previous, status)
        if !changes.isEmpty {
            for observer in self.observers.withLock({ $0 }) {
                observer(changes)
            }
        }
    }
}

/// Runs `body` on a new POSIX thread (a real thread, not a task: it blocks in writes to the device).
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(body: body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, nil,
        { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    return thread
}
