import Audio
import Testing

@testable import PlayerCore

/// 24- and 32-bit samples (hi-res FLAC) through software volume and crossfades, at their full resolution.
@Suite("24- and 32-bit samples in volume and crossfade")
struct WideSampleTests {
    @Test("volume 100 passes 24- and 32-bit samples bit for bit; below, it scales them without losing bits")
    func volume() {
        var samples: [Int32] = [8_388_607, -8_388_608, 1, -1, 0, 0x123456]
        let original = samples
        samples.withUnsafeMutableBytes { SoftwareVolume(level: 100).apply(to: $0, format: .signed24) }
        #expect(samples == original)
        samples.withUnsafeMutableBytes { SoftwareVolume(level: 50).apply(to: $0, format: .signed24) }
        // (1/2)^3 = 1/8, rounded: the low bits survive (16-bit samples would have lost 8 of them).
        #expect(samples == [1_048_576, -1_048_576, 0, 0, 0, 0x2468B])
        var wide: [Int32] = [.max, .min, 1 << 20]
        wide.withUnsafeMutableBytes { SoftwareVolume(level: 50).apply(to: $0, format: .signed32) }
        #expect(wide == [268_435_456, -268_435_456, 1 << 17])
        wide.withUnsafeMutableBytes { SoftwareVolume(level: 30, isMuted: true).apply(to: $0, format: .signed32) }
        #expect(wide == [0, 0, 0])
    }

    @Test("a crossfade mixes 24-bit samples at 24 bits and MixRamp's sum clamps to 24 bits")
    func crossfade() {
        let format = AudioFormat(sampleRate: 96000, channels: 1, sampleFormat: .signed24)
        let incoming: [Int32] = [8_000_000, -8_000_000, 3]
        var outgoing: [Int32] = [8_000_000, -8_000_000, 5]
        incoming.withUnsafeBytes { from in
            outgoing.withUnsafeMutableBytes { into in
                CrossfadeMix.mix(from, into: into, frames: 3, format: format, step: 0, length: 3, adding: true)
            }
        }
        #expect(outgoing == [8_388_607, -8_388_608, 8])
        // Halfway through a fade of equal signals, the mix is the signal, to the last bit.
        var steady: [Int32] = [0x345678, -0x345678]
        let same = steady
        same.withUnsafeBytes { from in
            steady.withUnsafeMutableBytes { into in
                CrossfadeMix.mix(from, into: into, frames: 2, format: format, step: 1, length: 3, adding: false)
            }
        }
        #expect(steady == same)
    }
}
