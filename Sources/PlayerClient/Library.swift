// What playerctl asks of a server's music library, worked out without I/O so that it can be tested:
// filter expressions, song blocks, album order, `list` groups, `stats` and update jobs.

extension Song {
    /// Songs in the order an album plays: the albums as they first appear (each known by its
    /// AlbumArtist, so that two albums of one name stay apart), then by disc (none counts as disc 1),
    /// then by track number (as numbers: `10` after `9`, `3/12` is 3), then by path. Songs without a
    /// track number go after the numbered ones of their disc.
    public static func albumOrder(_ songs: [Song]) -> [Song] {
        var groups: [String: Int] = [:]
        for song in songs where groups[song.albumArtist ?? ""] == nil {
            groups[song.albumArtist ?? ""] = groups.count
        }
        func key(_ song: Song) -> (Int, Int, Int) {
            (groups[song.albumArtist ?? ""] ?? 0, song.discNumber ?? 1, song.trackNumber ?? Int.max)
        }
        return songs.sorted { left, right in
            let (a, b) = (key(left), key(right))
            if a != b {
                return a < b
            }
            return left.file.utf8.lexicographicallyPrecedes(right.file.utf8)
        }
    }
}

/// The number a `Track` or `Disc` tag starts with: `3` in `03`, `3/12` and ` 3`; nil when none.
func leadingNumber(_ text: String?) -> Int? {
    guard let text else {
        return nil
    }
    let digits = text.drop { $0 == " " }.prefix { $0.isASCII && $0.isNumber }
    return digits.isEmpty ? nil : Int(digits.prefix(9))
}

/// The year a `Date` tag starts with, `1965` in `1965-04-01`; nil when it does not start with four digits.
public func yearOf(_ date: String?) -> String? {
    guard let date else {
        return nil
    }
    let year = date.prefix(4)
    return year.count == 4 && year.allSatisfy({ $0.isASCII && $0.isNumber }) ? String(year) : nil
}

/// MPD filter expressions (0.21+), built from what a person typed.
public enum LibraryFilter {
    /// A value as a filter expression's string: in single quotes, with `'` and `\` escaped by a
    /// backslash. (The request line quotes the whole expression once more; `MPDConnection` does that.)
    public static func quoted(_ value: String) -> String {
        var text = "'"
        for character in value {
            if character == "'" || character == "\\" {
                text.append("\\")
            }
            text.append(character)
        }
        return text + "'"
    }

    /// One comparison: `(artist contains 'nina')`.
    public static func clause(_ tag: String, _ operation: String, _ value: String) -> String {
        "(\(tag) \(operation) \(self.quoted(value)))"
    }

    /// Clauses that must all hold: one alone as it is, several as `((a) AND (b))`.
    public static func all(_ clauses: [String]) -> String {
        clauses.count == 1 ? clauses[0] : "(" + clauses.joined(separator: " AND ") + ")"
    }
}

/// What to look for in the library, as a person types it: words that must each appear in some tag,
/// and substrings of the artist, album or title. Sent with `search`, so that case does not matter.
public struct LibrarySearch: Sendable, Hashable {
    /// Each must appear in some tag (`any contains`).
    public var words: [String]
    /// Must appear in the Artist tag.
    public var artist: String?
    /// Must appear in the Album tag.
    public var album: String?
    /// Must appear in the Title tag.
    public var title: String?

    /// Creates a search; with nothing to look for, its `expression` is nil.
    public init(words: [String], artist: String? = nil, album: String? = nil, title: String? = nil) {
        self.words = words
        self.artist = artist
        self.album = album
        self.title = title
    }

    /// The filter expression for `search` / `searchadd`; nil when there is nothing to look for.
    public var expression: String? {
        var clauses = self.words.map { LibraryFilter.clause("any", "contains", $0) }
        if let artist = self.artist {
            clauses.append(LibraryFilter.clause("artist", "contains", artist))
        }
        if let album = self.album {
            clauses.append(LibraryFilter.clause("album", "contains", album))
        }
        if let title = self.title {
            clauses.append(LibraryFilter.clause("title", "contains", title))
        }
        return clauses.isEmpty ? nil : LibraryFilter.all(clauses)
    }

    /// The search in words, for messages: `"nina blues", artist "simone"`.
    public var description: String {
        var parts: [String] = []
        if !self.words.isEmpty {
            parts.append("\"" + self.words.joined(separator: " ") + "\"")
        }
        for (name, value) in [("artist", self.artist), ("album", self.album), ("title", self.title)] {
            if let value {
                parts.append("\(name) \"\(value)\"")
            }
        }
        return parts.joined(separator: ", ")
    }
}

/// An album by name, and optionally its artist: whole values, any case (sent with `search`).
/// AlbumArtist falls back to Artist on the server, for songs without one.
public struct AlbumQuery: Sendable, Hashable {
    /// The album's name.
    public var album: String
    /// Its album artist.
    public var artist: String?

