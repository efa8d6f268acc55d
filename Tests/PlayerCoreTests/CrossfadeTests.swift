import Audio
import Foundation
import Testing

@testable import PlayerCore

/// Songs long enough to cross-fade (MPD never fades a song under 20 s), made once per test run from
/// sine tones by sox and lame: 21 s, 44.1 kHz stereo, each at its own pitch; `tagged-*` carry MixRamp
/// ramps in ID3v2.3 `TXXX` frames.
enum LongSongs {
    static let seconds = 21
    static let frames = 21 * 44100

    /// The directory holding `a.mp3`, `b.mp3`, `c22k.mp3` (22.05 kHz), `short.mp3` (19 s) and the
    /// tagged copies of a and b.
    static let directory: Result<String, any Error> = Result {
        let directory = NSTemporaryDirectory() + "playerd-crossfade-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let songs = [
            ("a.mp3", 21, 440, 44100), ("b.mp3", 21, 660, 44100), ("c22k.mp3", 21, 550, 22050),
            ("short.mp3", 19, 770, 44100),
        ]
        for (name, seconds, pitch, rate) in songs {
            let command =
                "/usr/bin/sox -q -R -D -n -r \(rate) -c 2 -b 16 -t wav - synth \(seconds) sine \(pitch) vol 0.3"
                + " | /usr/bin/lame --quiet --noreplaygain -b 128 - '\(directory)/\(name)'"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-o", "pipefail", "-c", command]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(
                    .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "sox | lame failed: \(command)"])
            }
        }
        try tagged("a.mp3", as: "tagged-a.mp3", ["MIXRAMP_END": "-30.00 1.00;-20.00 2.00;-10.00 3.00;"], in: directory)
        try tagged(
            "b.mp3", as: "tagged-b.mp3", ["mixramp_start": "-30.00 0.50;-20.00 1.50;-10.00 2.00;"], in: directory)
        return directory
    }

    static func path(_ name: String) throws -> String {
        try Self.directory.get() + "/" + name
    }

    /// Writes `name` with an ID3v2.3 tag of `TXXX` frames in front.
    private static func tagged(_ name: String, as copy: String, _ frames: [String: String], in directory: String) throws
    {
        var body: [UInt8] = []
        for (description, value) in frames {
            let content = [0] + Array(description.utf8) + [0] + Array(value.utf8)
            body += Array("TXXX".utf8) + bigEndian(content.count) + [0, 0] + content
        }
        let size = body.count
        let syncsafe: [UInt8] = [
            UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F),
        ]
        let header = Array("ID3".utf8) + [3, 0, 0] + syncsafe
        let audio = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        try Data(header + body + [UInt8](audio)).write(to: URL(fileURLWithPath: directory + "/" + copy))
    }

    private static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Interleaved s16 samples of little-endian PCM bytes.
private func samples(_ bytes: [UInt8]) -> [Int16] {
    stride(from: 0, to: bytes.count - 1, by: 2).map {
        Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
    }
}

/// Expects equal sample arrays, reporting the first difference rather than the arrays.
private func expectSameSamples(
    _ actual: [Int16], _ expected: [Int16], sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    let first = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }
    Issue.record(
        "samples differ: \(actual.count) against \(expected.count); first difference at sample \(first?.offset ?? min(actual.count, expected.count))\(first.map { ": \($0.element.0) instead of \($0.element.1)" } ?? "")",
        sourceLocation: sourceLocation)
}

