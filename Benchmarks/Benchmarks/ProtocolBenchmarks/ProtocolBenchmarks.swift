// The MPD protocol's hot paths, as a client session runs them: request bytes framed into lines, each
// line tokenized, followed through command lists and looked up in the command table; and the two
// answers clients ask for most, `status` and a `playlistinfo` song block, written into a reused buffer.

import Benchmark
import ControlProtocol

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

    // One iteration is a whole read of 100 lines, so the figures are per read; divide by 100 for a line.
    Benchmark(
        "Parse: frame, tokenize and look up 100 request lines",
        configuration: .init(metrics: metrics, maxDuration: .seconds(1), maxIterations: 20_000)
    ) { benchmark in
        let bytes = RequestMix.bytes
        let table = RequestMix.commandTable()
        var framer = LineFramer()
        var lists = CommandListParser()
        var frames: [LineFramer.Frame] = []
        frames.reserveCapacity(RequestMix.lineCount)
        let accepted = RequestMix.dispatch(bytes, framer: &framer, lists: &lists, frames: &frames, table: table)
        guard accepted == RequestMix.commandCount else {
            benchmark.error("\(accepted) of \(RequestMix.commandCount) requests were accepted")
            return
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(RequestMix.dispatch(bytes, framer: &framer, lists: &lists, frames: &frames, table: table))
        }
    }

    Benchmark(
        "Encode: status answer while playing (19 fields and OK)",
        configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 5_000)
    ) { benchmark in
        let status = StatusAnswer.playingStatus
        let now = status.sampledAt + 37_000_000
        var writer = ResponseWriter()
        for _ in benchmark.scaledIterations {
            writer.removeAll()
            StatusAnswer.writeStatus(status, now: now, to: &writer)
            writer.ok()
            blackHole(writer.count)
        }
    }

    Benchmark(
        "Encode: playlistinfo song block (11 fields)",
        configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 5_000)
    ) { benchmark in
        let song = StatusAnswer.song
        var writer = ResponseWriter()
        for _ in benchmark.scaledIterations {
            writer.removeAll()
            StatusAnswer.writeSong(song, to: &writer)
            blackHole(writer.count)
        }
    }
}
