import Audio
import BenchmarkSupport
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Players in the state each benchmark needs, built through the public API as the engine builds them.
enum CoreFixtures {
    /// CD audio: what most MP3s decode to.
    static let format = SampleStatus.format

    /// A context playing the first of three songs: `play`, then the engine's report that the song opened.
    static func playingContext() throws -> PlayerContext {
        var queue = Queue()
        try queue.add(["/srv/music/a.mp3", "/srv/music/b.mp3", "/srv/music/c.mp3"])
        var context = PlayerContext(queue: queue)
        _ = try context.handle(.play, now: 0)
        guard case .prepare(let prepare) = context.state else {
            throw FixtureError(description: "play led to \(context.state), not to prepare")
        }
        _ = context.handle(
            .songOpened(OpenSong(entry: prepare.entry, format: CoreFixtures.format, lengthFrames: 240 * 44100)))
        guard context.state.kind == .play else {
            throw FixtureError(description: "the opened song left the player \(context.state)")
        }
        return context
    }
}

/// Why a benchmark's player could not be set up.
struct FixtureError: Error, CustomStringConvertible {
    let description: String
}

/// One period of 44.1 kHz stereo audio as the engine sizes it (`EngineCore.reserveBuffer`): the
/// engine's default period length in frames, at least 64, in a 16-byte-aligned buffer.
final class VolumePeriod {
    /// The buffer the volume scales.
    let samples: UnsafeMutableRawBufferPointer
    /// A 440 Hz and 660 Hz tone at half scale, copied into `samples` by `refill()`.
    private let source: UnsafeMutableRawBufferPointer

    /// The frames in one period of `format`, as the engine counts them with its default settings.
    static func frames(of format: AudioFormat) -> Int {
        let period = EngineConfiguration(output: .null(paced: false)).periodNanoseconds
        return max(64, format.frames(inNanoseconds: period))
    }

    init(sampleFormat: SampleFormat) {
        let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: sampleFormat)
        let frames = VolumePeriod.frames(of: format)
        self.samples = .allocate(byteCount: frames * format.bytesPerFrame, alignment: 16)
        self.source = .allocate(byteCount: frames * format.bytesPerFrame, alignment: 16)
        for frame in 0..<frames {
            let time = Double(frame) / Double(format.sampleRate)
            for (channel, frequency) in [440.0, 660.0].enumerated() {
                let value = 0.5 * sin(2 * Double.pi * frequency * time)
                let offset = (frame * format.channels + channel) * sampleFormat.bytesPerSample
                switch sampleFormat {
                case .signed16: self.source.storeBytes(of: Int16(value * 32767), toByteOffset: offset, as: Int16.self)
                case .float32: self.source.storeBytes(of: Float(value), toByteOffset: offset, as: Float.self)
                }
            }
        }
        self.refill()
    }

    deinit {
        self.samples.deallocate()
        self.source.deallocate()
    }

    /// Puts the tone back into `samples`.
    func refill() {
        self.samples.copyMemory(from: UnsafeRawBufferPointer(self.source))
    }
}

/// An engine playing two fixture songs over and over on the paced null output, as playerd plays while
/// a client asks for `status`: the audio thread decodes, writes and publishes a status sample ten
/// times a second.
final class PlayingEngine: Sendable {
    private let current = Mutex<AudioEngine?>(nil)

    /// The playing engine, between `start()` and `stop()`.
    var engine: AudioEngine? { self.current.withLock { $0 } }

    /// Starts the engine and plays; throws if the first song does not play.
    func start() async throws {
        // The repository's fixtures, found from this file: Benchmarks/Benchmarks/PlayerCoreBenchmarks/.
        let repository = #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(4)
        let fixtures = repository.joined(separator: "/") + "/Fixtures/"
        var queue = Queue()
        try queue.add([fixtures + "stereo-44k-cbr.mp3", fixtures + "gapless-whole.mp3"])
        queue.repeatMode = true
        let engine = AudioEngine(
            configuration: EngineConfiguration(output: .null(paced: true)), context: PlayerContext(queue: queue))
        try await engine.handle(.play)
        let status = engine.status
        guard status.state == .play, status.format != nil else {
            engine.shutdown()
            throw FixtureError(description: "the engine is \(status.state): \(status.error ?? "no error")")
        }
        self.current.withLock { $0 = engine }
    }

    /// Stops playback and the audio thread.
    func stop() {
        self.current.withLock { engine in
            engine?.shutdown()
            engine = nil
        }
    }
}
