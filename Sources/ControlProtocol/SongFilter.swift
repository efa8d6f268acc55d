import MusicTags

/// What a filter compares: one tag (falling back as MPD falls back, AlbumArtist to Artist ...), any tag
/// (never the path), or the song's URI.
public enum FilterSubject: Sendable, Hashable {
    case tag(TagName)
    case anyTag
    case file
}

/// How a value is compared.
public enum FilterOperator: Sendable, Hashable {
    /// `==`, and a legacy `find` pair: the whole value. An empty value matches songs lacking the tag.
    case equals
    /// `!=`: no value equal (a song lacking the tag matches unless the value is empty).
    case notEquals
    /// `contains`, and a legacy `search` pair: a substring.
    case contains
    /// `starts_with`: a prefix.
    case startsWith
    /// `=~`: a regular expression (PCRE-like syntax) matching part of the value.
    case matchesRegex
    /// `!~`: no value matching the regular expression.
    case notMatchesRegex
}

/// An audio format in a filter, MPD's `SAMPLERATE:BITS:CHANNELS`; nil stands for `*`.
public struct AudioFormatPattern: Sendable, Hashable {
    public var sampleRate: Int?
    public var bits: Int?
    public var channels: Int?

    public init(sampleRate: Int?, bits: Int?, channels: Int?) {
        self.sampleRate = sampleRate
        self.bits = bits
        self.channels = channels
    }
}

/// A parsed MPD song filter: the 0.21+ expressions (`(Artist == 'x')`, `(!(...))`, `((...) AND (...))`)
/// and the legacy `TAG VALUE` pairs both parse to this. Pure: the library turns it into SQL.
public indirect enum SongFilter: Sendable, Hashable {
    /// Compares a subject's values with `value`. When `ignoringCase` is set (the `search*` commands),
    /// both sides are compared case- and accent-folded.
    case compare(FilterSubject, FilterOperator, String, ignoringCase: Bool)
    /// `base 'DIR'`: songs inside the directory with this URI (relative to the music directory).
    case base(String)
    /// `modified-since`: songs whose file changed at or after this time (Unix seconds).
    case modifiedSince(Int64)
    /// `added-since`: songs added to the library at or after this time (Unix seconds).
    case addedSince(Int64)
    /// `AudioFormat == 'R:B:C'` (`exact`) or `AudioFormat =~ 'R:*:C'` (a mask, `*` matching anything).
    case audioFormat(AudioFormatPattern, exact: Bool)
    /// `!EXPR`.
    case not(SongFilter)
    /// `EXPR AND EXPR ...`, and a list of legacy pairs: every part matches.
    case and([SongFilter])
}

/// What `sort` orders by: a tag (with MPD's fallbacks), the file's modification time, or when the song
/// entered the library.
public enum SortKey: Sendable, Hashable {
    case tag(TagName)
    case lastModified
    case added
}

/// A `sort [-]KEY` argument.
public struct SortOrder: Sendable, Hashable {
    public var key: SortKey
    public var descending: Bool

    public init(key: SortKey, descending: Bool) {
        self.key = key
        self.descending = descending
    }
}

/// The arguments of `find`, `search`, `count`, `list` ... after the command name, parsed: the filter
/// (nil for none), and the trailing `sort`, `window` and `group` clauses where the command allows them.
public struct LibraryQuery: Sendable, Hashable {
    public var filter: SongFilter?
    public var sort: SortOrder?
    /// `window START:END`, END exclusive (nil END runs to the end).
    public var window: (start: Int, end: Int?)? {
        get { self.windowBounds.map { ($0.start, $0.end) } }
        set { self.windowBounds = newValue.map { WindowBounds(start: $0.start, end: $0.end) } }
    }
    /// `group TAG` clauses, in the order given (MPD treats the last as the outermost level).
    public var groups: [TagName]

    private var windowBounds: WindowBounds?

    private struct WindowBounds: Sendable, Hashable {
        var start: Int
        var end: Int?
    }

    public init(filter: SongFilter? = nil, sort: SortOrder? = nil, groups: [TagName] = []) {
        self.filter = filter
        self.sort = sort
        self.groups = groups
    }
}
