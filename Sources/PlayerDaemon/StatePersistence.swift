import Audio
import Dispatch
import Logging
import PlayerCore
import StreamInput
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the state file in step with the player: written within a second of a change, every few
/// seconds while playing (so a SIGKILL loses at most that much position), and at shutdown.
final class StatePersistence: Sendable {
    private let file: StateFile
    /// The default partition's player.
    private let engine: AudioEngine
    /// Every partition, for the others' players and which outputs play where; nil keeps the default
    /// partition alone.
    private let partitions: PartitionRegistry?
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

    init(
        file: StateFile, engine: AudioEngine, partitions: PartitionRegistry? = nil, logger: Logger,
        restored: SavedState?, savesVolume: Bool = true
    ) {
        self.file = file
        self.partitions = partitions
        self.savesVolume = savesVolume
        self.engine = engine
        self.logger = logger
        self.lastSaved.withLock { $0 = restored }
    }

    // MARK: - Restoring

    /// The context a saved state stands for: its queue (files that vanished since are skipped with a
    /// note), modes and volume; and the contexts of its other partitions, in its order. A missing file gives an empty player; a corrupt one is kept aside
    /// under another name, logged, and the player starts empty.
    static func restore(
        from file: StateFile,
        logger: Logger,
        releasesOutputOnPause: Bool,
        maximumQueueLength: Int = Queue.defaultMaximumLength
    ) -> (PlayerContext, SavedState?, [PlayerContext]) {
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
        let context = PlayerContext(
            queue: Queue(maximumLength: maximumQueueLength), releasesOutputOnPause: releasesOutputOnPause)
        guard var state = saved else { return (context, nil, []) }
        for skipped in state.skippedLines {
            logger.warning("\(file.path): skipped \(skipped)")
        }
        let limits = (logger: logger, releasesOutputOnPause: releasesOutputOnPause, maximumLength: maximumQueueLength)
        let restored = Self.context(
            of: Restorable(
                paths: state.paths, priorities: state.priorities, ranges: state.ranges, current: state.current,
                repeatMode: state.repeatMode, random: state.random,
                single: state.single, consume: state.consume, volume: state.volume, isMuted: state.isMuted,
                replayGainMode: state.replayGainMode, crossfade: state.crossfade), limits)
        state.paths = restored.paths
        state.priorities = restored.priorities
        state.ranges = restored.ranges
        state.current = restored.current
        var partitions: [PlayerContext] = []
        for index in state.partitions.indices {
            let partition = state.partitions[index]
            let kept = Self.context(
                of: Restorable(
                    paths: partition.paths, priorities: partition.priorities, ranges: partition.ranges,
                    current: partition.current, repeatMode: partition.repeatMode,
                    random: partition.random, single: partition.single, consume: partition.consume,
                    volume: partition.volume, isMuted: partition.isMuted, replayGainMode: partition.replayGainMode,
                    crossfade: partition.crossfade),
                limits)
            state.partitions[index].paths = kept.paths
            state.partitions[index].priorities = kept.priorities
            state.partitions[index].ranges = kept.ranges
            state.partitions[index].current = kept.current
            partitions.append(kept.context)
        }
        logger.info("restored \(restored.paths.count) queued songs from \(file.path)")
        return (restored.context, state, partitions)
    }

    /// What a saved partition's player is made from.
    private struct Restorable {
        var paths: [String]
        var priorities: [Int: UInt8]
        var ranges: [Int: SongRange]
        var current: Int?
        var repeatMode: Bool
        var random: Bool
        var single: SingleMode
        var consume: Bool
        var volume: Int?
        var isMuted: Bool
        var replayGainMode: ReplayGainMode
        var crossfade: CrossfadeSettings
    }

    /// The context of a saved queue: its files that can still be read (the others are skipped with a
    /// note), up to the queue's limit, the current song among them, its modes and volume.
    private static func context(
        of saved: Restorable, _ limits: (logger: Logger, releasesOutputOnPause: Bool, maximumLength: Int)
    ) -> (context: PlayerContext, paths: [String], priorities: [Int: UInt8], ranges: [Int: SongRange], current: Int?) {
        var kept: [String] = []
        var current: Int?
        var ranges: [Int: SongRange] = [:]
        var priorities: [Int: UInt8] = [:]
        for (position, path) in saved.paths.enumerated() {
            // A station is kept as it is: whether it answers is for when it plays.
            guard StationStream.isStation(path) || access(PathEscaping.systemPath(path), R_OK) == 0 else {
                limits.logger.notice("skipped \(path) from the saved queue: \(String(cString: strerror(errno)))")
                continue
            }
            if position == saved.current { current = kept.count }
            ranges[kept.count] = saved.ranges[position]
            if let priority = saved.priorities[position] { priorities[kept.count] = priority }
            kept.append(path)
        }
        if kept.count > limits.maximumLength {
            // A lower limit than the saved queue's length keeps its start rather than none of it.
            limits.logger.warning(
                "the saved queue holds \(kept.count) songs; keeping the first \(limits.maximumLength)")
            kept.removeLast(kept.count - limits.maximumLength)
            if let position = current, position >= kept.count { current = nil }
        }
        priorities = priorities.filter { $0.key < kept.count }
        var queue = Queue(maximumLength: limits.maximumLength)
        let ids = (try? queue.add(kept)) ?? []
        for (index, range) in ranges where index < ids.count {
            try? queue.setRange(range, id: ids[index])
        }
        // Before random mode, which orders the songs by them.
        for (position, priority) in priorities.sorted(by: { $0.key < $1.key }) {
            try? queue.setPriority(priority, positions: position..<(position + 1))
        }
        queue.repeatMode = saved.repeatMode
        queue.single = saved.single
        queue.consume = saved.consume
        queue.random = saved.random
        if let current {
            try? queue.setCurrent(position: current)
        }
        var context = PlayerContext(queue: queue, releasesOutputOnPause: limits.releasesOutputOnPause)
        if let volume = saved.volume {
            try? context.setVolume(volume)
        }
        context.setMuted(saved.isMuted)
        context.replayGainMode = saved.replayGainMode
        context.crossfade = saved.crossfade
        return (context, kept, priorities, ranges.filter { $0.key < kept.count }, current)
    }

