import Audio
import Testing

@testable import PlayerDaemon

/// The 16-bit samples `getfingerprint` feeds libchromaprint from a song of any format: as MPD's
/// `PcmConvert` makes them, so that fingerprints of 24-bit FLAC and Vorbis are mpd's.
@Suite("getfingerprint's 16-bit samples from 24-bit, 32-bit and float songs")
struct FormatsFingerprintTests {
    /// The inputs, and what MPD 0.23.12's `PcmDither::Dither` (src/pcm/Dither.cxx, compiled with g++
    /// from that source in one harness, one dither state per format) gives for them in this order.
    static let input24: [Int32] = [
        0, 1, -1, 127, 128, -129, 8_388_607, -8_388_608, 1_234_567, -7_654_321, 255, 256, 4095, -4096, 8_388_600,
        100_000,
    ]
    static let mpd24: [Int16] = [0, 0, 1, -1, 1, 0, 32767, -32767, 4822, -29900, 2, 0, 16, -15, 32767, 391]
    static let input32: [Int32] = [
        0, 1, -1, 32767, 32768, -32769, .max, .min, 123_456_789, -987_654_321, 65535, 65536, 1_048_575, -1_048_576,
        2_147_480_000, 99_999_999,
    ]
    static let mpd32: [Int16] = [1, -2, 2, -2, 3, -2, 32767, -32767, 1883, -15070, 1, 1, 17, -17, 32767, 1527]

    /// Converts `samples` (4 bytes each) in one call, as a decoded block is.
    private static func converted(_ samples: [Int32], _ format: SampleFormat) -> [Int16] {
        var converter = SixteenBitConverter()
        var source = samples
        var output = [Int16](repeating: 0, count: samples.count)
        source.withUnsafeMutableBytes { raw in
            output.withUnsafeMutableBufferPointer { destination in
                converter.convert(raw, format: format, count: samples.count, into: destination)
            }
        }
        return output
    }

    @Test("24- and 32-bit samples go through MPD's dither: the same 16-bit samples, one state across blocks")
    func ditherIsMPDs() {
        #expect(Self.converted(Self.input24, .signed24) == Self.mpd24)
        #expect(Self.converted(Self.input32, .signed32) == Self.mpd32)
        // Sample by sample, the state carries over: the same as one block.
        var converter = SixteenBitConverter()
        #expect(Self.input24.map { Int16(converter.dither24($0)) } == Self.mpd24)
    }

    @Test("16-bit samples pass as they are; floats are multiplied by 32768, cut toward zero and clamped")
    func sixteenBitsAndFloats() {
        #expect(Self.converted([Int32(bitPattern: 0x8000_7FFF)], .signed16) == [32767])
        let floats: [Float] = [0, 0.5, -0.5, 1.0 / 32768 * 1.9, -1.0 / 32768 * 1.9, 1, -1, 2, -2, .nan, .infinity]
        let bits = floats.map { Int32(bitPattern: $0.bitPattern) }
        #expect(Self.converted(bits, .float32) == [0, 16384, -16384, 1, -1, 32767, -32768, 32767, -32768, 0, 32767])
    }

    @Test("MPD's generator: its first states from zero")
    func generator() {
        var state: Int32 = 0
        var states: [UInt32] = []
        for _ in 0..<3 {
            state = SixteenBitConverter.prng(state)
            states.append(UInt32(bitPattern: state))
        }
        // (state × 0x19660D + 0x3C6EF35F) mod 2³², from 0 (Numerical Recipes' ranqd1).
        #expect(states == [0x3C6E_F35F, 0x4750_2932, 0xD1CC_F6E9])
    }
}
