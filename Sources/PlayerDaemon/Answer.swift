import Audio
import ControlProtocol
import Library
import MusicTags
import PlayerCore

/// The two answers clients ask for most, written from plain values: MPD's `status`, and a song block
/// (`playlistinfo`, `currentsong` ...). Public so that the micro-benchmarks in Benchmarks/ measure
/// this very code.
public enum Answer {
    /// Writes MPD's `status` answer for `status` of the partition named `partition`, with elapsed time
    /// and timers as of `now` (the engine's clock).
    public static func status(
        _ status: PlayerStatus, now: Int64, partition: String = "default", to response: inout ResponseWriter
    ) {
        // Without a mixer to read, MPD leaves the line out.
        if let volume = status.volume {
            response.field("volume", status.isMuted ? 0 : volume)
        }
        response.field("repeat", status.repeatMode)
        response.field("random", status.random)
        response.field("single", status.single.rawValue)
        response.field("consume", status.consume)
        response.field("partition", partition)
        response.field("playlist", status.queueVersion)
        response.field("playlistlength", status.queueLength)
        response.field("mixrampdb", 0)
        response.field("state", Self.stateName(status.state))
        if let position = status.position, let entry = status.entry {
            response.field("song", position)
            response.field("songid", entry.id)
        }
        if status.state == .play || status.state == .pause, let format = status.format {
            let elapsed = status.elapsed(at: now)
            let duration = status.duration
            response.time(elapsed: elapsed, total: duration ?? 0)
            response.field("elapsed", seconds: elapsed)
            response.field("bitrate", status.bitrate)
            if let duration {
                response.field("duration", seconds: duration)
            }
            response.field("audio", format.description)
        }
        if let next = status.nextPosition, let entry = status.nextEntry {
            response.field("nextsong", next)
            response.field("nextsongid", entry.id)
        }
        if let error = status.error {
            response.field("error", error)
        }
        switch status.sleepTimer {
        case .off: break
        case .endOfSong: response.field("sleeptimer", "end")
        case .at(let deadline): response.field("sleeptimer", seconds: Double(max(0, deadline - now)) / 1e9)
        }
        if let resumesAt = status.resumesAt {
            response.field("resumein", seconds: Double(max(0, resumesAt - now)) / 1e9)
        }
    }

    /// Writes one song block: `file:` first (clients require it), then the tags the client asked for,
    /// the length, the position, the id, and the priority when it is not 0 (as MPD prints it).
    public static func song(
        file: String, tags: Tags, duration: Double?, position: Int, id: Int, priority: UInt8 = 0,
        tagTypes: Set<TagName>, lastModified: Int64? = nil, format: String? = nil, to response: inout ResponseWriter
    ) {
        Self.songInfo(
            file: file, tags: tags, duration: duration, tagTypes: tagTypes, lastModified: lastModified,
            format: format, to: &response)
        response.field("Pos", position)
        response.field("Id", id)
        if priority != 0 {
            response.field("Prio", Int(priority))
        }
    }

    /// Writes a song block without a queue position: `file:`, the tags asked for, the length.
    public static func songInfo(
        file: String, tags: Tags, duration: Double?, tagTypes: Set<TagName>, lastModified: Int64? = nil,
        format: String? = nil, to response: inout ResponseWriter
    ) {
        response.field("file", file)
        if let lastModified {
            response.field("Last-Modified", MusicLibrary.timestamp(lastModified))
        }
        if let format {
            response.field("Format", format)
        }
        for (tag, value) in tags.pairs where tagTypes.contains(tag) {
            response.field(tag.rawValue, value)
        }
        if let duration {
            response.field("Time", ResponseWriter.wholeSeconds(duration))
            response.field("duration", seconds: duration)
        }
    }

    /// `path` as clients see it: relative to the music directory when inside it, as MPD shows it.
    public static func displayPath(_ path: String, musicDirectory: String?) -> String {
        if let musicDirectory {
            let prefix = musicDirectory.hasSuffix("/") ? musicDirectory : musicDirectory + "/"
            if path.hasPrefix(prefix) {
                return String(path.dropFirst(prefix.count))
            }
        }
        return path
    }

    /// MPD's name for a state; preparing a song counts as playing.
    static func stateName(_ state: PlayerStateKind) -> String {
        switch state {
        case .play, .prepare: "play"
        case .pause: "pause"
        case .stop: "stop"
        }
    }
}
