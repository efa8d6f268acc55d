import Foundation
import Synchronization
import Testing

@testable import Audio

/// A clock that only moves when someone sleeps on it: paced outputs run in virtual time.
final class VirtualClock: PacingClock {
    private let time = Mutex<Int64>(1_000_000_000)

    func now() -> Int64 { self.time.withLock { $0 } }

    func sleep(until deadline: Int64) {
        self.time.withLock { $0 = max($0, deadline) }
    }

    func advance(byMilliseconds milliseconds: Int64) {
        self.time.withLock { $0 += milliseconds * 1_000_000 }
    }
}

/// Plays a whole file into an output; returns the PCM it wrote.
@discardableResult
func play(_ path: String, into output: any AudioOutput, sampleFormat: SampleFormat = .signed16) throws -> [UInt8] {
    let decoder = try MP3Decoder(path: path, sampleFormat: sampleFormat)
    try output.open(format: decoder.format)
    let pcm = try decodeAll(decoder, chunkFrames: 1024)
    try pcm.withUnsafeBytes { raw in
        let chunk = 1024 * decoder.format.bytesPerFrame
        for start in stride(from: 0, to: raw.count, by: chunk) {
            try output.write(UnsafeRawBufferPointer(rebasing: raw[start..<min(raw.count, start + chunk)]))
        }
    }
    try output.drain()
    return pcm
}

let stereo44 = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)

@Suite("Output specs")
struct OutputSpecTests {
    @Test(
        "parses every valid form and prints it back",
        arguments: [
            ("alsa", OutputSpec.alsa(device: "default")),
            ("alsa:hw:0,0", .alsa(device: "hw:0,0")),
            ("alsa:plughw:CARD=PCH,DEV=0", .alsa(device: "plughw:CARD=PCH,DEV=0")),
            ("null", .null(paced: true)),
            ("null:unpaced", .null(paced: false)),
            ("wav:/tmp/out.wav", .wav(path: "/tmp/out.wav")),
            ("wav:relative/out:1.wav", .wav(path: "relative/out:1.wav")),
            ("fifo:/run/playerd/snapfifo", .fifo(path: "/run/playerd/snapfifo", format: .standard)),
        ])
    func parses(_ text: String, _ expected: OutputSpec) throws {
        let spec = try OutputSpec(parsing: text)
        #expect(spec == expected)
        #expect(try OutputSpec(parsing: spec.description) == spec)
    }

    @Test(
        "refuses anything else, listing the valid forms",
        arguments: ["", "alsa:", "wav", "wav:", "null:fast", "pulse", "ALSA", "file:/tmp/x", "fifo", "fifo:"])
    func refuses(_ text: String) {
        let error = #expect(throws: OutputSpecError.self) { try OutputSpec(parsing: text) }
        #expect(
            error?.description
                == "invalid output \"\(text)\": expected one of alsa, alsa:DEVICE (e.g. alsa:hw:0,0), null, null:unpaced, wav:PATH, fifo:PATH"
        )
    }

    @Test func makesTheNamedOutput() {
        #expect(OutputSpec.alsa(device: "hw:1").makeOutput().name == "alsa:hw:1")
        #expect((OutputSpec.null(paced: false).makeOutput() as? NullOutput)?.isPaced == false)
        #expect(OutputSpec.wav(path: "/tmp/a.wav").makeOutput() is WAVOutput)
        #expect(OutputSpec.fifo(path: "/run/p/f", format: .standard).makeOutput().name == "fifo:/run/p/f")
    }
}

