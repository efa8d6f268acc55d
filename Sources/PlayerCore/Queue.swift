// The play queue, after MPD's `src/queue/`: songs in position order, a stable id per entry, and an
// `order` list (order index → position) that is the identity unless random mode is on. Playback walks
// `order`, not positions, so shuffling never moves songs in the list a client sees.
//
// A plain value: no threads, no I/O. The player owns one copy and asks it where to go next.

/// One song in the queue.
public struct QueueEntry: Sendable, Hashable {
    /// Unique while the entry is queued, stable across moves (MPD's `Id`).
    public let id: Int
    /// The file to play.
    public let path: String
    /// MPD's priority, 0 to 255 (`prio`, `prioid`): in random mode higher priorities play first. 0
    /// unless a client set it.
    public internal(set) var priority: UInt8
    /// The part of the song that plays (MPD's `rangeid`); nil for the whole song.
    public var range: SongRange?

    /// Creates an entry; the queue hands out ids, so only tests and snapshots call this.
    public init(id: Int, path: String, priority: UInt8 = 0, range: SongRange? = nil) {
        self.id = id
        self.path = path
        self.priority = priority
        self.range = range
    }

    /// Whether two entries are the same song of the queue, whatever their priorities: a new priority
    /// changes the queue (idle `playlist`), not what the player plays. (A new range does change what
    /// plays: MPD refuses it for the song playing.)
    public static func sameSong(_ one: QueueEntry?, _ other: QueueEntry?) -> Bool {
        var one = one
        var other = other
        one?.priority = 0
        other?.priority = 0
        return one == other
    }
}

/// The part of a song that plays, in milliseconds as MPD keeps it (`rangeid ID START:END`): from
/// `start` to `end` (exclusive), or to the song's end when `end` is nil.
public struct SongRange: Sendable, Hashable {
    /// Where the song starts, in milliseconds.
    public var start: Int
    /// Where it ends, in milliseconds; nil: at the song's own end.
    public var end: Int?

    /// A range; `end`, when given, must lie after `start`.
    public init(start: Int, end: Int?) {
        self.start = max(0, start)
        self.end = end.map { max($0, self.start + 1) }
    }

    /// The first frame that plays, at `rate` (MPD's `SongTime::ToScale`: rounded down).
    public func startFrame(rate: Int) -> Int {
        Self.frame(self.start, rate: rate)
    }

    /// The frame the song ends before, at `rate`; nil: the song's own end.
    public func endFrame(rate: Int) -> Int? {
        self.end.map { Self.frame($0, rate: rate) }
    }

    private static func frame(_ milliseconds: Int, rate: Int) -> Int {
        milliseconds / 1000 * rate + milliseconds % 1000 * rate / 1000
    }
}

/// MPD's single mode.
public enum SingleMode: String, Sendable, CaseIterable {
    /// Play on through the queue.
    case off = "0"
    /// Pause at the start of the next song when the current one ends, or repeat it when repeat is on.
    case on = "1"
    /// Like `on`, once: turns itself off when it has taken effect.
    case oneshot
}

/// Why a queue edit was refused; the queue is unchanged then.
public enum QueueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A position outside the queue.
    case badPosition(Int)
    /// A range that does not fit the queue, or a move destination outside it.
    case badRange
    /// No queued entry has this id.
    case noSuchID(Int)
    /// The edit would make the queue longer than its limit.
    case tooLong(limit: Int)

    /// MPD's own wording, since clients show it to users as is.
    public var description: String {
        switch self {
        case .badPosition, .badRange: "Bad song index"
        case .noSuchID: "No such song"
        case .tooLong: "Playlist is too large"
        }
    }
}

/// The play queue: entries, ids, the play order, the current song and the play modes.
public struct Queue: Sendable {
    /// The length limit of a queue made without one: also where a directory walk stops.
    public static let defaultMaximumLength = 1_000_000
    /// Most entries the queue holds.
    public let maximumLength: Int
    /// The entries in position order.
    public private(set) var entries: [QueueEntry] = []
    /// MPD's `playlist` number: goes up by one on every change to the entries or their positions.
    public private(set) var version = 1
    /// The play order: `order[i]` is the position played i-th. The identity unless random mode is on.
    public private(set) var order: [Int] = []
    /// Repeat mode: the order starts over after its last song.
    public var repeatMode = false
    /// Consume mode: a song leaves the queue once playback moves past it.
    public var consume = false
    /// Single mode; see `SingleMode`.
    public var single: SingleMode = .off