@Suite("Crossfade and MixRamp: MPD's rules")
struct CrossfadeRuleTests {
    let cd = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)

    func settings(_ seconds: Int, mixRampDelay: Double = -1, mixRampDB: Float = 0) -> CrossfadeSettings {
        var settings = CrossfadeSettings()
        settings.seconds = seconds
        settings.mixRampDelay = mixRampDelay
        settings.mixRampDB = mixRampDB
        return settings
    }

    @Test("the overlap is the crossfade's length, only between songs of 20 s or more, longer than it, of one format")
    func overlapRules() {
        let long = 25 * 44100
        #expect(settings(0).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd).frames == 0)
        #expect(
            settings(5).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd) == (5 * 44100, false)
        )
        // MIN_TOTAL_TIME: 20 s exactly may fade, a frame less may not, on either side.
        #expect(
            settings(5).overlap(currentLength: 20 * 44100, nextLength: long, format: cd, nextFormat: cd).frames == 5
                * 44100)
        #expect(
            settings(5).overlap(currentLength: 20 * 44100 - 1, nextLength: long, format: cd, nextFormat: cd).frames == 0
        )
        #expect(
            settings(5).overlap(currentLength: long, nextLength: 20 * 44100 - 1, format: cd, nextFormat: cd).frames == 0
        )
        // The crossfade must be shorter than each song.
        #expect(settings(25).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd).frames == 0)
        #expect(
            settings(24).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd).frames == 24 * 44100
        )
        // Unknown lengths and another format: no fade.
        #expect(settings(5).overlap(currentLength: nil, nextLength: long, format: cd, nextFormat: cd).frames == 0)
        let other = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .signed16)
        #expect(settings(5).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: other).frames == 0)
        // The largest crossfade a client can ask for does not overflow.
        #expect(
            settings(Int(UInt32.max)).overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd).frames
                == 0)
    }

    @Test("MixRamp: the ramps' times at the level, less the delay; without both ramps, the crossfade")
    func mixRampOverlap() {
        let long = 25 * 44100
        let end = "-30 1;-20 2;-10 3"
        let start = "-30 0.5;-20 1.5;-10 2"
        let mixRamp = settings(5, mixRampDelay: 1, mixRampDB: -20)
        #expect(
            mixRamp.overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start,
                mixRampPreviousEnd: end) == (Int(2.5 * 44100), true))
        // -15 dB lies halfway between the -20 and -10 points: 2.5 s and 1.75 s, less 1 s.
        #expect(
            settings(5, mixRampDelay: 1, mixRampDB: -15).overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start,
                mixRampPreviousEnd: end) == (Int((3.25 * 44100).rounded()), true))
        // A delay longer than the overlap: no fade at all (MPD does not fall back then).
        #expect(
            settings(5, mixRampDelay: 4, mixRampDB: -20).overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start,
                mixRampPreviousEnd: end) == (0, true))
        // One ramp missing, or MixRamp off: the plain crossfade.
        #expect(
            mixRamp.overlap(currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start)
                == (5 * 44100, false))
        #expect(
            settings(5).overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start,
                mixRampPreviousEnd: end) == (5 * 44100, false))
        // Crossfade off switches MixRamp off too (MPD's IsEnabled).
        #expect(
            settings(0, mixRampDelay: 1, mixRampDB: -20).overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: start,
                mixRampPreviousEnd: end
            ).frames == 0)
    }

    @Test(
        "mixramp_interpolate as MPD reads a ramp",
        arguments: [
            ("-30 1;-20 2;-10 3", -20.0, 2.0),  // a point at the level
            ("-30 1;-20 2;-10 3", -25.0, 1.5),  // between two points
            ("-30 1;-20 2;-10 3", -40.0, 1.0),  // below every point: the first
            ("-30 1;-20 2;-10 3", 0.0, -1.0),  // above every point: never reached
            ("-30 1;-20 2;-10 3;", -20.0, 2.0),  // a trailing separator
            ("garbage", -20.0, -1.0),
            ("-30 x;-20 2", -20.0, -1.0),
            ("", -20.0, -1.0),
        ])
    func interpolate(_ ramp: String, _ level: Double, _ expected: Double) {
        #expect(abs(CrossfadeSettings.interpolate(ramp, requiredDB: level) - expected) < 1e-6)
    }
}

@Suite("Mixing two songs' samples")
struct CrossfadeMixTests {
    @Test("the weights run from the outgoing song alone to the incoming one, half-way at the middle")
    func weights() {
        #expect(CrossfadeMix.incomingWeight(step: 0, of: 100) == 0)
        #expect(CrossfadeMix.incomingWeight(step: 50, of: 100) == 32768)
        #expect(CrossfadeMix.incomingWeight(step: 100, of: 100) == 65536)
        #expect(CrossfadeMix.incomingWeight(step: 200, of: 100) == 65536)
        #expect(CrossfadeMix.incomingWeight(step: 0, of: 0) == 65536)
    }

