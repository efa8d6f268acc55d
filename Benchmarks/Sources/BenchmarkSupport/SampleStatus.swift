import Audio
import PlayerCore

/// The status sample both benchmark executables use: a song 1:05 into its 8:48, the fourth of twelve,
/// playing at volume 70 with the song after it ready; every field of MPD's `status` but `error`,
/// `sleeptimer` and `resumein` has a value.
public enum SampleStatus {
    /// CD audio: what most MP3s decode to.
    public static let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)

    public static let playing: PlayerStatus = {
        var status = PlayerStatus()
        status.state = .play
        status.entry = QueueEntry(id: 4, path: "/srv/music/Albums/Nils Frahm/Spaces/04 - Says.mp3")
        status.position = 3
        status.nextEntry = QueueEntry(id: 5, path: "/srv/music/Albums/Nils Frahm/Spaces/05 - Hammers.mp3")
        status.nextPosition = 4
        status.queueLength = 12
        status.queueVersion = 57
        status.volume = 70
        status.format = Self.format
        status.lengthFrames = 528 * 44100 + 17_000
        status.bitrate = 320
        status.heardFrames = 65 * 44100 + 1234
        status.writtenFrames = status.heardFrames + 8820
        status.sampledAt = 5_000_000_000_000
        return status
    }()
}
