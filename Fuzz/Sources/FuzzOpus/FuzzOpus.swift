// Fuzzes the Opus path a song takes in the daemon (the headers, the output gain, R128 gains, the
// comments), with the checks every decoder's target makes (FuzzDecoderSupport's `DecoderFuzzing`).

import Audio
import FuzzDecoderSupport

/// What each input goes through.
let fuzzing = DecoderFuzzing<OpusDecoder>(replayGain: ReplayGain(source: .track)) { format in
    format.sampleRate == 48000 && (1...2).contains(format.channels)
}

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpus(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzing.run(data, size)
    return 0
}
