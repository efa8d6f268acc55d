import Audio
import Foundation
import Synchronization
import Testing

@testable import PlayerCore

/// An output whose writes block while its gate is shut, as a device or a pipe nobody drains would.
final class GatedOutput: AudioOutput {
    let gate: Gate
    let recording: Recording
    private let inner = NullOutput(paced: false)

    final class Gate: Sendable {
        private let shut = Mutex(false)
        /// Writes that found the gate shut and waited.
        let waits = Atomic<Int>(0)
        var isShut: Bool { self.shut.withLock { $0 } }
        func close() { self.shut.withLock { $0 = true } }
        func open() { self.shut.withLock { $0 = false } }
    }

    init(gate: Gate, recording: Recording) {
        self.gate = gate
        self.recording = recording
    }

    var name: String { "gated" }
    var format: AudioFormat? { self.inner.format }
    var delayFrames: Int { 0 }
    func open(format: AudioFormat) throws(OutputError) {
        self.recording.note("open \(format)")
        try self.inner.open(format: format)
    }
    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        if self.gate.isShut {
            self.gate.waits.add(1, ordering: .relaxed)
            while self.gate.isShut { usleep(1000) }
        }
        self.recording.append(frames)
    }
    func pause() throws(OutputError) { self.recording.note("pause") }
    func resume() throws(OutputError) { self.recording.note("resume") }
    func drain() throws(OutputError) { self.recording.note("drain") }
    func drop() throws(OutputError) { self.recording.note("drop") }
    func close() {
        if self.inner.format != nil { self.recording.note("close") }
        self.inner.close()
    }
}

/// A paced device that plays its first half second and then freezes: its room never grows again, and
/// no call fails, as a hung USB card or a pipe nobody reads from.
final class FreezingOutput: AudioOutput {
    private let inner = NullOutput(paced: false)
    private var written = 0
    let capacity = 8820

    var name: String { "freezing" }
    var format: AudioFormat? { self.inner.format }
    var delayFrames: Int { min(self.written, self.capacity) }
    var writableFrames: Int? { self.inner.format == nil ? nil : max(0, self.capacity - self.delayFrames) }
    var capacityFrames: Int? { self.inner.format == nil ? nil : self.capacity }
    func open(format: AudioFormat) throws(OutputError) { try self.inner.open(format: format) }
    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        self.written += frames.count / (self.inner.format?.bytesPerFrame ?? 1)
    }
    func pause() throws(OutputError) {}
    func resume() throws(OutputError) {}
    func drain() throws(OutputError) {}
    func drop() throws(OutputError) {}
    func close() { self.inner.close() }
}

/// An engine on several outputs: each `make` is given its recording.
func makeEngine(
    _ files: [String],
    outputs: [(name: String, make: @Sendable (Recording) -> any AudioOutput)],
    retry: Int64 = 10_000_000_000,
    releasesOutputOnPause: Bool = false,
    configure: (inout Queue) -> Void = { _ in }
) throws -> (AudioEngine, [Recording]) {
    var queue = Queue()
    try queue.add(files)
    configure(&queue)
    let recordings = outputs.map { _ in Recording() }
    let definitions = zip(outputs, recordings).map { output, recording in
        let make = output.make
        return OutputDefinition(name: output.name, plugin: "test", makeOutput: { make(recording) })
    }
    var configuration = EngineConfiguration(outputs: definitions)
    configuration.outputRetryNanoseconds = retry
    let engine = AudioEngine(
        configuration: configuration,
        context: PlayerContext(queue: queue, releasesOutputOnPause: releasesOutputOnPause))
    return (engine, recordings)
}

/// A paced null output that records, as the leader in these tests.
@Sendable func pacedNull(_ recording: Recording) -> any AudioOutput {
    let clock = MonotonicClock()
    return RecordingOutput(
        inner: NullOutput(paced: true, clock: clock, bufferNanoseconds: 200_000_000), recording: recording,
        clock: clock)
}

/// An unpaced null output that records, as a follower that always keeps up.
@Sendable func fastNull(_ recording: Recording) -> any AudioOutput {
    RecordingOutput(inner: NullOutput(paced: false), recording: recording, clock: MonotonicClock())
}

