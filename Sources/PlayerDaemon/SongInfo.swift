import Audio
import Library
import MusicTags
import StreamInput
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a song block shows of a file: its tags, length, time and format.
struct SongInfo: Sendable, Hashable {
    var tags = Tags()
    /// Seconds, when known.
    var duration: Double?
    /// When the file last changed (Unix seconds), when known.
    var lastModified: Int64?
    /// The audio format as MPD prints it (`44100:24:2`), when known.
    var format: String?
}

/// Tags and lengths of queued files, read on first use and kept: reading a file's tags costs tens of
/// microseconds, which a queue of thousands must not pay on every `playlistinfo`.
final class SongInfoCache: Sendable {
    private let entries = Mutex<[String: SongInfo]>([:])
    /// Reads what the library does not know, as the library reads it (tags, length and format from the
    /// headers, by the decoder the content calls for); one libmpg123 handle, which costs as much to make
    /// as a read, serves every MP3.
    private let reader = Mutex(SongReader())
    /// Past this many files the cache starts over rather than grow without end.
    private let limit: Int

    /// Where tags come from before a file is opened: the library, for songs it holds.
    private let source = Mutex<(@Sendable (String) -> SongInfo?)?>(nil)

    init(limit: Int = 200_000) {
        self.limit = limit
    }

    /// Takes what `known` knows (the library's songs) instead of opening the file.
    func setSource(_ known: @escaping @Sendable (String) -> SongInfo?) {
        self.source.withLock { $0 = known }
    }

    /// Forgets everything: the library changed.
    func removeAll() {
        self.entries.withLock { $0.removeAll() }
    }

    /// What station lists said of stations (their `#EXTINF` or `TitleN` names), by URL.
    private let stations = Mutex<[String: Tags]>([:])

    /// Keeps what a station list says of the station at `url` (its title), for its song blocks.
    func setStationTags(_ tags: Tags, for url: String) {
        self.stations.withLock { stations in
            if stations.count >= self.limit {
                stations.removeAll(keepingCapacity: true)
            }
            stations[url] = tags
        }
    }

    /// The tags and length of the file at `path`; an unreadable file has none. A station (a URL) has
    /// what its list said of it, and no length.
    func info(for path: String) -> SongInfo {
        if StationStream.isStation(path) {
            return SongInfo(tags: self.stations.withLock { $0[path] } ?? Tags())
        }
        if let cached = self.entries.withLock({ $0[path] }) {
            return cached
        }
        var info = SongInfo()
        if let known = self.source.withLock({ $0 })?(path) {
            info = known
        } else if let facts = self.reader.withLock({ reader in try? SongFile.read(path: path, reader: reader) }) {
            // As mpd shows a file outside its database: its time and format beside its tags.
            info.tags = facts.tags
            info.duration = facts.duration
            info.format = facts.format
            var status = stat()
            if stat(PathEscaping.systemPath(path), &status) == 0 {
                info.lastModified = Int64(status.st_mtim.tv_sec)
            }
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
