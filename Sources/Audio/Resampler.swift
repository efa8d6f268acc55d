import CSoxr

/// Turns a song's PCM into the fixed format a FIFO reader expects: channels are mapped by hand
/// (mono is duplicated, more channels are averaged down, fewer are padded with silence), the rate is
/// converted by libsoxr (its default high-quality recipe). A stream already in the FIFO's format
/// passes through bit-exact, without soxr.
///
/// Streaming: `process` takes any number of whole frames and returns what soxr has ready; `flush`
/// returns soxr's tail at the end of a stream; `reset` forgets a dropped stream. Not `Sendable`: one
/// thread (the output's) uses it.
public final class Resampler {
    /// The format of the frames given to `process`.
    public let input: AudioFormat
    /// The format of the bytes it returns.
    public let output: FIFOFormat
    /// soxr's state when the rates differ; nil when they are equal.
    private let soxr: soxr_t?
    /// Input converted to floats with the output's channel count, reused between calls.
    private var mapped: [Float] = []
    /// soxr's output (floats), reused between calls.
    private var resampled: [Float] = []

    /// A resampler from `input` to `output`.
    /// - Throws: `ResamplerError` with soxr's reason if soxr cannot be set up.
    public init(input: AudioFormat, output: FIFOFormat) throws(ResamplerError) {
        self.input = input
        self.output = output
        guard input.sampleRate != output.sampleRate else {
            self.soxr = nil
            return
        }
        // Floats in and out: the channel mapping has made floats already, and converting to the FIFO's
        // integers afterwards is one loop for every bit depth.
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var error: soxr_error_t?
        let soxr = soxr_create(
            Double(input.sampleRate), Double(output.sampleRate), UInt32(output.channels), &error, &ioSpec, nil, nil)
        if let error {
            throw ResamplerError(input: input, output: output, reason: String(cString: error))
        }
        guard let soxr else {
            throw ResamplerError(input: input, output: output, reason: "soxr_create returned nothing")
        }
        self.soxr = soxr
    }

    deinit {
        if let soxr = self.soxr {
            soxr_delete(soxr)
        }
    }

    /// True when the input is already in the output's format and goes through untouched.
    public var isPassThrough: Bool {
        self.soxr == nil && self.input.channels == self.output.channels && self.input.sampleFormat == .signed16
            && self.output.bitsPerSample == 16
    }

    /// Converts whole interleaved frames of the input format; returns the output's bytes ready so far
    /// (soxr holds some back until more input or `flush`).
    public func process(_ frames: UnsafeRawBufferPointer) -> [UInt8] {
        if self.isPassThrough {
            return Array(frames)
        }
        self.mapChannels(frames)
        guard let soxr = self.soxr else {
            return self.encode(self.mapped[...])
        }
        let inputFrames = self.mapped.count / self.output.channels
        // soxr's output for n input frames is n × ratio, plus what it held back: room for a little more.
        let capacity = inputFrames * self.output.sampleRate / self.input.sampleRate + 64
        return self.mapped.withUnsafeBufferPointer { mapped in
            self.run(soxr, input: UnsafeRawPointer(mapped.baseAddress), frames: inputFrames, capacity: capacity)
        }
    }

