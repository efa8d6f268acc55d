/// The current song as MPRIS describes it, read from `currentsong`: every value of the tags MPRIS
/// takes as lists (Artist, AlbumArtist, Genre), where `Song` keeps the first.
struct Track: Equatable {
    /// The song's URI as the server names it: relative to the music directory, absolute, or a URL.
    var file: String
    /// The queue id (`Id`): the track's identity for `mpris:trackid` and `SetPosition`.
    var id: Int?
    var title: String?
    var artists: [String] = []
    var albumArtists: [String] = []
    var album: String?
    var track: String?
    var disc: String?
    var genres: [String] = []
    var date: String?
    /// Seconds, from `duration:` (or the whole seconds of `Time:`).
    var duration: Double?

    /// Reads a `currentsong` answer; nil when it holds no song.
    init?(fields: [(key: String, value: String)]) {
        guard let file = fields.first(where: { $0.key == "file" })?.value else { return nil }
        self.file = file
        var wholeSeconds: Double?
        for (key, value) in fields {
            switch key {
            case "Title": self.title = self.title ?? value
            case "Artist": self.artists.append(value)
            case "AlbumArtist": self.albumArtists.append(value)
            case "Album": self.album = self.album ?? value
            case "Track": self.track = self.track ?? value
            case "Disc": self.disc = self.disc ?? value
            case "Genre": self.genres.append(value)
            case "Date": self.date = self.date ?? value
            case "Id": self.id = Int(value)
            case "duration": self.duration = Double(value).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            case "Time": wholeSeconds = Double(value)
            default: break
            }
        }
        if self.duration == nil, let wholeSeconds, wholeSeconds > 0 {
            self.duration = wholeSeconds
        }
    }

    /// The track's object path: the queue id under playerd's own prefix. MPRIS reserves paths below
    /// /org/mpris for its own meanings (NoTrack), so the id lives elsewhere.
    var objectPath: String {
        guard let id else { return Track.noTrack }
        return "/org/playerd/track/\(id)"
    }

    /// MPRIS's path for "no track".
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// What to show as the title: the Title tag, else the file's name without its suffix (as most
    /// players do, so that an untagged file is not shown as "Unknown").
    var displayTitle: String {
        if let title, !title.isEmpty { return title }
        var name = self.file
        if let slash = name.lastIndex(of: "/") {
            name = String(name[name.index(after: slash)...])
        }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            name = String(name[..<dot])
        }
        return name
    }

    /// The MPRIS `Metadata` map. `url` is `xesam:url`, `artURL` is `mpris:artUrl` when there is art.
    func metadata(url: String, artURL: String?) -> DBusValue {
        var entries: [(key: String, value: DBusValue)] = [("mpris:trackid", .objectPath(self.objectPath))]
        if let duration {
            entries.append(("mpris:length", .int64(microseconds(duration))))
        }
        entries.append(("xesam:title", .string(self.displayTitle)))
        if !self.artists.isEmpty {
            entries.append(("xesam:artist", .strings(self.artists)))
        }
        if !self.albumArtists.isEmpty {
            entries.append(("xesam:albumArtist", .strings(self.albumArtists)))
        }
        if let album {
            entries.append(("xesam:album", .string(album)))
        }
        if let number = leadingNumber(self.track) {
            entries.append(("xesam:trackNumber", .int32(number)))
        }
        if let number = leadingNumber(self.disc) {
            entries.append(("xesam:discNumber", .int32(number)))
        }
        if !self.genres.isEmpty {
            entries.append(("xesam:genre", .strings(self.genres)))
        }
        if let date, !date.isEmpty {
            entries.append(("xesam:contentCreated", .string(date)))
        }
        entries.append(("xesam:url", .string(url)))
        if let artURL {
            entries.append(("mpris:artUrl", .string(artURL)))
        }
        return .dictionary(entries)
    }

    /// The directory part of `file` ("" for a song at the top): songs of one album share their cover.
    var directory: String {
        guard let slash = self.file.lastIndex(of: "/") else { return "" }
        return String(self.file[..<slash])
    }
}

/// Seconds as MPRIS's microseconds.
func microseconds(_ seconds: Double) -> Int64 {
    guard seconds.isFinite, seconds > 0 else { return 0 }
    return Int64((seconds * 1_000_000).rounded())
}

/// `3` for `3`, `03` and `3/12`; nil when the text does not start with a number.
private func leadingNumber(_ text: String?) -> Int32? {
    guard let text else { return nil }
    return Int32(text.prefix { $0.isASCII && $0.isNumber })
}
