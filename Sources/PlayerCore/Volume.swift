import Audio

/// Software volume on a perceptual (cubic) curve: the loudness step from 50 to 60 sounds like the
/// step from 80 to 90. At 100 samples pass through bit for bit; below, they only shrink, so nothing
/// clips.
public struct SoftwareVolume: Sendable, Hashable {
    /// The volume, 0 to 100.
    public let level: Int
    /// True when muted: silence whatever the level.
    public let isMuted: Bool

    /// A volume `level` (clamped to 0...100), muted or not.
    public init(level: Int, isMuted: Bool = false) {
        self.level = min(100, max(0, level))
        self.isMuted = isMuted
    }

    /// The linear gain the level stands for: (level / 100)³.
    public var gain: Double {
        if self.isMuted { return 0 }
        let fraction = Double(self.level) / 100
        return fraction * fraction * fraction
    }

    /// True when samples pass through untouched.
    public var isUnity: Bool { !self.isMuted && self.level == 100 }

    /// Scales the interleaved samples in `buffer`, which holds PCM in `format`.
    public func apply(to buffer: UnsafeMutableRawBufferPointer, format: SampleFormat) {
        if self.isUnity { return }
        guard let base = buffer.baseAddress else { return }
        let gain = self.gain
        if gain == 0 {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            return
        }
        switch format {
        case .signed16:
            let samples = base.assumingMemoryBound(to: Int16.self)
            // Q16 fixed point: exact enough (1/65536) and several times faster than floating point.
            let factor = Int32(gain * 65536)
            for index in 0..<buffer.count / 2 {
                samples[index] = Int16(truncatingIfNeeded: (Int32(samples[index]) &* factor &+ 0x8000) >> 16)
            }
        case .signed24, .signed32:
            let samples = base.assumingMemoryBound(to: Int32.self)
            // Q30 fixed point in 64 bits: a 32-bit sample times a factor up to 2^30 fits.
            let factor = Int64(gain * 1_073_741_824)
            for index in 0..<buffer.count / 4 {
                samples[index] = Int32(truncatingIfNeeded: (Int64(samples[index]) &* factor &+ (1 << 29)) >> 30)
            }
        case .float32:
            let samples = base.assumingMemoryBound(to: Float.self)
            let factor = Float(gain)
            for index in 0..<buffer.count / 4 {
                samples[index] *= factor
            }
        }
    }
}