    /// Index into `order` of the current song. MPD keeps the order index rather than the position
    /// because it is what playback walks; the position is one lookup away.
    private var currentSlot: Int?
    /// Position of each queued id, so id lookups stay O(1) on big queues.
    private var positionsByID: [Int: Int] = [:]
    /// Per position, the `version` at which that entry last appeared or moved (for `plchanges`).
    private var entryVersions: [Int] = []
    private var nextID = 1
    private var isRandom = false
    /// How many entries have a priority above 0: while none has, random mode need not group by it.
    private var prioritizedCount = 0
    private var generator: ShuffleGenerator

    /// Creates an empty queue holding at most `maximumLength` entries. A `randomSeed` makes every
    /// shuffle reproducible, for tests; without one the system's generator seeds it.
    public init(maximumLength: Int = Queue.defaultMaximumLength, randomSeed: UInt64? = nil) {
        self.maximumLength = max(0, maximumLength)
        var system = SystemRandomNumberGenerator()
        self.generator = ShuffleGenerator(seed: randomSeed ?? system.next())
    }

    // MARK: - Reading

    /// Number of entries.
    public var count: Int { self.entries.count }

    /// True when the queue has no entries.
    public var isEmpty: Bool { self.entries.isEmpty }

    /// Position of the current song, nil when there is none.
    public var currentPosition: Int? {
        guard let slot = self.currentSlot else { return nil }
        return self.order[slot]
    }

    /// The current song, nil when there is none.
    public var current: QueueEntry? {
        guard let position = self.currentPosition else { return nil }
        return self.entries[position]
    }

    /// Where `play` starts when there is no current song: the first position in play order.
    public var firstPosition: Int? { self.order.first }

    /// Random mode. Turning it on shuffles the order with the current song first, so everything else
    /// plays after it; turning it off restores position order. Neither changes `version`.
    public var random: Bool {
        get { self.isRandom }
        set { self.setRandom(newValue) }
    }

    /// The entry at `position`, nil outside the queue.
    public func entry(at position: Int) -> QueueEntry? {
        self.entries.indices.contains(position) ? self.entries[position] : nil
    }

    /// The position of the entry with `id`, nil when no queued entry has it.
    public func position(ofID id: Int) -> Int? {
        self.positionsByID[id]
    }

    /// The entry with `id`, nil when no queued entry has it.
    public func entry(withID id: Int) -> QueueEntry? {
        self.positionsByID[id].map { self.entries[$0] }
    }

    /// Positions whose entry is new or moved since the queue had `version` (MPD's `plchanges`). A
    /// version from the future (a client that saw an earlier daemon) gets every position.
    public func positionsChanged(since version: Int) -> [Int] {
        guard version <= self.version else { return Array(self.entries.indices) }
        return self.entryVersions.indices.filter { self.entryVersions[$0] >= version }
    }

    // MARK: - Editing