/// An unpaced output slower than the decoder: each write takes 5 ms, as a file on a busy disk would.
/// It keeps moving, so nothing it is given may be lost.
@Sendable func slowFile(_ recording: Recording) -> any AudioOutput {
    final class SlowOutput: AudioOutput {
        let inner: RecordingOutput
        init(_ recording: Recording) {
            self.inner = RecordingOutput(inner: NullOutput(paced: false), recording: recording, clock: MonotonicClock())
        }
        var name: String { "slow" }
        var format: AudioFormat? { self.inner.format }
        var delayFrames: Int { 0 }
        func open(format: AudioFormat) throws(OutputError) { try self.inner.open(format: format) }
        func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
            usleep(5000)
            try self.inner.write(frames)
        }
        func pause() throws(OutputError) { try self.inner.pause() }
        func resume() throws(OutputError) { try self.inner.resume() }
        func drain() throws(OutputError) { try self.inner.drain() }
        func drop() throws(OutputError) { try self.inner.drop() }
        func close() { self.inner.close() }
    }
    return SlowOutput(recording)
}

@Suite("Several outputs at once", .serialized)
struct MultipleOutputsTests {
    @Test("behind an unpaced leader, a follower slower than the decoder but moving gets every frame")
    func unpacedLeaderWaitsForAMovingFollower() async throws {
        // Four times three seconds: more than the follower's ring holds, decoded far faster than it writes.
        let files = Array(repeating: fixture("gapless-whole.mp3"), count: 4)
        let (engine, recordings) = try makeEngine(files, outputs: [("lead", fastNull), ("slow", slowFile)])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        try await waitUntil(timeout: .seconds(10)) { recordings[1].log.last == "close" }
        let expected = try files.flatMap(referencePCM)
        expectSamePCM(recordings[0].data, expected)
        expectSamePCM(recordings[1].data, expected)
        #expect(engine.status.outputs.allSatisfy { $0.droppedFrames == 0 })
    }

    @Test("behind an unpaced leader, a stalled follower is waited for a second, then drops as before")
    func unpacedLeaderDropsForAStalledFollower() async throws {
        let gate = GatedOutput.Gate()
        gate.close()
        let files = Array(repeating: fixture("gapless-whole.mp3"), count: 4)
        let (engine, recordings) = try makeEngine(
            files, outputs: [("lead", fastNull), ("stuck", { GatedOutput(gate: gate, recording: $0) })])
        defer { engine.shutdown() }
        let start = ContinuousClock.now
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        // One wait of a second for the stall, not one per write.
        #expect(ContinuousClock.now - start < .seconds(8))
        expectSamePCM(recordings[0].data, try files.flatMap(referencePCM))
        #expect(engine.status.outputs[1].droppedFrames > 0)
        gate.open()
    }
    @Test("a follower beside a paced leader gets exactly the decoded frames, across a gapless join")
    func followerIsBitExact() async throws {
        let files = [fixture("gapless-a.mp3"), fixture("gapless-b.mp3")]
        let (engine, recordings) = try makeEngine(
            files, outputs: [("lead", pacedNull), ("follower", fastNull), ("paced follower", pacedNull)])
        defer { engine.shutdown() }
        #expect(engine.status.outputs.map(\.name) == ["lead", "follower", "paced follower"])
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let expected = try files.flatMap(referencePCM)
        for recording in recordings {
            try await waitUntil(timeout: .seconds(5)) { recording.log.last == "close" }
            expectSamePCM(recording.data, expected)
        }
        // A drop after the drain (the player stopping at the end) reaches a follower that had already
        // drained, where it does nothing.
        #expect(recordings[1].log.filter { $0 != "drop" } == ["open 44100:16:2", "drain", "close"])
        let statuses = engine.status.outputs
        #expect(statuses.map(\.isLeading) == [false, false, false])
        #expect(statuses.allSatisfy { $0.droppedFrames == 0 && $0.problem == nil && !$0.hasFailed })
    }

