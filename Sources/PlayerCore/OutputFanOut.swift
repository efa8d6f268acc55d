// Every output the engine plays on, behind the one `AudioOutput` the audio thread writes to.
//
// The first enabled output that works leads: the audio thread writes to it itself, as it always did,
// so elapsed time, pacing and gapless joins follow it, and one output costs what it did before there
// were several. Every other enabled output follows on a thread of its own (`OutputWorker`), fed the
// same frames through a bounded ring that never makes the audio thread wait.
//
// An output that fails is closed, marked, and tried again every 10 seconds while the others play on;
// when the leader fails (or stops taking audio), the next one takes the lead without a gap: it keeps
// what its device and its ring hold. The lead also keeps the last half second it was given, so that
// an output switched on mid-song starts in step with the one already playing instead of ahead of it.

import Audio

/// The engine's outputs as one. Confined to the audio thread.
final class OutputFanOut: AudioOutput {
    /// How long the audio thread waits for a following output's thread to end when the output is
    /// switched off or fails: well under what the leader's buffer covers, so the leader never runs dry.
    /// A thread that takes longer is left to end by itself.
    static let switchOffWait: Int64 = 50_000_000
    /// How long it waits for a following output that is to take the lead.
    static let takeOverWait: Int64 = 200_000_000

    private enum Role {
        /// Enabled or not, not playing: the stream is closed, or the output is switched off.
        case idle
        /// Written by the audio thread.
        case leading
        /// Fed through its own thread.
        case following(OutputWorker)
        /// Failed; tried again at `retryAt`.
        case failed(OutputError, retryAt: Int64)
    }

    private final class Slot {
        let id: Int
        let definition: OutputDefinition
        /// The output; made again when a thread stuck in it had to be left behind.
        var output: any AudioOutput
        var isEnabled: Bool
        var role: Role = .idle
        /// Frames dropped by its worker threads that have ended.
        var droppedBefore = 0

        init(id: Int, definition: OutputDefinition) {
            self.id = id
            self.definition = definition
            self.output = definition.makeOutput()
            self.isEnabled = definition.isEnabled
        }
    }

    private let slots: [Slot]
    private let clock: any PacingClock
    private var lead: Slot?
    /// The stream's format while open.
    private(set) var format: AudioFormat?
    private var isPaused = false
    /// Frames the leading output is owed before anything new: what a following output that took the
    /// lead still had queued, or the recent past an output switched on has to catch up with.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    /// The last frames written to the leading output, as many as its buffer holds.
    private var history = HistoryRing()
    /// When the leader's room last grew: how a leader that stopped taking audio is told from a full one.
    private var leadProgressAt: Int64 = 0
    /// The earliest time a failed output is due to be tried again.
    private var nextRetry: Int64?
    /// The leader's room after the last write: room found larger later means it played something.
    private var leadRoomAfterWrite = 0

    /// How long a failed output waits before it is tried again.
    private let retryNanoseconds: Int64

    init(definitions: [OutputDefinition], clock: any PacingClock, retryNanoseconds: Int64) {
        precondition(!definitions.isEmpty, "an engine needs at least one output")
        self.slots = definitions.enumerated().map { Slot(id: $0.offset, definition: $0.element) }
        self.clock = clock
        self.retryNanoseconds = retryNanoseconds
    }

    var name: String { self.lead?.output.name ?? "outputs" }

    // MARK: - Status

    /// The outputs as clients see them.
    func statuses() -> [OutputStatus] {
        self.slots.map { slot in
            var status = OutputStatus(
                id: slot.id, name: slot.definition.name, plugin: slot.definition.plugin, isEnabled: slot.isEnabled)
            status.droppedFrames = slot.droppedBefore
            switch slot.role {
            case .idle:
                break
            case .leading:
                status.isLeading = true
                status.droppedFrames += slot.output.droppedFrames
                status.problem = slot.output.problem
            case .following(let worker):
                let report = worker.report
                status.droppedFrames = report.droppedFrames
                status.problem = report.problem
            case .failed(let error, _):
                status.hasFailed = true
                status.problem = error.description
            }
            return status
        }
    }

    /// True when an output with this number exists.
    func hasOutput(_ id: Int) -> Bool { self.slots.indices.contains(id) }