    /// The tail soxr still holds at the end of a stream; afterwards the resampler starts afresh.
    public func flush() -> [UInt8] {
        guard let soxr = self.soxr else { return [] }
        var bytes: [UInt8] = []
        while true {
            let chunk = self.run(soxr, input: nil, frames: 0, capacity: 4096)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        soxr_clear(soxr)
        return bytes
    }

    /// Forgets what soxr holds (a drop or a seek): the next frames start a new stream.
    public func reset() {
        if let soxr = self.soxr {
            soxr_clear(soxr)
        }
    }

    /// One soxr_process call over `frames` input frames at `input` (nil: flush), with room for
    /// `capacity` output frames, loops until soxr has consumed the input; returns the encoded output.
    private func run(_ soxr: soxr_t, input: UnsafeRawPointer?, frames: Int, capacity: Int) -> [UInt8] {
        let channels = self.output.channels
        if self.resampled.count < capacity * channels {
            self.resampled = [Float](repeating: 0, count: capacity * channels)
        }
        var bytes: [UInt8] = []
        var consumed = 0
        repeat {
            var inputDone = 0
            var outputDone = 0
            let next = input.map { $0 + consumed * channels * MemoryLayout<Float>.size }
            self.resampled.withUnsafeMutableBufferPointer { out in
                // soxr only fails on bad arguments, which these are not; its error has nowhere better to go.
                _ = soxr_process(
                    soxr, next, input == nil ? 0 : frames - consumed, &inputDone, out.baseAddress, capacity,
                    &outputDone)
            }
            consumed += inputDone
            bytes += self.encode(self.resampled[0..<(outputDone * channels)])
            if input == nil || (inputDone == 0 && outputDone == 0) { break }
        } while consumed < frames
        return bytes
    }

    /// Fills `mapped` with the input's frames as floats, in the output's channel count. Loops over
    /// raw pointers with the format decided outside them: this runs for every sample the FIFO gets.
    private func mapChannels(_ frames: UnsafeRawBufferPointer) {
        let inChannels = self.input.channels
        let outChannels = self.output.channels
        let count = frames.count / self.input.bytesPerFrame
        let samples = count * inChannels
        var mapped = self.mapped
        self.mapped = []  // `mapped` is then the only reference: filled in place, not copied
        mapped.removeAll(keepingCapacity: true)
        mapped.reserveCapacity(count * outChannels)
        if inChannels == outChannels {
            // The common case, converted straight into the array.
            mapped.append(contentsOf: repeatElement(0, count: samples))
            mapped.withUnsafeMutableBufferPointer { out in
                Self.convert(frames, format: self.input.sampleFormat, samples: samples, into: out.baseAddress!)
            }
            self.mapped = mapped
            return
        }
        var converted = [Float](repeating: 0, count: samples)
        converted.withUnsafeMutableBufferPointer { out in
            Self.convert(frames, format: self.input.sampleFormat, samples: samples, into: out.baseAddress!)
        }
        converted.withUnsafeBufferPointer { sample in
            for frame in 0..<count {
                let base = frame * inChannels
                if inChannels == 1 {
                    for _ in 0..<outChannels { mapped.append(sample[base]) }
                } else if outChannels == 1 {
                    var sum: Float = 0
                    for channel in 0..<inChannels { sum += sample[base + channel] }
                    mapped.append(sum / Float(inChannels))
                } else {
                    for channel in 0..<outChannels {
                        mapped.append(channel < inChannels ? sample[base + channel] : 0)
                    }
                }
            }
        }
        self.mapped = mapped
    }

    /// `samples` samples of `format` from `bytes`, as floats within -1...1, into `out`.
    private static func convert(
        _ bytes: UnsafeRawBufferPointer, format: SampleFormat, samples: Int, into out: UnsafeMutablePointer<Float>
    ) {
        switch format {
        case .signed16:
            for index in 0..<samples {
                let value = Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))
                out[index] = Float(value) / 32768
            }
        case .signed24, .signed32:
            let scale: Float = format == .signed24 ? 8_388_608 : 2_147_483_648
            for index in 0..<samples {
                let value = Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
                out[index] = Float(value) / scale
            }
        case .float32:
            for index in 0..<samples {
                out[index] = bytes.loadUnaligned(fromByteOffset: index * 4, as: Float.self)
            }
        }
    }

    /// The output's little-endian integers for floats nominally within -1...1 (clipped).
    private func encode(_ samples: ArraySlice<Float>) -> [UInt8] {
        let bytesPerSample = self.output.bytesPerSample
        let bits = self.output.bitsPerSample
        var bytes = [UInt8](repeating: 0, count: samples.count * bytesPerSample)
        samples.withUnsafeBufferPointer { samples in
            bytes.withUnsafeMutableBytes { out in
                switch bits {
                case 16:
                    for (index, value) in samples.enumerated() {
                        let clipped = Double(max(-1, min(1, value)))
                        let integer = Int16(clamping: Int((clipped * 32768).rounded()))
                        out.storeBytes(of: integer.littleEndian, toByteOffset: index * 2, as: Int16.self)
                    }
                case 24:
                    // snapcast keeps 24-bit samples in 4 bytes, right-aligned.
                    for (index, value) in samples.enumerated() {
                        let clipped = Double(max(-1, min(1, value)))
                        let integer = Int32(max(-8_388_608, min(8_388_607, Int((clipped * 8_388_608).rounded()))))
                        out.storeBytes(of: integer.littleEndian, toByteOffset: index * 4, as: Int32.self)
                    }
                default:
                    for (index, value) in samples.enumerated() {
                        let clipped = Double(max(-1, min(1, value)))
                        let integer = Int32(clamping: Int64((clipped * 2_147_483_648).rounded()))
                        out.storeBytes(of: integer.littleEndian, toByteOffset: index * 4, as: Int32.self)
                    }
                }
            }
        }
        return bytes
    }
}

/// soxr could not be set up for a conversion.
public struct ResamplerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The song's format.
    public let input: AudioFormat
    /// The FIFO's format.
    public let output: FIFOFormat
    /// soxr's words.
    public let reason: String

    public var description: String {
        "cannot resample \(self.input.readableDescription) to \(self.output): \(self.reason)"
    }
}