    @Test("pause, resume and stop reach the followers")
    func commandsReachFollowers() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("stereo-44k-cbr.mp3")], outputs: [("lead", pacedNull), ("follower", pacedNull)])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.heardFrames(at: engine.now()) > 4410 }
        try await engine.handle(.pause)
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.contains("pause") }
        let heldAt = recordings[1].data.count
        try await Task.sleep(for: .milliseconds(300))
        // Paused: what it had was written before the pause; nothing more comes.
        #expect(recordings[1].data.count == heldAt)
        try await engine.handle(.resume)
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.contains("resume") }
        try await waitUntil(timeout: .seconds(5)) { recordings[1].data.count > heldAt }
        try await engine.handle(.stop)
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.last == "close" }
        #expect(recordings[1].log == ["open 44100:16:2", "pause", "resume", "drop", "close"])
    }

    @Test("release-on-pause closes the followers too, and they resume from the frame heard, nothing twice")
    func releaseOnPauseWithFollower() async throws {
        let reference = try referencePCM(fixture("stereo-44k-cbr.mp3"))
        let (engine, recordings) = try makeEngine(
            [fixture("stereo-44k-cbr.mp3")], outputs: [("lead", pacedNull), ("follower", pacedNull)],
            releasesOutputOnPause: true)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.heardFrames(at: engine.now()) > 8820 }
        try await engine.handle(.pause)
        let heard = engine.status.heardFrames
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.last == "close" }
        let written = recordings[1].data.count
        try await engine.handle(.resume)
        try await waitUntil(timeout: .seconds(5)) { recordings[1].data.count >= written + 44100 * 4 }
        try await engine.handle(.stop)
        let resumed = [UInt8](recordings[1].data.dropFirst(written).prefix(44100 * 4))
        expectSamePCM(resumed, [UInt8](reference.dropFirst(heard * 4).prefix(44100 * 4)))
    }

    @Test("a follower that stalls drops what does not fit and catches up; the leader never waits for it")
    func stalledFollower() async throws {
        let gate = GatedOutput.Gate()
        gate.close()
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3"), fixture("stereo-44k-cbr.mp3")],
            outputs: [("lead", pacedNull), ("stuck", { GatedOutput(gate: gate, recording: $0) })])
        defer { engine.shutdown() }
        let start = ContinuousClock.now
        try await engine.handle(.play)
        // Stuck from its first write, the follower's ring (3 s of this format) fills and it drops.
        try await waitUntil(engine) { $0.outputs[1].droppedFrames > 0 }
        #expect(engine.status.position == 1)
        #expect(gate.waits.load(ordering: .relaxed) == 1)
        let stalled = engine.status.outputs[1]
        #expect(stalled.droppedFrames > 0)
        #expect(!stalled.hasFailed && stalled.isEnabled)
        // The leader played in real time all along: no write to it ever found its device full.
        let leadWrites = recordings[0].writeRecords
        #expect(!leadWrites.isEmpty && leadWrites.allSatisfy { !$0.blocked })
        #expect(ContinuousClock.now - start < .seconds(4.5))
        // Unstuck, it plays again: what it gets now is the current audio, not the backlog.
        gate.open()
        let before = recordings[1].data.count
        try await waitUntil(timeout: .seconds(5)) { recordings[1].data.count > before + 44100 }
        try await waitUntil(engine) { $0.state == .stop }
        #expect(engine.status.error == nil)
        // Its dropped frames plus what it played are the whole stream (every frame was one or the other).
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.last == "close" }
        let total = (132300 + 132300) * 4
        #expect(recordings[1].data.count + engine.status.outputs[1].droppedFrames * 4 == total)
    }

    @Test("switching a stuck follower off answers at once")
    func switchOffStuck() async throws {
        let gate = GatedOutput.Gate()
        gate.close()
        let (engine, _) = try makeEngine(
            [fixture("gapless-whole.mp3")],
            outputs: [("lead", pacedNull), ("stuck", { GatedOutput(gate: gate, recording: $0) })])
        defer {
            engine.shutdown()
            gate.open()
        }
        try await engine.handle(.play)
        try await waitUntil(timeout: .seconds(5)) { gate.waits.load(ordering: .relaxed) == 1 }
        let start = ContinuousClock.now
        #expect(await engine.setOutput(1, enabled: false))
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(engine.status.outputs[1].isEnabled == false)
        #expect(engine.status.state == .play)
        // Switched on again, it is a new output of its kind, stuck as the old one was, and playback goes on.
        #expect(await engine.setOutput(1, enabled: true))
        try await waitUntil(timeout: .seconds(5)) { gate.waits.load(ordering: .relaxed) == 2 }
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 1 }
    }

    @Test("a follower that fails is marked and tried again later while the leader plays on")
    func failingFollower() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3")],
            outputs: [
                ("lead", pacedNull),
                (
                    "broken",
                    {
                        // Every write after the fifth fails, as a device that has gone.
                        RecordingOutput(
                            inner: NullOutput(paced: false), recording: $0, clock: MonotonicClock(), failAfterWrites: 5)
                    }
                ),
            ], retry: 500_000_000)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.outputs[1].hasFailed }
        let failed = engine.status.outputs[1]
        #expect(failed.problem == "null:unpaced: snd_pcm_writei failed: No such device")
        #expect(engine.status.state == .play && engine.status.error == nil)
        // Tried again after the retry interval: opened once more (and failing again at once).
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.filter { $0.hasPrefix("open") }.count >= 2 }
        try await waitUntil(engine) { $0.state == .stop }
        #expect(engine.status.error == nil)
        expectSamePCM(recordings[0].data, try referencePCM(fixture("gapless-whole.mp3")))
    }

    @Test("when the leader fails, the next output takes the lead and playback goes on")
    func failingLeader() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3")],
            outputs: [
                (
                    "lead",
                    { recording in
                        let clock = MonotonicClock()
                        return RecordingOutput(
                            inner: NullOutput(paced: true, clock: clock, bufferNanoseconds: 200_000_000),
                            recording: recording, clock: clock, failAfterWrites: 20)
                    }
                ),
                ("second", pacedNull),
            ], retry: 60_000_000_000)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.outputs[0].hasFailed }
        #expect(engine.status.state == .play && engine.status.error == nil)
        #expect(engine.status.outputs[1].isLeading)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(engine.status.error == nil)
        // The new leader played the whole song, every frame, with no gap where the lead changed.
        expectSamePCM(recordings[1].data, try referencePCM(fixture("gapless-whole.mp3")))
    }

    @Test("a leader that stops taking audio is failed after a few seconds, and the next one leads")
    func frozenLeader() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3"), fixture("stereo-44k-cbr.mp3")],
            outputs: [("frozen", { _ in FreezingOutput() }), ("second", pacedNull)], retry: 60_000_000_000)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.outputs[0].hasFailed }
        #expect(engine.status.outputs[0].problem == "freezing: playing failed: took no audio for 3 seconds")
        #expect(engine.status.outputs[1].isLeading)
        #expect(engine.status.state == .play && engine.status.error == nil)
        // Elapsed time moves again, with the new leader.
        let at = engine.status.elapsed(at: engine.now())
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > at + 0.5 || $0.position == 1 }
        #expect(recordings[1].data.count > 0)
    }

    @Test("one output failing alone pauses playback with its error, as MPD does")
    func onlyOutputFails() async throws {
        let (engine, _) = try makeEngine(
            [fixture("gapless-whole.mp3")],
            outputs: [
                (
                    "only",
                    {
                        RecordingOutput(
                            inner: NullOutput(paced: false), recording: $0, clock: MonotonicClock(), failAfterWrites: 3)
                    }
                )
            ])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .pause }
        #expect(engine.status.error == "null:unpaced: snd_pcm_writei failed: No such device")
    }

    @Test("an output switched on mid-song starts in step with the leader, from the audio it is playing")
    func switchOnMidSong() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3")], outputs: [("lead", pacedNull), ("late", fastNull)])
        defer { engine.shutdown() }
        #expect(await engine.setOutput(1, enabled: false))
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 1 }
        let heard = engine.status.heardFrames(at: engine.now())
        #expect(await engine.setOutput(1, enabled: true))
        try await waitUntil(engine) { $0.state == .stop }
        try await waitUntil(timeout: .seconds(5)) { recordings[1].log.last == "close" }
        // What it got is the song's end, from about where the leader was heard when it was switched on
        // (not from where the decoder had got to, a buffer ahead).
        let reference = try referencePCM(fixture("gapless-whole.mp3"))
        let late = recordings[1].data
        #expect(!late.isEmpty && late.count % 4 == 0)
        #expect(Array(reference.suffix(late.count)) == late)
        let startFrame = (reference.count - late.count) / 4
        #expect(abs(startFrame - heard) < 4410, "started at frame \(startFrame), the leader was at \(heard)")
    }

    @Test("switching the leader off hands the lead to the next output without stopping")
    func switchOffLeader() async throws {
        let (engine, recordings) = try makeEngine(
            [fixture("gapless-whole.mp3")], outputs: [("lead", pacedNull), ("second", pacedNull)])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 0.5 }
        #expect(await engine.setOutput(0, enabled: false))
        #expect(engine.status.outputs[1].isLeading)
        #expect(engine.status.state == .play)
        #expect(recordings[0].log.suffix(2) == ["drop", "close"])
        try await waitUntil(engine) { $0.state == .stop }
        #expect(engine.status.error == nil)
        expectSamePCM(recordings[1].data, try referencePCM(fixture("gapless-whole.mp3")))
    }

    @Test("switching the only output off while playing pauses where it was heard; play goes on from there")
    func switchOffTheOnlyOutput() async throws {
        let (engine, recordings) = try makeEngine([fixture("gapless-whole.mp3")], outputs: [("only", pacedNull)])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 0.5 }
        let before = engine.status.heardFrames(at: engine.now())
        #expect(await engine.setOutput(0, enabled: false))
        #expect(engine.status.state == .pause)
        #expect(engine.status.error == "Failed to open audio output")
        let kept = engine.status.heardFrames(at: engine.now())
        // Where the listener was, not where the decoder had got to (a device buffer of 0.2 s ahead).
        #expect(kept >= before && kept - before < 4410, "paused at \(kept), heard \(before)")
        #expect(await engine.setOutput(0, enabled: true))
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(engine.status.error == nil)
        // The song's end played from the frame it paused at, with nothing lost or repeated.
        let reference = try referencePCM(fixture("gapless-whole.mp3"))
        let resumed = Array(recordings[0].data.suffix(reference.count - kept * 4))
        #expect(resumed == Array(reference.suffix(reference.count - kept * 4)))
    }

    @Test("switching the only output off while paused keeps the position heard; play goes on from there")
    func switchOffTheOnlyOutputWhilePaused() async throws {
        let (engine, recordings) = try makeEngine([fixture("gapless-whole.mp3")], outputs: [("only", pacedNull)])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 0.5 }
        try await engine.handle(.pause)
        let paused = engine.status.heardFrames(at: engine.now())
        #expect(await engine.setOutput(0, enabled: false))
        #expect(engine.status.state == .pause)
        #expect(engine.status.error == nil)
        let kept = engine.status.heardFrames(at: engine.now())
        #expect(abs(kept - paused) < 441, "paused at \(paused), kept \(kept)")
        #expect(await engine.setOutput(0, enabled: true))
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let reference = try referencePCM(fixture("gapless-whole.mp3"))
        let resumed = Array(recordings[0].data.suffix(reference.count - kept * 4))
        #expect(resumed == Array(reference.suffix(reference.count - kept * 4)))
    }

    @Test("with every output switched off, play pauses with MPD's words; a switch is refused for no output")
    func allSwitchedOff() async throws {
        let (engine, _) = try makeEngine(
            [fixture("one-second.mp3")], outputs: [("a", fastNull), ("b", fastNull)])
        defer { engine.shutdown() }
        #expect(await engine.setOutput(0, enabled: false))
        #expect(await engine.setOutput(1, enabled: nil))
        #expect(engine.status.outputs.map(\.isEnabled) == [false, false])
        #expect(await engine.setOutput(2, enabled: true) == false)
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .pause }
        #expect(engine.status.error == "All audio outputs are disabled")
    }
}
