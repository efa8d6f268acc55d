import PlayerCore
import Testing

/// A queue holding `s0`, `s1` ... with a fixed seed, so random mode is reproducible.
private func makeQueue(_ count: Int, seed: UInt64 = 42, maximumLength: Int = 1_000_000) -> Queue {
    var queue = Queue(maximumLength: maximumLength, randomSeed: seed)
    try! queue.add((0..<count).map { "s\($0)" })
    return queue
}

private func paths(_ queue: Queue) -> [String] {
    queue.entries.map(\.path)
}

/// The paths in the order they will play.
private func playOrder(_ queue: Queue) -> [String] {
    queue.order.map { queue.entries[$0].path }
}

/// What every operation must keep true.
private func checkInvariants(_ queue: Queue, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(queue.order.sorted() == Array(0..<queue.count), "order is a permutation", sourceLocation: sourceLocation)
    if !queue.random {
        #expect(queue.order == Array(0..<queue.count), "order is the identity", sourceLocation: sourceLocation)
    }
    for (position, entry) in queue.entries.enumerated() {
        #expect(queue.position(ofID: entry.id) == position, sourceLocation: sourceLocation)
        #expect(queue.entry(withID: entry.id) == entry, sourceLocation: sourceLocation)
    }
    #expect(Set(queue.entries.map(\.id)).count == queue.count, "ids are unique", sourceLocation: sourceLocation)
    if let position = queue.currentPosition {
        #expect(queue.current == queue.entry(at: position), sourceLocation: sourceLocation)
    } else {
        #expect(queue.current == nil, sourceLocation: sourceLocation)
    }
}

/// Makes the song at play-order slot `slot` current by walking there, as playback would, so random
/// mode keeps its shuffled order.
private func walk(_ queue: inout Queue, toSlot slot: Int) throws {
    try queue.setCurrent(position: queue.order[0])
    for _ in 0..<slot {
        queue.advanceToNext()
    }
    #expect(queue.currentPosition == queue.order[slot])
}

@Suite("Queue editing")
struct QueueEditingTests {
    @Test func addAppendsWithFreshIDsAndBumpsTheVersion() throws {
        var queue = Queue()
        #expect(queue.version == 1)
        #expect(queue.isEmpty && queue.current == nil && queue.nextPosition == nil && queue.firstPosition == nil)

        let first = try queue.add(["a", "b"])
        let second = try queue.add(["c"])

        #expect(first == [1, 2])
        #expect(second == [3])
        #expect(paths(queue) == ["a", "b", "c"])
        #expect(queue.entries.map(\.id) == [1, 2, 3])
        #expect(queue.version == 3)
        #expect(queue.count == 3)
        #expect(queue.firstPosition == 0)
        checkInvariants(queue)
    }

    @Test func addAtAPositionInsertsAndTheCurrentSongFollows() throws {
        var queue = makeQueue(4)
        try queue.setCurrent(position: 2)

        let ids = try queue.add(["x", "y"], at: 1)

        #expect(paths(queue) == ["s0", "x", "y", "s1", "s2", "s3"])
        #expect(queue.entries[1].id == ids[0] && queue.entries[2].id == ids[1])
        #expect(queue.current?.path == "s2")
        #expect(queue.currentPosition == 4)
        #expect(queue.nextPosition == 5)
        checkInvariants(queue)

        try queue.add(["z"], at: 0)
        try queue.add(["end"], at: queue.count)
        #expect(paths(queue) == ["z", "s0", "x", "y", "s1", "s2", "s3", "end"])
        #expect(queue.current?.path == "s2")
        checkInvariants(queue)
    }

    @Test(arguments: [-1, 4, 100])
    func addAtABadPositionChangesNothing(position: Int) {
        var queue = makeQueue(3)
        #expect(throws: QueueError.badPosition(position)) { try queue.add(["x"], at: position) }
        #expect(paths(queue) == ["s0", "s1", "s2"])
        #expect(queue.version == 2)
    }