    @Test("MixRamp adds 16-bit samples and clamps them; a fade of float samples weighs them")
    func mixing() {
        let stereo16 = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)
        let incoming: [Int16] = [30000, -30000, 100, -100]
        var outgoing: [Int16] = [10000, -10000, 50, 50]
        incoming.withUnsafeBytes { from in
            outgoing.withUnsafeMutableBytes { into in
                CrossfadeMix.mix(from, into: into, frames: 2, format: stereo16, step: 0, length: 2, adding: true)
            }
        }
        #expect(outgoing == [32767, -32768, 150, -50])
        let stereoFloat = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .float32)
        let floatIncoming: [Float] = [1, 1, 1, 1]
        var floatOutgoing: [Float] = [0, 0, 0, 0]
        floatIncoming.withUnsafeBytes { from in
            floatOutgoing.withUnsafeMutableBytes { into in
                CrossfadeMix.mix(from, into: into, frames: 2, format: stereoFloat, step: 0, length: 2, adding: false)
            }
        }
        // Frame 0 is the fade's first step (the incoming song silent), frame 1 its middle.
        #expect(floatOutgoing == [0, 0, 0.5, 0.5])
    }
}

@Suite("Crossfade, MixRamp and ranges in the engine", .serialized)
struct CrossfadeEngineTests {
    /// Plays `files` to the end with `settings`, returning the samples the output received.
    func play(
        _ files: [String], _ settings: CrossfadeSettings, configure: @escaping (inout Queue) -> Void = { _ in }
    ) async throws -> (samples: [Int16], log: [String], status: PlayerStatus) {
        let (engine, recording) = try makeEngine(files, configure: configure)
        defer { engine.shutdown() }
        try await engine.withContext { context throws(PlayerError) in
            context.crossfade = settings
            return ((), [])
        }
        try await engine.handle(.play)
        try await waitUntil(engine, timeout: .seconds(60)) { $0.state == .stop || $0.state == .pause }
        return (samples(recording.data), recording.log, engine.status)
    }

    func crossfade(_ seconds: Int) -> CrossfadeSettings {
        var settings = CrossfadeSettings()
        settings.seconds = seconds
        return settings
    }

    @Test("crossfade 3: the last 3 s of a song and the first 3 s of the next, faded with MPD's sin² curve")
    func fadedMix() async throws {
        let a = samples(try referencePCM(try LongSongs.path("a.mp3")))
        let b = samples(try referencePCM(try LongSongs.path("b.mp3")))
        let (played, log, _) = try await play([try LongSongs.path("a.mp3"), try LongSongs.path("b.mp3")], crossfade(3))
        let fade = 3 * 44100
        let aFrames = a.count / 2
        var expected = Array(a[0..<(aFrames - fade) * 2])
        for frame in 0..<fade {
            // The incoming song's weight rises as sin²(π/2 · t), in 1/65536; the outgoing one's falls.
            let sine = sin(Double.pi / 2 * Double(frame) / Double(fade))
            let weight = Int((sine * sine * 65536).rounded())
            for channel in 0..<2 {
                let outgoing = Int(a[(aFrames - fade + frame) * 2 + channel])
                let incoming = Int(b[frame * 2 + channel])
                expected.append(Int16(clamping: (incoming * weight + outgoing * (65536 - weight) + 32768) >> 16))
            }
        }
        expected += b[(fade * 2)...]
        #expect(played.count == a.count + b.count - fade * 2)
        expectSameSamples(played, expected)
        #expect(log == ["open 44100:16:2", "drain", "drop", "close"])
    }

    @Test("crossfade 0 keeps the join sample-exact: the songs' concatenation")
    func noCrossfade() async throws {
        let a = try referencePCM(try LongSongs.path("a.mp3"))
        let b = try referencePCM(try LongSongs.path("b.mp3"))
        let (played, _, _) = try await play([try LongSongs.path("a.mp3"), try LongSongs.path("b.mp3")], crossfade(0))
        expectSameSamples(played, samples(a + b))
    }

