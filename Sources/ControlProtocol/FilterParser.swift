import MusicTags

// MPD 0.23's song-filter grammar (src/song/Filter.cxx): the 0.21+ expressions and the legacy
// `TAG VALUE` pairs, with MPD's refusals word for word. Plus 0.24's `starts_with` and `added-since`.

extension SongFilter {
    /// How deeply expressions may nest. MPD recurses without a limit; a client's line could then
    /// exhaust the stack, so playerd refuses past this.
    public static let maximumNestingDepth = 64

    /// The longest quoted value in an expression, in bytes: MPD copies values into a 4 KiB buffer and
    /// refuses longer ones ("Quoted value is too long"). Legacy pairs have no such limit.
    public static let maximumQuotedValueBytes = 4095

    /// Parses one 0.21+ filter expression, `(Artist == 'Foo')`, `(!(...))`, `((...) AND (...))`,
    /// already unquoted once by the request tokenizer. `ignoringCase` is set for the `search*` commands
    /// and lands in every `.compare`. Refusals are ACK 2 with MPD's messages (`Word expected`,
    /// `')' expected`, `Unknown filter type: X`, `Error in regex ...`).
    public static func parse(expression: String, ignoringCase: Bool) throws(Ack) -> SongFilter {
        var parser = ExpressionParser(expression, ignoringCase: ignoringCase)
        guard parser.peek == ASCII.openParenthesis else {
            throw Ack(.argument, "'(' expected")
        }
        let filter = try parser.expression(depth: 1)
        guard parser.atEnd else {
            throw Ack(.argument, "Unparsed garbage after expression")
        }
        return filter
    }

    /// MPD's `SongFilter::Parse`: expressions (an argument starting with `(`) and legacy pairs, in any
    /// mix, all of which must match. One part stands alone; several become a flat `.and`.
    static func parse(arguments: ArraySlice<String>, ignoringCase: Bool) throws(Ack) -> SongFilter {
        var parts: [SongFilter] = []
        var rest = arguments
        guard !rest.isEmpty else {
            throw Ack(.argument, "Incorrect number of filter arguments")
        }
        while let first = rest.first {
            if first.utf8.first == ASCII.openParenthesis {
                parts.append(try SongFilter.parse(expression: first, ignoringCase: ignoringCase))
                rest = rest.dropFirst()
                continue
            }
            guard rest.count >= 2 else {
                throw Ack(.argument, "Incorrect number of filter arguments")
            }
            let value = rest[rest.startIndex + 1]
            parts.append(try SongFilter.legacyPair(tag: first, value: value, ignoringCase: ignoringCase))
            rest = rest.dropFirst(2)
        }
        return SongFilter.all(parts)
    }

    /// `parts` joined by AND, nested ANDs flattened (MPD's `Optimize`); a single part stays bare.
    static func all(_ parts: [SongFilter]) -> SongFilter {
        var flat: [SongFilter] = []
        for part in parts {
            if case .and(let inner) = part {
                flat.append(contentsOf: inner)
            } else {
                flat.append(part)
            }
        }
        return flat.count == 1 ? flat[0] : .and(flat)
    }

    /// One legacy pair: in `find` an exact, case-sensitive match of a whole value, in `search` a
    /// case-folded substring.
    static func legacyPair(tag: String, value: String, ignoringCase: Bool) throws(Ack) -> SongFilter {
        guard let type = FilterType(name: tag) else {
            throw Ack(.argument, "Unknown filter type")
        }
        let stringOperator: FilterOperator = ignoringCase ? .contains : .equals
        switch type {
        case .base:
            guard SongFilter.isSafeLocalURI(value) else {
                throw Ack(.argument, "Bad URI")
            }
            return .base(value)
        case .modifiedSince:
            return .modifiedSince(try FilterTimestamp.parse(value))
        case .addedSince:
            return .addedSince(try FilterTimestamp.parse(value))
        case .audioFormat:
            // MPD takes this pair for a tag that no song has; playerd reads it as `==` instead.
            return .audioFormat(try AudioFormatPattern(parsing: value, allowingMasks: false), exact: true)
        case .subject(let subject):
            return .compare(subject, stringOperator, value, ignoringCase: ignoringCase)
        }
    }

    /// MPD's `uri_safe_local`: relative, and no segment empty, `.` or `..`.
    static func isSafeLocalURI(_ uri: String) -> Bool {
        uri.utf8.split(separator: ASCII.slash, omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && !segment.elementsEqual([ASCII.period])
                && !segment.elementsEqual([ASCII.period, ASCII.period])
        }
    }
}

/// What the word before an operator names, as MPD's `locate_parse_type` reads it.
enum FilterType: Equatable {
    case subject(FilterSubject)
    case base
    case modifiedSince
    case addedSince
    case audioFormat

