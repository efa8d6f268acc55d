import Audio
import Dispatch
import Logging
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the state file in step with the player: written within a second of a change, every few
/// seconds while playing (so a SIGKILL loses at most that much position), and at shutdown.
final class StatePersistence: Sendable {
    private let file: StateFile
    private let engine: AudioEngine
    private let logger: Logger
    private let lastSaved = Mutex<SavedState?>(nil)
    private let lastSavedAt = Atomic<Int64>(0)
    /// Numbers snapshots as they are taken; the file only ever moves to a newer one, whichever save
    /// (periodic or final) reaches the disk first.
    private let sequence = Atomic<Int>(0)
    private let written = Mutex<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// False when a sound card's mixer (or none) sets the loudness: the file then keeps the software
    /// volume it had, for a later start with software volume, and the card keeps its own level.
    private let savesVolume: Bool
    /// While playing, the position is saved at least this often.
    static let playingInterval: Int64 = 3_000_000_000

    init(file: StateFile, engine: AudioEngine, logger: Logger, restored: SavedState?, savesVolume: Bool = true) {
        self.file = file
        self.savesVolume = savesVolume
        self.engine = engine
        self.logger = logger
        self.lastSaved.withLock { $0 = restored }
    }

    // MARK: - Restoring

    /// The context a saved state stands for: its queue (files that vanished since are skipped with a
    /// note), modes and volume. A missing file gives an empty player; a corrupt one is kept aside
    /// under another name, logged, and the player starts empty.
    static func restore(
        from file: StateFile,
        logger: Logger,
        releasesOutputOnPause: Bool,
        maximumQueueLength: Int = Queue.defaultMaximumLength
    ) -> (PlayerContext, SavedState?) {
        var saved: SavedState?
        do {
            if let text = try file.read() {
                saved = try SavedState(decoding: text)
            }
        } catch {
            logger.error("\(file.path): \(error)")
            if case .corrupt = error {
                do {
                    let aside = try file.keepAside()
                    logger.warning("kept the corrupt state file as \(aside); starting with an empty queue")
                } catch {
                    logger.error("cannot keep the corrupt state file aside: \(error)")
                }
            }
        }
        var context = PlayerContext(
            queue: Queue(maximumLength: maximumQueueLength), releasesOutputOnPause: releasesOutputOnPause)
        guard var state = saved else { return (context, nil) }
        for skipped in state.skippedLines {
            logger.warning("\(file.path): skipped \(skipped)")
        }

        var kept: [String] = []
        var current: Int?
        var ranges: [Int: SongRange] = [:]
        var priorities: [Int: UInt8] = [:]
        for (position, path) in state.paths.enumerated() {
            guard access(PathEscaping.systemPath(path), R_OK) == 0 else {
                logger.notice("skipped \(path) from the saved queue: \(String(cString: strerror(errno)))")
                continue
            }
            if position == state.current { current = kept.count }
            ranges[kept.count] = state.ranges[position]
            if let priority = state.priorities[position] { priorities[kept.count] = priority }
            kept.append(path)
        }
        if kept.count > maximumQueueLength {
            // A lower limit than the saved queue's length keeps its start rather than none of it.
            logger.warning("the saved queue holds \(kept.count) songs; keeping the first \(maximumQueueLength)")
            kept.removeLast(kept.count - maximumQueueLength)
            if let position = current, position >= kept.count { current = nil }
        }
        state.paths = kept
        state.current = current
        state.priorities = priorities.filter { $0.key < kept.count }
        var queue = Queue(maximumLength: maximumQueueLength)
        let ids = (try? queue.add(kept)) ?? []
        for (index, range) in ranges where index < ids.count {
            try? queue.setRange(range, id: ids[index])
        }
        // Before random mode, which orders the songs by them.
        for (position, priority) in state.priorities.sorted(by: { $0.key < $1.key }) {
            try? queue.setPriority(priority, positions: position..<(position + 1))
        }
        queue.repeatMode = state.repeatMode
        queue.single = state.single
        queue.consume = state.consume
        queue.random = state.random
        if let current {
            try? queue.setCurrent(position: current)
        }
        context = PlayerContext(queue: queue, releasesOutputOnPause: releasesOutputOnPause)
        try? context.setVolume(state.volume)
        context.setMuted(state.isMuted)
        context.replayGainMode = state.replayGainMode
        context.crossfade = state.crossfade
        logger.info("restored \(kept.count) queued songs from \(file.path)")
        return (context, state)
    }