    @Test func addBeyondTheLimitIsAllOrNothing() throws {
        var queue = makeQueue(3, maximumLength: 5)
        #expect(throws: QueueError.tooLong(limit: 5)) { try queue.add(["a", "b", "c"]) }
        #expect(queue.count == 3)
        #expect(queue.version == 2)

        #expect(try queue.add(["a", "b"]) == [4, 5])
        #expect(throws: QueueError.tooLong(limit: 5)) { try queue.add(["c"]) }
        #expect(queue.count == 5)
    }

    @Test func addingNothingIsNotAChange() throws {
        var queue = makeQueue(2)
        #expect(try queue.add([]) == [])
        #expect(queue.version == 2)
    }

    @Test func deleteByPositionRangeAndID() throws {
        var queue = makeQueue(6)
        let version = queue.version

        try queue.delete(position: 1)
        #expect(paths(queue) == ["s0", "s2", "s3", "s4", "s5"])
        #expect(queue.version == version + 1)

        try queue.delete(positions: 1..<3)
        #expect(paths(queue) == ["s0", "s4", "s5"])
        #expect(queue.version == version + 2)

        let id = queue.entries[2].id
        try queue.delete(id: id)
        #expect(paths(queue) == ["s0", "s4"])
        #expect(queue.position(ofID: id) == nil)
        #expect(queue.version == version + 3)
        checkInvariants(queue)
    }

    @Test func deleteRangeEndIsClippedAndEmptyRangesChangeNothing() throws {
        var queue = makeQueue(5)
        let version = queue.version

        try queue.delete(positions: 5..<5)
        try queue.delete(positions: 2..<2)
        #expect(queue.version == version)

        try queue.delete(positions: 3..<Int.max)
        #expect(paths(queue) == ["s0", "s1", "s2"])
        #expect(queue.version == version + 1)
    }

    @Test func deleteErrorsChangeNothing() {
        var queue = makeQueue(3)
        #expect(throws: QueueError.badPosition(3)) { try queue.delete(position: 3) }
        #expect(throws: QueueError.badPosition(-1)) { try queue.delete(position: -1) }
        #expect(throws: QueueError.badRange) { try queue.delete(positions: 4..<5) }
        #expect(throws: QueueError.badRange) { try queue.delete(positions: -1..<1) }
        #expect(throws: QueueError.noSuchID(99)) { try queue.delete(id: 99) }
        #expect(queue.count == 3)
        #expect(queue.version == 2)
    }

    @Test func deletingBeforeTheCurrentSongKeepsItCurrent() throws {
        var queue = makeQueue(5)
        try queue.setCurrent(position: 3)
        try queue.delete(positions: 0..<2)
        #expect(queue.current?.path == "s3")
        #expect(queue.currentPosition == 1)
        try queue.delete(position: 2)
        #expect(queue.current?.path == "s3")
        checkInvariants(queue)
    }

    /// MPD moves playback to the song after a deleted current one; the player follows.
    @Test(arguments: [
        // (current, deleted, repeat, the new current)
        (1, 1..<2, false, "s2" as String?),
        (1, 0..<3, false, "s3"),
        (3, 3..<4, false, nil),
        (3, 3..<4, true, "s0"),
        (3, 2..<4, true, "s0"),
        (0, 0..<4, true, nil),
    ])
    func deletingTheCurrentSongMovesToTheNextSurvivor(
        current: Int, deleted: Range<Int>, repeatMode: Bool, expected: String?
    ) throws {
        var queue = makeQueue(4)
        queue.repeatMode = repeatMode
        try queue.setCurrent(position: current)
        try queue.delete(positions: deleted)
        #expect(queue.current?.path == expected)
        checkInvariants(queue)
    }

