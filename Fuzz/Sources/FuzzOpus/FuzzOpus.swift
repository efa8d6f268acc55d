// Fuzzes the Opus path a song takes in the daemon: OpusDecoder opens the bytes as a file (the headers,
// the length, the comments), decodes them to the end, seeks, and the library's readers take its facts,
// cover and comments. Besides the sanitizers' crashes, hangs and leaks, it checks what the decoder
// promises: a sane format, a position that counts the frames read, seeks in range and out, and errors
// that name the file.

import Audio
import FuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpus(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    InputFile.shared.replace(with: UnsafeRawBufferPointer(start: data, count: size))
    // Both output encodings the daemon asks for; the input's length picks one, so each is reached.
    let sampleFormat: SampleFormat = size % 2 == 0 ? .signed16 : .float32
    let path = InputFile.shared.path
    for step in [decodeAll, readMetadata] {
        do {
            try step(path, sampleFormat)
        } catch {
            require(error.path == path, "an error names another file: \(error)")
            require(!error.reason.isEmpty, "an error without a reason")
        }
    }
    return 0
}

/// Opens, decodes to the end and seeks the file at `path`, checking the decoder as it goes.
func decodeAll(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
    let decoder = try OpusDecoder(path: path, sampleFormat: sampleFormat)
    let format = decoder.format
    require(format.sampleRate == 48000 && (1...2).contains(format.channels), "format \(format)")
    require(decoder.lengthFrames.map { $0 >= 0 } ?? true, "a negative length")
    _ = decoder.tags
    require(decoder.bitrate >= 0, "a negative bitrate")

    // The engine reads in buffers of about this size.
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
    } catch .damaged {
        // A stream that breaks off: the engine skips to the next song, as this does.
    }

    if let length = decoder.lengthFrames {
        do {
            try decoder.seek(toFrame: length + 1)
            fatalError("a seek past the end of \(length) frames succeeded")
        } catch .seekOutOfRange {
        }
        try decoder.seek(toFrame: length)
        let atEnd = try decoder.read(into: buffer)
        require(atEnd == 0, "a read at the end gave \(atEnd) frames")
        do {
            try decoder.seek(toFrame: length / 2)
            require(decoder.position == length / 2, "position \(decoder.position) after a seek to \(length / 2)")
            _ = try decoder.read(into: buffer)
        } catch .damaged {
        }
    }
}

/// Reads the facts, the picture and the comments, as the library and `readpicture`/`readcomments` do.
func readMetadata(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
    let facts = try OpusDecoder.facts(path: path)
    require(facts.sampleRate == 48000 && facts.channels >= 0, "facts \(facts.sampleRate) \(facts.channels)")
    require(facts.duration.map { $0 >= 0 && $0.isFinite } ?? true, "duration \(String(describing: facts.duration))")
    _ = try OpusDecoder.picture(path: path)
    for comment in try OpusDecoder.comments(path: path) {
        require(!comment.name.isEmpty, "a comment without a name")
    }
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
