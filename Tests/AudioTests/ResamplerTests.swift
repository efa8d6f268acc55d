import Foundation
import Testing

@testable import Audio

/// Interleaved S16 frames of a sine at `frequency`, amplitude one half, the same in every channel.
func sine(frequency: Double, rate: Int, channels: Int, seconds: Double) -> [Int16] {
    let frames = Int(Double(rate) * seconds)
    var samples: [Int16] = []
    samples.reserveCapacity(frames * channels)
    for frame in 0..<frames {
        let value = Int16((sin(2 * Double.pi * frequency * Double(frame) / Double(rate)) * 16384).rounded())
        for _ in 0..<channels { samples.append(value) }
    }
    return samples
}

/// The frequency of a tone from its rising zero crossings, interpolated between samples: the number
/// of whole periods between the first and the last crossing over the time between them.
func measuredFrequency(_ samples: [Double], rate: Int) -> Double {
    var crossings: [Double] = []
    for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
        let fraction = -samples[index - 1] / (samples[index] - samples[index - 1])
        crossings.append(Double(index - 1) + fraction)
    }
    guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) * Double(rate) / (last - first)
}

/// One channel of interleaved little-endian S16 bytes, as doubles.
func channel(_ bytes: [UInt8], channel: Int, of channels: Int) -> [Double] {
    bytes.withUnsafeBytes { raw in
        stride(from: channel * 2, to: raw.count - 1, by: channels * 2).map {
            Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int16.self)))
        }
    }
}

@Suite("Resampler")
struct ResamplerTests {
    @Test("a 44.1 kHz 440 Hz sine resampled to 48 kHz is 440 Hz and as long")
    func pitchAndLength() throws {
        let input = sine(frequency: 440, rate: 44100, channels: 2, seconds: 2)
        let resampler = try Resampler(input: stereo44, output: .standard)
        var output: [UInt8] = []
        // In uneven chunks, as the engine writes.
        input.withUnsafeBytes { raw in
            var start = 0
            var chunk = 1000
            while start < raw.count {
                let end = min(raw.count, start + chunk * 4)
                output += resampler.process(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                start = end
                chunk = chunk == 1000 ? 4410 : 1000
            }
        }
        output += resampler.flush()
        let left = channel(output, channel: 0, of: 2)
        let right = channel(output, channel: 1, of: 2)
        #expect(abs(measuredFrequency(left, rate: 48000) - 440) < 0.5)
        #expect(left == right)
        // Two seconds at 48 kHz, within one period (109 frames).
        #expect(abs(left.count - 96000) <= 109)
    }

    @Test("mono is duplicated into both channels")
    func monoToStereo() throws {
        let mono = AudioFormat(sampleRate: 44100, channels: 1, sampleFormat: .signed16)
        let input = sine(frequency: 1000, rate: 44100, channels: 1, seconds: 1)
        let resampler = try Resampler(input: mono, output: .standard)
        var output = input.withUnsafeBytes { resampler.process($0) }
        output += resampler.flush()
        let left = channel(output, channel: 0, of: 2)
        #expect(left == channel(output, channel: 1, of: 2))
        #expect(abs(measuredFrequency(left, rate: 48000) - 1000) < 0.5)
    }

    @Test("a stream already in the FIFO's format passes through bit-exact")
    func passThrough() throws {
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .signed16)
        let input = sine(frequency: 440, rate: 48000, channels: 2, seconds: 0.5)
        let resampler = try Resampler(input: format, output: .standard)
        #expect(resampler.isPassThrough)
        let output = input.withUnsafeBytes { resampler.process($0) }
        #expect(output == input.withUnsafeBytes { Array($0) })
        #expect(resampler.flush().isEmpty)
    }

    /// Little-endian integers of `width` bytes, signed, from `bytes`.
    private func integers(_ bytes: [UInt8], width: Int) -> [Int] {
        bytes.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count, by: width).map { offset in
                width == 2
                    ? Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
                    : Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
            }
        }
    }

    @Test(
        "samples are mapped and encoded exactly at the same rate: 24 and 32 bits, a downmix to mono, float input",
        arguments: [
            // (input format, FIFO format, input samples as S16 or as floats, expected output integers)
            ("s16", "48000:24:2", [-32768, 32767, 0, 16384], [-8_388_608, 8_388_352, 0, 4_194_304]),
            ("s16", "48000:32:2", [-32768, 1, 0, -16384], [-2_147_483_648, 65536, 0, -1_073_741_824]),
            // (-32768 + 32767) / 2 is -0.5 of a step: rounded away from zero.
            ("s16", "48000:16:1", [-32768, 32767, 0, 16384], [-1, 8192]),
            // Floats beyond -1...1 are clipped.
            ("f32", "48000:16:2", [-2, 0.5, 1, -0.25], [-32768, 16384, 32767, -8192]),
        ] as [(String, String, [Double], [Int])])
    func exactMapping(input: String, fifo: String, samples: [Double], expected: [Int]) throws {
        let output = try FIFOFormat(parsing: fifo)
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: input == "s16" ? .signed16 : .float32)
        let resampler = try Resampler(input: format, output: output)
        let bytes =
            input == "s16"
            ? samples.map { Int16($0) }.withUnsafeBytes { resampler.process($0) }
            : samples.map { Float($0) }.withUnsafeBytes { resampler.process($0) }
        #expect(integers(bytes, width: output.bytesPerSample) == expected)
    }

    @Test("flush returns the tail soxr held back")
    func flushReturnsTheTail() throws {
        let input = sine(frequency: 440, rate: 44100, channels: 2, seconds: 0.1)
        let resampler = try Resampler(input: stereo44, output: .standard)
        let body = input.withUnsafeBytes { resampler.process($0) }
        let tail = resampler.flush()
        #expect(!tail.isEmpty)
        #expect(abs((body.count + tail.count) / 4 - 4800) <= 2)
    }

    @Test("FIFO formats parse as snapserver's sampleformat, with clear errors")
    func fifoFormats() throws {
        #expect(try FIFOFormat(parsing: "48000:16:2") == .standard)
        #expect(try FIFOFormat(parsing: "44100:32:1").description == "44100:32:1")
        #expect(try FIFOFormat(parsing: "96000:24:2").bytesPerFrame == 8)
        #expect(throws: OutputSpecError.self) { try FIFOFormat(parsing: "48000:8:2") }
        #expect(throws: OutputSpecError.self) { try FIFOFormat(parsing: "48000:16") }
        #expect(throws: OutputSpecError.self) { try FIFOFormat(parsing: "fast:16:2") }
        let spec = try OutputSpec(parsing: "fifo:/run/playerd/snapfifo")
        #expect(spec == .fifo(path: "/run/playerd/snapfifo", format: .standard))
        #expect(spec.description == "fifo:/run/playerd/snapfifo")
        #expect(spec.makeOutput().name == "fifo:/run/playerd/snapfifo")
    }
}
