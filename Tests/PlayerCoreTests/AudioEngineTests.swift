import Audio
import Foundation
import Synchronization
import Testing

@testable import PlayerCore

@Suite("AudioEngine on the null output")
struct AudioEngineTests {
    @Test("plays a file to its end, frame for frame, then stops and frees the device")
    func playToTheEnd() async throws {
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        expectSamePCM(recording.data, try referencePCM(fixture("stereo-44k-cbr.mp3")))
        #expect(!recording.isOpen)
        #expect(recording.log.last == "close")
        #expect(engine.status.error == nil)
        #expect(engine.status.queueLength == 1)
    }

    @Test("gapless: two songs of one format reach the output as exactly their concatenation")
    func gapless() async throws {
        let (engine, recording) = try makeEngine([fixture("gapless-a.mp3"), fixture("gapless-b.mp3")])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let expected = try referencePCM(fixture("gapless-a.mp3")) + referencePCM(fixture("gapless-b.mp3"))
        expectSamePCM(recording.data, expected)
        #expect(recording.log == ["open 44100:16:2", "drain", "drop", "close"])
    }

    @Test("a format change at a song boundary drains the output and reopens it")
    func formatChange() async throws {
        let (engine, recording) = try makeEngine([fixture("mono-48k-vbr.mp3"), fixture("one-second.mp3")])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(recording.log == ["open 48000:16:1", "drain", "close", "open 44100:16:2", "drain", "drop", "close"])
        let expected = try referencePCM(fixture("mono-48k-vbr.mp3")) + referencePCM(fixture("one-second.mp3"))
        expectSamePCM(recording.data, expected)
    }

