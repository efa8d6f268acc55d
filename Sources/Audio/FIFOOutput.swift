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

    /// A format the caller vouches for: a rate from 8000 to 384000, 16, 24 or 32 bits, 1 to 8 channels.
    init(sampleRate: Int, bitsPerSample: Int, channels: Int) {
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
/// non-blocking; what the pipe cannot take is dropped and counted in `droppedFrames`.
///
/// It holds a read end of its own besides the write end, as MPD's fifo output does. snapserver
/// (`mode=read`, 0.26) with no writer opens the FIFO, reads end-of-file, closes it and tries again
/// every 100 ms, holding it for well under a millisecond: a writer that waited for a reader to be
/// there (ENXIO) would almost never meet it. With its own read end the write end always opens, a
/// reader that leaves causes no EPIPE, and the output can take back what nobody has read yet: on
/// `drop` (discarded, so a stop is heard at once), on `pause` (kept and written again on `resume`),
/// and when nothing has read for a second (snapserver absent or stalled: the stale audio is
/// discarded as the pipe fills, so a reader that comes back hears the present, and `problem` says so).
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
    /// The write end.
    private var descriptor: Int32?
    /// The output's own read end: keeps the write end openable and lets it take back unread audio.
    private var readDescriptor: Int32?
    /// When the next attempt to open the FIFO may be made after it failed, or the path next checked
    /// for naming another FIFO than the one held (monotonic nanoseconds).
    private var nextOpenAttempt: Int64 = 0
    /// The bytes of a frame a partial write cut, written first next time so the reader stays aligned.
    private var pendingTail: [UInt8] = []
    /// What `pause` took back from the pipe, and what was written while paused: written on `resume`.
    private var pausedBytes: [UInt8] = []
    /// Whether `pause` holds the output (writes are kept for `resume`, not sent).
    private var isPaused = false
    /// Bytes written into the pipe since it was opened, less those taken back: where the reader's
    /// stream ends, whose remainder modulo the frame size says whether a frame is cut.
    private var streamBytes = 0
    /// Bytes in the pipe just after the last write: less than that later means someone read.
    private var expectedLevel = 0
    /// When a reader was last seen to read, or the pipe was last seen empty.
    private var lastProgress: Int64 = 0
    public private(set) var droppedFrames = 0
    public private(set) var problem: String?

    /// How long after a failed open the next attempt waits, and how long nothing may read from the
    /// pipe before the output says so and starts discarding stale audio.
    static let patienceNanoseconds: Int64 = 1_000_000_000

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

    /// The message for a pipe nobody reads.
    var noReaderProblem: String { "nothing has read \(self.path) for a second (is snapserver running?)" }

    public func open(format: AudioFormat) throws(OutputError) {
        if self.pacer.format == format { return }
        try self.prepareFIFO()
        do throws(ResamplerError) {
            self.resampler = try Resampler(input: format, output: self.fifoFormat)
        } catch {
            throw .formatRejected(output: self.name, format: format, call: "soxr_create", reason: error.reason)
        }
        if self.descriptor == nil {
            try self.openEnds(throwing: true)
        }
        try self.pacer.open(format: format)
        // A new stream: what a pause kept is forgotten, but the frame the reader is in is completed.
        self.pendingTail = self.frameCompletion(of: self.pendingTail + self.pausedBytes)
        self.pausedBytes = []
        self.isPaused = false
    }

    public func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let format = self.pacer.format, let resampler = self.resampler else { throw .notOpen(output: self.name) }
        try self.pacer.write(frames)
        let bytes = resampler.process(frames)
        if self.isPaused {
            // A paused device's buffer still fills; the reader must not hear it before `resume`.
            self.pausedBytes += bytes
            return
        }
        self.send(bytes, inputFrames: frames.count / format.bytesPerFrame)
    }

    public func pause() throws(OutputError) {
        try self.pacer.pause()
        guard !self.isPaused else { return }
        // What the reader has not read yet would go on playing: take it back until `resume`.
        self.pausedBytes = self.takeBack() + self.pendingTail + self.pausedBytes
        self.pendingTail = []
        self.isPaused = true
    }

    public func resume() throws(OutputError) {
        try self.pacer.resume()
        let bytes = self.pausedBytes
        self.pausedBytes = []
        self.isPaused = false
        if !bytes.isEmpty, let format = self.pacer.format {
            self.send(bytes, inputFrames: self.inputFrames(forBytes: bytes.count, format))
        }
    }

    public func drain() throws(OutputError) {
        guard let format = self.pacer.format, let resampler = self.resampler else { throw .notOpen(output: self.name) }
        try self.resume()
        let tail = resampler.flush()
        self.send(tail, inputFrames: self.inputFrames(forBytes: tail.count, format))
        try self.pacer.drain()
    }

    public func drop() throws(OutputError) {
        try self.pacer.drop()
        self.resampler?.reset()
        // What the reader has not read yet is discarded too, so that a stop is heard at once; only
        // the rest of the frame the reader is in is kept.
        self.pendingTail = self.frameCompletion(of: self.takeBack() + self.pendingTail + self.pausedBytes)
        self.pausedBytes = []
    }

    public var delayFrames: Int { self.pacer.delayFrames }
    public var writableFrames: Int? { self.pacer.writableFrames }
    public var capacityFrames: Int? { self.pacer.capacityFrames }

    public func close() {
        self.closeEnds()
        self.pacer.close()
        self.resampler = nil
        self.pendingTail = []
        self.pausedBytes = []
        self.isPaused = false
    }

    private func closeEnds() {
        for descriptor in [self.descriptor, self.readDescriptor].compactMap({ $0 }) {
            Glibc.close(descriptor)
        }
        self.descriptor = nil
        self.readDescriptor = nil
        self.expectedLevel = 0
        self.streamBytes = 0
        self.pendingTail = []
    }

    /// The first bytes of `continuation` (what follows the pipe's content in the stream) that finish
    /// the frame the stream ends in: written first when the rest is discarded, so the reader stays aligned.
    private func frameCompletion(of continuation: [UInt8]) -> [UInt8] {
        let frameBytes = self.fifoFormat.bytesPerFrame
        return Array(continuation.prefix((frameBytes - self.streamBytes % frameBytes) % frameBytes))
    }

    private func inputFrames(forBytes bytes: Int, _ format: AudioFormat) -> Int {
        bytes / self.fifoFormat.bytesPerFrame * format.sampleRate / self.fifoFormat.sampleRate
    }

    /// Bytes in the pipe now (FIONREAD on the read end).
    private func pipeLevel() -> Int {
        guard let readDescriptor = self.readDescriptor else { return 0 }
        var count: Int32 = 0
        return ioctl(readDescriptor, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Reads back everything in the pipe that no reader has taken yet.
    private func takeBack() -> [UInt8] {
        guard let readDescriptor = self.readDescriptor else { return [] }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(readDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += buffer[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        self.expectedLevel = 0
        self.streamBytes -= bytes.count
        return bytes
    }

    /// Writes what the pipe takes now; the rest is dropped and counted as the input frames it stood for.
    private func send(_ bytes: [UInt8], inputFrames: Int) {
        let now = self.clock.now()
        if self.descriptor == nil && now >= self.nextOpenAttempt {
            try? self.openEnds(throwing: false)
        }
        if self.descriptor != nil && now >= self.nextOpenAttempt {
            self.reopenIfReplaced(now)
        }
        guard let descriptor = self.descriptor else {
            self.droppedFrames += inputFrames
            return
        }
        let level = self.pipeLevel()
        if level < self.expectedLevel {
            // Someone read since the last write.
            self.lastProgress = now
            self.problem = nil
        } else if level == 0 {
            self.lastProgress = now
        } else if self.problem == nil && now - self.lastProgress >= Self.patienceNanoseconds {
            self.problem = self.noReaderProblem
        }
        var data = self.pendingTail + bytes
        self.pendingTail = []
        var written = self.writeSome(descriptor, data)
        if written < data.count && self.problem == self.noReaderProblem {
            // Nobody reads: what the pipe holds is stale. Discard it for the present, keeping only what
            // finishes the frame the reader is in, and go on from the next whole frame of the rest.
            let stale = self.takeBack()
            let rest = Array(data[written...])
            let completion = self.frameCompletion(of: stale + rest)
            let frameBytes = self.fifoFormat.bytesPerFrame
            let restStart = (frameBytes - (self.streamBytes + stale.count) % frameBytes) % frameBytes
            if let format = self.pacer.format {
                self.droppedFrames += self.inputFrames(forBytes: stale.count, format)
            }
            data = completion + rest[min(restStart, rest.count)...]
            written = self.writeSome(descriptor, data)
        }
        self.expectedLevel = self.pipeLevel()
        // A partial write may cut a frame: its rest goes first next time, so the reader stays aligned.
        // (`data` ends on a frame boundary, so the rest is there.)
        let frameBytes = self.fifoFormat.bytesPerFrame
        let cut = self.streamBytes % frameBytes
        if cut != 0 && self.descriptor != nil {
            let needed = min(frameBytes - cut, data.count - written)
            self.pendingTail = Array(data[written..<(written + needed)])
            written += needed
        }
        let unwritten = data.count - written
        if unwritten > 0 && data.count > 0 {
            self.droppedFrames += (inputFrames * unwritten + data.count - 1) / data.count
        }
        data = []
    }

    /// Once a second: if the path no longer names the FIFO held (removed and made again, by hand or
    /// by a reader's setup), the held one reaches nobody: open the new one (making it if missing).
    private func reopenIfReplaced(_ now: Int64) {
        self.nextOpenAttempt = now + Self.patienceNanoseconds
        guard let descriptor = self.descriptor else { return }
        var held = stat()
        var named = stat()
        if fstat(descriptor, &held) == 0 && stat(self.path, &named) == 0 && held.st_ino == named.st_ino
            && held.st_dev == named.st_dev
        {
            return
        }
        self.closeEnds()
        do throws(OutputError) {
            try self.prepareFIFO()
            try self.openEnds(throwing: false)
        } catch {
            self.problem = error.description
        }
    }

    /// Writes as much of `data` as the pipe takes without blocking; returns how much that was.
    private func writeSome(_ descriptor: Int32, _ data: [UInt8]) -> Int {
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + written, data.count - written)
            }
            if result > 0 {
                written += result
                self.streamBytes += result
                continue
            }
            let code = errno
            if result < 0 && code == EINTR { continue }
            if result < 0 && code == EPIPE {
                // Only if the output's own read end is gone: start again with both ends.
                self.closeEnds()
                self.nextOpenAttempt = self.clock.now() + Self.patienceNanoseconds
                self.problem = "the pipe \(self.path) broke; opening it again"
            } else if result < 0 && code != EAGAIN {
                self.problem = "writing to \(self.path) failed: \(String(cString: strerror(code)))"
            }
            break
        }
        return written
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

    /// Opens the output's read end, then the write end (which a reader makes openable), without
    /// blocking. Failures throw when `throwing`, else become the problem and are retried a second later.
    private func openEnds(throwing: Bool) throws(OutputError) {
        self.nextOpenAttempt = self.clock.now() + Self.patienceNanoseconds
        let readDescriptor = Glibc.open(self.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        let descriptor = readDescriptor < 0 ? -1 : Glibc.open(self.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if readDescriptor >= 0 { Glibc.close(readDescriptor) }
            let reason = "\(self.path): \(String(cString: strerror(code)))"
            if throwing {
                throw .openFailed(output: self.name, call: "open", code: -code, reason: reason)
            }
            self.problem = "cannot open \(reason)"
            return
        }
        // Grow the pipe to hold the emulated buffer, so that its burst at the start fits. F_SETPIPE_SZ
        // is Linux's (1031, behind _GNU_SOURCE); refused (over pipe-max-size), the default size does.
        let bytes =
            Int(Int64(self.fifoFormat.sampleRate) * self.bufferNanoseconds / 1_000_000_000)
            * self.fifoFormat.bytesPerFrame
        _ = fcntl(descriptor, 1031, Int32(clamping: bytes))
        self.descriptor = descriptor
        self.readDescriptor = readDescriptor
        self.expectedLevel = 0
        self.lastProgress = self.clock.now()
        self.problem = nil
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