    /// Adds entries for `paths` at `position` (the end when nil), in the given order.
    /// In random mode the new entries are shuffled into the part of the order not yet played, keeping
    /// the song after the current one where it is (the player may have it ready already).
    /// - Returns: the new entries' ids.
    /// - Throws: `badPosition` outside `0...count`; `tooLong` when they would not all fit, and then
    ///   none is added.
    @discardableResult
    public mutating func add(_ paths: [String], at position: Int? = nil) throws(QueueError) -> [Int] {
        let oldCount = self.entries.count
        let start = position ?? oldCount
        guard start >= 0, start <= oldCount else { throw .badPosition(start) }
        guard paths.count <= self.maximumLength - oldCount else { throw .tooLong(limit: self.maximumLength) }
        guard !paths.isEmpty else { return [] }

        let added = paths.count
        let newCount = oldCount + added
        let firstID = self.nextID
        self.nextID += added
        let stamp = self.version
        // Plain loops rather than `append(contentsOf:)` of ranges: in debug builds the generic paths
        // cost microseconds per call, and the daemon adds one song per command.
        var ids: [Int] = []
        ids.reserveCapacity(added)
        // A directory of 10,000 songs would otherwise grow the table and the arrays a dozen times. (Not
        // for one song: reserving exactly one more each time would defeat their geometric growth.)
        if added > 1 {
            self.positionsByID.reserveCapacity(newCount)
            self.entries.reserveCapacity(newCount)
            self.entryVersions.reserveCapacity(newCount)
        }
        if start == oldCount {
            var id = firstID
            for path in paths {
                self.positionsByID[id] = self.entries.count
                self.entries.append(QueueEntry(id: id, path: path))
                self.entryVersions.append(stamp)
                ids.append(id)
                id += 1
            }
        } else {
            var newEntries: [QueueEntry] = []
            newEntries.reserveCapacity(added)
            var id = firstID
            for path in paths {
                newEntries.append(QueueEntry(id: id, path: path))
                ids.append(id)
                id += 1
            }
            self.entries.insert(contentsOf: newEntries, at: start)
            self.entryVersions.insert(contentsOf: repeatElement(stamp, count: added), at: start)
            // Songs after the insertion moved: `plchanges` reports them too.
            for position in start..<newCount {
                self.positionsByID[self.entries[position].id] = position
                self.entryVersions[position] = stamp
            }
        }

        if self.isRandom {
            if start < oldCount {
                for slot in self.order.indices where self.order[slot] >= start {
                    self.order[slot] += added
                }
            }
            let firstFreeSlot = self.currentSlot.map { min($0 + 2, oldCount) } ?? 0
            for position in start..<(start + added) {
                self.order.append(position)
                let last = self.order.count - 1
                // A new song (priority 0) is shuffled among the songs of its priority only, after the
                // higher ones (MPD's ShuffleOrderLastWithPriority).
                var lowest = firstFreeSlot
                if self.prioritizedCount > 0 {
                    while lowest < last, self.entries[self.order[lowest]].priority != 0 {
                        lowest += 1
                    }
                }
                self.order.swapAt(last, lowest + self.generator.index(below: last - lowest + 1))
            }
        } else {
            for position in oldCount..<newCount {
                self.order.append(position)
            }
            if let slot = self.currentSlot, slot >= start {
                self.currentSlot = slot + added
            }
        }
        self.version += 1
        return ids
    }

    /// Moves `version` on by `steps` more, with no entry changed: MPD counts some edits in several
    /// steps (an add at a position is an append and then a move; `findadd` appends song by song), and
    /// clients see the version's number.
    public mutating func advanceVersion(by steps: Int) {
        guard steps > 0 else { return }
        self.version += steps
    }

    /// Removes the entry at `position`. Removing the current song makes the song after it in play
    /// order current (wrapping in repeat mode), or none; the player compares and follows.
    /// - Throws: `badPosition` outside the queue.
    public mutating func delete(position: Int) throws(QueueError) {
        guard self.entries.indices.contains(position) else { throw .badPosition(position) }
        self.remove(position..<(position + 1))
    }

    /// Removes the entries at `positions`. As MPD does, an end past the queue is cut to its length
    /// (so an open range `START:` arrives as `START..<Int.max`) and an empty range changes nothing.
    /// - Throws: `badRange` when the range starts outside `0...count`.
    public mutating func delete(positions: Range<Int>) throws(QueueError) {
        guard positions.lowerBound >= 0, positions.lowerBound <= self.entries.count else { throw .badRange }
        let clipped = positions.lowerBound..<min(positions.upperBound, self.entries.count)
        guard !clipped.isEmpty else { return }
        self.remove(clipped)
    }

    /// Removes the entry with `id`.
    /// - Throws: `noSuchID` when no queued entry has it.
    public mutating func delete(id: Int) throws(QueueError) {
        guard let position = self.positionsByID[id] else { throw .noSuchID(id) }
        self.remove(position..<(position + 1))
    }

    /// Moves the entries at `range` so that the first lands at `destination` (MPD's
    /// `move START:END TO`); the play order and the current song follow their entries.
    /// - Throws: `badRange` when the range is empty or outside the queue, or the block would not fit
    ///   at `destination`.
    public mutating func move(from range: Range<Int>, to destination: Int) throws(QueueError) {
        let length = range.count
        guard !range.isEmpty, range.lowerBound >= 0, range.upperBound <= self.entries.count,
            destination >= 0, destination <= self.entries.count - length
        else { throw .badRange }
        // MPD does not count a move onto itself as a change.
        guard destination != range.lowerBound else { return }

        let block = Array(self.entries[range])
        self.entries.removeSubrange(range)
        self.entries.insert(contentsOf: block, at: destination)
        let stamp = self.version
        let touched = min(range.lowerBound, destination)..<max(range.upperBound, destination + length)
        for position in touched {
            self.positionsByID[self.entries[position].id] = position
            self.entryVersions[position] = stamp
        }
        if self.isRandom {
            for slot in self.order.indices {
                self.order[slot] = Self.position(self.order[slot], afterMoving: range, to: destination)
            }
        } else if let slot = self.currentSlot {
            self.currentSlot = Self.position(slot, afterMoving: range, to: destination)
        }
        self.version += 1
    }