    /// Puts the player back at the saved song and position: paused (holding no device) unless
    /// `playing`. Opening the song and seeking is all it costs.
    func resume(_ saved: SavedState, playing: Bool) async {
        await self.resume(self.engine, saved.state, saved.current, saved.offset, playing: playing)
        for partition in saved.partitions {
            guard let service = self.partitions?.find(partition.name) else { continue }
            let offset = Int64(partition.elapsed * 1e9)
            await self.resume(service.engine, partition.state, partition.current, offset, playing: playing)
        }
    }

    private func resume(
        _ engine: AudioEngine, _ state: PlayerStateKind, _ current: Int?, _ offset: Int64, playing: Bool
    )
        async
    {
        guard state != .stop, let current else { return }
        do {
            try await engine.withContext { context throws(PlayerError) in
                ((), try context.restore(position: current, offset: offset, paused: !playing))
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
                // Cancelled while asleep means shutting down: no save after `finish`'s, which would
                // snapshot partitions already being taken apart (and lose them from the file).
                guard (try? await Task.sleep(for: .seconds(1))) != nil else { return }
                await self.saveIfNeeded()
            }
        }
        self.task.withLock { $0 = task }
    }

    /// Saves now, whatever changed, and stops the background saving.
    func finish() async {
        let task = self.task.withLock { $0 }
        task?.cancel()
        // A save already under way ends first: the last word is this one's.
        await task?.value
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
        let playing = state.state == .play || state.partitions.contains { $0.state == .play }
        let playingLongEnough = playing && now - self.lastSavedAt.load(ordering: .relaxed) >= Self.playingInterval
        var comparable = state
        comparable.elapsed = previous?.elapsed ?? 0
        // A seek while paused moves only the position: worth saving too.
        var moved = abs(state.elapsed - (previous?.elapsed ?? 0)) >= 1 && state.state != .play
        for index in comparable.partitions.indices {
            let before = previous?.partitions.first { $0.name == comparable.partitions[index].name }?.elapsed ?? 0
            moved =
                moved
                || (abs(comparable.partitions[index].elapsed - before) >= 1 && state.partitions[index].state != .play)
            comparable.partitions[index].elapsed = before
        }
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
        let state: SavedState? = try? await engine.withContext { context throws(PlayerError) in
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
        guard var state, let partitions = self.partitions else { return state }
        for service in partitions.all.dropFirst() {
            guard var partition = await Self.snapshot(of: service) else { continue }
            for slot in partitions.slots(of: service.name) where slot.isPresent {
                let output = service.engine.status.outputs[slot.output]
                partition.outputs.append(SavedOutput(name: output.name, isEnabled: output.isEnabled))
                // The default partition's lines give every output's switch, wherever it plays: a reader
                // that knows no partitions puts them all back there as they were.
                state.outputs[slot.output].isEnabled = output.isEnabled
            }
            state.partitions.append(partition)
        }
        return state
    }

    /// A partition other than the default one, but for its outputs.
    private static func snapshot(of service: PlayerService) async -> SavedPartition? {
        let engine = service.engine
        let name = service.name
        return try? await engine.withContext { context throws(PlayerError) in
            var partition = SavedPartition(name: name)
            let queue = context.queue
            partition.paths = queue.entries.map(\.path)
            for (index, entry) in queue.entries.enumerated() where entry.range != nil {
                partition.ranges[index] = entry.range
            }
            partition.crossfade = context.crossfade
            for (position, entry) in queue.entries.enumerated() where entry.priority != 0 {
                partition.priorities[position] = entry.priority
            }
            partition.current =
                context.state.entry.flatMap { queue.position(ofID: $0.id) } ?? queue.currentPosition
            partition.state = context.state.kind == .prepare ? .play : context.state.kind
            partition.volume = context.volume
            partition.isMuted = context.isMuted
            partition.repeatMode = queue.repeatMode
            partition.random = queue.random
            partition.single = queue.single
            partition.consume = queue.consume
            partition.replayGainMode = context.replayGainMode
            partition.elapsed = partition.state == .stop ? 0 : engine.status.elapsed(at: engine.now())
            return (partition, [])
        }
    }
}
