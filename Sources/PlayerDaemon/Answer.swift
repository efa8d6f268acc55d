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
    /// and timers as of `now` (the engine's clock). `updatingJob` is the library update under way, if any.
    public static func status(
        _ status: PlayerStatus, now: Int64, partition: String = "default", updatingJob: Int? = nil,
        to response: inout ResponseWriter
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
        response.field("mixrampdb", Self.shortest(status.crossfade.mixRampDB))
        response.field("state", Self.stateName(status.state))
        if status.crossfade.seconds > 0 {
            response.field("xfade", status.crossfade.seconds)
        }
        if status.crossfade.mixRampDelay > 0 {
            response.field("mixrampdelay", Self.shortest(status.crossfade.mixRampDelay))
        }
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
        // MPD's order: the update job, the error, then the next song.
        if let updatingJob {
            response.field("updating_db", updatingJob)
        }
        // A station being reconnected says so where clients look for trouble, until it plays again.
        if let error = status.error ?? status.stream?.problem {
            response.field("error", error)
        }
        if let next = status.nextPosition, let entry = status.nextEntry {
            response.field("nextsong", next)
            response.field("nextsongid", entry.id)
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
        tagTypes: Set<TagName>, lastModified: Int64? = nil, format: String? = nil, range: SongRange? = nil,
        to response: inout ResponseWriter
    ) {
        Self.songInfo(
            file: file, tags: tags, duration: Self.duration(duration, range: range), tagTypes: tagTypes,
            lastModified: lastModified, format: format, range: range, to: &response)
        response.field("Pos", position)
        response.field("Id", id)
        if priority != 0 {
            response.field("Prio", Int(priority))
        }
    }

    /// Writes a song block without a queue position: `file:`, the tags asked for, the length.
    public static func songInfo(
        file: String, tags: Tags, duration: Double?, tagTypes: Set<TagName>, lastModified: Int64? = nil,
        format: String? = nil, range: SongRange? = nil, to response: inout ResponseWriter
    ) {
        response.field("file", file)
        if let range {
            // MPD's `Range: 1.500-12.250`, or `Range: 1.500-` to the end.
            let end = range.end.map { "\($0 / 1000)." + Self.threeDigits($0 % 1000) } ?? ""
            response.field("Range", "\(range.start / 1000)." + Self.threeDigits(range.start % 1000) + "-" + end)
        }
        if let lastModified {
            response.field("Last-Modified", MusicLibrary.timestamp(lastModified))
        }
        if let format {
            response.field("Format", format)
        }
        // In the order MPD lists them (`Tags.items`: an MP3's in MPD's fixed order, a Vorbis comment's in
        // the file's), as the library and the song-info cache keep them.
        for (tag, value) in tags.items where tagTypes.contains(tag) {
            response.field(tag.rawValue, value)
        }
        if let duration {
            response.field("Time", ResponseWriter.wholeSeconds(duration))
            response.field("duration", seconds: duration)
        }
    }

    /// A ranged song's length, as MPD's `DetachedSong::GetDuration` gives it: the range's, or from its
    /// start to the song's end.
    static func duration(_ duration: Double?, range: SongRange?) -> Double? {
        guard let range else { return duration }
        if let end = range.end {
            return Double(end - range.start) / 1000
        }
        return duration.map { max(0, $0 - Double(range.start) / 1000) }
    }

    private static func threeDigits(_ number: Int) -> String {
        number < 10 ? "00\(number)" : number < 100 ? "0\(number)" : "\(number)"
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

    /// A number as MPD's `{}` format writes it: the shortest digits that read back as the same value,
    /// without Swift's `.0` on whole numbers (`-17.5`, `0`, `1e-07`, `1.0000000272564224e+16`). NaN is
    /// `inf`, as mpd 0.23.12 (built with -ffast-math) writes it.
    static func shortest<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Number) -> String {
        if value.isNaN { return "inf" }
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
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
