import MusicTags

/// A song as a filter sees it. The library's SQL does the same job on disk; this is for tests and for
/// songs held in memory.
public protocol FilterableSong {
    /// The values of one tag, in file order; empty when the song lacks it.
    func values(of tag: TagName) -> [String]
    /// The URI relative to the music directory, `Artist/Album/01.mp3`.
    var uri: String { get }
    /// When the file last changed, Unix seconds.
    var lastModified: Int64 { get }
    /// When the song entered the library, Unix seconds.
    var added: Int64 { get }
    /// The decoded format, every field set; nil when unknown.
    var audioFormat: AudioFormatPattern? { get }
}

extension SongFilter {
    /// Whether `song` passes, as MPD 0.23 decides (src/song/*SongFilter.cxx). `fold` case- and
    /// accent-folds text for comparisons with `ignoringCase` (the `search*` commands); it is applied to
    /// both sides. Regular expressions then match the unfolded values, ignoring case. A filter whose
    /// regular expression does not compile (only possible when built by hand) matches nothing.
    public func matches(_ song: some FilterableSong, fold: (String) -> String) -> Bool {
        withoutActuallyEscaping(fold) { fold in SongMatcher(self, fold: fold).matches(song) }
    }
}

/// A filter ready to test many songs: regular expressions and folded values prepared once.
public struct SongMatcher {
    private indirect enum Node {
        case compare(FilterSubject, Comparison)
        case base(String)
        case modifiedSince(Int64)
        case addedSince(Int64)
        case audioFormat(AudioFormatPattern)
        case not(Node)
        case and([Node])
    }

    /// A string comparison, MPD's `StringFilter`.
    private struct Comparison {
        enum Kind {
            case equals, contains, startsWith
            case regex(Regex<AnyRegexOutput>?)
        }

        var kind: Kind
        /// The value, folded when `folding`.
        var value: String
        /// Whether the value the client sent is empty, which makes an absent tag match.
        var valueIsEmpty: Bool
        var negated: Bool
        var folding: Bool

        /// MPD's `MatchWithoutNegation`.
        func test(_ text: String, fold: (String) -> String) -> Bool {
            switch self.kind {
            case .regex(let regex):
                guard let regex else {
                    return false
                }
                return (try? regex.firstMatch(in: text)) != nil
            case .equals:
                return (self.folding ? fold(text) : text) == self.value
            case .contains:
                return SongMatcher.contains(self.folding ? fold(text) : text, self.value)
            case .startsWith:
                return (self.folding ? fold(text) : text).utf8.starts(with: self.value.utf8)
            }
        }
    }

    private let root: Node
    private let fold: (String) -> String

    /// Prepares `filter`; `fold` as for `SongFilter.matches(_:fold:)`.
    public init(_ filter: SongFilter, fold: @escaping (String) -> String) {
        self.fold = fold
        self.root = SongMatcher.node(filter, fold: fold)
    }

    private static func node(_ filter: SongFilter, fold: (String) -> String) -> Node {
        switch filter {
        case .compare(let subject, let filterOperator, let value, let ignoringCase):
            let kind: Comparison.Kind
            var negated = false
            switch filterOperator {
            case .equals: kind = .equals
            case .notEquals: (kind, negated) = (.equals, true)
            case .contains: kind = .contains
            case .startsWith: kind = .startsWith
            case .matchesRegex, .notMatchesRegex:
                kind = .regex(try? FilterRegex.compile(value, ignoringCase: ignoringCase))
                negated = filterOperator == .notMatchesRegex
            }
            let isRegex = filterOperator == .matchesRegex || filterOperator == .notMatchesRegex
            let comparison = Comparison(
                kind: kind, value: ignoringCase && !isRegex ? fold(value) : value, valueIsEmpty: value.isEmpty,
                negated: negated, folding: ignoringCase && !isRegex)
            return .compare(subject, comparison)
        case .base(let directory): return .base(directory)
        case .modifiedSince(let time): return .modifiedSince(time)
        case .addedSince(let time): return .addedSince(time)
        case .audioFormat(let pattern, _): return .audioFormat(pattern)
        case .not(let inner): return .not(SongMatcher.node(inner, fold: fold))
        case .and(let parts): return .and(parts.map { SongMatcher.node($0, fold: fold) })
        }
    }

    /// Whether `song` passes.
    public func matches(_ song: some FilterableSong) -> Bool {
        self.matches(self.root, song)
    }

    private func matches(_ node: Node, _ song: some FilterableSong) -> Bool {
        switch node {
        case .compare(.file, let comparison):
            return comparison.test(song.uri, fold: self.fold) != comparison.negated
        case .compare(.anyTag, let comparison):
            // Any value of any tag; none matching is a match only for a negated comparison.
            for tag in TagName.allCases {
                for value in song.values(of: tag) where comparison.test(value, fold: self.fold) {
                    return !comparison.negated
                }
            }
            return comparison.negated
        case .compare(.tag(let tag), let comparison):
            return self.matches(tag: tag, comparison, song)
        case .base(let directory):
            return SongMatcher.isInside(song.uri, directory: directory)
        case .modifiedSince(let time):
            return song.lastModified >= time
        case .addedSince(let time):
            return song.added >= time
        case .audioFormat(let pattern):
            guard let format = song.audioFormat else {
                return false
            }
            return pattern.matches(format)
        case .not(let inner):
            return !self.matches(inner, song)
        case .and(let parts):
            return parts.allSatisfy { self.matches($0, song) }
        }
    }

    /// MPD's `TagSongFilter::Match`: the tag's values, else the first fallback tag that has values
    /// (AlbumArtist → Artist ...), else the song lacks it and matches only an empty value (negated:
    /// anything but an empty value).
    private func matches(tag: TagName, _ comparison: Comparison, _ song: some FilterableSong) -> Bool {
        var current: TagName? = tag
        // The fallback chains are short; the bound only guards against a cycle.
        var steps = 0
        while let candidate = current, steps < TagName.allCases.count {
            let values = song.values(of: candidate)
            if !values.isEmpty {
                return values.contains { comparison.test($0, fold: self.fold) } != comparison.negated
            }
            current = candidate.fallback
            steps += 1
        }
        return comparison.valueIsEmpty != comparison.negated
    }

    /// MPD's `uri_is_child_or_same`: the directory itself or anything under it; an empty directory is
    /// the root, which holds everything. A trailing slash is ignored.
    static func isInside(_ uri: String, directory: String) -> Bool {
        var directory = Substring(directory)
        while directory.hasSuffix("/") {
            directory = directory.dropLast()
        }
        guard !directory.isEmpty else {
            return true
        }
        let uriBytes = uri.utf8
        guard uriBytes.starts(with: directory.utf8) else {
            return false
        }
        let rest = uriBytes.dropFirst(directory.utf8.count)
        return rest.isEmpty || rest.first == ASCII.slash
    }

    /// A byte-wise substring test, as MPD's `strstr`; the empty string is in every string.
    static func contains(_ text: String, _ part: String) -> Bool {
        let haystack = Array(text.utf8)
        let needle = Array(part.utf8)
        guard !needle.isEmpty else {
            return true
        }
        guard needle.count <= haystack.count else {
            return false
        }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
