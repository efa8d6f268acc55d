import Audio
import Synchronization

/// What a song block shows of a file: its tags and length.
struct SongInfo: Sendable, Hashable {
    var tags = Tags()
    /// Seconds, when known.
    var duration: Double?
}

/// Tags and lengths of queued files, read on first use and kept: opening a file for its tags costs
/// about a millisecond, which a queue of thousands must not pay on every `playlistinfo`.
final class SongInfoCache: Sendable {
    private let entries = Mutex<[String: SongInfo]>([:])
    /// Past this many files the cache starts over rather than grow without end.
    private let limit: Int

    init(limit: Int = 200_000) {
        self.limit = limit
    }

    /// The tags and length of the file at `path`; an unreadable file has none.
    func info(for path: String) -> SongInfo {
        if let cached = self.entries.withLock({ $0[path] }) {
            return cached
        }
        var info = SongInfo()
        if let decoder = try? MP3Decoder(path: path) {
            info.tags = decoder.tags
            info.duration = decoder.lengthFrames.map { Double($0) / Double(decoder.format.sampleRate) }
        }
        self.entries.withLock { entries in
            if entries.count >= self.limit {
                entries.removeAll(keepingCapacity: true)
            }
            entries[path] = info
        }
        return info
    }
}

/// The tag names MPD clients know, in MPD's spelling, for song blocks and `tagtypes`.
public enum TagType: String, CaseIterable, Sendable {
    case artist = "Artist"
    case album = "Album"
    case title = "Title"
    case track = "Track"
    case genre = "Genre"
    case date = "Date"

    /// Finds a tag type by name, ignoring case, as MPD does.
    init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = match
    }

    /// Every tag name MPD 0.23 knows: `tagtypes enable`/`disable` accept them all (mpc sends several),
    /// though playerd's song blocks carry only the tags above.
    static let mpdNames: Set<String> = [
        "artist", "artistsort", "album", "albumsort", "albumartist", "albumartistsort", "title", "track", "name",
        "genre", "date", "originaldate", "composer", "performer", "conductor", "work", "movement",
        "movementnumber", "grouping", "comment", "disc", "label", "musicbrainz_artistid", "musicbrainz_albumid",
        "musicbrainz_albumartistid", "musicbrainz_trackid", "musicbrainz_releasetrackid", "musicbrainz_workid",
    ]

    public func value(in tags: Tags) -> String? {
        switch self {
        case .artist: tags.artist
        case .album: tags.album
        case .title: tags.title
        case .track: tags.track
        case .genre: tags.genre
        case .date: tags.date
        }
    }
}