    /// Whether output `id` is switched on.
    func isEnabled(_ id: Int) -> Bool { self.slots[id].isEnabled }

    /// Whether any output is switched on.
    var hasEnabledOutput: Bool { self.slots.contains { $0.isEnabled } }

    // MARK: - Switching outputs

    /// Switches an output on or off while the player runs: one switched on joins the stream at once,
    /// in step with the others; one switched off falls silent at once.
    func setEnabled(_ id: Int, _ enabled: Bool) {
        let slot = self.slots[id]
        guard slot.isEnabled != enabled else { return }
        slot.isEnabled = enabled
        if enabled {
            guard let format = self.format else { return }
            self.join(slot, format: format)
        } else {
            self.retire(slot)
        }
    }

    /// Brings an enabled slot into the open stream: in the lead if it comes before the leader, else as
    /// a follower; a failure marks it.
    private func join(_ slot: Slot, format: AudioFormat) {
        if let lead = self.lead, lead.id < slot.id {
            self.follow(slot, format: format, opened: false)
            return
        }
        do throws(OutputError) {
            try slot.output.open(format: format)
        } catch {
            self.markFailed(slot, error)
            return
        }
        let owed = self.leadDelay()
        if let previous = self.lead {
            // The new leader starts where the old one is, from what the old one has not yet played.
            self.pending = self.history.last(owed)
            self.pendingStart = 0
            previous.role = .idle
            self.follow(previous, format: format, opened: true)
        }
        self.takeLead(slot)
    }

    /// Takes a slot out of play: closed at once, its place in the lead given to the next.
    private func retire(_ slot: Slot) {
        switch slot.role {
        case .idle:
            return
        case .failed:
            slot.role = .idle
        case .following(let worker):
            if self.stopWorker(worker, of: slot) {
                try? slot.output.drop()
                slot.output.close()
            }
            slot.role = .idle
        case .leading:
            try? slot.output.drop()
            slot.output.close()
            slot.role = .idle
            self.lead = nil
            self.pending = []
            self.pendingStart = 0
            // Nothing left to lead is found out, and said, by the next write.
            try? self.ensureLead()
        }
    }

    /// Starts a slot following the stream on its own thread.
    private func follow(_ slot: Slot, format: AudioFormat, opened: Bool) {
        let worker = OutputWorker(
            output: slot.output, clock: self.clock, paused: self.isPaused, droppedBefore: slot.droppedBefore)
        if !opened {
            worker.post(.open(format))
            // Starts in step with the leader: from what the leader has yet to play.
            let owed = self.history.last(self.leadDelay())
            if !owed.isEmpty {
                _ = owed.withUnsafeBytes { worker.push($0, bytesPerFrame: format.bytesPerFrame) }
                worker.wake()
            }
        }
        slot.role = .following(worker)
    }

    private func takeLead(_ slot: Slot) {
        slot.role = .leading
        self.lead = slot
        self.leadRoomAfterWrite = 0
        self.leadProgressAt = self.clock.now()
    }

    /// A following output takes the lead, keeping what its device and its ring hold (as much as its
    /// device's buffer), so that it plays on without a gap. False if it failed meanwhile.
    private func takeOver(_ slot: Slot, from worker: OutputWorker, format: AudioFormat) -> Bool {
        let frames = worker.stop(waitingAtMost: Self.takeOverWait)
        slot.droppedBefore = frames.droppedFrames
        slot.role = .idle
        if frames.abandoned {
            slot.output = slot.definition.makeOutput()
            self.markFailed(slot, .callFailed(output: slot.output.name, call: "playing", code: 0, reason: "stuck"))
            return false
        }
        if let error = worker.failureReason {
            self.markFailed(slot, error)
            return false
        }
        do throws(OutputError) {
            if slot.output.format != format {
                slot.output.close()
                try slot.output.open(format: format)
            }
            if self.isPaused { try slot.output.pause() }
        } catch {
            self.markFailed(slot, error)
            return false
        }
        let kept = (slot.output.capacityFrames ?? Int.max / format.bytesPerFrame) * format.bytesPerFrame
        self.pending = frames.frames.count > kept ? Array(frames.frames.suffix(kept)) : frames.frames
        self.pendingStart = 0
        self.takeLead(slot)
        return true
    }