    /// Moves the entry with `id` to `destination`.
    /// - Throws: `noSuchID`, or `badRange` when `destination` is outside the queue.
    public mutating func move(id: Int, to destination: Int) throws(QueueError) {
        guard let position = self.positionsByID[id] else { throw .noSuchID(id) }
        try self.move(from: position..<(position + 1), to: destination)
    }

    /// Swaps the songs at two positions (MPD's `swap`); each keeps its place in the play order, so the
    /// current song stays current and plays on to the same song.
    /// - Throws: `badRange` when either position is outside the queue.
    public mutating func swap(_ first: Int, _ second: Int) throws(QueueError) {
        guard self.entries.indices.contains(first), self.entries.indices.contains(second) else {
            throw .badRange
        }
        self.swapEntries(first, second)
        if self.isRandom {
            for slot in self.order.indices {
                if self.order[slot] == first {
                    self.order[slot] = second
                } else if self.order[slot] == second {
                    self.order[slot] = first
                }
            }
        } else if let slot = self.currentSlot {
            self.currentSlot = slot == first ? second : slot == second ? first : slot
        }
        self.version += 1
    }

    /// Swaps the songs with two ids (MPD's `swapid`).
    /// - Throws: `noSuchID` when either id is not queued.
    public mutating func swap(id first: Int, id second: Int) throws(QueueError) {
        guard let one = self.positionsByID[first] else { throw .noSuchID(first) }
        guard let other = self.positionsByID[second] else { throw .noSuchID(second) }
        try self.swap(one, other)
    }

    /// Shuffles the songs at `positions` (MPD's `shuffle`): an end past the queue is cut to its length,
    /// and fewer than two songs change nothing. When `keepingCurrent` (the player is playing or paused)
    /// and the current song is in the range, it moves to the range's start and the rest is shuffled
    /// after it; otherwise no song is current afterwards, as in MPD. The play order is kept slot by
    /// slot: in random mode the shuffled songs play in a new order too.
    /// - Throws: `badRange` when the range starts outside `0...count`.
    public mutating func shuffle(positions: Range<Int>, keepingCurrent: Bool) throws(QueueError) {
        guard positions.lowerBound >= 0, positions.lowerBound <= self.entries.count else { throw .badRange }
        var range = positions.lowerBound..<min(positions.upperBound, self.entries.count)
        guard range.count >= 2 else { return }
        if keepingCurrent, let current = self.currentPosition {
            if range.contains(current) {
                self.swapEntries(range.lowerBound, current)
                self.currentSlot = self.isRandom ? self.slot(ofPosition: range.lowerBound) : range.lowerBound
                range = (range.lowerBound + 1)..<range.upperBound
            }
        } else {
            self.currentSlot = nil
        }
        // MPD's ShuffleRange: each position swapped with any of the range.
        for position in range {
            self.swapEntries(position, range.lowerBound + self.generator.index(below: range.count))
        }
        self.version += 1
    }

    /// Sets the priority of the songs at `positions` (MPD's `prio`): an end past the queue is cut to
    /// its length, and an empty range changes nothing. In random mode a song whose priority changes
    /// moves in the order among the songs not yet played, to a random place in its priority's group
    /// (after higher priorities, before lower); a song already played comes back only when its
    /// priority rose above the current song's. The current song stays current.
    /// - Throws: `badRange` when the range starts outside `0...count`.
    public mutating func setPriority(_ priority: UInt8, positions: Range<Int>) throws(QueueError) {
        guard positions.lowerBound >= 0, positions.lowerBound <= self.entries.count else { throw .badRange }
        let range = positions.lowerBound..<min(positions.upperBound, self.entries.count)
        guard !range.isEmpty else { return }
        let current = self.currentPosition
        let stamp = self.version
        for position in range {
            let old = self.entries[position].priority
            guard old != priority else { continue }
            self.entries[position].priority = priority
            self.entryVersions[position] = stamp
            self.prioritizedCount += (priority != 0 ? 1 : 0) - (old != 0 ? 1 : 0)
            if self.isRandom {
                self.reorder(position: position, from: old, after: current.map { self.slot(ofPosition: $0) })
            }
        }
        if self.isRandom, let current {
            self.currentSlot = self.slot(ofPosition: current)
        }
        self.version += 1
    }