@Suite("Configured outputs")
struct ConfiguredOutputTests {
    @Test(
        "a spec with attributes parses, and its description parses back to it",
        arguments: [
            ("null,name=Speakers", ConfiguredOutput(spec: .null(paced: true), name: "Speakers")),
            (
                "alsa:dmix:CARD=0,DEV=0,enabled=no",
                ConfiguredOutput(spec: .alsa(device: "dmix:CARD=0,DEV=0"), startsEnabled: false)
            ),
            (
                "fifo:/run/playerd/snapfifo",
                ConfiguredOutput(spec: .fifo(path: "/run/playerd/snapfifo", format: .standard))
            ),
            (
                "fifo:/run/playerd/snapfifo,name=Snapcast,format=44100:32:1",
                ConfiguredOutput(
                    spec: .fifo(path: "/run/playerd/snapfifo", format: try! FIFOFormat(parsing: "44100:32:1")),
                    name: "Snapcast")
            ),
            (
                "fifo:/f,format=48000:16:2,name=Snapcast",
                ConfiguredOutput(spec: .fifo(path: "/f", format: .standard), name: "Snapcast")
            ),
        ])
    func parses(_ text: String, _ expected: ConfiguredOutput) throws {
        let output = try ConfiguredOutput(parsing: text)
        #expect(output == expected)
        #expect(try ConfiguredOutput(parsing: output.description) == output)
    }

    @Test(
        "format= belongs to fifo outputs only and must be a FIFO format",
        arguments: [
            ("null,format=48000:16:2", "format= is for fifo outputs only (null plays each song's own format)"),
            ("alsa,format=48000:16:2", "format= is for fifo outputs only (alsa plays each song's own format)"),
            ("fifo:/f,format=48000:8:2", "format=48000:8:2: the sample size \"8\" is not 16, 24 or 32 bits"),
            ("fifo:/f,format=48000", "format=48000: a FIFO format is RATE:BITS:CHANNELS, e.g. 48000:16:2"),
            ("fifo:/f,format=48000:16:2,format=44100:16:2", "format= is given twice"),
        ])
    func refusesFormat(_ text: String, _ reason: String) {
        let error = #expect(throws: OutputSpecError.self) { try ConfiguredOutput(parsing: text) }
        #expect(error?.description == "invalid output \"\(text)\": \(reason)")
    }
}

@Suite("Null output")
struct NullOutputTests {
    @Test("paced: a write blocks only once the emulated buffer is full, and the delay drains in real time")
    func pacedInVirtualTime() throws {
        let clock = VirtualClock()
        let output = NullOutput(paced: true, clock: clock, bufferNanoseconds: 200_000_000)
        try output.open(format: stereo44)
        let start = clock.now()
        let tenth = [UInt8](repeating: 0, count: 4410 * 4)
        try tenth.withUnsafeBytes { try output.write($0) }
        #expect(clock.now() == start)  // fits in the buffer: no wait
        #expect(output.delayFrames == 4410)
        for _ in 0..<9 {
            try tenth.withUnsafeBytes { try output.write($0) }
        }
        // One second written, 200 ms buffered: the writer was held back until 800 ms had played.
        #expect(clock.now() - start == 800_000_000)
        #expect(output.delayFrames == 8820)
        clock.advance(byMilliseconds: 50)
        #expect(output.delayFrames == 8820 - 2205)
        try output.drain()
        #expect(clock.now() - start == 1_000_000_000)
        #expect(output.delayFrames == 0)
    }

    @Test("paced: pause freezes the delay, resume goes on, drop discards")
    func pauseResumeDrop() throws {
        let clock = VirtualClock()
        let output = NullOutput(paced: true, clock: clock)
        try output.open(format: stereo44)
        let chunk = [UInt8](repeating: 0, count: 4410 * 4)
        try chunk.withUnsafeBytes { try output.write($0) }
        clock.advance(byMilliseconds: 40)
        try output.pause()
        #expect(output.delayFrames == 4410 - 1764)
        clock.advance(byMilliseconds: 500)
        #expect(output.delayFrames == 4410 - 1764)
        try output.resume()
        clock.advance(byMilliseconds: 20)
        #expect(output.delayFrames == 4410 - 1764 - 882)
        try output.drop()
        #expect(output.delayFrames == 0)
        // After running dry the device restarts with the next write.
        clock.advance(byMilliseconds: 1000)
        try chunk.withUnsafeBytes { try output.write($0) }
        #expect(output.delayFrames == 4410)
    }