    /// Stops a slot's thread; false when it had to be left behind stuck in the output, which the slot
    /// then replaces with a new one.
    private func stopWorker(_ worker: OutputWorker, of slot: Slot, waitingAtMost timeout: Int64 = switchOffWait)
        -> Bool
    {
        let result = worker.stop(waitingAtMost: timeout)
        slot.droppedBefore = result.droppedFrames
        if result.abandoned {
            slot.output = slot.definition.makeOutput()
            return false
        }
        return true
    }

    private func markFailed(_ slot: Slot, _ error: OutputError) {
        if case .following(let worker) = slot.role {
            _ = self.stopWorker(worker, of: slot)
        }
        slot.output.close()
        let retryAt = self.clock.now() + self.retryNanoseconds
        slot.role = .failed(error, retryAt: retryAt)
        self.nextRetry = min(self.nextRetry ?? retryAt, retryAt)
        if self.lead === slot {
            self.lead = nil
        }
    }

    /// Makes sure an enabled, working output leads: the first one, in order, that opens.
    /// - Throws: the last output's error when none works, or `noOutputEnabled`.
    private func ensureLead() throws(OutputError) {
        if self.lead != nil { return }
        guard let format = self.format else { throw .notOpen(output: self.name) }
        var lastError: OutputError?
        for slot in self.slots where slot.isEnabled {
            switch slot.role {
            case .failed(let error, _):
                lastError = error
            case .following(let worker):
                if self.takeOver(slot, from: worker, format: format) { return }
                if case .failed(let error, _) = slot.role { lastError = error }
            case .idle:
                do throws(OutputError) {
                    try slot.output.open(format: format)
                    if self.isPaused { try slot.output.pause() }
                    self.takeLead(slot)
                    return
                } catch {
                    self.markFailed(slot, error)
                    lastError = error
                }
            case .leading:
                return
            }
        }
        throw lastError ?? .noOutputEnabled
    }

    /// Tries again the failed outputs whose time has come.
    private func retryFailed() {
        guard let due = self.nextRetry, let format = self.format else { return }
        let now = self.clock.now()
        guard now >= due else { return }
        self.nextRetry = nil
        for slot in self.slots where slot.isEnabled {
            guard case .failed(_, let retryAt) = slot.role else { continue }
            if retryAt > now {
                self.nextRetry = min(self.nextRetry ?? retryAt, retryAt)
                continue
            }
            slot.role = .idle
            self.join(slot, format: format)
        }
    }

    /// The leader failed: it is marked, and the next output takes the lead.
    private func leaderFailed(_ failure: OutputError) throws(OutputError) {
        guard let lead = self.lead else { throw failure }
        self.markFailed(lead, failure)
        do throws(OutputError) {
            try self.ensureLead()
        } catch {
            // No output is left to play on: the engine stops with the leader's error, the one users need.
            throw failure
        }
    }

    // MARK: - AudioOutput