    /// Creates the query.
    public init(album: String, artist: String? = nil) {
        self.album = album
        self.artist = artist
    }

    /// The filter expression for `search`.
    public var expression: String {
        var clauses = [LibraryFilter.clause("album", "==", self.album)]
        if let artist = self.artist {
            clauses.append(LibraryFilter.clause("albumartist", "==", artist))
        }
        return LibraryFilter.all(clauses)
    }

    /// The query in words, for messages: `album "Lemonade" by "Beyoncé"`.
    public var description: String {
        "album \"\(self.album)\"" + (self.artist.map { " by \"\($0)\"" } ?? "")
    }
}

/// One album of `list album group date group albumartist`: its name, album artist and first year.
public struct LibraryAlbum: Sendable, Hashable {
    /// The album artist; nil when the songs have none (nor an Artist to fall back to).
    public var artist: String?
    /// The album's name.
    public var album: String
    /// The earliest year of its songs' dates; nil when none has one.
    public var year: String?

    /// Creates an album from its parts.
    public init(artist: String?, album: String, year: String?) {
        self.artist = artist
        self.album = album
        self.year = year
    }

    /// Reads the answer to `list album [FILTER] group date [group albumartist]`: a group's value is
    /// given once, before the albums it holds. An album listed under several dates becomes one, with
    /// its earliest year; albums without a name are left out. The order is the server's.
    public static func list(from fields: [(key: String, value: String)]) -> [LibraryAlbum] {
        var albums: [LibraryAlbum] = []
        var index: [LibraryAlbum: Int] = [:]
        var artist: String?
        var year: String?
        for (key, value) in fields {
            switch key {
            case "AlbumArtist":
                artist = value.isEmpty ? nil : value
                year = nil
            case "Date":
                year = yearOf(value)
            case "Album":
                guard !value.isEmpty else { continue }
                let key = LibraryAlbum(artist: artist, album: value, year: nil)
                if let known = index[key] {
                    if let year, albums[known].year.map({ year < $0 }) ?? true {
                        albums[known].year = year
                    }
                } else {
                    index[key] = albums.count
                    albums.append(LibraryAlbum(artist: artist, album: value, year: year))
                }
            default:
                break
            }
        }
        return albums
    }

    /// `Album (1965)`, or just `Album`.
    public var text: String {
        self.album + (self.year.map { " (\($0))" } ?? "")
    }
}

/// The figures of `stats` that say how big the library is.
public struct LibraryStats: Sendable, Hashable {
    /// Songs in the library.
    public var songs: Int
    /// Distinct artists.
    public var artists: Int
    /// Distinct albums.
    public var albums: Int

    /// Creates figures from their parts.
    public init(songs: Int, artists: Int, albums: Int) {
        self.songs = songs
        self.artists = artists
        self.albums = albums
    }

    /// Reads the answer to `stats`; a missing figure counts 0.
    public init(fields: [(key: String, value: String)]) throws(ClientError) {
        var figures: [String: Int] = [:]
        for (key, value) in fields where ["songs", "artists", "albums"].contains(key) {
            guard let number = Int(value), number >= 0 else {
                throw .malformed("\(key): \(value)")
            }
            figures[key] = number
        }
        self.init(songs: figures["songs"] ?? 0, artists: figures["artists"] ?? 0, albums: figures["albums"] ?? 0)
    }

    /// `the library holds 20,000 songs by 200 artists on 2,000 albums`.
    public var text: String {
        "the library holds \(counted(self.songs, "song")) by \(counted(self.artists, "artist"))"
            + " on \(counted(self.albums, "album"))"
    }

    /// What an update did, then what the library holds: `added 5 songs; the library holds ...`.
    public static func summary(before: LibraryStats, after: LibraryStats) -> String {
        let change = after.songs - before.songs
        let done =
            change > 0
            ? "added \(counted(change, "song"))"
            : change < 0 ? "removed \(counted(-change, "song"))" : "no songs added or removed"
        return done + "; " + after.text
    }
}

/// Whether update job `job` is over, given `status`'s `updating_db` (nil when no job runs): as
/// `mpc update --wait` decides, it is over when no job runs or a later one does.
public func updateFinished(job: Int, updatingDB: Int?) -> Bool {
    guard let running = updatingDB else {
        return true
    }
    return running > job
}

/// `1 song`, `2 songs`, `20,000 songs`.
public func counted(_ number: Int, _ noun: String) -> String {
    "\(groupedDigits(number)) \(noun)\(number == 1 ? "" : "s")"
}

/// A whole number with commas between groups of three digits: `20,000`.
public func groupedDigits(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var text = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0 && (digits.count - offset) % 3 == 0 {
            text.append(",")
        }
        text.append(digit)
    }
    return (number < 0 ? "-" : "") + text
}