    /// Sets the priority of the song with `id` (MPD's `prioid`).
    /// - Throws: `noSuchID` when no queued entry has it.
    public mutating func setPriority(_ priority: UInt8, id: Int) throws(QueueError) {
        guard let position = self.positionsByID[id] else { throw .noSuchID(id) }
        try self.setPriority(priority, positions: position..<(position + 1))
    }

    /// A song started playing: its priority goes back to 0, as MPD resets it then (its place in the
    /// order stays). A change (`version` moves) only when it had one.
    public mutating func songStarted(id: Int) {
        guard let position = self.positionsByID[id], self.entries[position].priority != 0 else { return }
        self.entries[position].priority = 0
        self.prioritizedCount -= 1
        self.entryVersions[position] = self.version
        self.version += 1
    }

    /// The song with `id` has new tags (a station announced another title): it counts as changed, as
    /// MPD's queue counts it, so that clients reading `plchanges` see it again.
    public mutating func tagsChanged(id: Int) {
        guard let position = self.positionsByID[id] else { return }
        self.entryVersions[position] = self.version
        self.version += 1
    }

    /// Removes every entry; there is no current song afterwards. Ids are not reused.
    public mutating func clear() {
        self.prioritizedCount = 0
        self.entries.removeAll()
        self.entryVersions.removeAll()
        self.positionsByID.removeAll()
        self.order.removeAll()
        self.currentSlot = nil
        self.version += 1
    }

    /// Makes the song at `position` current (nil: none), as `play POS` does. In random mode the song
    /// is moved in the order to just after the old current song, so the songs already played stay
    /// behind it and the rest still follow.
    /// - Throws: `badPosition` outside the queue.
    public mutating func setCurrent(position: Int?) throws(QueueError) {
        guard let position else {
            self.currentSlot = nil
            return
        }
        guard self.entries.indices.contains(position) else { throw .badPosition(position) }
        guard self.isRandom else {
            self.currentSlot = position
            return
        }
        let slot = self.slot(ofPosition: position)
        if let current = self.currentSlot {
            guard slot != current else { return }
            self.currentSlot = self.moveSlot(slot, to: slot > current ? current + 1 : current)
        } else {
            self.currentSlot = self.moveSlot(slot, to: 0)
        }
    }

    /// Makes the entry with `id` current.
    /// - Throws: `noSuchID` when no queued entry has it.
    public mutating func setCurrent(id: Int) throws(QueueError) {
        guard let position = self.positionsByID[id] else { throw .noSuchID(id) }
        try self.setCurrent(position: position)
    }

    // MARK: - Where playback goes

    /// Sets the part of the entry with `id` that plays (nil: all of it), as MPD's `rangeid` does: the
    /// entry counts as changed (`version`, `plchanges`).
    /// - Throws: `noSuchID` when no queued entry has it.
    public mutating func setRange(_ range: SongRange?, id: Int) throws(QueueError) {
        guard let position = self.positionsByID[id] else { throw .noSuchID(id) }
        self.entries[position].range = range
        self.entryVersions[position] = self.version
        self.version += 1
    }

    /// Where the user's `next` goes: the following song in play order, wrapping in repeat mode
    /// (unless consume would remove the only song). Single mode does not hold `next` back (MPD's own
    /// `next` repeats the song under single + repeat; a skip button that does not skip surprises).
    /// Nil: past the end of the queue, or no current song. Positions are as the queue is now, before
    /// consume removes the song left behind.
    public func positionAfterNext() -> Int? {
        self.step(.next).flatMap(self.target(of:))
    }

    /// Where playback goes when the current song ends by itself: as `positionAfterNext()`, except
    /// that single mode stops (nil), or replays the song when repeat is on (and consume off).
    public func positionAfterSongEnd() -> Int? {
        self.step(.songEnd).flatMap(self.target(of:))
    }

