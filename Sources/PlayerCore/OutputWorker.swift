// A following output's own thread. The audio thread hands it the frames it wrote to the leading
// output, through a bounded ring, and does not wait for it behind a paced leader: when the ring is full
// the oldest frames in it are dropped (counted) so that an output that stalls catches up with the others
// once it moves again, instead of holding them back (MPD's shared buffer lets one stalled output freeze
// all). Behind an unpaced leader (a file, the unpaced null output) there is no real time to fall behind:
// the audio thread waits for room while the follower is moving, so it gets every frame, and drops only
// when the follower has stalled.

import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// What a following output is told, in the order the leading output was.
enum FollowerItem {
    /// Frames in the ring, at the ring's read side.
    case frames(byteCount: Int, bytesPerFrame: Int)
    /// Open (or reopen) the output for a stream of this format.
    case open(AudioFormat)
    /// Play out what the output holds.
    case drain
    /// Close the output.
    case close
}

/// Runs one output on a thread of its own. Everything but `init`, `stop` and the thread itself is
/// called from the audio thread.
final class OutputWorker: @unchecked Sendable {
    // @unchecked: the fields below are shared only with `lock` held; `output` is used by the worker's
    // thread alone while it runs, and by the audio thread only before it starts and after `stop()`.

    /// How much audio the ring holds, at most: enough for a leading output's refill burst and a
    /// following device's whole buffer, several times over.
    static let ringBytes = 1 << 19
    /// How much the thread copies out of the ring for one write.
    private static let chunkBytes = 64 * 1024

    let output: any AudioOutput
    private let clock: any PacingClock
    private let lock = ConditionLock()
    private var thread: pthread_t?

    // Shared with the audio thread, under `lock`.
    private var items: [FollowerItem] = []
    private var head = 0
    private let ring: UnsafeMutableRawBufferPointer
    private var ringStart = 0
    private var ringCount = 0
    private var wantsPause: Bool
    private var dropRequested = false
    private var stopRequested = false
    private var waitingForData = false
    private var failure: OutputError?
    private var finished = false
    private var abandoned = false
    private var ringDropped = 0
    private var outputDropped = 0
    private var outputProblem: String?
    /// Bytes the thread has taken out of the ring, ever: whether it is moving.
    private var consumedBytes = 0
    /// True while the audio thread waits for room (the thread then signals as it takes frames).
    private var producerWaiting = false
    /// `consumedBytes` when a wait for room last ran out: the follower had stalled, and is not waited
    /// for again until it has moved.
    private var stalledAt: Int?

    /// How long the audio thread waits for room behind an unpaced leader while the follower takes
    /// nothing, before it counts the follower as stalled and drops instead.
    static let stallNanoseconds: Int64 = 1_000_000_000

    /// Starts a thread for `output`, which is open in the stream's format or closed; `paused` says
    /// whether the player is paused.
    init(output: any AudioOutput, clock: any PacingClock, paused: Bool, droppedBefore: Int) {
        self.output = output
        self.clock = clock
        self.wantsPause = paused
        self.ringDropped = droppedBefore
        self.ring = .allocate(byteCount: Self.ringBytes, alignment: 16)
        let box = UncheckedBox(self)
        self.thread = startThread {
            box.value.run()
            box.value.finish()
        }
    }

    deinit {
        self.ring.deallocate()
    }

    // MARK: - The audio thread's side

    /// Queues a copy of `frames`; drops the oldest queued frames to make room if need be. With
    /// `waitingForRoom` (the leader keeps no real time), waits for room first while the thread is
    /// moving. Returns why the output failed, if it did: it takes nothing more then.
    func push(_ frames: UnsafeRawBufferPointer, bytesPerFrame: Int, waitingForRoom: Bool = false) -> OutputError? {
        self.lock.locked {
            if let failure = self.failure { return failure }
            if waitingForRoom {
                self.waitForRoom(min(frames.count, self.ring.count))
                if let failure = self.failure { return failure }
            }
            var bytes = frames.count
            var source = frames
            if bytes > self.ring.count {
                // Larger than the ring: only its end can be kept.
                let skipped = bytes - self.ring.count / bytesPerFrame * bytesPerFrame
                self.ringDropped += skipped / bytesPerFrame
                source = UnsafeRawBufferPointer(rebasing: frames[skipped...])
                bytes = source.count
            }
            if !self.makeRoom(bytes) {
                // The head is an instruction the thread has yet to carry out: keep the order, lose these.
                self.ringDropped += bytes / bytesPerFrame
                return nil
            }
            self.copyIn(source)
            if case .frames(let count, let size) = self.items.last, self.items.count > self.head, size == bytesPerFrame
            {
                self.items[self.items.count - 1] = .frames(byteCount: count + bytes, bytesPerFrame: size)
            } else {
                self.items.append(.frames(byteCount: bytes, bytesPerFrame: bytesPerFrame))
            }
            // A thread waiting for frames is woken once a burst has ended (`wake`), or now if the ring is
            // half full; not for every period.
            if self.waitingForData && self.ringCount >= self.ring.count / 2 {
                self.lock.signal()
            }
            return nil
        }
    }

