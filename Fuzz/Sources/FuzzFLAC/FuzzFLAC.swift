// Fuzzes the FLAC path a song takes in the daemon (native and Ogg FLAC: STREAMINFO, VORBIS_COMMENT,
// PICTURE), with the checks every decoder's target makes (FuzzDecoderSupport's `DecoderFuzzing`).

import Audio
import FuzzDecoderSupport

/// What each input goes through.
let fuzzing = DecoderFuzzing<FLACDecoder>(replayGain: ReplayGain(source: .album)) { format in
    format.sampleRate > 0 && (1...8).contains(format.channels)
}

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFLAC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzing.run(data, size)
    return 0
}
