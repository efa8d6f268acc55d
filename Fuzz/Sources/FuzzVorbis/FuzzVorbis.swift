// Fuzzes the Ogg Vorbis path a song takes in the daemon: VorbisDecoder opens the bytes as a file (every
// link's headers, the length, the comments), decodes them to the end, seeks, and the library's reads
// (facts, picture, comments) run on them. Besides the sanitizers' crashes, hangs and leaks, it checks
// what the decoder promises: a sane format, a position that counts the frames read, seeks inside the
// length that land where asked, and errors that name the file.

import Audio
import FuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: the bytes of one file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVorbis(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    InputFile.shared.replace(with: UnsafeRawBufferPointer(start: data, count: size))
    // Both output encodings the daemon asks for; the input's length picks one, so each is reached.
    let sampleFormat: SampleFormat = size % 2 == 0 ? .signed16 : .float32
    let path = InputFile.shared.path
    checkErrors(path) { () throws(DecoderError) in try decodeAll(path, sampleFormat) }
    checkErrors(path) { () throws(DecoderError) in try readFacts(path, sampleFormat) }
    return 0
}

/// Runs `body`; an error it throws must name the file and give a reason.
func checkErrors(_ path: String, _ body: () throws(DecoderError) -> Void) {
    do {
        try body()
    } catch {
        require(error.path == path, "an error names another file: \(error)")
        require(!error.reason.isEmpty, "an error without a reason")
    }
}

/// Opens, decodes to the end and seeks the file at `path`, checking the decoder as it goes.
func decodeAll(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
    let decoder = try VorbisDecoder(path: path, sampleFormat: sampleFormat, replayGain: ReplayGain(source: .track))
    let format = decoder.format
    require(format.sampleRate > 0 && (1...8).contains(format.channels), "format \(format)")
    require(format.sampleFormat == (sampleFormat == .float32 ? .float32 : .signed16), "format \(format)")
    require(decoder.lengthFrames.map { $0 >= 0 } ?? true, "a negative length")
    require(decoder.appliedGainDB.isFinite, "a gain of \(decoder.appliedGainDB) dB")
    _ = decoder.bitrate

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
            _ = decoder.bitrate
        }
    } catch .damaged, .readFailed {
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
            } catch .damaged, .readFailed {
            }
        }
    }
}

/// What the library scanner and `readpicture` / `readcomments` read of the file at `path`.
func readFacts(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
    let facts = try VorbisDecoder.facts(path: path)
    require(facts.sampleRate > 0 && (1...8).contains(facts.channels), "facts \(facts)")
    require(
        facts.duration.map { $0 >= 0 && $0.isFinite } ?? true, "a duration of \(String(describing: facts.duration))")
    _ = try VorbisDecoder.picture(path: path)
    _ = try VorbisDecoder.comments(path: path)
    _ = try AudioDecoders.open(path: path, sampleFormat: sampleFormat)
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
