/// How one sample is stored in interleaved PCM.
public enum SampleFormat: String, Sendable, Hashable, CaseIterable {
    /// Signed 16-bit integers, little-endian: what `mpg123 -s` prints and most sound cards take.
    case signed16 = "s16"
    /// 32-bit IEEE floats, little-endian, nominally within -1...1: what `mpg123 -e f32 -s` prints.
    case float32 = "f32"

    /// Bytes one sample takes.
    public var bytesPerSample: Int {
        switch self {
        case .signed16: 2
        case .float32: 4
        }
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
        let bits = self.sampleFormat == .float32 ? "f" : "16"
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