    /// MPD's `move START:END TO`: the block's first song lands at `TO`.
    @Test(arguments: [
        (0..<1, 2, ["b", "c", "a", "d", "e"]),
        (3..<5, 0, ["d", "e", "a", "b", "c"]),
        (1..<3, 3, ["a", "d", "e", "b", "c"]),
        (4..<5, 0, ["e", "a", "b", "c", "d"]),
        (0..<2, 3, ["c", "d", "e", "a", "b"]),
        (0..<5, 0, ["a", "b", "c", "d", "e"]),
    ])
    func moveRange(range: Range<Int>, destination: Int, expected: [String]) throws {
        var queue = Queue()
        try queue.add(["a", "b", "c", "d", "e"])
        let ids = Dictionary(uniqueKeysWithValues: queue.entries.map { ($0.path, $0.id) })
        let version = queue.version

        try queue.move(from: range, to: destination)

        #expect(paths(queue) == expected)
        #expect(queue.entries.map(\.id) == expected.map { ids[$0]! }, "ids travel with their songs")
        #expect(queue.version == (range.lowerBound == destination ? version : version + 1))
        checkInvariants(queue)
    }

    @Test(arguments: ["a", "b", "c", "d", "e"])
    func theCurrentSongFollowsAMove(current: String) throws {
        var queue = Queue()
        try queue.add(["a", "b", "c", "d", "e"])
        try queue.setCurrent(position: paths(queue).firstIndex(of: current)!)

        try queue.move(from: 1..<3, to: 3)

        #expect(queue.current?.path == current)
        #expect(queue.currentPosition == paths(queue).firstIndex(of: current))
        checkInvariants(queue)
    }

    @Test(arguments: [(0..<0, 0), (4..<6, 0), (0..<2, 4), (-1..<1, 0), (1..<2, -1), (1..<2, 5)])
    func badMovesChangeNothing(range: Range<Int>, destination: Int) {
        var queue = makeQueue(5)
        #expect(throws: QueueError.badRange) { try queue.move(from: range, to: destination) }
        #expect(paths(queue) == ["s0", "s1", "s2", "s3", "s4"])
        #expect(queue.version == 2)
    }

    @Test func moveByID() throws {
        var queue = makeQueue(4)
        let id = queue.entries[0].id
        try queue.move(id: id, to: 3)
        #expect(paths(queue) == ["s1", "s2", "s3", "s0"])
        #expect(queue.position(ofID: id) == 3)
        #expect(throws: QueueError.noSuchID(77)) { try queue.move(id: 77, to: 0) }
        #expect(throws: QueueError.badRange) { try queue.move(id: id, to: 4) }
        checkInvariants(queue)
    }

    @Test func clearEmptiesForgetsTheCurrentSongAndNeverReusesIDs() throws {
        var queue = makeQueue(3)
        try queue.setCurrent(position: 1)
        queue.clear()
        #expect(queue.isEmpty)
        #expect(queue.current == nil && queue.currentPosition == nil && queue.nextPosition == nil)
        #expect(queue.version == 3)
        #expect(try queue.add(["a"]) == [4])
        checkInvariants(queue)
    }

    @Test func setCurrentValidatesAndDoesNotChangeTheVersion() throws {
        var queue = makeQueue(3)
        try queue.setCurrent(position: 2)
        #expect(queue.current?.path == "s2")
        try queue.setCurrent(id: queue.entries[0].id)
        #expect(queue.currentPosition == 0)
        #expect(throws: QueueError.badPosition(3)) { try queue.setCurrent(position: 3) }
        #expect(throws: QueueError.noSuchID(9)) { try queue.setCurrent(id: 9) }
        #expect(queue.currentPosition == 0)
        try queue.setCurrent(position: nil)
        #expect(queue.current == nil)
        #expect(queue.version == 2)
    }

    @Test func modesDoNotChangeTheVersion() {
        var queue = makeQueue(3)
        queue.repeatMode = true
        queue.random = true
        queue.single = .oneshot
        queue.consume = true
        queue.random = false
        #expect(queue.version == 2)
    }

    @Test func positionsChangedSinceAVersion() throws {
        var queue = makeQueue(5)
        let seen = queue.version
        #expect(queue.positionsChanged(since: seen).isEmpty)

        try queue.move(from: 3..<4, to: 1)
        #expect(queue.positionsChanged(since: seen) == [1, 2, 3])

        let seenAgain = queue.version
        try queue.add(["x"])
        #expect(queue.positionsChanged(since: seenAgain) == [5])
        try queue.delete(position: 0)
        #expect(queue.positionsChanged(since: seenAgain) == Array(0..<5), "every song moved up")
        #expect(queue.positionsChanged(since: 1) == Array(0..<5))
        #expect(queue.positionsChanged(since: queue.version + 10) == Array(0..<5))
    }