    /// With the lock held: waits until `bytes` fit in the ring, for as long as the thread keeps taking
    /// frames out of it; gives up once it has taken nothing for `stallNanoseconds` (and does not wait
    /// again until it moves), or when it is paused, failed, or told to stop.
    private func waitForRoom(_ bytes: Int) {
        if let stalledAt = self.stalledAt {
            guard self.consumedBytes != stalledAt else { return }
            self.stalledAt = nil
        }
        var progress = self.consumedBytes
        var deadline = MonotonicClock().now() + Self.stallNanoseconds
        while self.ring.count - self.ringCount < bytes, self.failure == nil, !self.stopRequested, !self.wantsPause {
            self.producerWaiting = true
            self.lock.wait(until: deadline)
            self.producerWaiting = false
            let now = MonotonicClock().now()
            if self.consumedBytes != progress {
                progress = self.consumedBytes
                deadline = now + Self.stallNanoseconds
            } else if now >= deadline {
                self.stalledAt = self.consumedBytes
                return
            }
        }
    }

    /// Queues an instruction after the frames queued so far, and wakes the thread.
    func post(_ item: FollowerItem) {
        self.lock.locked {
            self.items.append(item)
            self.lock.signal()
        }
    }

    /// Wakes the thread if it waits for frames and some have come: the audio thread has finished a
    /// burst of writes.
    func wake() {
        self.lock.locked {
            if self.waitingForData && self.head < self.items.count {
                self.lock.signal()
            }
        }
    }

    /// Pauses or resumes the output at once, keeping what is queued.
    func setPaused(_ paused: Bool) {
        self.lock.locked {
            self.wantsPause = paused
            self.lock.signal()
        }
    }

    /// Throws away the queued frames and (unless told otherwise: a device about to be closed loses it
    /// anyway) what the device holds, at once: a seek or a skip. A drain already asked for is carried
    /// out first (the device is empty after it anyway).
    func drop(includingDevice: Bool = true) {
        self.lock.locked {
            var pendingDrain = false
            var kept: [FollowerItem] = []
            for item in self.items[self.head...] {
                switch item {
                case .frames:
                    if pendingDrain { kept.append(item) }
                case .drain:
                    pendingDrain = true
                    kept.append(item)
                case .open, .close:
                    kept.append(item)
                }
            }
            if !pendingDrain {
                self.ringStart = 0
                self.ringCount = 0
                self.items = kept
                self.head = 0
                self.dropRequested = self.dropRequested || includingDevice
                self.lock.signal()
            }
        }
    }

    /// Frames dropped since the output began playing, and what it is putting up with.
    var report: (droppedFrames: Int, problem: String?) {
        self.lock.locked { (self.ringDropped + self.outputDropped, self.outputProblem) }
    }

