/// The tags MPD clients know, spelled as MPD 0.23 spells them in song blocks, `tagtypes`, filters and
/// `list`, in the order MPD lists them. Comment is read, and filters and `list` take it, but no song
/// block shows it and `tagtypes` does not name it: MPD leaves it off unless configured
/// (`announced`).
public enum TagName: String, CaseIterable, Sendable, Hashable, Comparable {
    case artist = "Artist"
    case artistSort = "ArtistSort"
    case album = "Album"
    case albumSort = "AlbumSort"
    case albumArtist = "AlbumArtist"
    case albumArtistSort = "AlbumArtistSort"
    case title = "Title"
    case track = "Track"
    case name = "Name"
    case genre = "Genre"
    case date = "Date"
    case originalDate = "OriginalDate"
    case composer = "Composer"
    case composerSort = "ComposerSort"
    case performer = "Performer"
    case conductor = "Conductor"
    case work = "Work"
    case movement = "Movement"
    case movementNumber = "MovementNumber"
    case ensemble = "Ensemble"
    case location = "Location"
    case grouping = "Grouping"
    case comment = "Comment"
    case disc = "Disc"
    case label = "Label"
    case musicBrainzArtistID = "MUSICBRAINZ_ARTISTID"
    case musicBrainzAlbumID = "MUSICBRAINZ_ALBUMID"
    case musicBrainzAlbumArtistID = "MUSICBRAINZ_ALBUMARTISTID"
    case musicBrainzTrackID = "MUSICBRAINZ_TRACKID"
    case musicBrainzReleaseTrackID = "MUSICBRAINZ_RELEASETRACKID"
    case musicBrainzWorkID = "MUSICBRAINZ_WORKID"

    /// Finds a tag by name, ignoring case, as MPD does (`albumartist`, `ALBUMARTIST` ...).
    public init?(name: String) {
        guard let tag = Self.byLowercasedName[name.lowercased()] else { return nil }
        self = tag
    }

    private static let byLowercasedName: [String: TagName] = Dictionary(
        uniqueKeysWithValues: TagName.allCases.map { ($0.rawValue.lowercased(), $0) })

    /// The position in MPD's order, which song blocks follow (a switch: this is asked millions of times
    /// in a scan, and hashing the raw string each time cost a third of it).
    public var order: Int {
        switch self {
        case .artist: 0
        case .artistSort: 1
        case .album: 2
        case .albumSort: 3
        case .albumArtist: 4
        case .albumArtistSort: 5
        case .title: 6
        case .track: 7
        case .name: 8
        case .genre: 9
        case .date: 10
        case .originalDate: 11
        case .composer: 12
        case .composerSort: 13
        case .performer: 14
        case .conductor: 15
        case .work: 16
        case .movement: 17
        case .movementNumber: 18
        case .ensemble: 19
        case .location: 20
        case .grouping: 21
        case .comment: 22
        case .disc: 23
        case .label: 24
        case .musicBrainzArtistID: 25
        case .musicBrainzAlbumID: 26
        case .musicBrainzAlbumArtistID: 27
        case .musicBrainzTrackID: 28
        case .musicBrainzReleaseTrackID: 29
        case .musicBrainzWorkID: 30
        }
    }

    /// The position in a song block, as MPD 0.23 lists an MP3's tags: in the order its ID3 scan reads
    /// them (`scan_id3_tag`: Artist, AlbumArtist, the *Sort tags, Title, Album, Track, Date ...), the
    /// tags it never reads from ID3 last, in `order`.
    public var blockOrder: Int {
        switch self {
        case .artist: 0
        case .albumArtist: 1
        case .artistSort: 2
        case .albumSort: 3
        case .albumArtistSort: 4
        case .title: 5
        case .album: 6
        case .track: 7
        case .date: 8
        case .originalDate: 9
        case .genre: 10
        case .composer: 11
        case .conductor: 12
        case .performer: 13
        case .grouping: 14
        case .comment: 15
        case .disc: 16
        case .label: 17
        case .musicBrainzArtistID: 18
        case .musicBrainzAlbumID: 19
        case .musicBrainzAlbumArtistID: 20
        case .musicBrainzReleaseTrackID: 21
        case .musicBrainzWorkID: 22
        case .musicBrainzTrackID: 23
        default: 24 + self.order
        }
    }

    /// The tags `tagtypes` names and song blocks may show: all but Comment, as MPD 0.23 has them by
    /// default (`metadata_to_use`).
    public static let announced: Set<TagName> = Set(allCases).subtracting([.comment])

    /// Hashes the position, not the raw string.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.order)
    }

    public static func < (lhs: TagName, rhs: TagName) -> Bool { lhs.order < rhs.order }

    /// The tag at position `order` in MPD's order.
    public init?(order: Int) {
        guard Self.allCases.indices.contains(order) else { return nil }
        self = Self.allCases[order]
    }

    /// The tag a filter, `list` or `count` reads when a song lacks this one, as MPD falls back:
    /// AlbumArtist to Artist, each *Sort tag to its base tag (and AlbumArtistSort on to Artist's).
    public var fallback: TagName? {
        switch self {
        case .albumArtist: .artist
        case .artistSort: .artist
        case .albumSort: .album
        case .albumArtistSort: .albumArtist
        case .composerSort: .composer
        default: nil
        }
    }
}