    @Test(arguments: [
        (QueueError.badPosition(7), "Bad song index"),
        (.badRange, "Bad song index"),
        (.noSuchID(3), "No such song"),
        (.tooLong(limit: 10), "Playlist is too large"),
    ])
    func errorsSpeakMPD(error: QueueError, message: String) {
        #expect(error.description == message)
    }

    @Test func singleModeRawValuesAreMPDs() {
        #expect(SingleMode.allCases.map(\.rawValue) == ["0", "1", "oneshot"])
        #expect(SingleMode(rawValue: "oneshot") == .oneshot)
    }
}

@Suite("Queue random order")
struct QueueRandomOrderTests {
    @Test func turningRandomOnShufflesWithTheCurrentSongFirst() throws {
        var queue = makeQueue(20)
        try queue.setCurrent(position: 7)
        queue.random = true

        #expect(queue.order[0] == 7)
        #expect(queue.current?.path == "s7")
        #expect(queue.order != Array(0..<20), "the rest is shuffled")
        #expect(paths(queue) == (0..<20).map { "s\($0)" }, "positions do not move")
        checkInvariants(queue)

        queue.random = false
        #expect(queue.order == Array(0..<20))
        #expect(queue.current?.path == "s7")
        #expect(queue.nextPosition == 8)
        checkInvariants(queue)
    }

    @Test func theSameSeedGivesTheSameShuffle() {
        var first = makeQueue(30, seed: 9)
        var second = makeQueue(30, seed: 9)
        var third = makeQueue(30, seed: 10)
        first.random = true
        second.random = true
        third.random = true
        #expect(first.order == second.order)
        #expect(first.order != third.order)
    }

    @Test func addShufflesNewSongsIntoTheUnplayedPartAndKeepsTheNextOne() throws {
        var queue = makeQueue(10)
        queue.random = true
        try walk(&queue, toSlot: 3)
        let played = Array(playOrder(queue)[0...4])

        try queue.add((0..<50).map { "n\($0)" })

        #expect(Array(playOrder(queue)[0...4]) == played, "played songs, the current one and the next stay put")
        #expect(queue.current?.path == played[3])
        #expect(queue.entry(at: queue.nextPosition!)?.path == played[4])
        #expect(playOrder(queue)[5...].contains { $0.hasPrefix("n") && $0 != "n0" }, "new songs are mixed in")
        checkInvariants(queue)
    }

    @Test func insertingInTheMiddleKeepsThePlayedPartOfTheOrder() throws {
        var queue = makeQueue(8)
        queue.random = true
        try walk(&queue, toSlot: 2)
        let before = playOrder(queue)

        try queue.add(["x", "y"], at: 3)

        #expect(paths(queue)[3...4] == ["x", "y"])
        #expect(Array(playOrder(queue)[0...3]) == Array(before[0...3]), "played, current and next stay put")
        #expect(Set(playOrder(queue)[4...]) == Set(before[4...]).union(["x", "y"]))
        #expect(queue.current?.path == before[2])
        checkInvariants(queue)
    }

    @Test func deletingKeepsThePlayOrderOfTheRest() throws {
        var queue = makeQueue(12)
        queue.random = true
        try walk(&queue, toSlot: 4)
        let current = queue.current!
        let doomed = Set(paths(queue)[2..<6]).subtracting([current.path])
        let position = queue.currentPosition!
        guard !(2..<6).contains(position) else {
            // The seed put the current song in the doomed range; the other test covers that case.
            return
        }
        let before = playOrder(queue)

        try queue.delete(positions: 2..<6)

        #expect(playOrder(queue) == before.filter { !doomed.contains($0) })
        #expect(queue.current == current)
        checkInvariants(queue)
    }