    /// Ends the thread and waits for it, `timeout` nanoseconds at most. The output is then the caller's, as the thread left
    /// it (open or closed), and `frames` holds the queued frames if nothing but frames was queued, so
    /// that an output taking the lead can play them before anything new. A thread stuck in its output
    /// (a write into a pipe nobody reads) is left behind instead (`abandoned`): it closes its output
    /// itself whenever the call returns, and the caller must not touch that output again. The audio
    /// thread never hangs on an output, as MPD's did on `disableoutput`.
    func stop(waitingAtMost timeout: Int64) -> (frames: [UInt8], droppedFrames: Int, abandoned: Bool) {
        let deadline = MonotonicClock().now() + timeout
        let finished = self.lock.locked {
            self.stopRequested = true
            self.lock.broadcast()
            while !self.finished {
                if !self.lock.wait(until: deadline) && !self.finished {
                    self.abandoned = true
                    return false
                }
            }
            return true
        }
        if let thread = self.thread {
            if finished { pthread_join(thread, nil) } else { pthread_detach(thread) }
            self.thread = nil
        }
        return self.lock.locked {
            let left = self.items[self.head...]
            let onlyFrames = left.allSatisfy { if case .frames = $0 { true } else { false } }
            var bytes: [UInt8] = []
            if finished && onlyFrames && self.failure == nil {
                bytes.reserveCapacity(self.ringCount)
                var start = self.ringStart
                var count = self.ringCount
                while count > 0 {
                    let run = min(count, self.ring.count - start)
                    bytes += UnsafeRawBufferPointer(rebasing: self.ring[start..<start + run])
                    start = (start + run) % self.ring.count
                    count -= run
                }
            }
            return (bytes, self.ringDropped + self.outputDropped, !finished)
        }
    }

    /// The thread's last act: says it is done, and closes the output if it was left behind.
    private func finish() {
        let abandoned = self.lock.locked {
            self.finished = true
            self.lock.broadcast()
            return self.abandoned
        }
        if abandoned {
            try? self.output.drop()
            self.output.close()
        }
    }

    /// With the lock held: frees `bytes` in the ring by dropping the oldest queued frames. False when
    /// the frames in the way sit behind an instruction.
    private func makeRoom(_ bytes: Int) -> Bool {
        while self.ring.count - self.ringCount < bytes {
            guard self.head < self.items.count, case .frames(let count, let size) = self.items[self.head] else {
                return false
            }
            let needed = bytes - (self.ring.count - self.ringCount)
            let dropped = min(count, (needed + size - 1) / size * size)
            self.consume(dropped)
            self.ringDropped += dropped / size
            if dropped == count {
                self.head += 1
            } else {
                self.items[self.head] = .frames(byteCount: count - dropped, bytesPerFrame: size)
            }
        }
        return true
    }

