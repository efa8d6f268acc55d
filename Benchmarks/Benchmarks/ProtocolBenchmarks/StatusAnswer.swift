import Audio
import BenchmarkSupport
import ControlProtocol
import MusicTags
import PlayerCore
import PlayerDaemon

/// The `status` answer and a `playlistinfo` song block as the daemon writes them, from fixed values.
enum StatusAnswer {
    /// A player 1:05 into the fourth song of twelve, with the song after it ready.
    static let playingStatus = SampleStatus.playing

    /// The fourth song's block: its path inside the music directory, six tags, its length.
    static let song = SongBlock(
        entry: QueueEntry(id: 4, path: "/srv/music/Albums/Nils Frahm/Spaces/04 - Says.mp3"),
        position: 3,
        tags: Tags(
            title: "Says", artist: "Nils Frahm", album: "Spaces", track: "4/12", date: "2013-11-15",
            genre: "Electronic"),
        duration: 528.385,
        musicDirectory: "/srv/music")

    /// What a song block is written from: the entry, its queue position, and the song-info cache's
    /// answer for it.
    struct SongBlock: Sendable {
        var entry: QueueEntry
        var position: Int
        var tags: Tags
        var duration: Double?
        var musicDirectory: String
        var tagTypes = Set(TagName.allCases)
    }

    /// The daemon's `status` answer (PlayerDaemon's `Answer.status`, which `PlayerService` calls with
    /// the engine's clock reading as `now`).
    static func writeStatus(_ status: PlayerStatus, now: Int64, to response: inout ResponseWriter) {
        Answer.status(status, now: now, to: &response)
    }

    /// The daemon's song block (`Answer.song`, with the path from `Answer.displayPath`), after the
    /// song-info cache lookup, which is given here.
    static func writeSong(_ song: SongBlock, to response: inout ResponseWriter) {
        let file = Answer.displayPath(song.entry.path, musicDirectory: song.musicDirectory)
        Answer.song(
            file: file, tags: song.tags, duration: song.duration, position: song.position, id: song.entry.id,
            tagTypes: song.tagTypes, to: &response)
    }
}
