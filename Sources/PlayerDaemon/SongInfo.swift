import Audio
import MusicTags
import Synchronization

/// What a song block shows of a file: its tags and length.
struct SongInfo: Sendable, Hashable {
    var tags = Tags()
    /// Seconds, when known.
    var duration: Double?
    /// When the file last changed (Unix seconds), when the library knows.
    var lastModified: Int64?
    /// The audio format as MPD prints it, when the library knows.
    var format: String?
}

/// Tags and lengths of queued files, read on first use and kept: reading a file's tags costs tens of
/// microseconds, which a queue of thousands must not pay on every `playlistinfo`.
final class SongInfoCache: Sendable {
    private let entries = Mutex<[String: SongInfo]>([:])
    /// Reads what the library does not know, as the library reads it (tags and length from the
    /// headers); one libmpg123 handle, which costs as much to make as a read, serves every file.
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

    /// The tags and length of the file at `path`; an unreadable file has none.
    func info(for path: String) -> SongInfo {
        if let cached = self.entries.withLock({ $0[path] }) {
            return cached
        }
        var info = SongInfo()
        if let known = self.source.withLock({ $0 })?(path) {
            info = known
        } else if let facts = self.reader.withLock({ reader in try? reader.read(path: path) }) {
            info.tags = facts.tags
            info.duration = facts.duration
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
