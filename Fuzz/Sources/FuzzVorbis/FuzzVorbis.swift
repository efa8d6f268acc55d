// Fuzzes the Ogg Vorbis path a song takes in the daemon (every link's headers, the length, the
// comments), with the checks every decoder's target makes (FuzzDecoderSupport's `DecoderFuzzing`),
// ReplayGain on.

import Audio
import FuzzDecoderSupport

/// What each input goes through.
let fuzzing = DecoderFuzzing<VorbisDecoder>(replayGain: ReplayGain(source: .track)) { format in
    format.sampleRate > 0 && (1...8).contains(format.channels) && format.sampleFormat != .signed24
}

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVorbis(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzing.run(data, size)
    return 0
}
