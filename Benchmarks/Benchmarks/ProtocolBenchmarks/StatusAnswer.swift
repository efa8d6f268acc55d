import Audio
import ControlProtocol
import PlayerCore
import PlayerDaemon

/// The `status` answer and a `playlistinfo` song block as the daemon writes them, from fixed values.
enum StatusAnswer {
    /// A player 1:05 into the fourth song of twelve, with the song after it ready: every field of MPD's
    /// status but `error`, `sleeptimer` and `resumein`.
    static let playingStatus: PlayerStatus = {
        var status = PlayerStatus()
        let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)
        status.state = .play
        status.entry = QueueEntry(id: 4, path: "/srv/music/Albums/Nils Frahm/Spaces/04 - Says.mp3")
        status.position = 3
        status.nextEntry = QueueEntry(id: 5, path: "/srv/music/Albums/Nils Frahm/Spaces/05 - Hammers.mp3")
        status.nextPosition = 4
        status.queueLength = 12
        status.queueVersion = 57
        status.volume = 70
        status.format = format
        status.lengthFrames = 528 * 44100 + 17_000
        status.bitrate = 320
        status.heardFrames = 65 * 44100 + 1234
        status.writtenFrames = status.heardFrames + 8820
        status.sampledAt = 5_000_000_000_000
        return status
    }()

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
        var tagTypes = Set(TagType.allCases)
    }

    /// The daemon's `status` answer (PlayerDaemon's `Answer.status`, which `PlayerService` calls with
    /// the engine's clock reading as `now`).
    static func writeStatus(_ status: PlayerStatus, now: Int64, to response: inout ResponseWriter) {
        Answer.status(status, now: now, to: &response)
    }

    /// The daemon's song block (`Answer.song`), after the song-info cache lookup, which is given here,
    /// and with the path made relative to the music directory as `PlayerService.displayPath` does.
    static func writeSong(_ song: SongBlock, to response: inout ResponseWriter) {
        let prefix = song.musicDirectory + "/"
        let path = song.entry.path
        let file = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
        Answer.song(
            file: file, tags: song.tags, duration: song.duration, position: song.position, id: song.entry.id,
            tagTypes: song.tagTypes, to: &response)
    }
}
