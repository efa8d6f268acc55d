import MusicTags

extension LibraryQuery {
    /// The trailing clauses a command accepts after its filter.
    public struct Clauses: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8

        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// `sort [-]KEY` (`find`, `search`, `findadd`, `searchadd`, `searchaddpl`).
        public static let sort = Clauses(rawValue: 1 << 0)
        /// `window START:END` (the same commands).
        public static let window = Clauses(rawValue: 1 << 1)
        /// `group TAG`, repeatable (`count`, `searchcount`, `list`). A command that groups may also go
        /// without a filter (`count group artist`, `list album`), as in MPD; the others may not.
        public static let group = Clauses(rawValue: 1 << 2)
    }

    /// Parses a library command's arguments after its name: a filter (expressions starting with `(`,
    /// legacy `TAG VALUE` pairs, or a mix, all ANDed), then the allowed clauses, in any order (MPD wants
    /// `sort` before `window`; playerd takes either). A clause that is not allowed, or given twice, is
    /// read as part of the filter and refused there ("Unknown filter type"), as MPD refuses it.
    /// `ignoringCase` is set for `search`, `searchadd`, `searchaddpl` and `searchcount`: legacy pairs
    /// then match case-folded substrings instead of whole values.
    ///
    /// The filter is nil only when no arguments are left for it, which only a command allowing `group`
    /// accepts; for the others that is "Incorrect number of filter arguments".
    public static func parse(
        _ arguments: ArraySlice<String>, ignoringCase: Bool, allowing clauses: Clauses
    ) throws(Ack) -> LibraryQuery {
        var query = LibraryQuery()
        var rest = arguments
        var seen: Clauses = []
        // Clauses come off the end two arguments at a time, as MPD takes them; in legacy pairs the
        // keyword then sits where a tag name would, and no tag is called `sort`, `window` or `group`.
        peeling: while rest.count >= 2 {
            let keyword = rest[rest.endIndex - 2]
            let value = rest[rest.endIndex - 1]
            switch keyword {
            case "sort" where clauses.contains(.sort) && !seen.contains(.sort):
                query.sort = try LibraryQuery.sortOrder(value)
                seen.insert(.sort)
            case "window" where clauses.contains(.window) && !seen.contains(.window):
                let range = try Argument.range(value)
                query.window = range == .all ? nil : (range.start, range.end)
                seen.insert(.window)
            case "group" where clauses.contains(.group):
                guard let tag = FilterType.tag(named: value) else {
                    throw Ack(.argument, "Unknown tag type: \(value)")
                }
                // Peeled from the end: the first met is the last given.
                query.groups.insert(tag, at: 0)
            default:
                break peeling
            }
            rest = rest.dropLast(2)
        }
        if rest.isEmpty && clauses.contains(.group) {
            return query
        }
        query.filter = try SongFilter.parse(arguments: rest, ignoringCase: ignoringCase)
        return query
    }

    /// `sort`'s argument: a tag, `Last-Modified`, or 0.24's `Added` (any case), `-` first for
    /// descending.
    static func sortOrder(_ text: String) throws(Ack) -> SortOrder {
        var name = Substring(text)
        let descending = name.first == "-"
        if descending {
            name = name.dropFirst()
        }
        let key: SortKey
        if FilterType.equalsIgnoringASCIICase(String(name), "last-modified") {
            key = .lastModified
        } else if FilterType.equalsIgnoringASCIICase(String(name), "added") {
            key = .added
        } else if let tag = FilterType.tag(named: String(name)) {
            key = .tag(tag)
        } else {
            throw Ack(.argument, "Unknown sort tag")
        }
        return SortOrder(key: key, descending: descending)
    }
}

/// What `list` lists: the values of a tag, or the songs' URIs.
public enum ListSubject: Sendable, Hashable {
    case tag(TagName)
    case file
}

/// `list TYPE [FILTER] [group TAG]...`, parsed.
public struct ListRequest: Sendable, Hashable {
    /// What to list.
    public var subject: ListSubject
    /// The filter (nil: every song) and the `group` clauses, the last given being the outermost level.
    public var query: LibraryQuery

    public init(subject: ListSubject, query: LibraryQuery) {
        self.subject = subject
        self.query = query
    }

    /// Parses `list`'s arguments after the command name: `TYPE` (a tag, or `file`/`filename`; any
    /// case), then a filter and `group` clauses. MPD's pre-0.12 form `list album ARTIST` (exactly one
    /// argument, not an expression) lists one artist's albums; after any other type a lone argument is
    /// refused with `should be "Album" for 3 arguments`. A group on the listed tag is
    /// `Conflicting group`.
    public static func parse(_ arguments: [String]) throws(Ack) -> ListRequest {
        guard let typeName = arguments.first else {
            throw Ack(.argument, "too few arguments for \"list\"")
        }
        let subject: ListSubject
        switch FilterType(name: typeName) {
        case .subject(.tag(let tag))?:
            subject = .tag(tag)
        case .subject(.file)?:
            subject = .file
        default:
            throw Ack(.argument, "Unknown tag type: \(typeName)")
        }
        let rest = arguments.dropFirst()
        if rest.count == 1, let artist = rest.first, artist.utf8.first != ASCII.openParenthesis {
            guard subject == .tag(.album) else {
                throw Ack(.argument, "should be \"Album\" for 3 arguments")
            }
            let filter = SongFilter.compare(.tag(.artist), .equals, artist, ignoringCase: false)
            return ListRequest(subject: subject, query: LibraryQuery(filter: filter))
        }
        let query = try LibraryQuery.parse(rest, ignoringCase: false, allowing: .group)
        if case .tag(let tag) = subject, query.groups.contains(tag) {
            throw Ack(.argument, "Conflicting group")
        }
        return ListRequest(subject: subject, query: query)
    }
}