    @Test func deletingTheCurrentSongInRandomModeMovesToTheNextInPlayOrder() throws {
        var queue = makeQueue(12)
        queue.random = true
        try walk(&queue, toSlot: 4)
        let expected = playOrder(queue)[5]

        try queue.delete(position: queue.currentPosition!)

        #expect(queue.current?.path == expected)
        checkInvariants(queue)
    }

    @Test func movingKeepsThePlayOrder() throws {
        var queue = makeQueue(10)
        queue.random = true
        try walk(&queue, toSlot: 5)
        let before = playOrder(queue)
        let current = queue.current

        try queue.move(from: 2..<5, to: 6)
        #expect(playOrder(queue) == before)
        try queue.move(from: 7..<10, to: 0)
        #expect(playOrder(queue) == before)
        #expect(queue.current == current)
        checkInvariants(queue)
    }

    @Test func playingAChosenSongPutsItRightAfterTheCurrentOne() throws {
        var queue = makeQueue(10)
        queue.random = true
        try walk(&queue, toSlot: 3)
        let before = playOrder(queue)
        let chosen = before[8]

        try queue.setCurrent(position: paths(queue).firstIndex(of: chosen)!)

        #expect(queue.current?.path == chosen)
        #expect(playOrder(queue)[4] == chosen)
        #expect(playOrder(queue).filter { $0 != chosen } == before.filter { $0 != chosen })
        #expect(queue.positionBeforeCurrent().map { paths(queue)[$0] } == before[3])
        checkInvariants(queue)
    }

    @Test func repeatPlaysEachCycleInANewOrder() throws {
        var queue = makeQueue(8)
        queue.random = true
        queue.repeatMode = true
        try queue.setCurrent(position: queue.order[0])
        var heard = [queue.current!.path]
        for _ in 0..<23 {
            let predicted = queue.nextPosition.map { queue.entries[$0].id }
            let afterEnd = queue.positionAfterSongEnd().map { queue.entries[$0].id }
            let result = queue.songFinished()
            let position = try #require(result)
            #expect(queue.entries[position].id == predicted, "nextsong told the truth")
            #expect(afterEnd == predicted)
            heard.append(queue.current!.path)
            checkInvariants(queue)
        }
        let cycles = stride(from: 0, to: 24, by: 8).map { Array(heard[$0..<($0 + 8)]) }
        for cycle in cycles {
            #expect(Set(cycle).count == 8, "each cycle plays every song once")
        }
        #expect(cycles[0] != cycles[1] || cycles[1] != cycles[2], "the order is reshuffled")
        #expect(heard[7] != heard[8] && heard[15] != heard[16], "a song does not play twice in a row")
    }
}

/// One row of MPD's rules for a transition, with the current song in the middle of a four-song queue
/// (play-order slot 1) and at its end (slot 3).
struct TransitionRow: Sendable, CustomTestStringConvertible {
    /// What happens, in play-order slots of the queue before the transition.
    enum Outcome: Sendable, Equatable {
        /// This slot's song becomes current and plays.
        case play(Int)
        /// The current song plays again.
        case replay
        /// The order starts over: slot 0's song, or in random mode the first of a new shuffle.
        case wrap
        /// Playback stops; this slot's song (if any) becomes current.
        case stop(selecting: Int?)
    }

    let single: SingleMode
    let repeatMode: Bool
    let consume: Bool
    let fromMiddle: Outcome
    let fromEnd: Outcome

    var testDescription: String {
        "single \(self.single) repeat \(self.repeatMode) consume \(self.consume)"
    }
}

private func rows(_ rules: [(SingleMode, Bool, Bool, TransitionRow.Outcome, TransitionRow.Outcome)]) -> [TransitionRow]
{
    rules.map { TransitionRow(single: $0, repeatMode: $1, consume: $2, fromMiddle: $3, fromEnd: $4) }
}

