// Fuzzes the FLAC path a song takes in the daemon: FLACDecoder opens the bytes as a file (native or Ogg
// FLAC: STREAMINFO, VORBIS_COMMENT, PICTURE), decodes them to the end, seeks, and reads the facts, the
// picture and the comments the library and `readpicture`/`readcomments` ask for. Besides the
// sanitizers' crashes, hangs and leaks, it checks what the decoder promises: a sane format, a position
// that counts the frames read, seeks that land where asked, and errors that name the file.

import Audio
import FuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFLAC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    InputFile.shared.replace(with: UnsafeRawBufferPointer(start: data, count: size))
    // Both kinds of output the daemon asks for; the input's length picks one, so each is reached.
    let sampleFormat: SampleFormat = size % 2 == 0 ? .signed16 : .float32
    let path = InputFile.shared.path
    do {
        try decodeAll(path, sampleFormat)
    } catch {
        check(error, path)
    }
    do {
        try readMetadata(path)
    } catch {
        check(error, path)
    }
    return 0
}

/// An error names the file and says why.
func check(_ error: DecoderError, _ path: String) {
    require(error.path == path, "an error names another file: \(error)")
    require(!error.reason.isEmpty, "an error without a reason")
}

/// Opens, decodes to the end and seeks the file at `path`, checking the decoder as it goes.
func decodeAll(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
    let decoder = try FLACDecoder(path: path, sampleFormat: sampleFormat)
    let format = decoder.format
    require(format.sampleRate > 0 && (1...8).contains(format.channels), "format \(format)")
    require(sampleFormat != .float32 || format.sampleFormat == .float32, "floats asked, \(format) given")
    require(decoder.lengthFrames.map { $0 >= 0 } ?? true, "a negative length")
    _ = decoder.bitrate
    _ = decoder.tags
    _ = decoder.mixRamp

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
            if format.sampleFormat == .signed24 {
                let words = UnsafeRawBufferPointer(rebasing: buffer[0..<frames * format.bytesPerFrame])
                    .bindMemory(to: Int32.self)
                require(words.allSatisfy { (-8_388_608...8_388_607).contains($0) }, "a 24-bit sample out of range")
            }
        }
    } catch .damaged {
        // A stream that breaks off: the engine skips to the next song, as this does.
    }

    if let length = decoder.lengthFrames {
        do {
            try decoder.seek(toFrame: length + 1)
            fatalError("a seek past the end of \(length) frames succeeded")
        } catch .seekOutOfRange {
        }
        for target in [length / 2, 0, length] {
            do {
                try decoder.seek(toFrame: target)
                require(decoder.position == target, "position \(decoder.position) after a seek to \(target)")
                _ = try decoder.read(into: buffer)
            } catch .damaged {
            }
        }
    }
}

/// Reads what the library and the picture and comment commands read.
func readMetadata(_ path: String) throws(DecoderError) {
    let facts = try FLACDecoder.facts(path: path)
    require(facts.sampleRate > 0 && (1...8).contains(facts.channels), "facts \(facts.sampleRate) \(facts.channels)")
    require(facts.duration.map { $0 >= 0 && $0.isFinite } ?? true, "duration \(String(describing: facts.duration))")
    _ = try FLACDecoder.picture(path: path)
    _ = try FLACDecoder.comments(path: path)
}

/// A file that holds the current input, so that the decoder opens it by path as the daemon opens songs.
/// It is unlinked at once and reached through `/proc/self/fd`, so nothing is left behind.
final class InputFile: Sendable {
    /// The one input file of this process.
    static let shared = InputFile()

    /// The descriptor the input is written through.
    let descriptor: Int32
    /// A path that opens the file anew, with its own offset.
    let path: String

    private init() {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/playerd-fuzz-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        require(descriptor >= 0, "cannot create the input file: \(String(cString: strerror(errno)))")
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        self.path = "/proc/self/fd/\(descriptor)"
    }

    /// Makes `bytes` the file's whole content.
    func replace(with bytes: UnsafeRawBufferPointer) {
        require(ftruncate(self.descriptor, 0) == 0, "ftruncate: \(String(cString: strerror(errno)))")
        var offset = 0
        while offset < bytes.count {
            let written = pwrite(self.descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
            require(written > 0 || errno == EINTR, "pwrite: \(String(cString: strerror(errno)))")
            offset += max(written, 0)
        }
    }
}
