import Audio

/// Decodes files one after another into one output, keeping the output open across files of the
/// same format.
struct FilePlayer {
    private(set) var output: any AudioOutput
    /// When set, an ALSA output that cannot be opened is replaced by the paced null output.
    let fallsBackToNull: Bool
    let sampleFormat: SampleFormat
    let progress: ProgressLine?

    /// Frames per decode-and-write step: about 23 ms at 44.1 kHz.
    private let periodFrames = 1024
    private var buffer: UnsafeMutableRawBufferPointer

    init(output: any AudioOutput, fallsBackToNull: Bool, sampleFormat: SampleFormat, progress: ProgressLine?) {
        self.output = output
        self.fallsBackToNull = fallsBackToNull
        self.sampleFormat = sampleFormat
        self.progress = progress
        // Stereo floats at first; grown for a file with wider frames (24-bit surround FLAC ...).
        self.buffer = .allocate(byteCount: self.periodFrames * 8, alignment: 16)
    }

    /// Plays `path` to its end, with the decoder its content calls for (MP3, FLAC, Ogg Vorbis, Opus).
    mutating func play(_ path: String) throws {
        let decoder = try AudioDecoders.open(path: path, sampleFormat: self.sampleFormat)
        let (bytes, overflow) = self.periodFrames.multipliedReportingOverflow(by: decoder.format.bytesPerFrame)
        if !overflow, bytes > self.buffer.count {
            self.buffer.deallocate()
            self.buffer = .allocate(byteCount: bytes, alignment: 16)
        }
        try self.openOutput(decoder.format)
        self.progress?.start(path: path, decoder: decoder, output: self.output.name)
        let chunk = UnsafeMutableRawBufferPointer(
            rebasing: self.buffer[0..<self.periodFrames * decoder.format.bytesPerFrame])
        while true {
            let frames: Int
            do {
                frames = try decoder.read(into: chunk)
            } catch {
                self.progress?.end()
                throw error
            }
            if frames == 0 { break }
            try self.output.write(UnsafeRawBufferPointer(rebasing: chunk[0..<frames * decoder.format.bytesPerFrame]))
            self.progress?.update(played: decoder.position - self.output.delayFrames)
        }
        self.progress?.end()
    }

    /// Lets the last file play out and releases the device.
    mutating func finish() {
        do {
            if self.output.format != nil {
                try self.output.drain()
            }
        } catch {
            printError(error.description)
        }
        self.output.close()
        self.buffer.deallocate()
    }

    private mutating func openOutput(_ format: AudioFormat) throws(OutputError) {
        if let current = self.output.format, current != format {
            // A new format cannot share the device: let the old song play out first.
            try self.output.drain()
        }
        do {
            try self.output.open(format: format)
        } catch let error where self.fallsBackToNull && self.output is ALSAOutput {
            printError("no usable sound card (\(error)); playing on the null output instead")
            self.output = NullOutput(paced: true)
            try self.output.open(format: format)
        }
    }
}