    /// Puts the player back at the saved song and position: paused (holding no device) unless
    /// `playing`. Opening the song and seeking is all it costs.
    func resume(_ saved: SavedState, playing: Bool) async {
        guard saved.state != .stop, let current = saved.current else { return }
        do {
            try await self.engine.withContext { context throws(PlayerError) in
                ((), try context.restore(position: current, offset: saved.offset, paused: !playing))
            }
        } catch {
            self.logger.error("cannot restore the saved position: \(error)")
        }
    }

    // MARK: - Saving

    /// Starts saving in the background.
    func start() {
        let task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await self.saveIfNeeded()
            }
        }
        self.task.withLock { $0 = task }
    }

    /// Saves now, whatever changed, and stops the background saving.
    func finish() async {
        self.task.withLock { $0?.cancel() }
        await self.save(force: true)
    }

    private func saveIfNeeded() async {
        await self.save(force: false)
    }

    private func save(force: Bool) async {
        let number = self.sequence.add(1, ordering: .relaxed).newValue
        let previous = self.lastSaved.withLock { $0 }
        guard var state = await self.snapshot() else { return }
        if !self.savesVolume {
            state.volume = previous?.volume ?? SavedState().volume
        }
        let now = self.engine.now()
        let playingLongEnough =
            state.state == .play && now - self.lastSavedAt.load(ordering: .relaxed) >= Self.playingInterval
        var comparable = state
        comparable.elapsed = previous?.elapsed ?? 0
        // A seek while paused moves only the position: worth saving too.
        let moved = abs(state.elapsed - (previous?.elapsed ?? 0)) >= 1 && state.state != .play
        guard force || previous != comparable || playingLongEnough || moved else { return }
        self.written.withLock { written in
            guard number > written else { return }
            do {
                try self.file.write(state.encoded())
                written = number
                self.lastSaved.withLock { $0 = state }
                self.lastSavedAt.store(now, ordering: .relaxed)
            } catch {
                self.logger.error("cannot save the state: \(error)")
            }
        }
    }

    private func snapshot() async -> SavedState? {
        let engine = self.engine
        return try? await engine.withContext { context throws(PlayerError) in
            var state = SavedState()
            let queue = context.queue
            state.paths = queue.entries.map(\.path)
            for (index, entry) in queue.entries.enumerated() where entry.range != nil {
                state.ranges[index] = entry.range
            }
            state.crossfade = context.crossfade
            for (position, entry) in queue.entries.enumerated() where entry.priority != 0 {
                state.priorities[position] = entry.priority
            }
            state.current = context.state.entry.flatMap { queue.position(ofID: $0.id) } ?? queue.currentPosition
            state.state = context.state.kind == .prepare ? .play : context.state.kind
            // Software volume is always there to read; a card's is not saved (see `save`).
            state.volume = context.volume ?? state.volume
            state.isMuted = context.isMuted
            state.repeatMode = queue.repeatMode
            state.random = queue.random
            state.single = queue.single
            state.consume = queue.consume
            state.replayGainMode = context.replayGainMode
            let status = engine.status
            state.outputs = status.outputs.map { SavedOutput(name: $0.name, isEnabled: $0.isEnabled) }
            state.elapsed = state.state == .stop ? 0 : status.elapsed(at: engine.now())
            return (state, [])
        }
    }
}