    private func copyIn(_ source: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < source.count {
            let end = (self.ringStart + self.ringCount) % self.ring.count
            let run = min(source.count - offset, self.ring.count - end, self.ring.count - self.ringCount)
            UnsafeMutableRawBufferPointer(rebasing: self.ring[end..<end + run])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + run]))
            self.ringCount += run
            offset += run
        }
    }

    private func consume(_ bytes: Int) {
        self.ringStart = (self.ringStart + bytes) % self.ring.count
        self.ringCount -= bytes
        if self.ringCount == 0 {
            self.ringStart = 0
        }
    }

    /// With the lock held: the thread has taken `bytes` out of the ring to play them.
    private func noteTaken(_ bytes: Int) {
        self.consumedBytes &+= bytes
        if self.producerWaiting {
            self.lock.signal()
        }
    }

    // MARK: - The worker's thread

    private enum Step {
        case quit
        case drop
        case pause(Bool)
        case perform(FollowerItem)
        case write(bytes: Int)
        case waitForDevice(until: Int64)
        case idle
    }

    private func run() {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        defer { scratch.deallocate() }
        var paused = false
        while true {
            // Asked outside the lock: a device call may take a while, and the audio thread must not wait.
            let room: Int?
            let capacity = self.output.capacityFrames
            do throws(OutputError) {
                room = self.output.format == nil || paused ? nil : try self.output.writableFrames
            } catch {
                self.fail(error)
                continue
            }
            let step = self.lock.locked { self.nextStep(room: room, capacity: capacity, paused: paused, scratch) }
            do throws(OutputError) {
                switch step {
                case .quit:
                    return
                case .drop:
                    if self.output.format != nil { try self.output.drop() }
                case .pause(let pause):
                    if self.output.format != nil {
                        if pause { try self.output.pause() } else { try self.output.resume() }
                    }
                    paused = pause
                case .perform(let item):
                    try self.perform(item)
                    if case .open = item { paused = false }
                    if case .close = item { paused = false }
                case .write(let bytes):
                    try self.output.write(UnsafeRawBufferPointer(rebasing: scratch[0..<bytes]))
                case .waitForDevice(let deadline):
                    if self.clock.isRealTime {
                        self.lock.locked {
                            if !self.hasUrgentWork(paused: paused) { self.lock.wait(until: deadline) }
                        }
                    } else {
                        self.clock.sleep(until: deadline)
                    }
                case .idle:
                    break
                }
            } catch {
                self.fail(error)
            }
            let dropped = self.output.droppedFrames
            let problem = self.output.problem
            self.lock.locked {
                self.outputDropped = dropped
                self.outputProblem = problem
            }
        }
    }

    /// With the lock held: what to do next. Waits for something to do, if there is nothing.
    private func nextStep(room: Int?, capacity: Int?, paused: Bool, _ scratch: UnsafeMutableRawBufferPointer) -> Step {
        if self.stopRequested { return .quit }
        if self.failure != nil {
            self.waitForWork()
            return .idle
        }
        if self.dropRequested {
            self.dropRequested = false
            return .drop
        }
        if self.wantsPause != paused { return .pause(self.wantsPause) }
        guard self.head < self.items.count else {
            self.compact()
            self.waitingForData = true
            self.waitForWork()
            self.waitingForData = false
            return .idle
        }
        guard case .frames(let count, let size) = self.items[self.head] else {
            let item = self.items[self.head]
            self.head += 1
            return .perform(item)
        }
        if paused || self.output.format == nil {
            // Frames wait for the player to resume (or for an output that failed to open to be stopped).
            self.waitForWork()
            return .idle
        }
        var frames = min(count, Self.chunkBytes) / size
        if let room, let capacity, let format = self.output.format {
            let available = count / size
            // Refill the device once half of it has drained, or when all that is queued fits: a few
            // wakes a second, as the audio thread's own refills.
            guard room >= capacity / 2 || room >= available, room > 0 else {
                let shortfall = max(1, capacity / 2 - room + 1)
                return .waitForDevice(until: self.clock.now() + format.nanoseconds(forFrames: shortfall))
            }
            frames = min(frames, room)
        }
        let bytes = frames * size
        self.copyOut(bytes, into: scratch)
        self.noteTaken(bytes)
        if bytes == count {
            self.head += 1
        } else {
            self.items[self.head] = .frames(byteCount: count - bytes, bytesPerFrame: size)
        }
        return .write(bytes: bytes)
    }

    /// With the lock held: sleeps until the audio thread has something for this thread (every change
    /// it makes signals), without waking by itself: a following output costs no wake-ups of its own
    /// beyond the ones its device needs.
    private func waitForWork() {
        self.lock.wait(until: MonotonicClock().now() + Self.idleWaitNanoseconds)
    }

    /// The longest a waiting thread sleeps without being signalled: only a safeguard.
    private static let idleWaitNanoseconds: Int64 = 60_000_000_000

    private func hasUrgentWork(paused: Bool) -> Bool {
        self.stopRequested || self.dropRequested || self.wantsPause != paused
            || (self.head < self.items.count && { if case .frames = self.items[self.head] { false } else { true } }())
    }

    private func copyOut(_ bytes: Int, into scratch: UnsafeMutableRawBufferPointer) {
        var offset = 0
        while offset < bytes {
            let run = min(bytes - offset, self.ring.count - self.ringStart)
            UnsafeMutableRawBufferPointer(rebasing: scratch[offset..<offset + run])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: self.ring[self.ringStart..<self.ringStart + run]))
            self.consume(run)
            offset += run
        }
    }

    private func compact() {
        if self.head > 0 {
            self.items.removeFirst(self.head)
            self.head = 0
        }
    }

    private func perform(_ item: FollowerItem) throws(OutputError) {
        switch item {
        case .open(let format):
            if self.output.format != format {
                self.output.close()
                try self.output.open(format: format)
            }
        case .drain:
            if self.output.format != nil { try self.output.drain() }
        case .close:
            self.output.close()
        case .frames:
            break
        }
    }

    /// The output failed: it is closed, takes nothing more, and the audio thread learns why at its next
    /// push, stops this thread and tries the output again later.
    private func fail(_ error: OutputError) {
        self.output.close()
        self.lock.locked {
            self.failure = error
            self.items.removeAll()
            self.head = 0
            self.ringStart = 0
            self.ringCount = 0
        }
    }

    /// The failure that stopped the output, if any.
    var failureReason: OutputError? { self.lock.locked { self.failure } }
}

/// Carries a value that is not `Sendable` to a thread that will be its only user.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