    @Test("paced: says how much a write takes without blocking, and such a write does not wait")
    func writableFrames() throws {
        let clock = VirtualClock()
        let output = NullOutput(paced: true, clock: clock, bufferNanoseconds: 200_000_000)
        #expect(output.writableFrames == nil)
        #expect(output.capacityFrames == nil)
        try output.open(format: stereo44)
        #expect(output.capacityFrames == 8820)
        #expect(output.writableFrames == 8820)
        let tenth = [UInt8](repeating: 0, count: 4410 * 4)
        try tenth.withUnsafeBytes { try output.write($0) }
        #expect(output.writableFrames == 4410)
        try tenth.withUnsafeBytes { try output.write($0) }
        #expect(output.writableFrames == 0)
        clock.advance(byMilliseconds: 50)
        #expect(output.writableFrames == 2205)
        let start = clock.now()
        try [UInt8](repeating: 0, count: 2205 * 4).withUnsafeBytes { try output.write($0) }
        #expect(clock.now() == start)
        #expect(output.writableFrames == 0)
        // Paused, nothing drains; resumed, it drains at the stream's rate; dropped, it is empty.
        try output.pause()
        clock.advance(byMilliseconds: 100)
        #expect(output.writableFrames == 0)
        try output.resume()
        clock.advance(byMilliseconds: 100)
        #expect(output.writableFrames == 4410)
        try output.drop()
        #expect(output.writableFrames == 8820)
        output.close()
        #expect(output.writableFrames == nil)
    }

    @Test("only the system's monotonic clock is real time; a virtual one is not unless it says so")
    func realTimeClocks() {
        #expect(MonotonicClock().isRealTime)
        #expect(!VirtualClock().isRealTime)
    }

    @Test("unpaced: never blocks, so it reports no room to wait for")
    func unpacedHasNoRoom() throws {
        let output = NullOutput(paced: false, clock: VirtualClock())
        try output.open(format: stereo44)
        #expect(output.writableFrames == nil)
        #expect(output.capacityFrames == nil)
    }

    @Test("unpaced: takes everything at once and reports no delay")
    func unpaced() throws {
        let clock = VirtualClock()
        let output = NullOutput(paced: false, clock: clock)
        let start = clock.now()
        try play(fixture("one-second.mp3"), into: output)
        #expect(clock.now() == start)
        #expect(output.delayFrames == 0)
    }

    @Test("a closed output refuses calls by name")
    func closedRefuses() {
        let output = NullOutput(paced: true)
        #expect(throws: OutputError.notOpen(output: "null")) { try output.pause() }
        #expect(throws: OutputError.notOpen(output: "null")) {
            try [UInt8](repeating: 0, count: 4).withUnsafeBytes(output.write)
        }
    }

    /// Real time, so the bound is generous: the point is that paced takes about the song's length
    /// and unpaced a small fraction of it.
    @Test("a one-second fixture takes about a second paced, a small fraction of that unpaced")
    func realTimePacing() throws {
        let clock = MonotonicClock()
        var start = clock.now()
        try play(fixture("one-second.mp3"), into: NullOutput(paced: true))
        let paced = Double(clock.now() - start) / 1e9
        start = clock.now()
        try play(fixture("one-second.mp3"), into: NullOutput(paced: false))
        let unpaced = Double(clock.now() - start) / 1e9
        #expect(paced >= 0.95)
        #expect(paced < 2.0)
        #expect(unpaced < paced / 4)
    }
}