    @Test(
        "no fade into a song under 20 s, of another format, or at single mode's pause at the song's end",
        arguments: ["short.mp3", "c22k.mp3", "single"])
    func noFadeWhereMPDHasNone(_ case: String) async throws {
        let next = `case` == "single" ? "b.mp3" : `case`
        let a = try referencePCM(try LongSongs.path("a.mp3"))
        let (played, _, status) = try await play([try LongSongs.path("a.mp3"), try LongSongs.path(next)], crossfade(3))
        {
            if `case` == "single" { $0.single = .on }
        }
        if `case` == "single" {
            // The border pause: the first song whole, then paused at the start of the next.
            expectSameSamples(played, samples(a))
            #expect(status.state == .pause && status.position == 1)
        } else {
            expectSameSamples(Array(played.prefix(a.count / 2)), samples(a))
            #expect(played.count == (a.count + (try referencePCM(try LongSongs.path(next))).count) / 2)
        }
    }

    @Test("MixRamp: both ramps tagged, the songs overlap where the ramps meet the level, added, not faded")
    func mixRamp() async throws {
        let a = samples(try referencePCM(try LongSongs.path("tagged-a.mp3")))
        let b = samples(try referencePCM(try LongSongs.path("tagged-b.mp3")))
        var settings = crossfade(5)
        settings.mixRampDB = -20
        settings.mixRampDelay = 1
        let (played, _, _) = try await play(
            [try LongSongs.path("tagged-a.mp3"), try LongSongs.path("tagged-b.mp3")], settings)
        // The end ramp reaches -20 dB 2 s before the end, the start ramp 1.5 s in: 3.5 s, less 1 s.
        let overlap = Int(2.5 * 44100)
        let aFrames = a.count / 2
        var expected = Array(a[0..<(aFrames - overlap) * 2])
        for index in 0..<overlap * 2 {
            expected.append(Int16(clamping: Int(a[(aFrames - overlap) * 2 + index]) + Int(b[index])))
        }
        expected += b[(overlap * 2)...]
        expectSameSamples(played, expected)
    }

    @Test("next during a fade starts the next song from its start, not from where the fade had it")
    func nextDuringFade() async throws {
        let (engine, _) = try makeEngine([try LongSongs.path("a.mp3"), try LongSongs.path("b.mp3")], paced: true)
        defer { engine.shutdown() }
        try await engine.withContext { context throws(PlayerError) in
            context.crossfade.seconds = 5
            return ((), [])
        }
        try await engine.handle(.play)
        // 3 s before the end: inside the 5 s fade, which begins at once over what is left.
        try await engine.handle(.seek(offset: 18_000_000_000))
        try await waitUntil(engine) { $0.writtenFrames > 18 * 44100 + 22050 }
        try await engine.handle(.next)
        #expect(engine.status.position == 1)
        #expect(engine.status.writtenFrames < 22050)
        #expect(engine.status.elapsed(at: engine.now()) < 0.5)
    }