    /// MPD's `nextsong`: the song that becomes current when this one ends by itself. Under single
    /// mode that is the song playback stops on, as MPD shows it. O(1).
    public var nextPosition: Int? {
        guard let step = self.step(.songEnd) else { return nil }
        if case .stop(let selecting) = step {
            return selecting.map { self.order[$0] }
        }
        return self.target(of: step)
    }

    /// The entry at `nextPosition`.
    public var nextEntry: QueueEntry? {
        self.nextPosition.map { self.entries[$0] }
    }

    /// Where the user's `previous` goes: the song before in play order; at the first, the last one in
    /// repeat mode, else the first again. Nil without a current song.
    public func positionBeforeCurrent() -> Int? {
        self.previousSlot().map { self.order[$0] }
    }

    /// Carries out `next`: moves to `positionAfterNext()` (reshuffling when random + repeat wraps),
    /// and in consume mode removes the song left behind.
    /// - Returns: the new current position, or nil to stop (no current song then).
    @discardableResult
    public mutating func advanceToNext() -> Int? {
        self.perform(.next)
    }

    /// Carries out the natural end of the current song: moves on as `positionAfterSongEnd()` says and
    /// in consume mode removes the finished song. When single mode holds playback, the song after
    /// the finished one becomes current (the player pauses on it, as MPD does), so a later `play` goes
    /// on from there; a oneshot single mode then turns itself off (under repeat, where the song
    /// replays, and at the end of the queue it stays on, as in MPD).
    /// - Returns: the position to play now, or nil to stop.
    @discardableResult
    public mutating func songFinished() -> Int? {
        self.perform(.songEnd)
    }

    /// Carries out `previous`: moves to `positionBeforeCurrent()`. Consume and single do not apply.
    /// - Returns: the new current position, nil without a current song.
    @discardableResult
    public mutating func returnToPrevious() -> Int? {
        guard let slot = self.previousSlot() else { return nil }
        self.currentSlot = slot
        return self.order[slot]
    }

    // MARK: - Transitions

    /// Why playback leaves the current song.
    private enum Reason {
        case next
        case songEnd
    }

    /// A move through the order, decided before anything changes so that the pure queries and the
    /// mutating helpers cannot disagree.
    private enum Step {
        /// Play the current song again.
        case replay
        /// Go to this order slot.
        case advance(slot: Int)
        /// The order starts over; random mode shuffles a new one.
        case wrap
        /// Stop; the slot becomes current (nil: none).
        case stop(selecting: Int?)
    }

    private func step(_ reason: Reason) -> Step? {
        guard let slot = self.currentSlot else { return nil }
        let isSingle = reason == .songEnd && self.single != .off
        // Consume would remove the song before it replays, so MPD lets it go on instead.
        if isSingle, self.repeatMode, !self.consume {
            return .replay
        }
        let following: Step
        if slot + 1 < self.order.count {
            following = .advance(slot: slot + 1)
        } else if self.repeatMode, slot > 0 || !self.consume {
            following = .wrap
        } else {
            following = .stop(selecting: nil)
        }
        if isSingle, !self.repeatMode {
            if case .advance(let next) = following {
                return .stop(selecting: next)
            }
            return .stop(selecting: nil)
        }
        return following
    }

    /// The position `step` plays, in the queue as it is now.
    private func target(of step: Step) -> Int? {
        switch step {
        case .replay:
            return self.currentPosition
        case .advance(let slot):
            return self.order[slot]
        case .wrap:
            // The wrap is at the last slot. A new random cycle starts with a draw among the other
            // slots (see `startNewCycle`); drawing from a copy of the generator predicts it in O(1).
            guard self.isRandom, self.order.count > 1 else { return self.order[0] }
            if self.prioritizedCount > 0 {
                // Grouped by priority, the new cycle is no single draw: shuffle a copy. O(n), and only
                // at the last song of a cycle with priorities set.
                var copy = self
                copy.startNewCycle(withoutLastSlot: !self.consume)
                return copy.order[0]
            }
            var generator = self.generator
            return self.order[generator.index(below: self.order.count - 1)]
        case .stop:
            return nil
        }
    }

