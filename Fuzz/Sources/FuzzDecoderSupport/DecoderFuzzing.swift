import Audio
import FuzzSupport

/// What every decoder's fuzz target checks, the decoder's way into the daemon: the input opened as a
/// file by path (as songs are), decoded to the end, seeked, and its facts, picture and comments read as
/// the library and `readpicture`/`readcomments` read them. Besides the sanitizers' crashes, hangs and
/// leaks: a sane format (floats when floats are asked), a position that counts the frames read, 24-bit
/// samples within 24 bits, seeks that land where asked (past the end refused, the end reading nothing),
/// and errors that name the file and say why.
public struct DecoderFuzzing<Decoder: AudioDecoder>: Sendable {
    /// Whether a format the decoder reports is one it can produce.
    let formatIsSane: @Sendable (AudioFormat) -> Bool
    /// The ReplayGain the decoder is opened with (its software gain is part of what is read).
    let replayGain: ReplayGain

    public init(replayGain: ReplayGain = .off, formatIsSane: @escaping @Sendable (AudioFormat) -> Bool) {
        self.replayGain = replayGain
        self.formatIsSane = formatIsSane
    }

    /// Runs one input: both output encodings the daemon asks for, the input's length picking one.
    public func run(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        InputFile.shared.replace(with: UnsafeRawBufferPointer(start: data, count: size))
        let sampleFormat: SampleFormat = size % 2 == 0 ? .signed16 : .float32
        let path = InputFile.shared.path
        Self.checkErrors(path) { () throws(DecoderError) in try self.decodeAll(path, sampleFormat) }
        Self.checkErrors(path) { () throws(DecoderError) in try self.readMetadata(path, sampleFormat) }
    }

    /// Runs `body`; an error it throws must name the file and give a reason.
    static func checkErrors(_ path: String, _ body: () throws(DecoderError) -> Void) {
        do {
            try body()
        } catch {
            require(error.path == path, "an error names another file: \(error)")
            require(!error.reason.isEmpty, "an error without a reason")
        }
    }

    /// Opens, decodes to the end and seeks the file at `path`, checking the decoder as it goes.
    func decodeAll(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
        let decoder = try Decoder(path: path, sampleFormat: sampleFormat, replayGain: self.replayGain)
        let format = decoder.format
        require(self.formatIsSane(format), "format \(format)")
        require(
            (sampleFormat == .float32) == (format.sampleFormat == .float32), "\(sampleFormat) asked, \(format) given")
        require(decoder.lengthFrames.map { $0 >= 0 } ?? true, "a negative length")
        require(decoder.appliedGainDB.isFinite, "a gain of \(decoder.appliedGainDB) dB")
        require(decoder.bitrate >= 0, "a negative bitrate")
        _ = decoder.tags
        _ = decoder.mixRamp

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
                if format.sampleFormat == .signed24 {
                    let words = UnsafeRawBufferPointer(rebasing: buffer[0..<frames * format.bytesPerFrame])
                        .bindMemory(to: Int32.self)
                    require(words.allSatisfy { (-8_388_608...8_388_607).contains($0) }, "a 24-bit sample out of range")
                }
            }
        } catch .damaged, .corrupt, .readFailed {
            // A stream that breaks off: the engine skips to the next song, as this does.
        }

        guard let length = decoder.lengthFrames else { return }
        do {
            try decoder.seek(toFrame: length + 1)
            fatalError("a seek past the end of \(length) frames succeeded")
        } catch .seekOutOfRange {
        }
        for target in [length / 2, 0, length] {
            do {
                try decoder.seek(toFrame: target)
                require(decoder.position == target, "position \(decoder.position) after a seek to \(target)")
                let frames = try decoder.read(into: buffer)
                require(target < length || frames == 0, "a read at the end gave \(frames) frames")
            } catch .damaged, .corrupt, .readFailed {
            }
        }
    }

    /// What the library scanner and `readpicture` / `readcomments` read of the file at `path`, and the
    /// daemon's way in: `AudioDecoders.open`, which picks the decoder from the content.
    func readMetadata(_ path: String, _ sampleFormat: SampleFormat) throws(DecoderError) {
        let facts = try Decoder.facts(path: path)
        require(facts.sampleRate > 0 && facts.channels > 0, "facts \(facts.sampleRate) \(facts.channels)")
        require(facts.duration.map { $0 >= 0 && $0.isFinite } ?? true, "duration \(String(describing: facts.duration))")
        _ = try Decoder.picture(path: path)
        for comment in try Decoder.comments(path: path) {
            require(!comment.name.isEmpty, "a comment without a name")
        }
        _ = try AudioDecoders.open(path: path, sampleFormat: sampleFormat)
    }
}
