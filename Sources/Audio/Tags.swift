/// The descriptive tags of a song, from ID3v2 (2.2, 2.3, 2.4) with ID3v1 filling what v2 lacks.
public struct Tags: Sendable, Hashable {
    /// The song's title (TIT2, or the v1 title).
    public var title: String?
    /// The performing artist (TPE1, or the v1 artist).
    public var artist: String?
    /// The album (TALB, or the v1 album).
    public var album: String?
    /// The track number as written, e.g. `3/12` (TRCK, or the ID3v1.1 track byte).
    public var track: String?
    /// The date as written, e.g. `2021-05-04` (TDRC, TYER, or the v1 year).
    public var date: String?
    /// The genre, with ID3v1 numeric references such as `(17)` resolved to names (TCON, or the v1 genre).
    public var genre: String?

    /// Creates a set of tags; every field is optional.
    public init(
        title: String? = nil,
        artist: String? = nil,
        album: String? = nil,
        track: String? = nil,
        date: String? = nil,
        genre: String? = nil
    ) {
        self.title = title
        self.artist = artist
        self.album = album
        self.track = track
        self.date = date
        self.genre = genre
    }

    /// True when no field is set.
    public var isEmpty: Bool {
        self.title == nil && self.artist == nil && self.album == nil && self.track == nil
            && self.date == nil && self.genre == nil
    }

    /// These tags with every missing field taken from `other`.
    public func filling(from other: Tags) -> Tags {
        Tags(
            title: self.title ?? other.title,
            artist: self.artist ?? other.artist,
            album: self.album ?? other.album,
            track: self.track ?? other.track,
            date: self.date ?? other.date,
            genre: self.genre ?? other.genre
        )
    }
}

/// The ID3v1 genre list (0–147: the original 80 and Winamp's extensions), which ID3v1 tags and
/// ID3v2 `TCON` references such as `(17)` index into.
enum ID3Genre {
    static let names: [String] = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal",
        "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial",
        "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop",
        "Vocal", "Jazz+Funk", "Fusion", "Trance", "Classical", "Instrumental", "Acid", "House", "Game",
        "Sound Clip", "Gospel", "Noise", "AlternRock", "Bass", "Soul", "Punk", "Space", "Meditative",
        "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic", "Darkwave", "Techno-Industrial",
        "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy", "Cult", "Gangsta",
        "Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave",
        "Psychadelic", "Rave", "Showtunes", "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka",
        "Retro", "Musical", "Rock & Roll", "Hard Rock", "Folk", "Folk-Rock", "National Folk", "Swing",
        "Fast Fusion", "Bebob", "Latin", "Revival", "Celtic", "Bluegrass", "Avantgarde", "Gothic Rock",
        "Progressive Rock", "Psychedelic Rock", "Symphonic Rock", "Slow Rock", "Big Band", "Chorus",
        "Easy Listening", "Acoustic", "Humour", "Speech", "Chanson", "Opera", "Chamber Music", "Sonata",
        "Symphony", "Booty Bass", "Primus", "Porn Groove", "Satire", "Slow Jam", "Club", "Tango", "Samba",
        "Folklore", "Ballad", "Power Ballad", "Rhythmic Soul", "Freestyle", "Duet", "Punk Rock", "Drum Solo",
        "A capella", "Euro-House", "Dance Hall", "Goa", "Drum & Bass", "Club-House", "Hardcore", "Terror",
        "Indie", "BritPop", "Afro-Punk", "Polsk Punk", "Beat", "Christian Gangsta Rap", "Heavy Metal",
        "Black Metal", "Crossover", "Contemporary Christian", "Christian Rock", "Merengue", "Salsa",
        "Thrash Metal", "Anime", "JPop", "Synthpop",
    ]

    /// The name of genre number `index`, or nil past the list (255 means "none" in ID3v1).
    static func name(_ index: Int) -> String? {
        self.names.indices.contains(index) ? self.names[index] : nil
    }

    /// Resolves a TCON value: `(17)`, `17` and `(17)Rock` become names; `(RX)`/`(CR)` become
    /// Remix/Cover; plain text stays as it is.
    static func resolve(_ value: String) -> String {
        if let number = Int(value) {
            return self.name(number) ?? value
        }
        guard value.hasPrefix("("), let close = value.firstIndex(of: ")") else {
            return value
        }
        let inner = value[value.index(after: value.startIndex)..<close]
        let rest = value[value.index(after: close)...]
        if !rest.isEmpty {
            return String(rest)
        }
        switch inner {
        case "RX": return "Remix"
        case "CR": return "Cover"
        default: return Int(inner).flatMap(self.name) ?? value
        }
    }
}
