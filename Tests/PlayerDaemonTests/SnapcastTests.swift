import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic nanoseconds, the scale the clients' files are aligned on.
private func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// One snapclient whose file player writes what it plays (48000:16:2, S16LE) into `path`.
private struct SnapClientFile {
    static let bytesPerSecond = 48000 * 4
    let path: String

    var size: Int {
        var status = stat()
        return stat(self.path, &status) == 0 ? Int(status.st_size) : 0
    }

    /// The left channel from byte `offset` on.
    func left(from offset: Int = 0) -> [Double] {
        guard let data = FileManager.default.contents(atPath: self.path), data.count > offset else { return [] }
        return data.withUnsafeBytes { raw in
            stride(from: offset, to: raw.count - 3, by: 4).map {
                Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int16.self)))
            }
        }
    }

    /// Whether the last `milliseconds` written hold the tone (well above silence and dither).
    func toneInTail(milliseconds: Int) -> Bool {
        let size = self.size
        let start = max(0, size - milliseconds * 48 * 4)
        return (self.left(from: start - start % 4).map(abs).max() ?? 0) > 4000
    }
}

/// The monotonic time at which each file's first frame was played: the file player writes in real time,
/// so a file of `size` bytes at time t began at t − size / rate. Sizes lag behind by up to one write, so
/// the least such estimate over a second of polling is the start.
private func startTimes(of files: [SnapClientFile]) -> [Int64] {
    var best = [Int64](repeating: .max, count: files.count)
    for _ in 0..<1000 {
        for (index, file) in files.enumerated() {
            let now = monotonicNanoseconds()
            let size = Int64(file.size)
            best[index] = min(best[index], now - size * 1_000_000_000 / Int64(SnapClientFile.bytesPerSecond))
        }
        usleep(1000)
    }
    return best
}

/// The first frame (of the left channel) where the tone is heard: the first sample above a quarter of
/// its amplitude, from `frame` on.
private func onset(_ samples: [Double], from frame: Int = 0) -> Int? {
    samples[min(frame, samples.count)...].firstIndex { abs($0) > 4000 }
}

/// The frequency of a tone from its rising zero crossings, interpolated between samples.
private func measuredFrequency(_ samples: ArraySlice<Double>, rate: Int) -> Double {
    var crossings: [Double] = []
    var previous = samples.first ?? 0
    for (offset, sample) in samples.dropFirst().enumerated() {
        if previous < 0 && sample >= 0 {
            crossings.append(Double(offset) + -previous / (sample - previous))
        }
        previous = sample
    }
    guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) * Double(rate) / (last - first)
}

/// snapserver on loopback with a pipe source on `fifo`, restartable.
private final class SnapServer {
    let configuration: String
    private(set) var program: BackgroundProgram?

    init(directory: String, fifo: String, streamPort: Int, controlPort: Int) throws {
        self.configuration = directory + "/snapserver.conf"
        let text = """
            [server]
            datadir = \(directory)
            [http]
            enabled = false
            [tcp]
            bind_to_address = 127.0.0.1
            port = \(controlPort)
            [stream]
            bind_to_address = 127.0.0.1
            port = \(streamPort)
            source = pipe://\(fifo)?name=playerd&sampleformat=48000:16:2&mode=read
            [logging]

            """
        try text.write(toFile: self.configuration, atomically: true, encoding: .utf8)
    }

    func start() throws {
        self.program = try BackgroundProgram("/usr/bin/snapserver", ["-c", self.configuration])
    }

    func kill() {
        guard let program = self.program else { return }
        Glibc.kill(program.process.processIdentifier, SIGKILL)
        program.process.waitUntilExit()
        self.program = nil
    }
}