    private mutating func perform(_ reason: Reason) -> Int? {
        guard let slot = self.currentSlot, let step = self.step(reason) else { return nil }
        let finished = self.order[slot]
        switch step {
        case .replay:
            // Under repeat, oneshot replays the song and stays on, as in MPD: it is spent only by a
            // pause at the next song.
            return finished
        case .advance(let next):
            self.currentSlot = next
            self.consumeIfNeeded(finished)
            return self.currentPosition
        case .wrap:
            if self.consume {
                self.currentSlot = nil
                self.consumeIfNeeded(finished)
            }
            if self.isRandom {
                self.startNewCycle(withoutLastSlot: !self.consume)
            }
            self.currentSlot = 0
            return self.currentPosition
        case .stop(let selecting):
            self.currentSlot = selecting
            self.consumeIfNeeded(finished)
            // Oneshot is spent when playback moves on to a song (paused on it); at the end of the queue
            // it stays, as in MPD.
            if reason == .songEnd, self.single == .oneshot, !self.repeatMode, selecting != nil {
                self.single = .off
            }
            return nil
        }
    }

    private mutating func consumeIfNeeded(_ position: Int) {
        guard self.consume else { return }
        self.removeEntries(position..<(position + 1))
        self.version += 1
    }

    /// Shuffles a new random cycle. Its first song is drawn first, among all slots but the last when
    /// `withoutLastSlot` (the song that just played stays out of first place), which is the draw
    /// `target(of: .wrap)` predicts.
    private mutating func startNewCycle(withoutLastSlot: Bool) {
        if self.prioritizedCount > 0 {
            // MPD's ShuffleOrder: higher priorities first, each group shuffled.
            self.shuffleWithPriority()
            return
        }
        let candidates = withoutLastSlot ? self.order.count - 1 : self.order.count
        guard candidates > 0 else { return }
        self.order.swapAt(0, self.generator.index(below: candidates))
        self.shuffleSlots(1..<self.order.count)
    }

    private func previousSlot() -> Int? {
        guard let slot = self.currentSlot else { return nil }
        if slot > 0 {
            return slot - 1
        }
        return self.repeatMode ? self.order.count - 1 : slot
    }

    // MARK: - Order bookkeeping

    private mutating func setRandom(_ isOn: Bool) {
        guard isOn != self.isRandom else { return }
        let position = self.currentPosition
        self.isRandom = isOn
        if isOn {
            self.shuffleWithPriority()
            self.currentSlot = position.map { self.moveSlot(self.slot(ofPosition: $0), to: 0) }
        } else {
            self.order = Array(self.entries.indices)
            self.currentSlot = position
        }
    }

    /// Removes `range`, an edit; when the current song goes, the next survivor in play order takes over.
    private mutating func remove(_ range: Range<Int>) {
        if let slot = self.currentSlot, range.contains(self.order[slot]) {
            self.currentSlot = self.slot(after: slot, outside: range)
        }
        self.removeEntries(range)
        self.version += 1
    }

    /// The first slot after `slot` in play order (wrapping in repeat mode) whose song is not in
    /// `range`.
    private func slot(after slot: Int, outside range: Range<Int>) -> Int? {
        var candidate = slot + 1
        var wrapped = false
        while true {
            if candidate == self.order.count {
                guard self.repeatMode, !wrapped else { return nil }
                candidate = 0
                wrapped = true
            }
            if candidate == slot {
                return nil
            }
            if !range.contains(self.order[candidate]) {
                return candidate
            }
            candidate += 1
        }
    }

    /// Removes `range`, keeping the current song current; if it is in `range`, none is afterwards.
    private mutating func removeEntries(_ range: Range<Int>) {
        let removed = range.count
        for entry in self.entries[range] {
            self.positionsByID.removeValue(forKey: entry.id)
            if entry.priority != 0 {
                self.prioritizedCount -= 1
            }
        }
        self.entries.removeSubrange(range)
        self.entryVersions.removeSubrange(range)
        let stamp = self.version
        for position in range.lowerBound..<self.entries.count {
            self.positionsByID[self.entries[position].id] = position
            self.entryVersions[position] = stamp
        }
        if self.isRandom {
            var order: [Int] = []
            order.reserveCapacity(self.order.count - removed)
            var currentSlot: Int?
            for (slot, position) in self.order.enumerated() where !range.contains(position) {
                if slot == self.currentSlot {
                    currentSlot = order.count
                }
                order.append(position >= range.upperBound ? position - removed : position)
            }
            self.order = order
            self.currentSlot = currentSlot
        } else {
            self.order.removeLast(removed)
            if let slot = self.currentSlot {
                self.currentSlot =
                    range.contains(slot) ? nil : slot >= range.upperBound ? slot - removed : slot
            }
        }
    }