    @Test("play, pause, resume, stop in real time; position comes from frames heard")
    func playPauseResumeStop() async throws {
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .play && $0.heardFrames(at: engine.now()) > 4410 }
        try await engine.handle(.pause)
        #expect(engine.status.state == .pause)
        let pausedAt = engine.status.elapsed(at: engine.now())
        try await Task.sleep(for: .milliseconds(150))
        // Paused: the position holds still.
        #expect(abs(engine.status.elapsed(at: engine.now()) - pausedAt) < 0.001)
        #expect(pausedAt > 0.1 && pausedAt < 2.5)
        try await engine.handle(.resume)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > pausedAt + 0.1 }
        try await engine.handle(.stop)
        #expect(engine.status.state == .stop)
        #expect(!recording.isOpen)
        #expect(recording.log.starts(with: ["open 44100:16:2", "pause", "resume"]))
    }

    @Test("elapsed time is frames heard: within 10 ms of the paced device's own count")
    func elapsedAccuracy() async throws {
        let clock = VirtualClock()
        let (engine, _) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle([.play, .pause])
        let status = engine.status
        // In virtual time the device has played exactly written - buffered; the status must say so.
        let heard = Double(status.writtenFrames) / 44100 - 0.2
        #expect(abs(status.elapsed(at: engine.now()) - max(0, heard)) <= 0.010)
    }

    @Test("elapsed time mid-song is exactly what the paced device has played (virtual time)")
    func elapsedMidSong() async throws {
        let clock = GatedClock()
        let start = clock.now()
        clock.close(at: start + 1_500_000_000)
        let (engine, _) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { _ in clock.now() == start + 1_500_000_000 }
        // The engine is held in its wait for the device to drain; the pause is taken when it comes out.
        let pausing = Task { try await engine.handle(.pause) }
        try await Task.sleep(for: .milliseconds(20))
        clock.open()
        try await pausing.value
        // The device started with the first write and never ran dry: it has played every frame of the time.
        let played = 44100 * (clock.now() - start) / 1_000_000_000
        #expect(engine.status.heardFrames == Int(played))
        #expect(engine.status.heardFrames > 44100)
        #expect(engine.status.writtenFrames - engine.status.heardFrames <= 8820)
    }

    @Test("paced: the buffer is refilled in bursts of half of it, no write blocks, the PCM is exact")
    func refillsInBursts() async throws {
        let clock = VirtualClock()
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        expectSamePCM(recording.data, try referencePCM(fixture("stereo-44k-cbr.mp3")))
        let writes = recording.writeRecords
        #expect(writes.count == 150)  // 132300 frames in periods of 882
        #expect(writes.allSatisfy { !$0.blocked })
        // 200 ms at once, then 100 ms (5 periods) each time half the buffer has drained: 29 wake-ups where
        // writing a period at a time into a blocking device takes 150.
        let bursts = burstSizes(writes)
        #expect(bursts.count == 29)
        #expect(bursts.first == 10)
        #expect(bursts.dropFirst().allSatisfy { $0 <= 5 })
    }

    @Test("after the device runs dry during a wait, the engine refills it earlier from then on")
    func underrunWidensTheMargin() async throws {
        // The fifth wait overshoots by 300 ms: longer than the 100 ms left queued.
        let clock = StallingClock(stallAt: 5, by: 300_000_000)
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        expectSamePCM(recording.data, try referencePCM(fixture("stereo-44k-cbr.mp3")))
        let bursts = burstSizes(recording.writeRecords)
        #expect(Array(bursts.prefix(6)) == [10, 5, 5, 5, 5, 10])
        // From then on it refills when a quarter of the buffer is free, 2 periods at a time.
        #expect(bursts.count > 20)
        #expect(bursts.dropFirst(6).allSatisfy { $0 <= 3 })
    }

    @Test("a command ends the wait for the device to drain at once", .timeLimit(.minutes(1)))
    func commandEndsTheWait() async throws {
        // A 2-second buffer: once full, the engine waits about a second before it writes again.
        let (engine, recording) = try makeEngine(
            [fixture("stereo-44k-cbr.mp3")], paced: true, bufferNanoseconds: 2_000_000_000)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { _ in recording.data.count >= 88200 * 4 }
        try await Task.sleep(for: .milliseconds(100))
        let clock = ContinuousClock()
        let took = try await clock.measure { try await engine.handle(.pause) }
        #expect(took < .milliseconds(200))
        #expect(recording.log.last == "pause")
        #expect(engine.status.state == .pause)
    }

    @Test("seek lands on the exact frame, while playing and while paused")
    func seek() async throws {
        let reference = try referencePCM(fixture("stereo-44k-cbr.mp3"))
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true)
        defer { engine.shutdown() }
        try await engine.handle([.play, .pause, .seek(offset: 2_000_000_000)])
        #expect(engine.status.heardFrames == 88200)
        let before = recording.data.count
        try await engine.handle(.resume)
        try await waitUntil(engine) { $0.state == .stop }
        // Everything written after the seek is the song from frame 88200 on, exactly.
        expectSamePCM([UInt8](recording.data.dropFirst(before)), [UInt8](reference.dropFirst(88200 * 4)))
    }

    @Test("relative seek moves from the position heard and clamps to the song")
    func relativeSeek() async throws {
        let (engine, _) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true)
        defer { engine.shutdown() }
        try await engine.handle([.play, .pause, .seek(offset: 1_000_000_000)])
        try await engine.seek(by: 500_000_000)
        #expect(engine.status.heardFrames == 66150)
        try await engine.seek(by: -5_000_000_000)
        #expect(engine.status.heardFrames == 0)
        try await engine.seek(by: 60_000_000_000)
        #expect(engine.status.heardFrames == 132_300)
        await #expect(throws: PlayerError.notAllowed(request: "seek", state: .stop)) {
            try await engine.handle(.stop)
            try await engine.seek(by: 1)
        }
    }

    @Test("next and previous move through the queue; next past the end stops")
    func nextAndPrevious() async throws {
        // Songs of 3 s, so that the test may be held up a second or two (other tests run beside it on
        // two cores) without a song ending on its own before `next` comes.
        let files = [fixture("stereo-44k-cbr.mp3"), fixture("stereo-44k-cbr.mp3"), fixture("mono-48k-vbr.mp3")]
        let (engine, _) = try makeEngine(files, paced: true)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .play }
        #expect(engine.status.position == 0)
        try await engine.handle(.next)
        try await waitUntil(engine) { $0.state == .play && $0.position == 1 }
        try await engine.handle(.next)
        try await waitUntil(engine) { $0.state == .play && $0.position == 2 }
        #expect(engine.status.format == AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .signed16))
        try await engine.handle(.previous)
        try await waitUntil(engine) { $0.state == .play && $0.position == 1 }
        try await engine.handle(.next)
        try await engine.handle(.next)
        #expect(engine.status.state == .stop)
        #expect(engine.status.queueLength == 3)
    }

    @Test("repeat plays the queue again", .timeLimit(.minutes(1)))
    func repeatMode() async throws {
        let (engine, _) = try makeEngine([fixture("one-second.mp3"), fixture("gapless-a.mp3")]) { $0.repeatMode = true }
        defer { engine.shutdown() }
        let seen = Mutex<[Int]>([])
        engine.observe { [weak engine] _ in
            guard let position = engine?.status.position, engine?.status.state == .play else { return }
            seen.withLock { order in
                if order.last != position { order.append(position) }
            }
        }
        try await engine.handle(.play)
        try await waitUntil(engine) { _ in seen.withLock { $0.count >= 5 } }
        try await engine.handle(.stop)
        #expect(Array(seen.withLock { $0 }.prefix(5)) == [0, 1, 0, 1, 0])
    }

    @Test("single plays the current song, then pauses at the start of the next, as MPD does")
    func singleMode() async throws {
        let (engine, recording) = try makeEngine([fixture("one-second.mp3"), fixture("gapless-a.mp3")]) {
            $0.single = .on
        }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .pause }
        #expect(recording.data.count == 44100 * 4)
        #expect(engine.status.position == 1)
        #expect(engine.status.elapsed(at: engine.now()) == 0)
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(recording.data.count == (44100 + 57777) * 4)
    }

    @Test("consume removes each song once played")
    func consumeMode() async throws {
        let (engine, recording) = try makeEngine([fixture("one-second.mp3"), fixture("gapless-a.mp3")]) {
            $0.consume = true
        }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let expectedBytes: Int = (44100 + 57777) * 4
        #expect(recording.data.count == expectedBytes)
        #expect(engine.status.queueLength == 0)
    }

    @Test("random plays every song once, in some order")
    func randomMode() async throws {
        let files = [fixture("one-second.mp3"), fixture("gapless-a.mp3"), fixture("gapless-b.mp3")]
        let (engine, recording) = try makeEngine(files) { $0.random = true }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let expectedBytes: Int = (44100 + 57777 + 74523) * 4
        #expect(recording.data.count == expectedBytes)
    }

    @Test("bad tracks in the middle are skipped with the error shown; the good ones play")
    func badTracks() async throws {
        let files = [
            fixture("one-second.mp3"), fixture("missing.mp3"), fixture("random.mp3"), fixture("garbage-middle.mp3"),
            fixture("gapless-a.mp3"),
        ]
        let (engine, recording) = try makeEngine(files)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        // The damaged file plays its valid part (65711 frames), then playback moves on.
        let expectedBytes: Int = (44100 + 65711 + 57777) * 4
        #expect(recording.data.count == expectedBytes)
        let error = engine.status.error ?? ""
        let expectedPrefix: String = fixture("garbage-middle.mp3") + ": damaged MP3 stream"
        #expect(error.hasPrefix(expectedPrefix))
        #expect(engine.status.queueLength == 5)
    }

    @Test("a queue of only bad files stops with the last error, without spinning")
    func allBad() async throws {
        let (engine, _) = try makeEngine([fixture("missing.mp3"), fixture("empty.mp3")]) { $0.repeatMode = true }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let error = engine.status.error ?? ""
        #expect(error.hasSuffix("empty file") || error.hasSuffix("file not found"))
    }

    @Test("an output that fails while writing pauses at the position, error recorded, queue intact")
    func failingOutput() async throws {
        let (engine, recording) = try makeEngine(
            [fixture("stereo-44k-cbr.mp3"), fixture("one-second.mp3")], failAfterWrites: 10)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .pause }
        #expect(engine.status.error == "null:unpaced: snd_pcm_writei failed: No such device")
        #expect(engine.status.queueLength == 2)
        #expect(engine.status.position == 0)
        #expect(!recording.isOpen)
        // Where the music was: what the output took before it failed.
        let heard = engine.status.heardFrames(at: engine.now())
        #expect(heard > 0 && heard <= recording.data.count / 4)
        // The player is usable again: play goes on from there (and this output fails again).
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .pause }
        #expect(engine.status.position == 0)
    }

    @Test(
        "pause, then next / previous / play N / playid on a paced output: the new song plays on",
        arguments: [PlayerRequest.next, .previous, .playPosition(1), .playID(2)])
    func leavingPauseForAnotherSongPlays(_ request: PlayerRequest) async throws {
        let (engine, _) = try makeEngine(
            [fixture("gapless-whole.mp3"), fixture("gapless-whole.mp3")], paced: true)
        defer { engine.shutdown() }
        // `previous` from the second song goes to the first; the others from the first to the second.
        try await engine.handle(request == .previous ? .playPosition(1) : .play)
        try await waitUntil(engine) { $0.state == .play && $0.elapsed(at: engine.now()) > 0.3 }
        try await engine.handle(.pause)
        try await engine.handle(request)
        // It plays past the point where the loop used to begin again (half a second), and moves on.
        try await waitUntil(engine) { $0.state == .play && $0.elapsed(at: engine.now()) > 1.0 }
        #expect(engine.status.position == (request == .previous ? 0 : 1))
    }

    @Test("seek to another song while paused lands paused there; play goes on from that point")
    func seekElsewhileWhilePaused() async throws {
        let (engine, recording) = try makeEngine(
            [fixture("gapless-whole.mp3"), fixture("gapless-whole.mp3")], paced: true)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.elapsed(at: engine.now()) > 0.2 }
        try await engine.handle(.pause)
        try await engine.handle(.seekPosition(1, offset: 2_000_000_000))
        try await waitUntil(engine) { $0.state == .pause && $0.position == 1 }
        let written = recording.data.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(engine.status.state == .pause)
        #expect(abs(engine.status.elapsed(at: engine.now()) - 2.0) < 0.001)
        #expect(recording.data.count == written, "nothing is played while paused")
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .play && $0.elapsed(at: engine.now()) > 2.3 }
    }

    @Test("a timed pause resumes by itself (virtual time)")
    func timedPause() async throws {
        let clock = VirtualClock()
        let (engine, _) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle([.play, .pauseFor(duration: 30_000_000_000)])
        #expect(engine.status.state == .pause)
        #expect(engine.status.resumesAt == clock.now() + 30_000_000_000)
        clock.advance(by: 29_000_000_000)
        engine.wake()
        try await Task.sleep(for: .milliseconds(50))
        #expect(engine.status.state == .pause)
        clock.advance(by: 1_000_000_000)
        engine.wake()
        try await waitUntil(engine) { $0.state != .pause }
        #expect(engine.status.resumesAt == nil)
    }

    @Test("the sleep timer stops playback after its time (virtual time)")
    func sleepTimer() async throws {
        let clock = VirtualClock()
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true, clock: clock)
        defer { engine.shutdown() }
        try await engine.handle([.play, .sleepAfter(duration: 1_000_000_000)])
        try await waitUntil(engine) { $0.state == .stop }
        // About one second was written: the timer's second plus at most the device's buffer.
        let seconds = Double(recording.data.count) / 4 / 44100
        #expect(seconds >= 1.0 && seconds <= 1.3)
    }

    @Test("release-on-pause frees the device and resumes without losing a frame")
    func releaseOnPause() async throws {
        let reference = try referencePCM(fixture("stereo-44k-cbr.mp3"))
        let (engine, recording) = try makeEngine(
            [fixture("stereo-44k-cbr.mp3")], paced: true, releasesOutputOnPause: true)
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.heardFrames(at: engine.now()) > 8820 }
        try await engine.handle(.pause)
        #expect(!recording.isOpen)
        let heard = engine.status.heardFrames
        #expect(heard > 8820)
        let written = recording.data.count
        try await engine.handle(.resume)
        #expect(recording.isOpen)
        try await waitUntil(engine) { _ in recording.data.count >= written + 44100 * 4 }
        try await engine.handle(.stop)
        // After the resume, the song goes on from the frame last heard: nothing skipped, nothing twice.
        let resumed = [UInt8](recording.data.dropFirst(written).prefix(44100 * 4))
        expectSamePCM(resumed, [UInt8](reference.dropFirst(heard * 4).prefix(44100 * 4)))
    }

    @Test("volume 100 passes samples bit for bit; lower volumes scale; mute silences")
    func volume() async throws {
        let reference = try referencePCM(fixture("one-second.mp3"))
        let (engine, recording) = try makeEngine([fixture("one-second.mp3")])
        defer { engine.shutdown() }
        try await engine.setVolume(50)
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        let quiet = recording.data
        #expect(quiet.count == reference.count)
        let peak = { (bytes: [UInt8]) in
            stride(from: 0, to: bytes.count, by: 2).map {
                abs(Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)))
            }.max() ?? 0
        }
        // 50 on the cubic curve is 1/8 of the amplitude.
        #expect(abs(peak(quiet) * 8 - peak(reference)) <= 8)
        #expect(engine.status.volume == 50)
        await #expect(throws: PlayerError.self) { try await engine.setVolume(101) }
    }
}