    /// `file`, `filename`, `any` and `AudioFormat` in any case; `base`, `modified-since` and
    /// `added-since` exactly; then the tag names, in any (ASCII) case.
    init?(name: String) {
        if FilterType.equalsIgnoringASCIICase(name, "file") || FilterType.equalsIgnoringASCIICase(name, "filename") {
            self = .subject(.file)
        } else if FilterType.equalsIgnoringASCIICase(name, "any") {
            self = .subject(.anyTag)
        } else if name == "base" {
            self = .base
        } else if name == "modified-since" {
            self = .modifiedSince
        } else if name == "added-since" {
            self = .addedSince
        } else if FilterType.equalsIgnoringASCIICase(name, "audioformat") {
            self = .audioFormat
        } else if let tag = FilterType.tag(named: name) {
            self = .subject(.tag(tag))
        } else {
            return nil
        }
    }

    /// A tag by name, ignoring ASCII case only: `TagName(name:)` lowercases by Unicode, which would
    /// let the Kelvin sign stand for a `k`.
    static func tag(named name: String) -> TagName? {
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else {
            return nil
        }
        return TagName(name: name)
    }

    static func equalsIgnoringASCIICase(_ text: String, _ lowercase: String) -> Bool {
        text.utf8.count == lowercase.utf8.count
            && zip(text.utf8, lowercase.utf8).allSatisfy { byte, expected in
                byte == expected || (byte >= 0x41 && byte <= 0x5A && byte + 0x20 == expected)
            }
    }
}

/// A recursive-descent reader of one expression over its UTF-8 bytes, following MPD's
/// `SongFilter::ParseExpression` step by step so that the same input fails with the same message.
struct ExpressionParser {
    private let bytes: [UInt8]
    private var index = 0
    private let ignoringCase: Bool

    init(_ expression: String, ignoringCase: Bool) {
        self.bytes = Array(expression.utf8)
        self.ignoringCase = ignoringCase
    }

    /// The byte at the cursor; 0 at the end, as C's terminator reads.
    var peek: UInt8 { self.index < self.bytes.count ? self.bytes[self.index] : 0 }

    var atEnd: Bool { self.index >= self.bytes.count }

    private func byte(at offset: Int) -> UInt8 {
        self.index + offset < self.bytes.count ? self.bytes[self.index + offset] : 0
    }

    /// MPD's `StripLeft`: skips control bytes and spaces.
    private mutating func stripLeft() {
        while self.index < self.bytes.count && self.bytes[self.index] >= 1 && self.bytes[self.index] <= ASCII.space {
            self.index += 1
        }
    }

    /// `(` ... `)` with the cursor on the `(`; leaves the cursor after the `)` and any blanks.
    mutating func expression(depth: Int) throws(Ack) -> SongFilter {
        guard depth <= SongFilter.maximumNestingDepth else {
            throw Ack(
                .argument, "Filter expression nested too deeply (more than \(SongFilter.maximumNestingDepth) levels)")
        }
        guard self.peek == ASCII.openParenthesis else {
            throw Ack(.argument, "'(' expected")
        }
        self.index += 1
        self.stripLeft()

        if self.peek == ASCII.openParenthesis {
            let first = try self.expression(depth: depth + 1)
            if try self.closeParenthesisIfPresent() {
                return first
            }
            try self.expectAnd()
            var items = [first]
            while true {
                // MPD skips this byte unchecked (an assertion); after a dangling `AND` it then finds no
                // word, which is what it says.
                if self.peek == ASCII.closeParenthesis || self.atEnd {
                    throw Ack(.argument, "Word expected")
                }
                items.append(try self.expression(depth: depth + 1))
                if try self.closeParenthesisIfPresent() {
                    return SongFilter.all(items)
                }
                try self.expectAnd()
            }
        }

        if self.peek == ASCII.exclamation {
            self.index += 1
            self.stripLeft()
            let inner = try self.expression(depth: depth + 1)
            try self.expectCloseParenthesis()
            return .not(inner)
        }

        let name = try self.word()
        guard let type = FilterType(name: name) else {
            throw Ack(.argument, "Unknown filter type: \(name)")
        }
        switch type {
        case .modifiedSince, .addedSince:
            let value = try self.quoted()
            try self.expectCloseParenthesis()
            let time = try FilterTimestamp.parse(value)
            return type == .modifiedSince ? .modifiedSince(time) : .addedSince(time)
        case .base:
            let value = try self.quoted()
            try self.expectCloseParenthesis()
            return .base(value)
        case .audioFormat:
            let mask: Bool
            if self.peek == ASCII.equals && self.byte(at: 1) == ASCII.equals {
                mask = false
            } else if self.peek == ASCII.equals && self.byte(at: 1) == ASCII.tilde {
                mask = true
            } else {
                throw Ack(.argument, "'==' or '=~' expected")
            }
            self.index += 2
            self.stripLeft()
            let pattern = try AudioFormatPattern(parsing: try self.quoted(), allowingMasks: mask)
            try self.expectCloseParenthesis()
            return .audioFormat(pattern, exact: !mask)
        case .subject(let subject):
            let (filterOperator, value) = try self.stringComparison()
            try self.expectCloseParenthesis()
            return .compare(subject, filterOperator, value, ignoringCase: self.ignoringCase)
        }
    }