    /// Where the entry at `position` ends up when the block `range` moves to `destination`.
    private static func position(_ position: Int, afterMoving range: Range<Int>, to destination: Int) -> Int {
        if range.contains(position) {
            return position - range.lowerBound + destination
        }
        if destination > range.lowerBound, position >= range.upperBound, position < destination + range.count {
            return position - range.count
        }
        if destination < range.lowerBound, position >= destination, position < range.lowerBound {
            return position + range.count
        }
        return position
    }

    /// O(n), as in MPD: only edits and mode changes ask, never status.
    private func slot(ofPosition position: Int) -> Int {
        guard let slot = self.order.firstIndex(of: position) else {
            preconditionFailure("position \(position) is missing from the play order")
        }
        return slot
    }

    /// Moves one slot of the order, shifting those between; returns where it landed.
    private mutating func moveSlot(_ slot: Int, to destination: Int) -> Int {
        let position = self.order.remove(at: slot)
        self.order.insert(position, at: destination)
        return destination
    }

    /// Swaps two entries' places in the list, not in the play order (MPD's Queue::SwapPositions).
    private mutating func swapEntries(_ first: Int, _ second: Int) {
        guard first != second else {
            self.entryVersions[first] = self.version
            return
        }
        self.entries.swapAt(first, second)
        self.positionsByID[self.entries[first].id] = first
        self.positionsByID[self.entries[second].id] = second
        self.entryVersions[first] = self.version
        self.entryVersions[second] = self.version
    }

    /// MPD's ShuffleOrderRangeWithPriority over the whole order: sorted by priority, highest first,
    /// then each group of one priority shuffled. Without priorities, one plain shuffle.
    private mutating func shuffleWithPriority() {
        guard self.prioritizedCount > 0 else {
            self.shuffleSlots(0..<self.order.count)
            return
        }
        let entries = self.entries
        // Stable, as MPD's std::stable_sort.
        self.order = self.order.enumerated().sorted { one, other in
            let first = entries[one.element].priority
            let second = entries[other.element].priority
            return first != second ? first > second : one.offset < other.offset
        }.map(\.element)
        var groupStart = 0
        while groupStart < self.order.count {
            let priority = entries[self.order[groupStart]].priority
            var groupEnd = groupStart + 1
            while groupEnd < self.order.count, entries[self.order[groupEnd]].priority == priority {
                groupEnd += 1
            }
            self.shuffleSlots(groupStart..<groupEnd)
            groupStart = groupEnd
        }
    }

    /// MPD's Queue::SetPriority in random mode, after the entry at `position` changed from `old`:
    /// `after` is the current song's slot.
    private mutating func reorder(position: Int, from old: UInt8, after: Int?) {
        let priority = self.entries[position].priority
        let slot = self.slot(ofPosition: position)
        if let after {
            // The current song stays where it is.
            guard slot != after else { return }
            // A song already played comes back only when its priority rose above the current one's.
            if slot < after, priority <= old || priority <= self.entries[self.order[after]].priority {
                return
            }
        }
        // To the start of its priority's group among the songs after the current one ...
        var before = self.order.count
        for candidate in ((after ?? -1) + 1)..<self.order.count
        where candidate != slot && self.entries[self.order[candidate]].priority <= priority {
            before = candidate
            break
        }
        let newSlot = self.moveSlot(slot, to: before > slot ? before - 1 : before)
        // ... then to a random place in that group.
        var groupEnd = newSlot + 1
        while groupEnd < self.order.count, self.entries[self.order[groupEnd]].priority == priority {
            groupEnd += 1
        }
        self.order.swapAt(newSlot, newSlot + self.generator.index(below: groupEnd - newSlot))
    }

    /// Fisher–Yates from the front, so the first slot is decided by the first draw.
    private mutating func shuffleSlots(_ slots: Range<Int>) {
        var slot = slots.lowerBound
        while slot < slots.upperBound - 1 {
            self.order.swapAt(slot, slot + self.generator.index(below: slots.upperBound - slot))
            slot += 1
        }
    }
}

/// SplitMix64: small, fast, and reproducible from a seed, which the tests need; MPD's shuffles do
/// not need cryptographic randomness either.
private struct ShuffleGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A uniform index in `0..<count`.
    mutating func index(below count: Int) -> Int {
        Int(self.next(upperBound: UInt64(count)))
    }
}