@Suite("Software volume")
struct SoftwareVolumeTests {
    @Test func unityIsBitExact() {
        var samples: [Int16] = [.min, -1, 0, 1, .max, 12345]
        let original = samples
        samples.withUnsafeMutableBytes { SoftwareVolume(level: 100).apply(to: $0, format: .signed16) }
        #expect(samples == original)
    }

    @Test func scalesWithoutClippingAndMutes() {
        var samples: [Int16] = [.min, -20000, 0, 20000, .max]
        samples.withUnsafeMutableBytes { SoftwareVolume(level: 50).apply(to: $0, format: .signed16) }
        #expect(samples == [-4096, -2500, 0, 2500, 4096])
        var floats: [Float] = [-1, 0.5, 1]
        floats.withUnsafeMutableBytes { SoftwareVolume(level: 50).apply(to: $0, format: .float32) }
        #expect(floats == [-0.125, 0.0625, 0.125])
        samples.withUnsafeMutableBytes { SoftwareVolume(level: 80, isMuted: true).apply(to: $0, format: .signed16) }
        #expect(samples == [0, 0, 0, 0, 0])
    }

    @Test("the curve rises monotonically from silence to unity")
    func curve() {
        let gains = (0...100).map { SoftwareVolume(level: $0).gain }
        #expect(gains.first == 0)
        #expect(gains.last == 1)
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 < $1 })
        #expect(SoftwareVolume(level: 150).level == 100)
    }
}
