#if canImport(Glibc)
    import Glibc
#endif

/// The fixed format a FIFO output writes, as snapserver's `sampleformat` names it: `RATE:BITS:CHANNELS`,
/// signed little-endian integers (24-bit samples take 4 bytes, as snapcast stores them).
public struct FIFOFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public let sampleRate: Int
    /// Bits per sample: 16, 24 or 32.
    public let bitsPerSample: Int
    /// Samples per frame.
    public let channels: Int

    /// snapserver's default and the output's: `48000:16:2`.
    public static let standard = FIFOFormat(sampleRate: 48000, bitsPerSample: 16, channels: 2)

    private init(sampleRate: Int, bitsPerSample: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.bitsPerSample = bitsPerSample
        self.channels = channels
    }

    /// Parses `RATE:BITS:CHANNELS`, e.g. `48000:16:2`.
    /// - Throws: `OutputSpecError` quoting the text and saying which part is wrong.
    public init(parsing text: String) throws(OutputSpecError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw OutputSpecError(text: text, reason: "a FIFO format is RATE:BITS:CHANNELS, e.g. 48000:16:2")
        }
        guard let rate = Int(parts[0]), (8000...384_000).contains(rate) else {
            throw OutputSpecError(text: text, reason: "the rate \"\(parts[0])\" is not a number from 8000 to 384000")
        }
        guard let bits = Int(parts[1]), [16, 24, 32].contains(bits) else {
            throw OutputSpecError(text: text, reason: "the sample size \"\(parts[1])\" is not 16, 24 or 32 bits")
        }
        guard let channels = Int(parts[2]), (1...8).contains(channels) else {
            throw OutputSpecError(text: text, reason: "the channel count \"\(parts[2])\" is not a number from 1 to 8")
        }
        self.init(sampleRate: rate, bitsPerSample: bits, channels: channels)
    }

    /// Bytes one sample takes in the FIFO.
    public var bytesPerSample: Int { self.bitsPerSample == 16 ? 2 : 4 }
    /// Bytes one interleaved frame takes in the FIFO.
    public var bytesPerFrame: Int { self.bytesPerSample * self.channels }

    /// `RATE:BITS:CHANNELS`; parsing it gives the format back.
    public var description: String { "\(self.sampleRate):\(self.bitsPerSample):\(self.channels)" }
}

/// An output that writes PCM in a fixed format into a named pipe, for snapserver's `pipe://` source
/// (multi-room audio with snapcast). Songs in other formats are resampled (`Resampler`, libsoxr).
///
/// It is paced like the paced null output (a `NullOutput` keeps its clock): it takes frames at the
/// stream's rate whether or not anyone reads, and it never waits for the reader. Writes are
/// non-blocking; what the pipe cannot take is dropped and counted in `droppedFrames`. With no reader
/// (snapserver not started, or gone), it goes on "playing", dropping, and says so in `problem`; the
/// next reader gets data at once. Only a path that can never work throws.
public final class FIFOOutput: AudioOutput {
    /// The FIFO's path.
    public let path: String
    /// The format written into it.
    public let fifoFormat: FIFOFormat
    /// How much audio the emulated device buffers, and the pipe is grown to hold.
    public let bufferNanoseconds: Int64

    private let clock: any PacingClock
    /// The pacing: a paced null output at the stream's rate.
    private let pacer: NullOutput
    private var resampler: Resampler?
    /// The write end, while a reader has it open.
    private var descriptor: Int32?
    /// When the FIFO may next be opened again, or checked for having been replaced (monotonic nanoseconds).
    private var nextOpenAttempt: Int64 = 0
    /// The bytes of a frame a partial write cut, written first next time so the reader stays aligned.
    private var pendingTail: [UInt8] = []
    public private(set) var droppedFrames = 0
    public private(set) var problem: String?

    /// How long after a failed open, or a check that the FIFO is still the one held, the next waits.
    static let reopenIntervalNanoseconds: Int64 = 1_000_000_000

    /// A closed FIFO output at `path` writing `format`.
    public init(
        path: String, format: FIFOFormat = .standard, clock: any PacingClock = MonotonicClock(),
        bufferNanoseconds: Int64 = defaultDeviceBufferNanoseconds
    ) {
        _ = ignoreSIGPIPE
        self.path = path
        self.fifoFormat = format
        self.clock = clock
        self.bufferNanoseconds = bufferNanoseconds
        self.pacer = NullOutput(paced: true, clock: clock, bufferNanoseconds: bufferNanoseconds)
    }

