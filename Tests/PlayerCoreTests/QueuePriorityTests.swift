import PlayerCore
import Testing

/// A queue holding `s0`, `s1` ... with a fixed seed, so shuffles are reproducible.
private func makeQueue(_ count: Int, seed: UInt64 = 7) -> Queue {
    var queue = Queue(randomSeed: seed)
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

private func checkInvariants(_ queue: Queue, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(queue.order.sorted() == Array(0..<queue.count), "order is a permutation", sourceLocation: sourceLocation)
    if !queue.random {
        #expect(queue.order == Array(0..<queue.count), "order is the identity", sourceLocation: sourceLocation)
    }
    for (position, entry) in queue.entries.enumerated() {
        #expect(queue.position(ofID: entry.id) == position, sourceLocation: sourceLocation)
    }
}

@Suite("Queue swap, shuffle and priorities (MPD's swap, shuffle, prio)")
struct QueuePriorityTests {
    // MARK: - swap

    @Test func swapExchangesTwoSongsAndTheCurrentSongFollowsIt() throws {
        var queue = makeQueue(4)
        try queue.setCurrent(position: 1)
        let version = queue.version
        try queue.swap(1, 3)
        #expect(paths(queue) == ["s0", "s3", "s2", "s1"])
        #expect(queue.current?.path == "s1")
        #expect(queue.currentPosition == 3)
        #expect(queue.version == version + 1)
        #expect(queue.positionsChanged(since: version) == [1, 3])
        checkInvariants(queue)
    }

    @Test func swapInRandomModeKeepsThePlayOrderOfSongs() throws {
        var queue = makeQueue(6)
        queue.random = true
        try queue.setCurrent(position: queue.order[0])
        let before = playOrder(queue)
        let current = queue.current
        try queue.swap(0, 5)
        #expect(playOrder(queue) == before)
        #expect(queue.current == current)
        checkInvariants(queue)
    }

    @Test func swapOntoItselfIsAChangeAsInMPD() throws {
        var queue = makeQueue(2)
        let version = queue.version
        try queue.swap(1, 1)
        #expect(paths(queue) == ["s0", "s1"])
        #expect(queue.version == version + 1)
    }

    @Test func swapRefusesPositionsOutsideAndIdsNotQueued() throws {
        var queue = makeQueue(3)
        #expect(throws: QueueError.badRange) { try queue.swap(0, 3) }
        #expect(throws: QueueError.badRange) { try queue.swap(-1, 0) }
        #expect(throws: QueueError.noSuchID(99)) { try queue.swap(id: 1, id: 99) }
        #expect(paths(queue) == ["s0", "s1", "s2"])
        try queue.swap(id: 1, id: 3)
        #expect(paths(queue) == ["s2", "s1", "s0"])
    }

    // MARK: - shuffle

    @Test func shuffleWhilePlayingPutsTheCurrentSongFirstInTheRange() throws {
        for seed in UInt64(1)...20 {
            var queue = makeQueue(8, seed: seed)
            try queue.setCurrent(position: 5)
            let version = queue.version
            try queue.shuffle(positions: 2..<7, keepingCurrent: true)
            #expect(queue.currentPosition == 2)
            #expect(queue.current?.path == "s5")
            // Outside the range nothing moved.
            #expect(Array(paths(queue)[0..<2]) == ["s0", "s1"])
            #expect(Array(paths(queue)[7...]) == ["s7"])
            #expect(Set(paths(queue)[2..<7]) == ["s2", "s3", "s4", "s5", "s6"])
            #expect(queue.version == version + 1)
            #expect(queue.positionsChanged(since: version) == Array(2..<7))
            checkInvariants(queue)
        }
    }

    @Test func shuffleWhileStoppedLeavesNoCurrentSong() throws {
        var queue = makeQueue(4)
        try queue.setCurrent(position: 1)
        try queue.shuffle(positions: 0..<Int.max, keepingCurrent: false)
        #expect(queue.current == nil)
        #expect(Set(paths(queue)) == ["s0", "s1", "s2", "s3"])
        checkInvariants(queue)
    }

    @Test func shuffleMovesSongsAndEveryArrangementComesUp() throws {
        var seen: Set<[String]> = []
        for seed in UInt64(1)...200 {
            var queue = makeQueue(3, seed: seed)
            try queue.shuffle(positions: 0..<3, keepingCurrent: false)
            seen.insert(paths(queue))
        }
        #expect(seen.count == 6)
    }

    @Test func shuffleOfFewerThanTwoSongsChangesNothingAndARangePastTheEndIsRefused() throws {
        var queue = makeQueue(3)
        let version = queue.version
        try queue.shuffle(positions: 2..<9, keepingCurrent: false)
        try queue.shuffle(positions: 3..<9, keepingCurrent: false)
        #expect(queue.version == version)
        #expect(throws: QueueError.badRange) { try queue.shuffle(positions: 4..<9, keepingCurrent: false) }
    }

    @Test func shuffleInRandomModeKeepsTheCurrentSongCurrent() throws {
        var queue = makeQueue(6)
        queue.random = true
        try queue.setCurrent(position: 3)
        try queue.shuffle(positions: 0..<6, keepingCurrent: true)
        #expect(queue.currentPosition == 0)
        #expect(queue.current?.path == "s3")
        checkInvariants(queue)
    }

    // MARK: - prio

    @Test func priorityIsSetOnARangeClippedToTheQueue() throws {
        var queue = makeQueue(4)
        let version = queue.version
        try queue.setPriority(10, positions: 2..<99)
        #expect(queue.entries.map(\.priority) == [0, 0, 10, 10])
        #expect(queue.version == version + 1)
        #expect(queue.positionsChanged(since: version) == [2, 3])
        // Play order is untouched outside random mode.
        #expect(queue.order == [0, 1, 2, 3])
        // An empty range is no change; one starting past the end is refused.
        try queue.setPriority(5, positions: 4..<9)
        #expect(queue.version == version + 1)
        #expect(throws: QueueError.badRange) { try queue.setPriority(5, positions: 5..<9) }
        try queue.setPriority(255, id: 1)
        #expect(queue.entries[0].priority == 255)
        #expect(throws: QueueError.noSuchID(42)) { try queue.setPriority(1, id: 42) }
    }

    @Test func randomModePlaysHigherPrioritiesFirst() throws {
        for seed in UInt64(1)...20 {
            var queue = makeQueue(10, seed: seed)
            try queue.setPriority(5, positions: 7..<9)
            try queue.setPriority(9, positions: 2..<3)
            queue.random = true
            let order = playOrder(queue)
            #expect(order[0] == "s2")
            #expect(Set(order[1...2]) == ["s7", "s8"])
            checkInvariants(queue)
        }
    }

    @Test func aSongGivenAPriorityInRandomModePlaysNextAfterTheCurrentOne() throws {
        for seed in UInt64(1)...20 {
            var queue = makeQueue(10, seed: seed)
            queue.random = true
            try queue.setCurrent(position: queue.order[0])
            let current = try #require(queue.current)
            // A song not yet played, and one the current song is.
            let target = queue.order[6]
            try queue.setPriority(3, positions: target..<(target + 1))
            #expect(queue.current == current)
            #expect(queue.nextPosition == target)
            #expect(queue.advanceToNext() == target)
            checkInvariants(queue)
        }
    }

    @Test func aPlayedSongComesBackOnlyAboveTheCurrentSongsPriority() throws {
        var queue = makeQueue(6, seed: 3)
        queue.random = true
        try queue.setCurrent(position: queue.order[0])
        queue.advanceToNext()
        queue.advanceToNext()
        let played = queue.order[0]
        let current = try #require(queue.currentPosition)
        try queue.setPriority(4, positions: current..<(current + 1))
        // Not above the current song's 4: stays played.
        try queue.setPriority(4, positions: played..<(played + 1))
        #expect(queue.order[0] == played)
        // Above it: comes next.
        try queue.setPriority(5, positions: played..<(played + 1))
        #expect(queue.currentPosition == current)
        #expect(queue.nextPosition == played)
        checkInvariants(queue)
    }

    @Test func songsAddedInRandomModePlayAfterTheHigherPriorities() throws {
        for seed in UInt64(1)...20 {
            var queue = makeQueue(4, seed: seed)
            try queue.setPriority(8, positions: 0..<2)
            queue.random = true
            try queue.add(["n0", "n1", "n2"])
            let order = playOrder(queue)
            #expect(Set(order[0...1]) == ["s0", "s1"])
            checkInvariants(queue)
        }
    }

    @Test func aNewRandomCycleWithPrioritiesStartsWithTheHighestAndNextSongSaysWhich() throws {
        for seed in UInt64(1)...20 {
            var queue = makeQueue(5, seed: seed)
            try queue.setPriority(7, positions: 3..<4)
            queue.random = true
            queue.repeatMode = true
            try queue.setCurrent(position: queue.order[0])
            for _ in 0..<4 {
                queue.advanceToNext()
            }
            let predicted = queue.nextPosition
            #expect(queue.songFinished() == predicted)
            #expect(queue.current?.path == "s3")
            checkInvariants(queue)
        }
    }

    @Test func deletingAndClearingForgetPriorities() throws {
        var queue = makeQueue(3)
        try queue.setPriority(9, positions: 0..<3)
        try queue.delete(positions: 0..<3)
        try queue.add(["a", "b", "c"])
        queue.random = true
        #expect(queue.entries.map(\.priority) == [0, 0, 0])
        try queue.setPriority(2, positions: 1..<2)
        queue.clear()
        try queue.add(["x"])
        #expect(queue.entries[0].priority == 0)
    }

    @Test func aSongThatStartsLosesItsPriorityAsInMPD() throws {
        var queue = makeQueue(3)
        try queue.setPriority(4, positions: 1..<3)
        let version = queue.version
        queue.songStarted(id: queue.entries[1].id)
        #expect(queue.entries.map(\.priority) == [0, 0, 4])
        #expect(queue.version == version + 1)
        // Without a priority, no change.
        queue.songStarted(id: queue.entries[1].id)
        queue.songStarted(id: 99)
        #expect(queue.version == version + 1)

        // The player resets it when it starts the song.
        var context = PlayerContext(queue: queue)
        _ = try context.handle(.playPosition(2), now: 0)
        #expect(context.queue.entries.map(\.priority) == [0, 0, 0])
        #expect(context.queue.version == version + 2)
    }

    @Test func aNewPriorityIsTheSameSongToThePlayer() {
        let entry = QueueEntry(id: 3, path: "a")
        #expect(QueueEntry.sameSong(entry, QueueEntry(id: 3, path: "a", priority: 9)))
        #expect(!QueueEntry.sameSong(entry, QueueEntry(id: 4, path: "a")))
        #expect(!QueueEntry.sameSong(entry, nil))
        #expect(QueueEntry.sameSong(nil, nil))
    }
}
