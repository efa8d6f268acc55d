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

    /// Resolves a TCON value into the genres it names: ID3v2.3's `(17)(6)` lists references (Rock,
    /// Trance), `(17)Rock` refines a reference with text (the text wins), `((Foo)` escapes a literal
    /// `(Foo)`; anything else is `resolve(_:)`'s single value.
    static func resolveAll(_ value: String) -> [String] {
        if value.hasPrefix("((") {
            return [String(value.dropFirst())]
        }
        var references: [String] = []
        var rest = Substring(value)
        while rest.hasPrefix("("), !rest.hasPrefix("(("), let close = rest.firstIndex(of: ")") {
            let inner = rest[rest.index(after: rest.startIndex)..<close]
            let name: String? =
                switch inner {
                case "RX": "Remix"
                case "CR": "Cover"
                default: Int(inner).flatMap(self.name)
                }
            guard let name else { break }
            references.append(name)
            rest = rest[rest.index(after: close)...]
        }
        if references.isEmpty {
            return [self.resolve(value)]
        }
        if !rest.isEmpty {
            return [String(rest.hasPrefix("((") ? rest.dropFirst() : rest)]
        }
        return references
    }
}