    func open(format: AudioFormat) throws(OutputError) {
        if self.format == format { return }
        if self.format != nil {
            self.close()
        }
        self.format = format
        self.isPaused = false
        if self.slots.count > 1 {
            self.history.reset(frameBytes: format.bytesPerFrame, capacity: format.frames(inNanoseconds: 1_000_000_000))
        }
        // A new stream tries every enabled output again at once, as MPD does on play.
        for slot in self.slots where slot.isEnabled {
            if case .failed = slot.role {
                slot.role = .idle
            }
        }
        do throws(OutputError) {
            try self.ensureLead()
        } catch {
            self.format = nil
            throw error
        }
        for slot in self.slots where slot.isEnabled {
            switch slot.role {
            case .idle:
                self.follow(slot, format: format, opened: false)
            case .following(let worker):
                worker.post(.open(format))
            case .leading, .failed:
                break
            }
        }
    }

    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let format = self.format else { throw .notOpen(output: self.name) }
        self.retryFailed()
        try self.ensureLead()
        while let lead = self.lead {
            do throws(OutputError) {
                // What a new leader still owed plays first (it waits for room only after a failover).
                try self.flushPending(room: nil)
                try lead.output.write(frames)
                break
            } catch {
                try self.leaderFailed(error)
            }
        }
        self.noteWritten(frames)
        // A leader that keeps no real time sets no pace to fall behind: followers that move get it all.
        let unpaced = self.lead?.output.capacityFrames == nil
        for slot in self.slots {
            guard case .following(let worker) = slot.role else { continue }
            if let error = worker.push(frames, bytesPerFrame: format.bytesPerFrame, waitingForRoom: unpaced) {
                self.markFailed(slot, error)
            }
        }
    }

    var writableFrames: Int? {
        get throws(OutputError) {
            guard self.format != nil else { return nil }
            self.retryFailed()
            try self.ensureLead()
            while let lead = self.lead {
                do throws(OutputError) {
                    guard let room = try lead.output.writableFrames else { return nil }
                    try self.watchForStall(lead, room: room)
                    let left = try self.flushPending(room: room)
                    return max(0, left - self.pendingFrames)
                } catch {
                    try self.leaderFailed(error)
                }
            }
            return nil
        }
    }

    var capacityFrames: Int? { self.lead?.output.capacityFrames }

    var delayFrames: Int { (self.lead?.output.delayFrames ?? 0) + self.pendingFrames }

    func pause() throws(OutputError) {
        self.isPaused = true
        self.forEachFollower { $0.setPaused(true) }
        try self.onLead { (output) throws(OutputError) in try output.pause() }
    }

    func resume() throws(OutputError) {
        self.isPaused = false
        self.leadProgressAt = self.clock.now()
        self.forEachFollower { $0.setPaused(false) }
        try self.onLead { (output) throws(OutputError) in try output.resume() }
    }

    func drain() throws(OutputError) {
        self.forEachFollower { $0.post(.drain) }
        try self.flushPending(room: nil)
        try self.onLead { (output) throws(OutputError) in try output.drain() }
    }

    func drop() throws(OutputError) {
        self.pending = []
        self.pendingStart = 0
        self.history.clear()
        self.leadProgressAt = self.clock.now()
        self.forEachFollower { $0.drop() }
        try self.onLead { (output) throws(OutputError) in try output.drop() }
    }

    func close() {
        self.lead?.output.close()
        if let lead = self.lead {
            lead.role = .idle
        }
        self.lead = nil
        for slot in self.slots {
            switch slot.role {
            case .following(let worker):
                // Closed as the leader is: what it has not played goes (after a drain already asked for,
                // nothing is left), so that a release on pause, which rewinds the decoder to what the
                // leader played, repeats nothing on the followers.
                worker.drop(includingDevice: false)
                worker.post(.close)
            case .failed:
                // Tried again with the next stream.
                break
            case .idle, .leading:
                break
            }
        }
        self.format = nil
        self.isPaused = false
        self.pending = []
        self.pendingStart = 0
        self.history.clear()
        self.nextRetry = nil
    }

    /// The audio thread is done writing for a while: followers waiting for frames get them now.
    func wakeFollowers() {
        self.forEachFollower { $0.wake() }
    }

    /// Ends every output's thread and closes every output.
    func shutDown() {
        self.close()
        for slot in self.slots {
            if case .following(let worker) = slot.role {
                _ = self.stopWorker(worker, of: slot, waitingAtMost: 2_000_000_000)
            }
            slot.output.close()
            slot.role = .idle
        }
    }

    // MARK: - Helpers

    private var pendingFrames: Int {
        guard let format = self.format else { return 0 }
        return (self.pending.count - self.pendingStart) / format.bytesPerFrame
    }

    private func leadDelay() -> Int {
        (self.lead.map { $0.output.delayFrames } ?? 0) + self.pendingFrames
    }

    /// Writes what the leader is owed: as much as `room` frames, or all of it for an output that cannot
    /// tell its room. Returns the room left.
    @discardableResult
    private func flushPending(room: Int?) throws(OutputError) -> Int {
        guard let lead = self.lead, let format = self.format, self.pendingStart < self.pending.count else {
            return room ?? 0
        }
        let owed = (self.pending.count - self.pendingStart) / format.bytesPerFrame
        let frames = room.map { min($0, owed) } ?? owed
        guard frames > 0 else { return room ?? 0 }
        let bytes = frames * format.bytesPerFrame
        let failure = self.pending.withUnsafeBytes { all -> OutputError? in
            let owed = UnsafeRawBufferPointer(rebasing: all[self.pendingStart..<self.pendingStart + bytes])
            do throws(OutputError) {
                try lead.output.write(owed)
            } catch {
                return error
            }
            self.noteWritten(owed)
            return nil
        }
        if let failure { throw failure }
        self.pendingStart += bytes
        if self.pendingStart >= self.pending.count {
            self.pending = []
            self.pendingStart = 0
        }
        return (room ?? 0) - frames
    }

    /// Keeps what the leader was given: its room shrinks by it, and an output switched on later starts
    /// from it. Only kept when there are other outputs to switch on.
    private func noteWritten(_ frames: UnsafeRawBufferPointer) {
        guard let format = self.format else { return }
        self.leadRoomAfterWrite -= frames.count / format.bytesPerFrame
        if self.slots.count > 1 {
            self.history.append(frames)
        }
    }

    /// A leader whose room has not grown for this long, while playing, has stopped taking audio: it is
    /// failed so that the others play on.
    private func watchForStall(_ lead: Slot, room: Int) throws(OutputError) {
        guard !self.isPaused, let format = self.format, let capacity = lead.output.capacityFrames else { return }
        let now = self.clock.now()
        defer { self.leadRoomAfterWrite = room }
        if room > self.leadRoomAfterWrite || room >= capacity {
            self.leadProgressAt = now
            return
        }
        let limit = max(3_000_000_000, 4 * format.nanoseconds(forFrames: capacity))
        if now - self.leadProgressAt > limit {
            let seconds = (now - self.leadProgressAt) / 1_000_000_000
            throw OutputError.callFailed(
                output: lead.output.name, call: "playing", code: 0,
                reason: "took no audio for \(seconds) seconds")
        }
    }

    private func onLead(_ call: (any AudioOutput) throws(OutputError) -> Void) throws(OutputError) {
        while let lead = self.lead, lead.output.format != nil {
            do throws(OutputError) {
                try call(lead.output)
                return
            } catch {
                try self.leaderFailed(error)
            }
        }
    }

    private func forEachFollower(_ body: (OutputWorker) -> Void) {
        for slot in self.slots {
            if case .following(let worker) = slot.role {
                body(worker)
            }
        }
    }
}

