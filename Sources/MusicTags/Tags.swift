/// The descriptive tags of a song: for each tag, its values in the order the file gives them (ID3v2.4
/// frames may hold several, such as two artists).
///
/// The order the values were given in is kept across tags (`items`): MPD lists a Vorbis comment's tags in
/// the file's order. Equality and hashing look at the values of each tag only, not that order.
public struct Tags: Sendable, Hashable {
    private var storage: [TagName: [String]] = [:]
    /// One entry per value, in the order given: the n-th entry of a tag stands for its n-th value.
    private var sequence: [TagName] = []

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

    /// Creates a set of tags from (tag, value) pairs, kept in their order.
    public init(items: some Sequence<(tag: TagName, value: String)>) {
        for (tag, value) in items where !value.isEmpty {
            self.storage[tag, default: []].append(value)
            self.sequence.append(tag)
        }
    }

    public static func == (left: Tags, right: Tags) -> Bool { left.storage == right.storage }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.storage) }

    /// Every value of `tag`; empty when the song lacks it. Setting drops empty strings. New values of a
    /// tag take the place of its old ones in `items` (a tag set for the first time goes last).
    public subscript(tag: TagName) -> [String] {
        get { self.storage[tag] ?? [] }
        set {
            let values = newValue.filter { !$0.isEmpty }
            let old = self.storage[tag]?.count ?? 0
            self.storage[tag] = values.isEmpty ? nil : values
            guard old != values.count else { return }
            let place = self.sequence.firstIndex(of: tag) ?? self.sequence.endIndex
            let before = self.sequence[..<place]
            let after = self.sequence[place...].filter { $0 != tag }
            self.sequence = Array(before) + Array(repeating: tag, count: values.count) + after
        }
    }

    /// Adds `value` (unless empty) after every value given so far, of any tag.
    public mutating func append(_ value: String, to tag: TagName) {
        guard !value.isEmpty else { return }
        self.storage[tag, default: []].append(value)
        self.sequence.append(tag)
    }

    /// Every (tag, value) pair in the order the values were given: a Vorbis comment's file order.
    public var items: [(tag: TagName, value: String)] {
        var next: [TagName: Int] = [:]
        return self.sequence.map { tag in
            let index = next[tag, default: 0]
            next[tag] = index + 1
            return (tag, self.storage[tag]![index])
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
        for tag in other.names where result.storage[tag] == nil {
            result[tag] = other[tag]
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
