import PlayerClient
import Testing

@testable import MPRIS

@Suite("MPRIS: properties from status, and seeks told from time passing")
struct PlayerSnapshotTests {
    private static let track = Track(fields: [("file", "a.mp3"), ("Title", "A"), ("duration", "100.000"), ("Id", "4")])

    private static func snapshot(
        _ state: PlaybackState, elapsed: Double, songID: Int = 4, at instant: ContinuousClock.Instant
    ) -> PlayerSnapshot {
        PlayerSnapshot(
            status: Status(state: state, song: 0, songID: songID, playlistLength: 2, elapsed: elapsed),
            track: Self.track, fetchedAt: instant)
    }

    @Test("LoopStatus from repeat and single; Volume from 0-100, 1.0 without a mixer; all stopped when away")
    func properties() {
        var status = Status(state: .play, volume: 35, repeat: true, single: .on)
        var snapshot = PlayerSnapshot(status: status, track: nil, fetchedAt: .now)
        #expect(snapshot.loopStatus == "Track")
        #expect(snapshot.volume == 0.35)
        status.single = .off
        snapshot.status = status
        #expect(snapshot.loopStatus == "Playlist")
        status.repeat = false
        status.single = .on
        status.volume = nil
        snapshot.status = status
        #expect(snapshot.loopStatus == "None")
        #expect(snapshot.volume == 1.0)
        let away = PlayerSnapshot.disconnected.changingProperties
        #expect(away["PlaybackStatus"] == .string("Stopped"))
        #expect(away["Metadata"] == .dictionary([]))
        #expect(away["CanPlay"] == .boolean(false))
    }

    @Test("time passing is no seek; a jump past the tolerance is, with the new position")
    func seeks() {
        let start = ContinuousClock.now
        let playing = Self.snapshot(.play, elapsed: 10, at: start)
        // Two seconds later, 12 s in: playing on.
        #expect(
            PlayerSnapshot.seekedPosition(from: playing, to: Self.snapshot(.play, elapsed: 12, at: start + .seconds(2)))
                == nil)
        // Two seconds later, 40 s in: someone seeked.
        #expect(
            PlayerSnapshot.seekedPosition(from: playing, to: Self.snapshot(.play, elapsed: 40, at: start + .seconds(2)))
                == 40)
        // Paused, the position stays; moving it is a seek.
        let paused = Self.snapshot(.pause, elapsed: 10, at: start)
        #expect(
            PlayerSnapshot.seekedPosition(from: paused, to: Self.snapshot(.pause, elapsed: 10, at: start + .seconds(5)))
                == nil)
        #expect(
            PlayerSnapshot.seekedPosition(from: paused, to: Self.snapshot(.pause, elapsed: 3, at: start + .seconds(5)))
                == 3)
        // Another song from its start is a track change, not a seek; from its middle, both.
        #expect(
            PlayerSnapshot.seekedPosition(from: playing, to: Self.snapshot(.play, elapsed: 0.1, songID: 5, at: start))
                == nil)
        #expect(
            PlayerSnapshot.seekedPosition(from: playing, to: Self.snapshot(.play, elapsed: 30, songID: 5, at: start))
                == 30)
        // Stopping is no seek.
        #expect(
            PlayerSnapshot.seekedPosition(
                from: playing, to: PlayerSnapshot(status: Status(state: .stop), track: nil, fetchedAt: start)) == nil)
    }

    @Test("Metadata: the track id an object path, lists for artists, microseconds for the length")
    func metadata() throws {
        let track = try #require(
            Track(fields: [
                ("file", "x/y.mp3"), ("Artist", "A"), ("Artist", "B"), ("Track", "07/12"), ("duration", "2.500"),
                ("Id", "9"),
            ]))
        let value = track.metadata(url: "file:///m/x/y.mp3", artURL: nil)
        guard case .dictionary(let entries) = value else {
            Issue.record("not a dictionary: \(value)")
            return
        }
        let map = Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(map["mpris:trackid"] == .objectPath("/org/playerd/track/9"))
        #expect(map["xesam:artist"] == .strings(["A", "B"]))
        #expect(map["xesam:title"] == .string("y"))
        #expect(map["xesam:trackNumber"] == .int32(7))
        #expect(map["mpris:length"] == .int64(2_500_000))
        #expect(DBusText.clean("a\0b") == "ab")
    }
}
