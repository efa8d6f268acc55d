/// One song of an answer (`currentsong`, `playlistinfo`), decoded. Tags the file lacks are `nil`.
public struct Song: Sendable, Hashable {
    /// The song's URI: a path in the music directory, an absolute path, or a URL.
    public var file: String
    /// The `Title` tag.
    public var title: String?
    /// The `Artist` tag (the first, when there are several).
    public var artist: String?
    /// The `Album` tag.
    public var album: String?
    /// The `Track` tag as written, `3` or `3/12`.
    public var track: String?
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
        file: String, title: String? = nil, artist: String? = nil, album: String? = nil, track: String? = nil,
        date: String? = nil, genre: String? = nil, duration: Double? = nil, position: Int? = nil, id: Int? = nil
    ) {
        self.file = file
        self.title = title
        self.artist = artist
        self.album = album
        self.track = track
        self.date = date
        self.genre = genre
        self.duration = duration
        self.position = position
        self.id = id
    }

    /// Splits an answer into songs: each `file:` line starts one. Keys before the first `file:` are an
    /// error, as MPD clients treat them; unknown keys are skipped.
    public static func list(from fields: [(key: String, value: String)]) throws(ClientError) -> [Song] {
        var songs: [Song] = []
        // `Time:` is whole seconds; `duration:` is exact and wins when both are there.
        var wholeSeconds: Double?
        for (key, value) in fields {
            if key == "file" {
                if let last = songs.indices.last, songs[last].duration == nil {
                    songs[last].duration = wholeSeconds
                }
                wholeSeconds = nil
                songs.append(Song(file: value))
                continue
            }
            guard let last = songs.indices.last else {
                throw .malformed("\(key): \(value) before any file:")
            }
            switch key {
            case "Title": songs[last].title = songs[last].title ?? value
            case "Artist": songs[last].artist = songs[last].artist ?? value
            case "Album": songs[last].album = songs[last].album ?? value
            case "Track": songs[last].track = songs[last].track ?? value
            case "Date": songs[last].date = songs[last].date ?? value
            case "Genre": songs[last].genre = songs[last].genre ?? value
            case "duration": songs[last].duration = try seconds(key, value)
            case "Time": wholeSeconds = try seconds(key, value)
            case "Pos": songs[last].position = try integer(key, value)
            case "Id": songs[last].id = try integer(key, value)
            default: break
            }
        }
        if let last = songs.indices.last, songs[last].duration == nil {
            songs[last].duration = wholeSeconds
        }
        return songs
    }
}