@Suite("Snapcast: playerd's FIFO output into the real snapserver and two snapclients", .serialized)
struct SnapcastTests {
    @Test(
        "both clients hear the 1 kHz tone of a 44.1 kHz MP3 at its pitch, together; pause, play, stop and a restarted snapserver reach them"
    )
    func twoClientsHearTheTone() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let music = directory + "/music"
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: false)
        // A 44.1 kHz tone: written unresampled into the 48 kHz stream it would play 8.8 % sharp.
        let wav = directory + "/tone.wav"
        let made = try runProgram(
            "/usr/bin/sox",
            ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "60", "sine", "1000", "vol", "0.5"])
        #expect(made.status == 0)
        let encoded = try runProgram("/usr/bin/lame", ["--quiet", "-b", "192", wav, music + "/tone.mp3"])
        #expect(encoded.status == 0)

        let fifo = directory + "/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let streamPort = try freeLoopbackPort()
        let server = try SnapServer(
            directory: directory, fifo: fifo, streamPort: streamPort, controlPort: try freeLoopbackPort())
        try server.start()
        defer { server.kill() }
        usleep(500_000)
        let files = ["cA", "cB"].map { SnapClientFile(path: directory + "/\($0).raw") }
        let clients = try ["cA", "cB"].map { host in
            try BackgroundProgram(
                "/usr/bin/snapclient",
                [
                    "-h", "127.0.0.1", "-p", "\(streamPort)", "--hostID", host, "--player",
                    "file:filename=\(directory)/\(host).raw",
                ])
        }
        defer { for client in clients { Glibc.kill(client.process.processIdentifier, SIGKILL) } }
        try expectEventually("both clients write their files") { files.allSatisfy { $0.size > 0 } }
        let starts = startTimes(of: files)

        // The FIFO follows a paced null output that leads: snapserver's absence must not stop the leader.
        var options = RunningPlayerd.Options()
        options.output = "null,name=Speakers"
        options.extraArguments = ["--music-dir", music, "--output", "fifo:\(fifo),name=Snapcast"]
        try withPlayerd(options) { daemon in
            let control = try daemon.connect()
            _ = try control.command("add tone.mp3")
            _ = try control.command("play")
            try expectEventually("both clients hear the tone", within: .seconds(6)) {
                files.allSatisfy { $0.toneInTail(milliseconds: 100) }
            }
            usleep(1_500_000)

            // Pitch, from a second of each file after the onset; onsets aligned on the monotonic clock.
            var onsetTimes: [Int64] = []
            for (index, file) in files.enumerated() {
                let samples = file.left()
                let first = try #require(onset(samples))
                let pitch = measuredFrequency(samples[(first + 4800)..<min(samples.count, first + 52800)], rate: 48000)
                print("snapcast: \(file.path): 1 kHz tone measured at \(pitch) Hz")
                #expect(abs(pitch - 1000) < 1)
                onsetTimes.append(starts[index] + Int64(first) * 1_000_000_000 / 48000)
            }
            let apart = Double(abs(onsetTimes[0] - onsetTimes[1])) / 1e6
            print("snapcast: onsets \(apart) ms apart")
            #expect(apart < 5)

            // Pause reaches both: within the clients' buffer (1 s) and playerd's (0.5 s), and generously more.
            _ = try control.command("pause 1")
            let paused = ContinuousClock.now
            try expectEventually("the tone stops in both clients", within: .seconds(4)) {
                files.allSatisfy { !$0.toneInTail(milliseconds: 300) }
            }
            // The 300 ms of silence looked for included: the clients fell silent that much earlier.
            print("snapcast: 300 ms of silence in both files \(ContinuousClock.now - paused) after pause")
            _ = try control.command("pause 0")
            try expectEventually("the tone comes back in both clients", within: .seconds(4)) {
                files.allSatisfy { $0.toneInTail(milliseconds: 100) }
            }

            // snapserver killed and restarted mid-song: playerd plays on (the leading null output keeps
            // time), the FIFO output says it has no reader, and the clients reconnect.
            server.kill()
            let elapsedBefore = Double(try control.fields("status")["elapsed"] ?? "") ?? 0
            usleep(1_500_000)
            #expect(daemon.isRunning)
            let status = try control.fields("status")
            #expect(status["state"] == "play")
            #expect((Double(status["elapsed"] ?? "") ?? 0) > elapsedBefore + 1)
            let outputs = try control.command("outputs")
            let problem = outputs.first { $0.hasPrefix("attribute: error=") }
            print("snapcast: while snapserver is gone, outputs says \(problem ?? "nothing")")
            #expect(outputs.contains("outputname: Snapcast"))
            #expect(problem == "attribute: error=nothing has read \(fifo) for a second (is snapserver running?)")
            #expect(!outputs.contains { $0.hasPrefix("attribute: error=") && $0 != problem })
            // Only what the clients write after the restart counts: their files' tails may still hold the
            // tone from before the kill. A client that reconnects makes its file player anew, which
            // truncates the file (measured): then the whole file is new.
            var sizesAtRestart = files.map { $0.size - $0.size % 4 }
            try server.start()
            let restarted = ContinuousClock.now
            try expectEventually("the clients hear the tone again after snapserver's restart", within: .seconds(15)) {
                var heard = true
                for (index, file) in files.enumerated() {
                    if file.size < sizesAtRestart[index] {
                        sizesAtRestart[index] = 0
                    }
                    heard = heard && (file.left(from: sizesAtRestart[index]).map(abs).max() ?? 0) > 4000
                }
                return heard
            }
            print("snapcast: tone heard again \(ContinuousClock.now - restarted) after snapserver restarted")

            _ = try control.command("stop")
            let stopped = ContinuousClock.now
            try expectEventually("the tone stops in both clients after stop", within: .seconds(4)) {
                files.allSatisfy { !$0.toneInTail(milliseconds: 300) }
            }
            print("snapcast: 300 ms of silence in both files \(ContinuousClock.now - stopped) after stop")
            control.close()
        }
    }
}