/// When a song ends by itself (MPD's GetNextOrder plus the border pause of single mode).
private let songEndRules = rows([
    (.off, false, false, .play(2), .stop(selecting: nil)),
    (.off, false, true, .play(2), .stop(selecting: nil)),
    (.off, true, false, .play(2), .wrap),
    (.off, true, true, .play(2), .wrap),
    (.on, false, false, .stop(selecting: 2), .stop(selecting: nil)),
    (.on, false, true, .stop(selecting: 2), .stop(selecting: nil)),
    (.on, true, false, .replay, .replay),
    // Consume would remove the song it replays, so MPD plays on.
    (.on, true, true, .play(2), .wrap),
    (.oneshot, false, false, .stop(selecting: 2), .stop(selecting: nil)),
    (.oneshot, false, true, .stop(selecting: 2), .stop(selecting: nil)),
    (.oneshot, true, false, .replay, .replay),
    (.oneshot, true, true, .play(2), .wrap),
])

/// When the user asks for `next`: single is ignored, repeat wraps.
private let nextRules = rows(
    [SingleMode.off, .on, .oneshot].flatMap { single in
        [
            (single, false, false, .play(2), .stop(selecting: nil)),
            (single, false, true, .play(2), .stop(selecting: nil)),
            (single, true, false, .play(2), .wrap),
            (single, true, true, .play(2), .wrap),
        ]
    })

/// When the user asks for `previous` (slot 0 and slot 2 here): at the first song, repeat goes to the
/// last, otherwise the first plays again; consume and single play no part.
private let previousRules = rows(
    [SingleMode.off, .on, .oneshot].flatMap { single in
        [false, true].flatMap { consume in
            [
                (single, false, consume, .play(0), .play(1)),
                (single, true, consume, .play(3), .play(1)),
            ]
        }
    })

@Suite("Queue transitions")
struct QueueTransitionTests {
    enum Transition {
        case next
        case songEnd
        case previous
    }

    @Test(arguments: songEndRules, [false, true])
    func songEnd(row: TransitionRow, random: Bool) throws {
        try self.check(.songEnd, row: row, random: random, fromSlot: 1, expecting: row.fromMiddle)
        try self.check(.songEnd, row: row, random: random, fromSlot: 3, expecting: row.fromEnd)
    }

    @Test(arguments: nextRules, [false, true])
    func next(row: TransitionRow, random: Bool) throws {
        try self.check(.next, row: row, random: random, fromSlot: 1, expecting: row.fromMiddle)
        try self.check(.next, row: row, random: random, fromSlot: 3, expecting: row.fromEnd)
    }

    @Test(arguments: previousRules, [false, true])
    func previous(row: TransitionRow, random: Bool) throws {
        try self.check(.previous, row: row, random: random, fromSlot: 0, expecting: row.fromMiddle)
        try self.check(.previous, row: row, random: random, fromSlot: 2, expecting: row.fromEnd)
    }