@Suite("WAV output")
struct WAVOutputTests {
    @Test("writes exactly the frames it receives under a valid header", arguments: [SampleFormat.signed16, .float32])
    func writesExactly(_ sampleFormat: SampleFormat) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("out.wav")
        let output = WAVOutput(path: path)
        let pcm = try play(fixture("mono-48k-vbr.mp3"), into: output, sampleFormat: sampleFormat)
        output.close()
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = WAVOutput.header(
            format: AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: sampleFormat), dataBytes: pcm.count)
        #expect(Array(file.prefix(header.count)) == header)
        expectSamePCM(Array(file.dropFirst(header.count)), pcm)
        #expect(pcm.count == 144_000 * sampleFormat.bytesPerSample)

        // sox reads it back as what was written.
        let info = try run("/usr/bin/soxi", ["-s", path])
        #expect(String(decoding: info.stdout, as: UTF8.self) == "144000\n")
    }

    @Test func headerFields() {
        let float = WAVOutput.header(
            format: AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .float32), dataBytes: 800)
        #expect(float.count == 58)
        #expect(Array(float[0..<4]) == Array("RIFF".utf8))
        let riffSize: [UInt8] = [0x52, 0x03, 0, 0]  // 4 + 26 + 12 + 8 + 800 = 850
        #expect(Array(float[4..<8]) == riffSize)
        #expect(Array(float[20..<22]) == [3, 0])  // IEEE float
        #expect(Array(float[38..<42]) == Array("fact".utf8))
        #expect(Array(float[46..<50]) == [100, 0, 0, 0])  // 800 bytes = 100 stereo float frames
        let pcm = WAVOutput.header(format: stereo44, dataBytes: 0)
        #expect(pcm.count == 44)
        #expect(Array(pcm[20..<22]) == [1, 0])
        #expect(Array(pcm[28..<32]) == [0x10, 0xb1, 0x02, 0])  // 176400 bytes a second
    }

    @Test("reopening with the same format appends; another format is converted to the file's, whole")
    func reopen() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("out.wav")
        let output = WAVOutput(path: path)
        let a = try play(fixture("gapless-a.mp3"), into: output)
        output.close()
        let b = try play(fixture("gapless-b.mp3"), into: output)
        // 3 s of 48 kHz mono: resampled to 44.1 kHz, each sample in both channels; drain writes soxr's tail.
        try play(fixture("mono-48k-vbr.mp3"), into: output)
        output.close()
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        expectSamePCM(Array(file[44..<44 + a.count + b.count]), a + b)
        let converted = Array(file.dropFirst(44 + a.count + b.count))
        #expect(converted.count == 132_300 * 4)
        let samples = converted.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect((0..<samples.count / 2).allSatisfy { samples[2 * $0] == samples[2 * $0 + 1] })
        #expect(samples.contains { abs(Int($0)) > 1000 })
        let dataSize = withUnsafeBytes(of: UInt32(file.count - 44).littleEndian) { [UInt8]($0) }
        #expect(Array(file[40..<44]) == dataSize)
        #expect(String(decoding: try run("/usr/bin/soxi", ["-r", path]).stdout, as: UTF8.self) == "44100\n")
    }

    @Test("a float file refuses another format: nothing to convert floats to")
    func floatFileRefusesAnotherFormat() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("out.wav")
        let output = WAVOutput(path: path)
        try play(fixture("one-second.mp3"), into: output, sampleFormat: .float32)
        let error = #expect(throws: OutputError.self) {
            try output.open(format: AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .signed16))
        }
        #expect(error?.description.hasPrefix("wav:\(path): format 48000 Hz mono s16 not supported") == true)
        output.close()
    }

    @Test("a file never blocks: no room to wait for")
    func noRoom() throws {
        let scratch = try ScratchDirectory()
        let output = WAVOutput(path: scratch.path("out.wav"))
        try output.open(format: stereo44)
        #expect(output.writableFrames == nil)
        #expect(output.capacityFrames == nil)
        output.close()
    }

    @Test func unwritablePathIsAnOpenError() {
        let output = WAVOutput(path: "/nonexistent-dir/out.wav")
        let error = #expect(throws: OutputError.self) { try output.open(format: stereo44) }
        #expect(error?.description == "wav:/nonexistent-dir/out.wav: cannot open (open: No such file or directory)")
    }
}

@Suite("ALSA output, through alsa-lib")
struct ALSAOutputTests {
    /// The `file` plugin in front of the `null` PCM: alsa-lib's real code path, bytes captured.
    private func tapConfiguration(_ path: String) -> String {
        """
        pcm.tap {
            type file
            slave.pcm { type null }
            file "\(path)"
            format "raw"
        }
        """
    }