    public var name: String { "fifo:\(self.path)" }
    public var format: AudioFormat? { self.pacer.format }

    public func open(format: AudioFormat) throws(OutputError) {
        if self.pacer.format == format { return }
        try self.prepareFIFO()
        do throws(ResamplerError) {
            self.resampler = try Resampler(input: format, output: self.fifoFormat)
        } catch {
            throw .formatRejected(output: self.name, format: format, call: "soxr_create", reason: error.reason)
        }
        try self.pacer.open(format: format)
        self.pendingTail = []
        if self.descriptor == nil {
            self.nextOpenAttempt = self.clock.now()
            try self.openWriteEnd(throwing: true)
        }
    }

    public func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let format = self.pacer.format, let resampler = self.resampler else { throw .notOpen(output: self.name) }
        try self.pacer.write(frames)
        let bytes = resampler.process(frames)
        self.send(bytes, inputFrames: frames.count / format.bytesPerFrame)
    }

    public func pause() throws(OutputError) { try self.pacer.pause() }

    public func resume() throws(OutputError) { try self.pacer.resume() }

    public func drain() throws(OutputError) {
        guard let format = self.pacer.format, let resampler = self.resampler else { throw .notOpen(output: self.name) }
        let tail = resampler.flush()
        self.send(
            tail,
            inputFrames: tail.count / self.fifoFormat.bytesPerFrame * format.sampleRate / self.fifoFormat.sampleRate)
        try self.pacer.drain()
    }

    public func drop() throws(OutputError) {
        try self.pacer.drop()
        self.resampler?.reset()
    }

    public var delayFrames: Int { self.pacer.delayFrames }
    public var writableFrames: Int? { self.pacer.writableFrames }
    public var capacityFrames: Int? { self.pacer.capacityFrames }

    public func close() {
        if let descriptor = self.descriptor {
            Glibc.close(descriptor)
            self.descriptor = nil
        }
        self.pacer.close()
        self.resampler = nil
        self.pendingTail = []
    }

    /// Writes what the pipe takes now; the rest is dropped and counted as the input frames it stood for.
    private func send(_ bytes: [UInt8], inputFrames: Int) {
        if self.descriptor == nil && self.clock.now() >= self.nextOpenAttempt {
            try? self.openWriteEnd(throwing: false)
        }
        guard let descriptor = self.descriptor else {
            self.droppedFrames += inputFrames
            return
        }
        var data = self.pendingTail + bytes
        self.pendingTail = []
        var written = 0
        var readerGone = false
        while written < data.count {
            let result = data.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + written, data.count - written)
            }
            if result > 0 {
                written += result
                continue
            }
            let code = errno
            if result < 0 && code == EINTR { continue }
            if result < 0 && code == EPIPE {
                // No reader now (snapserver stopped, restarting, or not started): the write end stays
                // open, so that snapserver finds a writer when it looks again.
                readerGone = true
                if self.problem != self.noReaderProblem {
                    self.discardStaleAudio()
                }
                self.problem = self.noReaderProblem
                self.reopenIfReplaced()
            } else if result < 0 && code != EAGAIN {
                self.problem = "writing to \(self.path) failed: \(String(cString: strerror(code)))"
            }
            break
        }
        if written > 0 {
            self.problem = nil
        }
        // A partial write may cut a frame: its rest goes first next time, so the reader stays aligned.
        let frameBytes = self.fifoFormat.bytesPerFrame
        let cut = written % frameBytes
        if cut != 0 && !readerGone {
            self.pendingTail = Array(data[written..<(written + frameBytes - cut)])
            written += frameBytes - cut
        }
        let unwritten = data.count - written
        if unwritten > 0 && data.count > 0 {
            self.droppedFrames += (inputFrames * unwritten + data.count - 1) / data.count
        }
        data = []
    }

    /// Checks the path and makes the FIFO if it is missing and may be made.
    /// - Throws: `OutputError.openFailed` for a path that can never work.
    private func prepareFIFO() throws(OutputError) {
        var status = stat()
        if stat(self.path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFIFO else {
                throw .openFailed(
                    output: self.name, call: "stat", code: -EEXIST,
                    reason: "\(self.path) exists and is not a FIFO; remove it or choose another path")
            }
            return
        }
        let code = errno
        guard code == ENOENT else {
            throw .openFailed(output: self.name, call: "stat", code: -code, reason: String(cString: strerror(code)))
        }
        let directory = Self.directory(of: self.path)
        var directoryStatus = stat()
        guard stat(directory, &directoryStatus) == 0, directoryStatus.st_mode & S_IFMT == S_IFDIR else {
            throw .openFailed(
                output: self.name, call: "stat", code: -ENOENT, reason: "the directory \(directory) does not exist")
        }
        if directoryStatus.st_mode & S_ISVTX != 0 {
            // In a sticky directory (/tmp), fs.protected_fifos stops the reader from opening a FIFO
            // someone else made: the reader's user must make it.
            throw .openFailed(
                output: self.name, call: "mkfifo", code: -EPERM,
                reason:
                    "no FIFO at \(self.path), and \(directory) is a sticky directory where one user's FIFO cannot be "
                    + "opened by another; create it as the reader (mkfifo, or snapserver's mode=create) or use a "
                    + "directory like /run/playerd")
        }
        // 0666 less the umask, as snapserver's mode=create makes it.
        if mkfifo(self.path, 0o666) != 0 {
            let code = errno
            if code == EEXIST { return }
            throw .openFailed(
                output: self.name, call: "mkfifo", code: -code,
                reason: "cannot create \(self.path): \(String(cString: strerror(code)))")
        }
    }

    /// Opens the write end without blocking. Other failures than a missing reader throw when `throwing`,
    /// else become the problem.
    ///
    /// snapserver's `mode=read` opens the FIFO, reads and closes it again at once while no writer holds
    /// it, every 100 ms (measured with strace: open for half a millisecond each time), so a writer that
    /// retries an open failing with ENXIO almost never meets it. The write end is therefore opened
    /// through a read end of our own, held only for the open, and then kept: a writer exists whenever
    /// snapserver looks, and a missing reader shows as EPIPE on write.
    private func openWriteEnd(throwing: Bool) throws(OutputError) {
        self.nextOpenAttempt = self.clock.now() + Self.reopenIntervalNanoseconds
        let ownReader = Glibc.open(self.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        let descriptor = Glibc.open(self.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        let code = errno
        if ownReader >= 0 {
            Glibc.close(ownReader)
        }
        guard descriptor >= 0 else {
            let reason = "\(self.path): \(String(cString: strerror(code)))"
            if throwing {
                throw .openFailed(output: self.name, call: "open", code: -code, reason: reason)
            }
            self.problem = "cannot open \(reason)"
            return
        }
        // Grow the pipe to hold the emulated buffer, so a reader a little late loses nothing. F_SETPIPE_SZ
        // is Linux's (1031, behind _GNU_SOURCE); refused (over pipe-max-size), the default size does.
        let bytes =
            Int(Int64(self.fifoFormat.sampleRate) * self.bufferNanoseconds / 1_000_000_000)
            * self.fifoFormat.bytesPerFrame
        _ = fcntl(descriptor, 1031, Int32(clamping: bytes))
        self.descriptor = descriptor
        self.problem = nil
    }

    private var noReaderProblem: String { "no reader on \(self.path) (is snapserver running?)" }

    /// Empties the pipe of what a reader that went away left unread, so that the next reader does not
    /// start with stale audio.
    private func discardStaleAudio() {
        let reader = Glibc.open(self.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while buffer.withUnsafeMutableBytes({ read(reader, $0.baseAddress, $0.count) }) > 0 {}
        Glibc.close(reader)
    }

    /// At most once a second while no one reads: if the path is no longer the FIFO held open (removed
    /// and made again), opens the new one.
    private func reopenIfReplaced() {
        guard let descriptor = self.descriptor, self.clock.now() >= self.nextOpenAttempt else { return }
        self.nextOpenAttempt = self.clock.now() + Self.reopenIntervalNanoseconds
        var held = stat()
        var named = stat()
        if fstat(descriptor, &held) == 0 && stat(self.path, &named) == 0 && held.st_ino == named.st_ino
            && held.st_dev == named.st_dev
        {
            return
        }
        Glibc.close(descriptor)
        self.descriptor = nil
        try? self.openWriteEnd(throwing: false)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// A reader that leaves a FIFO makes the next write raise SIGPIPE, whose default action kills the
/// process; the daemon does not ignore it elsewhere (its sockets use MSG_NOSIGNAL), so the first FIFO
/// output made ignores it for the whole process and the write fails with EPIPE instead.
private let ignoreSIGPIPE: Void = {
    signal(SIGPIPE, SIG_IGN)
}()
