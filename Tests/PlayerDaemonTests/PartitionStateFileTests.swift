import PlayerCore
import PlayerDaemon
import Testing

@Suite("Partitions in the state file")
struct PartitionStateFileTests {
    private static var withPartition: SavedState {
        var state = SavedState()
        state.paths = ["/music/a.mp3"]
        state.current = 0
        state.state = .pause
        state.elapsed = 1.5
        state.outputs = [SavedOutput(name: "A", isEnabled: true), SavedOutput(name: "B", isEnabled: false)]
        var partition = SavedPartition(name: "upstairs")
        partition.paths = ["/music/b.mp3", "/music/c.mp3"]
        partition.priorities = [1: 7]
        partition.ranges = [0: SongRange(start: 1500, end: nil), 1: SongRange(start: 0, end: 2250)]
        partition.crossfade.seconds = 5
        partition.crossfade.mixRampDB = -17.5
        partition.crossfade.mixRampDelay = 2
        partition.current = 1
        partition.elapsed = 12.25
        partition.state = .play
        partition.volume = 40
        partition.random = true
        partition.single = .oneshot
        partition.outputs = [SavedOutput(name: "B", isEnabled: false)]
        state.partitions = [partition, SavedPartition(name: "empty-room")]
        return state
    }

    @Test("partitions are written after the default one's lines and read back the same")
    func roundTrip() throws {
        let state = Self.withPartition
        let text = state.encoded()
        let read = try SavedState(decoding: text)
        #expect(read == state)
        #expect(read.encoded() == text)
        // The partition's queue is under keys of its own: only the default partition's songs are `song:`.
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("song: ") } == ["song: /music/a.mp3"])
        #expect(text.contains("partition: upstairs\npartition_volume: 40\n"))
        #expect(
            text.contains(
                "partition_song: /music/b.mp3\npartition_range: 1500-\npartition_prio: 7\npartition_song: /music/c.mp3\npartition_range: 0-2250\n"
            ))
        #expect(
            text.contains("partition_crossfade: 5\npartition_mixrampdb: -17.500000\npartition_mixrampdelay: 2.000000\n")
        )
        #expect(!text.contains("partition: empty-room\npartition_volume"))
    }

    @Test("a reader that knows no partitions sees the default partition alone")
    func olderReader() throws {
        // What a reader does with keys it does not know: skip them. Dropping every partition line
        // leaves the state of the default partition, as it was.
        let text = Self.withPartition.encoded().split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("partition") }.joined(separator: "\n")
        var expected = Self.withPartition
        expected.partitions = []
        #expect(try SavedState(decoding: text) == expected)
    }

    @Test("a damaged partition line is read past, and a partition with a bad name with all its lines")
    func damagedLines() throws {
        let text = """
            playerd-state 1
            song: /music/a.mp3
            partition_song: /music/orphan.mp3
            partition: bad.name
            partition_song: /music/x.mp3
            partition: default
            partition: room
            partition_volume: 300
            partition_current: 5
            partition_song: /music/y.mp3
            end

            """
        let state = try SavedState(decoding: text)
        #expect(state.paths == ["/music/a.mp3"])
        #expect(state.partitions.map(\.name) == ["room"])
        #expect(state.partitions[0].paths == ["/music/y.mp3"])
        #expect(state.partitions[0].volume == nil)
        #expect(state.partitions[0].current == nil)
        #expect(state.skippedLines.count == 5, "\(state.skippedLines)")
    }
}
