/// The descriptive tags of a song: for each tag, its values in the order the file gives them (ID3v2.4
/// frames may hold several, such as two artists).
public struct Tags: Sendable, Hashable {
    private var storage: [TagName: [String]] = [:]

    /// Creates an empty set of tags.
    public init() {}

    /// Creates a set of tags from the common single values; every field is optional.
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

    /// Every value of `tag`; empty when the song lacks it. Setting drops empty strings.
    public subscript(tag: TagName) -> [String] {
        get { self.storage[tag] ?? [] }
        set {
            let values = newValue.filter { !$0.isEmpty }
            self.storage[tag] = values.isEmpty ? nil : values
        }
    }

    /// The first value of `tag`, or nil.
    public func first(_ tag: TagName) -> String? { self.storage[tag]?.first }

    /// The tags this song has, in MPD's order.
    public var names: [TagName] { self.storage.keys.sorted() }

    /// True when no tag is set.
    public var isEmpty: Bool { self.storage.isEmpty }

    /// Every (tag, value) pair in a song block's order (`TagName.blockOrder`), values in file order:
    /// what a song block lists.
    public var pairs: [(tag: TagName, value: String)] {
        self.storage.keys.sorted { $0.blockOrder < $1.blockOrder }.flatMap { tag in
            self.storage[tag]!.map { (tag, $0) }
        }
    }

    /// These tags with every tag they lack taken from `other`.
    public func filling(from other: Tags) -> Tags {
        var result = self
        for (tag, values) in other.storage where result.storage[tag] == nil {
            result.storage[tag] = values
        }
        return result
    }

    private func single(_ tag: TagName) -> String? { self.storage[tag]?.first }

    private mutating func setSingle(_ tag: TagName, _ value: String?) {
        self[tag] = value.map { [$0] } ?? []
    }

    /// The song's title.
    public var title: String? {
        get { self.single(.title) }
        set { self.setSingle(.title, newValue) }
    }
    /// The (first) performing artist.
    public var artist: String? {
        get { self.single(.artist) }
        set { self.setSingle(.artist, newValue) }
    }
    /// The album.
    public var album: String? {
        get { self.single(.album) }
        set { self.setSingle(.album, newValue) }
    }
    /// The track number as written, e.g. `3/12`.
    public var track: String? {
        get { self.single(.track) }
        set { self.setSingle(.track, newValue) }
    }
    /// The date as written, e.g. `2021-05-04`.
    public var date: String? {
        get { self.single(.date) }
        set { self.setSingle(.date, newValue) }
    }
    /// The (first) genre.
    public var genre: String? {
        get { self.single(.genre) }
        set { self.setSingle(.genre, newValue) }
    }
}