    private func check(
        _ transition: Transition, row: TransitionRow, random: Bool, fromSlot slot: Int,
        expecting outcome: TransitionRow.Outcome
    ) throws {
        var queue = makeQueue(4, seed: 1234)
        queue.random = random
        try walk(&queue, toSlot: slot)
        queue.repeatMode = row.repeatMode
        queue.single = row.single
        queue.consume = row.consume
        let before = queue
        let finished = try #require(queue.current)
        func entry(atSlot slot: Int) -> QueueEntry { before.entries[before.order[slot]] }
        func entry(atPosition position: Int?) -> QueueEntry? { position.map { before.entries[$0] } }

        let predicted: QueueEntry?
        let result: Int?
        switch transition {
        case .next:
            predicted = entry(atPosition: queue.positionAfterNext())
            result = queue.advanceToNext()
        case .songEnd:
            predicted = entry(atPosition: queue.positionAfterSongEnd())
            result = queue.songFinished()
        case .previous:
            predicted = entry(atPosition: queue.positionBeforeCurrent())
            result = queue.returnToPrevious()
        }

        #expect(result == (outcome == .stop(selecting: nil) || isStop(outcome) ? nil : queue.currentPosition))
        switch outcome {
        case .play(let next):
            #expect(queue.current == entry(atSlot: next))
        case .replay:
            #expect(queue.current == finished)
        case .wrap:
            if random {
                #expect(queue.current != nil && queue.current != finished, "a new cycle starts with another song")
                #expect(queue.order[0] == queue.currentPosition)
            } else {
                #expect(queue.current == entry(atSlot: 0))
            }
        case .stop(let selecting):
            #expect(queue.current == selecting.map(entry(atSlot:)))
        }
        #expect(predicted == (isStop(outcome) ? nil : queue.current), "the query agrees with the move")
        if transition == .songEnd {
            let next: QueueEntry? =
                if case .stop(let selecting) = outcome { selecting.map(entry(atSlot:)) } else { predicted }
            #expect(entry(atPosition: before.nextPosition) == next, "nextsong names the song that becomes current")
        }

        let leaves = transition != .previous && outcome != .replay
        if row.consume && leaves {
            #expect(queue.position(ofID: finished.id) == nil, "consume removes the song left behind")
            #expect(queue.count == 3)
            #expect(queue.version == before.version + 1)
        } else {
            #expect(queue.count == 4)
            #expect(queue.version == before.version)
        }

        // Oneshot is spent only on the pause at the next song; on a replay under repeat and at the end of
        // the queue it stays on, as in MPD.
        let singleTookEffect = transition == .songEnd && isStop(outcome) && outcome != .stop(selecting: nil)
        #expect(queue.single == (row.single == .oneshot && singleTookEffect ? .off : row.single))
        #expect(queue.repeatMode == row.repeatMode && queue.consume == row.consume && queue.random == random)
        checkInvariants(queue)
    }

    private func isStop(_ outcome: TransitionRow.Outcome) -> Bool {
        if case .stop = outcome { return true }
        return false
    }

    @Test func withoutACurrentSongNothingMoves() {
        var queue = makeQueue(3)
        #expect(queue.positionAfterNext() == nil)
        #expect(queue.positionAfterSongEnd() == nil)
        #expect(queue.positionBeforeCurrent() == nil)
        #expect(queue.nextPosition == nil)
        #expect(queue.advanceToNext() == nil)
        #expect(queue.songFinished() == nil)
        #expect(queue.returnToPrevious() == nil)
        #expect(queue.current == nil)
    }

    @Test func consumePlaysTheQueueAway() throws {
        var queue = makeQueue(3)
        queue.consume = true
        try queue.setCurrent(position: 0)
        var heard = [queue.current!.path]
        while queue.songFinished() != nil {
            heard.append(queue.current!.path)
        }
        #expect(heard == ["s0", "s1", "s2"])
        #expect(queue.isEmpty)
        #expect(queue.current == nil)
        #expect(queue.version == 5)
    }

    @Test func consumeWithRepeatStopsRatherThanReplayTheLastSong() throws {
        var queue = makeQueue(1)
        queue.consume = true
        queue.repeatMode = true
        try queue.setCurrent(position: 0)
        #expect(queue.positionAfterNext() == nil)
        #expect(queue.advanceToNext() == nil)
        #expect(queue.isEmpty)
    }

    @Test func repeatWithOneSongReplaysIt() throws {
        var queue = makeQueue(1)
        queue.repeatMode = true
        queue.random = true
        try queue.setCurrent(position: 0)
        #expect(queue.nextPosition == 0)
        #expect(queue.songFinished() == 0)
        #expect(queue.advanceToNext() == 0)
    }

    @Test func singleStopsOnTheNextSongSoPlayGoesOn() throws {
        var queue = makeQueue(3)
        queue.single = .on
        try queue.setCurrent(position: 0)
        #expect(queue.songFinished() == nil)
        #expect(queue.currentPosition == 1)
        #expect(queue.songFinished() == nil)
        #expect(queue.currentPosition == 2)
        #expect(queue.songFinished() == nil)
        #expect(queue.currentPosition == nil)
        #expect(queue.single == .on)
    }
}

