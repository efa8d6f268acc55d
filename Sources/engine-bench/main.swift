// engine-bench: measures PlayerCore's AudioEngine directly, without the daemon, and the same figures
// of a running mpd. scripts/bench-engine.sh runs it and makes the table; each mode prints lines of
// space-separated figures that the script reads.

import Audio

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    usage: engine-bench latency FILE [ITERATIONS]     play/pause/seek to effect at the output (ms)
           engine-bench cpu FILE [one|two|stalled:SPEC]
                                                      CPU while playing FILE in real time to its end, on
                                                      one null output, two, or one beside a stalled SPEC
           engine-bench memory FILE [SECONDS]         RSS idle, playing in real time, playing unpaced (kB)
           engine-bench mpd-latency SOCKET FIFO SONG [ITERATIONS]
                                                      mpd's play/pause to effect on its fifo output (ms)
           engine-bench daemon-latency SOCKET FIFO SONG ITERATIONS HEADER_BYTES
                                                      the same for any MPD-protocol daemon whose output
                                                      writes HEADER_BYTES before the audio (playerd wav:)
           engine-bench mpd-usage SOCKET PID SONG SECONDS LONG_SONG
                                                      mpd's CPU playing SONG, RSS idle and playing LONG_SONG
           engine-bench decode FILE [s16|f32] [--stdout]
                                                      FILE decoded as fast as it goes (its PCM to standard
                                                      output with --stdout); `decoded FRAMES FORMAT KIND NS`
    """

/// The argument at `index`, or the usage and exit.
func argument(_ index: Int) -> String {
    guard index < CommandLine.arguments.count else { fail("missing argument\n\(usage)") }
    return CommandLine.arguments[index]
}

/// The argument at `index` as a positive number, `fallback` when absent.
func number(_ index: Int, fallback: Int? = nil) -> Int {
    if index >= CommandLine.arguments.count, let fallback { return fallback }
    guard let value = Int(argument(index)), value > 0 else { fail("not a positive number: \(argument(index))") }
    return value
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "latency":
        try await measureEngineLatency(file: argument(2), iterations: number(3, fallback: 200))
    case "cpu":
        try await measureEngineCPU(
            file: argument(2), others: try followers(CommandLine.arguments.count > 3 ? argument(3) : "one"))
    case "memory":
        try await measureEngineMemory(file: argument(2), seconds: number(3, fallback: 10))
    case "mpd-latency":
        try await measurePeerLatency(
            socket: argument(2), fifo: argument(3), song: argument(4), iterations: number(5, fallback: 200))
    case "daemon-latency":
        try await measurePeerLatency(
            socket: argument(2), fifo: argument(3), song: argument(4), iterations: number(5),
            headerBytes: Int(argument(6)) ?? 0)
    case "mpd-usage":
        try await measurePeerUsage(
            socket: argument(2), pid: argument(3), song: argument(4), seconds: number(5), longSong: argument(6))
    case "decode":
        let options = CommandLine.arguments.dropFirst(3)
        let sampleFormat: SampleFormat = options.contains("f32") ? .float32 : .signed16
        for option in options where !["s16", "f32", "--stdout"].contains(option) {
            fail("unknown option \(option)\n\(usage)")
        }
        measureDecoding(file: argument(2), sampleFormat: sampleFormat, toStandardOutput: options.contains("--stdout"))
    default:
        fail(usage)
    }
} catch {
    fail("\(error)")
}