    /// MPD's `ParseStringFilter`: `contains `, `starts_with ` (either in any case, a space after),
    /// `=~`, `!~`, `==`, `!=`, then the quoted value. Regular expressions are compiled here so that a
    /// bad one is refused with the request.
    private mutating func stringComparison() throws(Ack) -> (FilterOperator, String) {
        if self.skipPrefixIgnoringCase("contains ") {
            self.stripLeft()
            return (.contains, try self.quoted())
        }
        if self.skipPrefixIgnoringCase("starts_with ") {
            self.stripLeft()
            return (.startsWith, try self.quoted())
        }
        let first = self.peek
        let second = self.byte(at: 1)
        if (first == ASCII.exclamation || first == ASCII.equals) && second == ASCII.tilde {
            self.index += 2
            self.stripLeft()
            let pattern = try self.quoted()
            try FilterRegex.validate(pattern)
            return (first == ASCII.exclamation ? .notMatchesRegex : .matchesRegex, pattern)
        }
        if (first == ASCII.exclamation || first == ASCII.equals) && second == ASCII.equals {
            self.index += 2
            self.stripLeft()
            return (first == ASCII.exclamation ? .notEquals : .equals, try self.quoted())
        }
        throw Ack(.argument, "'==' or '!=' expected")
    }

    private mutating func skipPrefixIgnoringCase(_ lowercase: String) -> Bool {
        var offset = 0
        for expected in lowercase.utf8 {
            var byte = self.byte(at: offset)
            if byte >= 0x41 && byte <= 0x5A {
                byte += 0x20
            }
            guard byte == expected else {
                return false
            }
            offset += 1
        }
        self.index += offset
        return true
    }

    /// Consumes `)` and the blanks after it, if the cursor is on one.
    private mutating func closeParenthesisIfPresent() throws(Ack) -> Bool {
        guard self.peek == ASCII.closeParenthesis else {
            return false
        }
        self.index += 1
        self.stripLeft()
        return true
    }

    private mutating func expectCloseParenthesis() throws(Ack) {
        guard try self.closeParenthesisIfPresent() else {
            throw Ack(.argument, "')' expected")
        }
    }

    private mutating func expectAnd() throws(Ack) {
        guard try self.word() == "AND" else {
            throw Ack(.argument, "'AND' expected")
        }
    }

    /// MPD's `ExpectWord`: letters, digits, `_` and `-`, then blanks.
    private mutating func word() throws(Ack) -> String {
        let start = self.index
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            guard ASCII.isWordByte(byte) || byte == ASCII.minus else {
                break
            }
            self.index += 1
        }
        guard self.index > start else {
            throw Ack(.argument, "Word expected")
        }
        let word = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
        self.stripLeft()
        return word
    }

    /// MPD's `ExpectQuoted`: `'...'` or `"..."`, a backslash taking the next byte literally, then
    /// blanks.
    private mutating func quoted() throws(Ack) -> String {
        let quote = self.peek
        guard quote == ASCII.quote || quote == ASCII.apostrophe else {
            throw Ack(.argument, "Quoted string expected")
        }
        self.index += 1
        var value: [UInt8] = []
        while self.peek != quote {
            if self.peek == ASCII.backslash {
                self.index += 1
            }
            guard !self.atEnd else {
                throw Ack(.argument, "Closing quote not found")
            }
            value.append(self.bytes[self.index])
            self.index += 1
            guard value.count <= SongFilter.maximumQuotedValueBytes else {
                throw Ack(.argument, "Quoted value is too long")
            }
        }
        self.index += 1
        self.stripLeft()
        // The bytes came whole out of a String and only ASCII backslashes were dropped: still UTF-8.
        return String(decoding: value, as: UTF8.self)
    }
}

/// Regular expressions in filters: Swift's `Regex` (the standard library's, no Foundation), compiled
/// once to validate and again where they are evaluated.
enum FilterRegex {
    /// Refuses a pattern `Regex` cannot compile: `Error in regex: ...`.
    static func validate(_ pattern: String) throws(Ack) {
        _ = try FilterRegex.compile(pattern, ignoringCase: false)
    }

    static func compile(_ pattern: String, ignoringCase: Bool) throws(Ack) -> Regex<AnyRegexOutput> {
        do {
            let regex = try Regex(pattern)
            return ignoringCase ? regex.ignoresCase() : regex
        } catch {
            throw Ack(.argument, "Error in regex: \(error)")
        }
    }
}

extension ASCII {
    static let exclamation: UInt8 = 0x21
    static let openParenthesis: UInt8 = 0x28
    static let closeParenthesis: UInt8 = 0x29
    static let slash: UInt8 = 0x2F
    static let equals: UInt8 = 0x3D
    static let tilde: UInt8 = 0x7E
}