    @Test("the bytes that reach ALSA are the decoded bytes", arguments: [SampleFormat.signed16, .float32])
    func filePluginCapturesExactBytes(_ sampleFormat: SampleFormat) throws {
        let scratch = try ScratchDirectory()
        let capture = scratch.path("capture.raw")
        let output = ALSAOutput(device: "tap", configuration: self.tapConfiguration(capture))
        let pcm = try play(fixture("stereo-44k-cbr.mp3"), into: output, sampleFormat: sampleFormat)
        output.close()
        let captured = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        #expect(captured.count == 132_300 * 2 * sampleFormat.bytesPerSample)
        expectSamePCM(captured, pcm)
    }

    @Test("the null PCM takes every fixture format and every call")
    func nullPCM() throws {
        let output = ALSAOutput(device: "null")
        #expect(output.name == "alsa:null")
        for (name, sampleFormat) in [("stereo-44k-cbr.mp3", SampleFormat.signed16), ("mono-48k-vbr.mp3", .float32)] {
            try play(fixture(name), into: output, sampleFormat: sampleFormat)
            #expect(output.format?.sampleFormat == sampleFormat)
            #expect(output.bufferFrames > 0)
            #expect(output.delayFrames >= 0)
            try output.pause()
            try output.resume()
            try output.drop()
            try [UInt8](repeating: 0, count: 4096).withUnsafeBytes { try output.write($0) }
            try output.drain()
        }
        output.close()
        output.close()
        #expect(output.format == nil)
        #expect(throws: OutputError.notOpen(output: "alsa:null")) { try output.drain() }
    }

    @Test("reports its room from snd_pcm_avail: none when closed, the whole buffer on the null PCM")
    func writableFrames() throws {
        // The null PCM plays everything at once, so its buffer is always empty; what matters is that the
        // figure comes from alsa-lib and stays within the buffer through every call.
        let output = ALSAOutput(device: "null")
        #expect(try output.writableFrames == nil)
        #expect(output.capacityFrames == nil)
        try output.open(format: stereo44)
        #expect(output.capacityFrames == output.bufferFrames)
        #expect(try output.writableFrames == output.bufferFrames)
        try [UInt8](repeating: 0, count: 4096).withUnsafeBytes { try output.write($0) }
        #expect(try output.writableFrames == output.bufferFrames)
        try output.pause()
        #expect(try output.writableFrames == output.bufferFrames)
        try output.resume()
        try output.drop()
        #expect(try output.writableFrames == output.bufferFrames)
        output.close()
        #expect(try output.writableFrames == nil)
    }

    @Test("pause before anything was written, then resume and write, works")
    func pauseWhilePrepared() throws {
        let output = ALSAOutput(device: "null")
        try output.open(format: stereo44)
        try output.pause()
        #expect(output.delayFrames == 0)
        try [UInt8](repeating: 0, count: 4096).withUnsafeBytes { try output.write($0) }
        try output.resume()
        try output.drain()
    }

    @Test("a device that does not exist is a typed error with alsa-lib's text")
    func missingDevice() {
        let output = ALSAOutput(device: "no_such_device_playerd")
        let error = #expect(throws: OutputError.self) { try output.open(format: stereo44) }
        guard case .openFailed(let name, let call, let code, let reason) = error else {
            Issue.record("expected openFailed, got \(String(describing: error))")
            return
        }
        #expect(name == "alsa:no_such_device_playerd")
        #expect(call == "snd_pcm_open")
        #expect(code < 0)
        #expect(reason == String(cString: strerror(-code)))
        #expect(output.format == nil)
    }

    @Test("a configuration alsa-lib cannot parse is a typed error")
    func badConfiguration() {
        let output = ALSAOutput(device: "tap", configuration: "pcm.tap { type file ")
        let error = #expect(throws: OutputError.self) { try output.open(format: stereo44) }
        #expect(error?.description.hasPrefix("alsa:tap: cannot open (snd_config_load: ") == true)
    }

}
