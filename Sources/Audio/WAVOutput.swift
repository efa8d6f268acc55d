#if canImport(Glibc)
    import Glibc
#endif

/// An output that writes exactly the frames it receives to a RIFF/WAVE file, unpaced.
///
/// The header is patched with the real sizes on every `close()`, so the file is valid once closed.
/// Reopening appends to the same file (a stream that pauses its output keeps one recording). A song of
/// another format than the file's is converted to the file's (libsoxr for the rate, channels mapped,
/// as the FIFO output converts): a queue of several formats records as one file, in the first song's
/// format. Only a float file cannot take another format, and refuses it.
public final class WAVOutput: AudioOutput {
    /// Where the file is written.
    public let path: String
    public private(set) var format: AudioFormat?

    private var descriptor: Int32 = -1
    /// The format of the data already in the file, if the file has been created.
    private var fileFormat: AudioFormat?
    private var dataBytes = 0
    /// Converts songs of another format than the file's; nil while the song's format is the file's.
    private var conversion: Resampler?
    /// 24-bit samples packed into three bytes each, reused from write to write.
    private var packed: [UInt8] = []

    /// Creates an output that writes to `path` (created, or truncated, on the first `open`).
    public init(path: String) {
        self.path = path
    }

    deinit {
        self.close()
    }

    public var name: String { "wav:\(self.path)" }

    public func open(format: AudioFormat) throws(OutputError) {
        if self.format == format { return }
        var conversion: Resampler?
        if let fileFormat = self.fileFormat, fileFormat != format {
            guard fileFormat.sampleFormat != .float32 else {
                throw .formatRejected(
                    output: self.name, format: format, call: "open",
                    reason: "the file already holds \(fileFormat.readableDescription) audio")
            }
            do throws(ResamplerError) {
                conversion = try Resampler(
                    input: format,
                    output: FIFOFormat(
                        sampleRate: fileFormat.sampleRate, bitsPerSample: fileFormat.sampleFormat.bits,
                        channels: fileFormat.channels))
            } catch {
                throw .formatRejected(output: self.name, format: format, call: "soxr_create", reason: error.reason)
            }
        }
        self.close()
        self.conversion = conversion
        let appending = self.fileFormat != nil
        let flags = O_WRONLY | O_CLOEXEC | (appending ? 0 : O_CREAT | O_TRUNC)
        let descriptor = Glibc.open(self.path, flags, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw .openFailed(output: self.name, call: "open", code: -code, reason: String(cString: strerror(code)))
        }
        self.descriptor = descriptor
        self.format = format
        if appending {
            lseek(descriptor, 0, SEEK_END)
        } else {
            self.fileFormat = format
            self.dataBytes = 0
            try self.writeAll(Self.header(format: format, dataBytes: 0))
        }
    }

    public func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
        guard let conversion = self.conversion else { return try self.writeInFileFormat(frames) }
        try self.writeInFileFormat(conversion.process(frames))
    }

    private func writeInFileFormat(_ bytes: [UInt8]) throws(OutputError) {
        let failure = bytes.withUnsafeBytes { raw -> OutputError? in
            do throws(OutputError) {
                try self.writeInFileFormat(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Writes samples in the file's format (24-bit ones in 32-bit words, packed here).
    private func writeInFileFormat(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let format = self.fileFormat else { throw .notOpen(output: self.name) }
        guard format.sampleFormat == .signed24 else {
            try self.writeAll(frames)
            self.dataBytes += frames.count
            return
        }
        // A WAV file holds 24-bit samples in three bytes (as `flac -d` writes them): each 32-bit word
        // loses its sign-extension byte.
        let samples = frames.count / 4
        if self.packed.count < samples * 3 {
            self.packed = [UInt8](repeating: 0, count: samples * 3)
        }
        let packedBytes = samples * 3
        let failure = self.packed.withUnsafeMutableBytes { out -> OutputError? in
            for index in 0..<samples {
                out[index * 3] = frames[index * 4]
                out[index * 3 + 1] = frames[index * 4 + 1]
                out[index * 3 + 2] = frames[index * 4 + 2]
            }
            do throws(OutputError) {
                try self.writeAll(UnsafeRawBufferPointer(rebasing: out[0..<packedBytes]))
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        self.dataBytes += packedBytes
    }

    public func pause() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
    }

    public func resume() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
    }

    public func drain() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
        // What the resampler holds back belongs to the song that ends.
        if let conversion = self.conversion {
            try self.writeInFileFormat(conversion.flush())
        }
    }

    public func drop() throws(OutputError) {
        guard self.format != nil else { throw .notOpen(output: self.name) }
        self.conversion?.reset()
    }

    public var delayFrames: Int { 0 }

    /// A file takes whatever comes at once: nothing to wait for.
    public var writableFrames: Int? { nil }

    public var capacityFrames: Int? { nil }

    public func close() {
        guard self.descriptor >= 0, let fileFormat = self.fileFormat else { return }
        // The header's sizes are known only now; a failure leaves the data intact with a stale header.
        let header = Self.header(format: fileFormat, dataBytes: self.dataBytes)
        _ = header.withUnsafeBytes { pwrite(self.descriptor, $0.baseAddress, $0.count, 0) }
        _ = Glibc.close(self.descriptor)
        self.descriptor = -1
        self.format = nil
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(self.descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .callFailed(
                    output: self.name, call: "write", code: -code, reason: String(cString: strerror(code)))
            }
            offset += written
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws(OutputError) {
        let failure = bytes.withUnsafeBytes { raw -> OutputError? in
            do throws(OutputError) {
                try self.writeAll(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// The RIFF header for `dataBytes` of PCM in `format`: plain PCM (tag 1) for integers; IEEE float
    /// (tag 3) with the extension size and the `fact` chunk that non-PCM WAVE files carry.
    static func header(format: AudioFormat, dataBytes: Int) -> [UInt8] {
        let isFloat = format.sampleFormat == .float32
        var bytes: [UInt8] = []
        func text(_ value: String) { bytes += Array(value.utf8) }
        func u16(_ value: Int) { bytes += [UInt8(value & 0xff), UInt8(value >> 8 & 0xff)] }
        func u32(_ value: Int) {
            let clamped = UInt32(clamping: value)
            bytes += (0..<4).map { UInt8(clamped >> (8 * UInt32($0)) & 0xff) }
        }
        let formatChunkSize = isFloat ? 18 : 16
        let factChunkSize = isFloat ? 12 : 0
        text("RIFF")
        u32(4 + (8 + formatChunkSize) + factChunkSize + 8 + dataBytes)
        text("WAVE")
        text("fmt ")
        u32(formatChunkSize)
        u16(isFloat ? 3 : 1)
        u16(format.channels)
        u32(format.sampleRate)
        // In the file a 24-bit sample takes three bytes, not the four it takes in memory.
        let bytesPerFrame =
            format.channels * (format.sampleFormat == .signed24 ? 3 : format.sampleFormat.bytesPerSample)
        u32(format.sampleRate * bytesPerFrame)
        u16(bytesPerFrame)
        u16(format.sampleFormat.bits)
        if isFloat {
            u16(0)
            text("fact")
            u32(4)
            u32(dataBytes / bytesPerFrame)
        }
        text("data")
        u32(dataBytes)
        return bytes
    }
}
