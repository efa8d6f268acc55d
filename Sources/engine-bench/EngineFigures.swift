import Audio
import PlayerCore

/// An engine with one file queued, on a null output wrapped in a `TimingOutput`, followed by `others`.
func makeEngine(
    file: String, paced: Bool, probe: Probe = Probe(), others: [OutputDefinition] = []
) throws -> AudioEngine {
    var queue = Queue()
    try queue.add([file])
    let lead = OutputDefinition(
        name: "timed", plugin: "null", makeOutput: { TimingOutput(inner: NullOutput(paced: paced), probe: probe) })
    let configuration = EngineConfiguration(outputs: [lead] + others, clock: MonotonicClock())
    return AudioEngine(configuration: configuration, context: PlayerContext(queue: queue))
}

/// The outputs that follow the timed one in a CPU run: `one` none, `two` a second paced null output
/// (the cost of one more output), `stalled:SPEC` an output the caller has made stall (a FIFO or a WAV
/// into a pipe nobody reads), to show it changes nothing for the leader.
func followers(_ setup: String) throws -> [OutputDefinition] {
    switch setup {
    case "one": return []
    case "two": return [OutputDefinition(ConfiguredOutput(spec: .null(paced: true), name: "second"))]
    case let text where text.hasPrefix("stalled:"):
        return [OutputDefinition(try ConfiguredOutput(parsing: String(text.dropFirst("stalled:".count))))]
    default: fail("unknown outputs \"\(setup)\": one, two or stalled:SPEC")
    }
}

/// The engine's play states as they change, woken by the engine's own reports (no polling).
func stateChanges(of engine: AudioEngine) -> AsyncStream<PlayerStateKind> {
    let (stream, continuation) = AsyncStream<PlayerStateKind>.makeStream(bufferingPolicy: .unbounded)
    engine.observe { [weak engine] changes in
        if changes.contains(.player), let state = engine?.status.state {
            continuation.yield(state)
        }
    }
    return stream
}

/// Command-to-effect times on the paced null output in real time: `play` on a stopped engine to the
/// first write, `pause` while playing to the output's pause(), `seek` while playing to the first
/// write after the output's drop(). Prints one line per command: `latency NAME p50 p99 max count`.
func measureEngineLatency(file: String, iterations: Int) async throws {
    let probe = Probe()
    let engine = try makeEngine(file: file, paced: true, probe: probe)
    defer { engine.shutdown() }

    var play = Samples()
    for _ in 0..<iterations {
        probe.arm(.write)
        let start = monotonic.now()
        try await engine.handle(.play)
        play.append(await probe.fired() - start)
        try await sleepRandomly(milliseconds: 5...30)
        try await engine.handle(.stop)
        try await sleepRandomly(milliseconds: 2...10)
    }
    print("latency play \(play.summary)")

    // Playing in steady state: the emulated device's buffer has filled.
    try await engine.handle(.play)
    try await Task.sleep(for: .milliseconds(400))
    var pause = Samples()
    for _ in 0..<iterations {
        try await sleepRandomly(milliseconds: 20...120)
        probe.arm(.pause)
        let start = monotonic.now()
        try await engine.handle(.pause)
        pause.append(await probe.fired() - start)
        try await engine.handle(.resume)
    }
    print("latency pause \(pause.summary)")

    var seek = Samples()
    let length = engine.status.duration ?? 60
    for _ in 0..<iterations {
        try await sleepRandomly(milliseconds: 20...120)
        probe.arm(.writeAfterDrop)
        let offset = Int64.random(in: 0...Int64((length - 5) * 1e9))
        let start = monotonic.now()
        try await engine.handle(.seek(offset: offset))
        seek.append(await probe.fired() - start)
    }
    print("latency seek \(seek.summary)")
    try await engine.handle(.stop)
}

/// CPU of real-time playback: the engine plays `file` to its end on the paced null output, followed by
/// `others`. Prints `cpu WALL_S USER_S SYS_S VOLUNTARY_SWITCHES UNDERRUNS LEAST_QUEUED_MS DROPPED` for the
/// whole process over the playback: UNDERRUNS and LEAST_QUEUED_MS (the least audio the leader's device
/// held when a write came) are the leader's timing; DROPPED counts what the followers dropped.
func measureEngineCPU(file: String, others: [OutputDefinition] = []) async throws {
    let probe = Probe()
    let engine = try makeEngine(file: file, paced: true, probe: probe, others: others)
    defer { engine.shutdown() }
    let states = stateChanges(of: engine)
    let before = ProcessUsage.now()
    let start = monotonic.now()
    try await engine.handle(.play)
    var played = false
    for await state in states {
        if state == .play { played = true }
        if played && state == .stop { break }
    }
    let wall = monotonic.now() - start
    let after = ProcessUsage.now()
    if let error = engine.status.error { fail("playback failed: \(error)") }
    let dropped = engine.status.outputs.dropFirst().map(\.droppedFrames).reduce(0, +)
    let leastQueued = Double(probe.leastQueuedFrames) * 1000 / Double(engine.status.format?.sampleRate ?? 44100)
    print(cpuLine(wall: wall, before, after) + " \(probe.underruns) \(Int(leastQueued)) \(dropped)")
}

/// `cpu WALL_S USER_S SYS_S VOLUNTARY_SWITCHES` between two samples of a process's usage.
func cpuLine(wall: Int64, _ before: ProcessUsage, _ after: ProcessUsage) -> String {
    let second: Int64 = 1_000_000_000
    return "cpu \(fixed(wall, unit: second)) \(fixed(after.userNanoseconds - before.userNanoseconds, unit: second))"
        + " \(fixed(after.systemNanoseconds - before.systemNanoseconds, unit: second))"
        + " \(after.voluntarySwitches - before.voluntarySwitches)"
}

/// Resident memory: idle (engine made, stopped), while playing `file` in real time (the largest of
/// one sample a second over `seconds`), and the largest while the engine plays the whole file as fast
/// as it can on the unpaced null output (sampled every 20 ms). Prints `memory IDLE PLAYING FAST` in kB.
func measureEngineMemory(file: String, seconds: Int) async throws {
    let engine = try makeEngine(file: file, paced: true)
    try await Task.sleep(for: .milliseconds(500))
    guard let idle = residentKilobytes() else { fail("cannot read /proc/self/status") }
    try await engine.handle(.play)
    var playing = 0
    for _ in 0..<seconds {
        try await Task.sleep(for: .seconds(1))
        playing = max(playing, residentKilobytes() ?? 0)
    }
    if engine.status.state != .play { fail("not playing after \(seconds) s: \(engine.status)") }
    try await engine.handle(.stop)
    engine.shutdown()

    let fast = try makeEngine(file: file, paced: false)
    defer { fast.shutdown() }
    try await fast.handle(.play)
    var fastest = 0
    while fast.status.state != .stop {
        fastest = max(fastest, residentKilobytes() ?? 0)
        try await Task.sleep(for: .milliseconds(20))
    }
    print("memory \(idle) \(playing) \(fastest)")
}
