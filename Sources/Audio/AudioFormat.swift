/// How one sample is stored in interleaved PCM.
public enum SampleFormat: String, Sendable, Hashable, CaseIterable {
    /// Signed 16-bit integers, little-endian: what `mpg123 -s` prints and most sound cards take.
    case signed16 = "s16"
    /// 24-bit signed integers in the low three bytes of a little-endian 32-bit word, sign-extended
    /// (ALSA's `S24_LE`, MPD's `S24_P32`): 24-bit FLAC at its full resolution.
    case signed24 = "s24"
    /// Signed 32-bit integers, little-endian: 32-bit FLAC.
    case signed32 = "s32"
    /// 32-bit IEEE floats, little-endian, nominally within -1...1: what `mpg123 -e f32 -s` prints.
    case float32 = "f32"

    /// Bytes one sample takes in memory (a 24-bit sample takes a 32-bit word).
    public var bytesPerSample: Int {
        switch self {
        case .signed16: 2
        case .signed24, .signed32, .float32: 4
        }
    }

    /// The bits of resolution a sample carries: 16, 24 or 32.
    public var bits: Int {
        switch self {
        case .signed16: 16
        case .signed24: 24
        case .signed32, .float32: 32
        }
    }

    /// The integer format that holds `bits` of resolution without loss: 16 for up to 16 bits (8-bit
    /// samples are widened), 24 for up to 24 (12- and 20-bit ones are), 32 above.
    public static func integer(holding bits: Int) -> SampleFormat {
        bits <= 16 ? .signed16 : bits <= 24 ? .signed24 : .signed32
    }
}

/// The shape of a PCM stream: rate, channel count and sample format.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second, e.g. 44100.
    public var sampleRate: Int
    /// Samples per frame, interleaved: 1 for mono, 2 for stereo.
    public var channels: Int
    /// How each sample is stored.
    public var sampleFormat: SampleFormat

    /// Creates a format; the caller vouches for positive rate and channel count.
    public init(sampleRate: Int, channels: Int, sampleFormat: SampleFormat) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
    }

    /// Bytes one interleaved frame takes.
    public var bytesPerFrame: Int { self.channels * self.sampleFormat.bytesPerSample }

    /// MPD's notation, `rate:bits:channels`, with `f` for float: `44100:16:2`, `48000:f:1`.
    public var description: String {
        let bits = self.sampleFormat == .float32 ? "f" : "\(self.sampleFormat.bits)"
        return "\(self.sampleRate):\(bits):\(self.channels)"
    }

    /// Reads for a person: `44100 Hz stereo s16`.
    public var readableDescription: String {
        let layout =
            switch self.channels {
            case 1: "mono"
            case 2: "stereo"
            default: "\(self.channels) channels"
            }
        return "\(self.sampleRate) Hz \(layout) \(self.sampleFormat.rawValue)"
    }

    /// The whole frames a duration in nanoseconds spans at this rate, rounded down, without overflow.
    public func frames(inNanoseconds nanoseconds: Int64) -> Int {
        let seconds = Int(nanoseconds / 1_000_000_000)
        let remainder = Int(nanoseconds % 1_000_000_000)
        return seconds * self.sampleRate + remainder * self.sampleRate / 1_000_000_000
    }

    /// The nanoseconds a count of frames lasts at this rate, without overflow.
    public func nanoseconds(forFrames frames: Int) -> Int64 {
        let seconds = frames / self.sampleRate
        let remainder = frames % self.sampleRate
        return Int64(seconds) * 1_000_000_000 + Int64(remainder) * 1_000_000_000 / Int64(self.sampleRate)
    }
}
