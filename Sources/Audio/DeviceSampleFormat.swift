import CALSA

/// How samples are laid out for a sound card, when it cannot take the stream's own layout: a card that
/// plays 24 bits often takes them only in 32-bit words (`S32_LE`) or packed in three bytes (`S24_3LE`),
/// and many take only 16 bits (a Raspberry Pi's headphone jack). Like MPD, playerd then converts, in the
/// order that loses least: the stream's layout, the same resolution in another layout, then fewer bits.
public enum DeviceSampleFormat: Sendable, Equatable, CaseIterable {
    case s16
    /// 24 bits in the low three bytes of a 32-bit word (ALSA `S24_LE`): playerd's own `.signed24`.
    case s24InWord
    /// 24 bits packed in three bytes (ALSA `S24_3LE`).
    case s24Packed
    case s32
    case float

    /// The ALSA format.
    var alsa: snd_pcm_format_t {
        switch self {
        case .s16: SND_PCM_FORMAT_S16_LE
        case .s24InWord: SND_PCM_FORMAT_S24_LE
        case .s24Packed: SND_PCM_FORMAT_S24_3LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .float: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    /// Bytes a sample takes on the device.
    var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s24Packed: 3
        case .s24InWord, .s32, .float: 4
        }
    }

    /// The layouts to try for a stream of `format`, best first.
    static func candidates(for format: SampleFormat) -> [DeviceSampleFormat] {
        switch format {
        case .signed16: [.s16]
        case .signed24: [.s24InWord, .s32, .s24Packed, .s16]
        case .signed32: [.s32, .s24InWord, .s24Packed, .s16]
        case .float32: [.float]
        }
    }

    /// The stream's own layout, which needs no conversion.
    static func native(_ format: SampleFormat) -> DeviceSampleFormat { Self.candidates(for: format)[0] }

    /// Converts `samples` samples of `source` in `input` to this layout in `output` (which holds
    /// `samples × bytesPerSample` bytes). Integers are widened by shifting left and narrowed by dropping low
    /// bits with rounding, clamped; floats never need converting.
    func convert(
        _ input: UnsafeRawBufferPointer, from source: SampleFormat, samples: Int,
        into output: UnsafeMutableRawBufferPointer
    ) {
        // Every integer source is first read as a value with 32 bits of resolution.
        let shift: Int32 = source == .signed24 ? 8 : source == .signed16 ? 16 : 0
        for index in 0..<samples {
            let value: Int32 =
                source == .signed16
                ? Int32(input.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)) << shift
                : input.loadUnaligned(fromByteOffset: index * 4, as: Int32.self) << shift
            switch self {
            case .s16:
                let narrowed = Int16(clamping: (Int64(value) + 0x8000) >> 16)
                output.storeBytes(of: narrowed.littleEndian, toByteOffset: index * 2, as: Int16.self)
            case .s24InWord, .s24Packed:
                let narrowed = Int32(min(0x7f_ffff, (Int64(value) + 0x80) >> 8))
                if self == .s24InWord {
                    output.storeBytes(of: narrowed.littleEndian, toByteOffset: index * 4, as: Int32.self)
                } else {
                    output[index * 3] = UInt8(truncatingIfNeeded: narrowed)
                    output[index * 3 + 1] = UInt8(truncatingIfNeeded: narrowed >> 8)
                    output[index * 3 + 2] = UInt8(truncatingIfNeeded: narrowed >> 16)
                }
            case .s32:
                output.storeBytes(of: value.littleEndian, toByteOffset: index * 4, as: Int32.self)
            case .float:
                output.storeBytes(of: Float(value) / 2_147_483_648, toByteOffset: index * 4, as: Float.self)
            }
        }
    }
}