/// The last frames written, up to a capacity: the audio an output switched on mid-song must start
/// from to be in step with the leader.
struct HistoryRing {
    private var bytes: [UInt8] = []
    private var start = 0
    private var count = 0
    private var frameBytes = 1

    /// Empties the ring and sizes it for `frames` frames of `frameBytes` bytes, allocated now (as the
    /// stream opens, not in the middle of the first writes).
    mutating func reset(frameBytes: Int, capacity frames: Int) {
        self.frameBytes = frameBytes
        if self.bytes.count != frames * frameBytes {
            self.bytes = [UInt8](repeating: 0, count: frames * frameBytes)
        }
        self.start = 0
        self.count = 0
    }

    mutating func clear() {
        self.start = 0
        self.count = 0
    }

    mutating func append(_ frames: UnsafeRawBufferPointer) {
        guard !self.bytes.isEmpty else { return }
        var source = frames
        if source.count > self.bytes.count {
            source = UnsafeRawBufferPointer(rebasing: source[(source.count - self.bytes.count)...])
        }
        self.bytes.withUnsafeMutableBytes { ring in
            var offset = 0
            while offset < source.count {
                let end = (self.start + self.count) % ring.count
                let run = min(source.count - offset, ring.count - end)
                UnsafeMutableRawBufferPointer(rebasing: ring[end..<end + run])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + run]))
                offset += run
                self.count += run
                if self.count > ring.count {
                    self.start = (self.start + self.count - ring.count) % ring.count
                    self.count = ring.count
                }
            }
        }
    }

    /// The last `frames` frames written (fewer if fewer are kept).
    func last(_ frames: Int) -> [UInt8] {
        let wanted = min(frames * self.frameBytes, self.count)
        guard wanted > 0 else { return [] }
        var result: [UInt8] = []
        result.reserveCapacity(wanted)
        var from = (self.start + self.count - wanted) % self.bytes.count
        var left = wanted
        while left > 0 {
            let run = min(left, self.bytes.count - from)
            result += self.bytes[from..<from + run]
            from = (from + run) % self.bytes.count
            left -= run
        }
        return result
    }
}