@Suite("Queue at scale")
struct QueueScaleTests {
    @Test func hundredThousandAddsAreFastAndStatusIsCheap() throws {
        let paths = (0..<100_000).map { "/music/album \($0 / 12)/track \($0 % 12).mp3" }
        var queue = Queue()
        let clock = ContinuousClock()

        let adding = try clock.measure { try queue.add(paths) }
        #expect(adding < .seconds(2), "100,000 adds took \(adding)")

        var oneByOne = Queue()
        let addingOneByOne = try clock.measure {
            for path in paths {
                try oneByOne.add([path])
            }
        }
        #expect(addingOneByOne < .seconds(2), "100,000 single adds took \(addingOneByOne)")

        try queue.setCurrent(position: 99_998)
        queue.repeatMode = true
        queue.random = true
        var reads = 0
        let reading = clock.measure {
            for _ in 0..<10_000 {
                reads &+=
                    queue.count + (queue.currentPosition ?? 0) + (queue.current?.id ?? 0) + (queue.nextPosition ?? 0)
            }
        }
        #expect(reads != 0)
        #expect(reading < .seconds(1), "10,000 status reads took \(reading)")
        #expect(queue.position(ofID: 50_000) == 49_999)
    }
}

/// Random edits against a plain array model: whatever happens, ids, positions and the order agree.
@Suite("Queue random edits")
struct QueueFuzzTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomEditsKeepEverythingConsistent(seed: UInt64) throws {
        var queue = Queue(maximumLength: 60, randomSeed: seed)
        var model: [QueueEntry] = []
        var rng = SeededGenerator(seed: seed)
        for step in 0..<600 {
            let currentBefore = queue.current
            var keepsCurrent = true
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1:
                let position = Int.random(in: 0...model.count, using: &rng)
                let paths = (0..<Int.random(in: 1...4, using: &rng)).map { "p\(step)-\($0)" }
                do {
                    let ids = try queue.add(paths, at: position)
                    model.insert(contentsOf: zip(ids, paths).map { QueueEntry(id: $0, path: $1) }, at: position)
                } catch {
                    #expect(error == .tooLong(limit: 60))
                    #expect(model.count + paths.count > 60)
                }
            case 2 where !model.isEmpty:
                let start = Int.random(in: 0..<model.count, using: &rng)
                let end = Int.random(in: start...model.count, using: &rng)
                keepsCurrent = !(start..<end).contains(queue.currentPosition ?? -1)
                try queue.delete(positions: start..<end)
                model.removeSubrange(start..<end)
            case 3 where !model.isEmpty:
                let start = Int.random(in: 0..<model.count, using: &rng)
                let end = Int.random(in: (start + 1)...model.count, using: &rng)
                let destination = Int.random(in: 0...(model.count - (end - start)), using: &rng)
                try queue.move(from: start..<end, to: destination)
                let block = model[start..<end]
                model.removeSubrange(start..<end)
                model.insert(contentsOf: block, at: destination)
            case 4 where !model.isEmpty:
                try queue.setCurrent(position: Int.random(in: 0..<model.count, using: &rng))
                keepsCurrent = false
            case 5:
                queue.random.toggle()
                queue.repeatMode = Bool.random(using: &rng)
                queue.consume = Int.random(in: 0..<4, using: &rng) == 0
                queue.single = SingleMode.allCases.randomElement(using: &rng)!
            case 6, 7:
                keepsCurrent = false
                let predicted = queue.positionAfterSongEnd().map { queue.entries[$0] }
                let position = queue.songFinished()
                #expect(position.map { queue.entries[$0] } == predicted)
                model = queue.entries
            case 8:
                keepsCurrent = false
                let predicted = queue.positionAfterNext().map { queue.entries[$0] }
                let position = queue.advanceToNext()
                #expect(position.map { queue.entries[$0] } == predicted)
                model = queue.entries
            default:
                keepsCurrent = false
                queue.returnToPrevious()
            }
            #expect(queue.entries == model, "step \(step)")
            if keepsCurrent {
                #expect(queue.current == currentBefore, "step \(step)")
            }
            checkInvariants(queue)
        }
    }
}

/// A seeded generator for the test's own choices (the queue has its own).
private struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state = self.state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return self.state ^ (self.state >> 33)
    }
}