    @Test("a ranged song plays exactly its slice of the whole song's PCM, then the next song gaplessly")
    func rangedSlice() async throws {
        let whole = try referencePCM(fixture("stereo-44k-cbr.mp3"))
        let next = try referencePCM(fixture("gapless-a.mp3"))
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3"), fixture("gapless-a.mp3")]) {
            queue in
            try? queue.setRange(SongRange(start: 500, end: 1_250), id: queue.entries[0].id)
        }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        // 0.5 s is frame 22050, 1.25 s frame 55125: 4 bytes a frame.
        expectSamePCM(recording.data, Array(whole[22050 * 4..<55125 * 4]) + next)
    }

    @Test("a range open at its end plays from its start to the song's end; a seek counts from its start")
    func openRangeAndSeek() async throws {
        let whole = try referencePCM(fixture("stereo-44k-cbr.mp3"))
        let (engine, recording) = try makeEngine([fixture("stereo-44k-cbr.mp3")], paced: true) { queue in
            try? queue.setRange(SongRange(start: 1_000, end: nil), id: queue.entries[0].id)
        }
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .play }
        // The song's length is the range's; positions count from its start.
        #expect(engine.status.lengthFrames == 132300 - 44100)
        #expect(engine.status.elapsed(at: engine.now()) < 0.5)
        try await engine.handle(.seek(offset: 1_500_000_000))
        try await waitUntil(engine) { $0.state == .stop }
        // What was played before the seek is the range's start; after it, from 2.5 s in the file.
        let data = recording.data
        let tail = Array(whole[((44100 + 66150) * 4)...])
        #expect(data.count >= tail.count)
        #expect(Array(data.suffix(tail.count)) == tail)
        #expect(Array(data.prefix(4 * 441)) == Array(whole[44100 * 4..<(44100 + 441) * 4]))
    }

    @Test("crossfade into a ranged song starts at its range and ends where the range ends")
    func crossfadeIntoRange() async throws {
        let a = samples(try referencePCM(try LongSongs.path("a.mp3")))
        let b = samples(try referencePCM(try LongSongs.path("b.mp3")))
        let (played, _, _) = try await play([try LongSongs.path("a.mp3"), try LongSongs.path("b.mp3")], crossfade(2)) {
            queue in
            try? queue.setRange(SongRange(start: 0, end: 20_500), id: queue.entries[1].id)
            try? queue.setRange(SongRange(start: 500, end: nil), id: queue.entries[0].id)
        }
        let fade = 2 * 44100
        let aSlice = Array(a[(22050 * 2)...])
        let bSlice = Array(b[0..<20_500 * 441 / 10 * 2])
        #expect(played.count == aSlice.count + bSlice.count - fade * 2)
        expectSameSamples(Array(played.prefix(aSlice.count - fade * 2)), Array(aSlice.prefix(aSlice.count - fade * 2)))
        expectSameSamples(Array(played.suffix(bSlice.count - fade * 2)), Array(bSlice.suffix(bSlice.count - fade * 2)))
    }
}

@Suite("Song ranges in the queue")
struct QueueRangeTests {
    @Test("setting a range changes the entry, the version and plchanges; an unknown id is refused")
    func setRange() throws {
        var queue = Queue()
        let ids = try queue.add(["/a.mp3", "/b.mp3"])
        let version = queue.version
        try queue.setRange(SongRange(start: 1_500, end: 3_000), id: ids[1])
        #expect(queue.entries[1].range == SongRange(start: 1_500, end: 3_000))
        #expect(queue.entries[0].range == nil)
        #expect(queue.version == version + 1)
        #expect(queue.positionsChanged(since: version) == [1])
        try queue.setRange(nil, id: ids[1])
        #expect(queue.entries[1].range == nil)
        #expect(throws: QueueError.noSuchID(99)) { try queue.setRange(nil, id: 99) }
    }

    @Test("frames of a range: milliseconds times the rate, rounded down as MPD's ToScale")
    func frames() {
        let range = SongRange(start: 1_234, end: 2_001)
        #expect(range.startFrame(rate: 44100) == 54419)
        #expect(range.endFrame(rate: 44100) == 88244)
        #expect(SongRange(start: 0, end: nil).endFrame(rate: 44100) == nil)
        #expect(
            SongRange(start: Int(UInt32.max), end: nil).startFrame(rate: 384_000) == 4_294_967_295 / 1000 * 384_000
                + 295 * 384)
    }
}

@Suite("MixRamp with ramps that say nothing useful")
struct MixRampDamagedTests {
    @Test("a ramp at infinity or no number gives no fade or at most the shorter song, never a trap")
    func damagedRamps() {
        let cd = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)
        var settings = CrossfadeSettings()
        settings.seconds = 5
        settings.mixRampDB = -30
        settings.mixRampDelay = .infinity
        let long = 25 * 44100
        // inf - inf: no number, no fade.
        #expect(
            settings.overlap(
                currentLength: long, nextLength: 21 * 44100, format: cd, nextFormat: cd, mixRampStart: "-30 inf",
                mixRampPreviousEnd: "-30 1") == (0, true))
        settings.mixRampDelay = 1
        // An endless ramp: the shorter song.
        #expect(
            settings.overlap(
                currentLength: long, nextLength: 21 * 44100, format: cd, nextFormat: cd, mixRampStart: "-30 inf",
                mixRampPreviousEnd: "-30 1") == (21 * 44100, true))
        settings.mixRampDB = .nan
        #expect(
            settings.overlap(
                currentLength: long, nextLength: long, format: cd, nextFormat: cd, mixRampStart: "-30 1",
                mixRampPreviousEnd: "-30 1"
            ).frames >= 0)
    }
}
