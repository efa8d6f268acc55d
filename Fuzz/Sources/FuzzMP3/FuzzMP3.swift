// Fuzzes the MP3 path a song takes in the daemon: MP3Decoder opens the bytes as a file (the format, the
// length, the ID3v2 and ID3v1 tags), decodes them to the end, seeks, and builds the seek index. Besides
// the sanitizers' crashes, hangs and leaks, it checks what the decoder promises: a sane format, a
// position that counts the frames read, and errors that name the file.

import Audio
import FuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMP3(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    InputFile.shared.replace(with: UnsafeRawBufferPointer(start: data, count: size))
    // Both output encodings the daemon asks for; the input's length picks one, so each is reached.
    let sampleFormat: SampleFormat = size % 2 == 0 ? .signed16 : .float32
    let path = InputFile.shared.path
    do {
        try decodeAll(path, sampleFormat: sampleFormat)
    } catch {
        require(error.path == path, "an error names another file: \(error)")
        require(!error.reason.isEmpty, "an error without a reason")
    }
    return 0
}

/// Opens, decodes to the end, seeks and indexes the file at `path`, checking the decoder as it goes.
func decodeAll(_ path: String, sampleFormat: SampleFormat) throws(DecoderError) {
    let decoder = try MP3Decoder(path: path, sampleFormat: sampleFormat)
    let format = decoder.format
    require(format.sampleRate > 0 && (1...2).contains(format.channels), "format \(format)")
    require(decoder.lengthFrames.map { $0 >= 0 } ?? true, "a negative length")
    for value in [decoder.tags.title, decoder.tags.artist, decoder.tags.genre, decoder.tags.track] {
        require(value.map { !$0.isEmpty } ?? true, "an empty tag is kept instead of dropped")
    }
    _ = decoder.bitrate
    _ = decoder.isVariableBitrate

    // One period of 1152 frames and a bit: the engine reads in buffers of about this size.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1200 * format.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var decoded = 0
    do {
        while true {
            let frames = try decoder.read(into: buffer)
            if frames == 0 {
                break
            }
            decoded += frames
            require(frames <= 1200, "read \(frames) frames into a buffer of 1200")
            require(decoder.position == decoded, "position \(decoder.position) after \(decoded) frames")
        }
    } catch .corrupt {
        // A stream that breaks off: the engine skips to the next song, as this does.
    }

    if let length = decoder.lengthFrames {
        do {
            try decoder.seek(toFrame: length + 1)
            fatalError("a seek past the end of \(length) frames succeeded")
        } catch .seekOutOfRange {
        }
        do {
            try decoder.seek(toFrame: length / 2)
            _ = try decoder.read(into: buffer)
        } catch .corrupt {
        }
    }
    decoder.install(try MP3Decoder.scanIndex(path: path, sampleFormat: sampleFormat))
}
