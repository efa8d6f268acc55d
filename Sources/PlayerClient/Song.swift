/// One song of an answer, decoded: of the queue (`currentsong`, `playlistinfo`) or of the database
/// (`find`, `search`, `lsinfo`). Tags the file lacks are `nil`, and so are the queue's `Pos` and `Id`
/// outside the queue.
public struct Song: Sendable, Hashable {
    /// The song's URI: a path in the music directory, an absolute path, or a URL.
    public var file: String
    /// The `Title` tag.
    public var title: String?
    /// The `Artist` tag (the first, when there are several).
    public var artist: String?
    /// The `AlbumArtist` tag.
    public var albumArtist: String?
    /// The `Album` tag.
    public var album: String?
    /// The `Track` tag as written, `3` or `3/12`.
    public var track: String?
    /// The `Disc` tag as written, `1` or `1/2`.
    public var disc: String?
    /// The `Date` tag as written.
    public var date: String?
    /// The `Genre` tag.
    public var genre: String?
    /// The length in seconds.
    public var duration: Double?
    /// The 0-based queue position (`Pos`).
    public var position: Int?
    /// The queue id (`Id`).
    public var id: Int?

    /// Creates a song from its parts.
    public init(
        file: String, title: String? = nil, artist: String? = nil, albumArtist: String? = nil, album: String? = nil,
        track: String? = nil, disc: String? = nil, date: String? = nil, genre: String? = nil, duration: Double? = nil,
        position: Int? = nil, id: Int? = nil
    ) {
        self.file = file
        self.title = title
        self.artist = artist
        self.albumArtist = albumArtist
        self.album = album
        self.track = track
        self.disc = disc
        self.date = date
        self.genre = genre
        self.duration = duration
        self.position = position
        self.id = id
    }

    /// The track's number: `3` for `3`, `03` and `3/12`; nil when there is no number.
    public var trackNumber: Int? { leadingNumber(self.track) }

    /// The disc's number, read like `trackNumber`.
    public var discNumber: Int? { leadingNumber(self.disc) }

    /// Splits an answer into songs: each `file:` line starts one. `directory:` and `playlist:` entries
    /// (in `lsinfo`) end the song before them and are skipped with their `Last-Modified`. Keys before
    /// the first entry are an error, as MPD clients treat them; unknown keys are skipped.
    public static func list(from fields: [(key: String, value: String)]) throws(ClientError) -> [Song] {
        var songs: [Song] = []
        // Whether the lines being read belong to a song (rather than to a directory or playlist entry).
        var inSong = false
        var sawEntry = false
        // `Time:` is whole seconds; `duration:` is exact and wins when both are there.
        var wholeSeconds: Double?
        func finishSong() {
            if inSong, let last = songs.indices.last, songs[last].duration == nil {
                songs[last].duration = wholeSeconds
            }
            wholeSeconds = nil
        }
        for (key, value) in fields {
            switch key {
            case "file":
                finishSong()
                songs.append(Song(file: value))
                inSong = true
                sawEntry = true
                continue
            case "directory", "playlist":
                finishSong()
                inSong = false
                sawEntry = true
                continue
            default:
                break
            }
            guard sawEntry else {
                throw .malformed("\(key): \(value) before any file:")
            }
            guard inSong, let last = songs.indices.last else {
                continue
            }
            switch key {
            case "Title": songs[last].title = songs[last].title ?? value
            case "Artist": songs[last].artist = songs[last].artist ?? value
            case "AlbumArtist": songs[last].albumArtist = songs[last].albumArtist ?? value
            case "Album": songs[last].album = songs[last].album ?? value
            case "Track": songs[last].track = songs[last].track ?? value
            case "Disc": songs[last].disc = songs[last].disc ?? value
            case "Date": songs[last].date = songs[last].date ?? value
            case "Genre": songs[last].genre = songs[last].genre ?? value
            case "duration": songs[last].duration = try seconds(key, value)
            case "Time": wholeSeconds = try seconds(key, value)
            case "Pos": songs[last].position = try integer(key, value)
            case "Id": songs[last].id = try integer(key, value)
            default: break
            }
        }
        finishSong()
        return songs
    }
}
