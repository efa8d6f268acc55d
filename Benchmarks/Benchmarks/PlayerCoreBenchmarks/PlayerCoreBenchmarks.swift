// The player core's hot paths: one state transition as a `pause` command makes it, the software volume
// over one period as the audio thread applies it, and the status snapshot as a `status` command reads
// it and as the audio thread publishes it.

import Audio
import Benchmark
import BenchmarkSupport
import PlayerCore

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    let configuration = Benchmark.Configuration(
        metrics: metrics, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 5_000)

    // Each inner iteration is one transition, play to pause or pause to play, with its effects.
    Benchmark("Transition: play <-> pause, PlayerContext.handle(.togglePause)", configuration: configuration) {
        benchmark throws in
        var context = try CoreFixtures.playingContext()
        var now: Int64 = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            now += 1
            blackHole(try context.handle(.togglePause, now: now))
        }
    }

    for sampleFormat in [SampleFormat.signed16, .float32] {
        let frames = VolumePeriod.frames(of: AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: sampleFormat))
        Benchmark(
            "Volume: one period (\(frames) frames, 44.1 kHz stereo) at level 70, \(sampleFormat.rawValue)",
            configuration: configuration
        ) { benchmark, period in
            let volume = SoftwareVolume(level: 70)
            for iteration in benchmark.scaledIterations {
                // Each pass scales the samples by 0.343: fresh ones every 16 periods keep floats far from
                // the subnormal range (0.343^16 is 4e-8), which slows some CPUs and no decoded period reaches.
                if iteration % 16 == 0 {
                    period.refill()
                }
                volume.apply(to: period.samples, format: sampleFormat)
            }
        } setup: {
            VolumePeriod(sampleFormat: sampleFormat)
        }
    }

    let player = PlayingEngine()
    Benchmark("Status snapshot: AudioEngine.status and elapsed, while playing", configuration: configuration) {
        benchmark in
        guard let engine = player.engine else {
            benchmark.error("the engine did not start")
            return
        }
        for _ in benchmark.scaledIterations {
            let status = engine.status
            blackHole(status.elapsed(at: engine.now()))
            blackHole(status.duration)
        }
    } setup: {
        try await player.start()
    } teardown: {
        player.stop()
    }

    // What the audio thread does with each status sample it publishes (ten a second while playing): keep
    // it and compare it with the one before for the idle subsystems.
    Benchmark("Status publish: PlayerChanges.between, nothing changed", configuration: configuration) { benchmark in
        var published = SampleStatus.playing
        var sample = published
        for _ in benchmark.scaledIterations {
            sample.heardFrames += 4410
            sample.writtenFrames += 4410
            sample.sampledAt += 100_000_000
            blackHole(PlayerChanges.between(published, sample))
            published = sample
        }
    }
}
