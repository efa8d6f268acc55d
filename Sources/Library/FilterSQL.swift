import ControlProtocol
import Foundation
import GRDB
import MusicTags

/// Turns a parsed song filter into an SQL condition over `song s` (joined to `directory d`), with its
/// arguments.
///
/// Tags are matched through the `tag` table, which holds each song's values and, marked as fallbacks,
/// the values MPD falls back to (AlbumArtist to Artist ...), so `find albumartist X` matches a song
/// that only has Artist X, as in MPD. Case-folded substring searches of three characters or more use
/// the trigram full-text index over folded text; shorter ones scan the folded values.
struct FilterSQL: Equatable, CustomStringConvertible {
    var sql: String
    var arguments: [DatabaseValue]

    var description: String { "\(self.sql) \(self.arguments)" }

    static let always = FilterSQL(sql: "1", arguments: [])

    /// The condition for `filter`; nil (no filter) matches every song.
    static func condition(_ filter: SongFilter?) -> FilterSQL {
        guard let filter else { return .always }
        switch filter {
        case .compare(let subject, let comparison, let value, let ignoringCase):
            return self.compare(subject, comparison, value, ignoringCase: ignoringCase)
        case .base(let directory):
            var base = directory
            while base.hasSuffix("/") { base.removeLast() }
            guard !base.isEmpty else { return .always }
            // Inside the directory, or that song itself (MPD's `base` naming a song finds it).
            return FilterSQL(
                sql: "(s.uri = ? OR (s.uri >= ? AND s.uri < ?))",
                arguments: [base.databaseValue, (base + "/").databaseValue, (base + "0").databaseValue])
        case .modifiedSince(let time):
            return FilterSQL(sql: "s.mtime >= ?", arguments: [time.databaseValue])
        case .addedSince(let time):
            return FilterSQL(sql: "s.added >= ?", arguments: [time.databaseValue])
        case .audioFormat(let pattern, _):
            var parts: [String] = []
            var arguments: [DatabaseValue] = []
            if let rate = pattern.sampleRate {
                parts.append("s.sample_rate = ?")
                arguments.append(rate.databaseValue)
            }
            if let bits = pattern.bits {
                // 16, 24, 32, or `AudioFormatPattern.floatBits` (`f`), as `Format:` shows them.
                parts.append("s.bits = ?")
                arguments.append(bits.databaseValue)
            }
            if let channels = pattern.channels {
                parts.append("s.channels = ?")
                arguments.append(channels.databaseValue)
            }
            return parts.isEmpty
                ? .always : FilterSQL(sql: "(" + parts.joined(separator: " AND ") + ")", arguments: arguments)
        case .not(let inner):
            let condition = Self.condition(inner)
            return FilterSQL(sql: "NOT (\(condition.sql))", arguments: condition.arguments)
        case .and(let parts):
            guard !parts.isEmpty else { return .always }
            let conditions = parts.map { Self.condition($0) }
            return FilterSQL(
                sql: "(" + conditions.map(\.sql).joined(separator: " AND ") + ")",
                arguments: conditions.flatMap(\.arguments))
        }
    }

    private static func compare(
        _ subject: FilterSubject, _ comparison: FilterOperator, _ value: String, ignoringCase: Bool
    ) -> FilterSQL {
        let needle = ignoringCase ? TextFolding.fold(value) : value
        if case .file = subject {
            return self.compareURI(comparison, value: value, needle: needle, ignoringCase: ignoringCase)
        }
        var tag: TagName?
        if case .tag(let name) = subject { tag = name }
        let column = ignoringCase ? "folded" : "value"
        // `song IN (SELECT song FROM tag WHERE ...)`, with the tag's name when one is named.
        func songs(where condition: String, _ arguments: [DatabaseValue]) -> FilterSQL {
            if let tag {
                return FilterSQL(
                    sql: "s.id IN (SELECT song FROM tag WHERE name = ? AND \(condition))",
                    arguments: [tag.order.databaseValue] + arguments)
            }
            return FilterSQL(sql: "s.id IN (SELECT song FROM tag WHERE \(condition))", arguments: arguments)
        }
        func negated(_ condition: FilterSQL) -> FilterSQL {
            FilterSQL(sql: "NOT (\(condition.sql))", arguments: condition.arguments)
        }
        switch comparison {
        case .equals, .notEquals:
            let equals: FilterSQL
            if value.isEmpty {
                // An empty value stands for "the song lacks the tag".
                let present = tag.map {
                    FilterSQL(sql: "s.id IN (SELECT song FROM tag WHERE name = ?)", arguments: [$0.order.databaseValue])
                }
                equals = present.map(negated) ?? FilterSQL(sql: "s.id NOT IN (SELECT song FROM tag)", arguments: [])
            } else {
                equals = songs(where: "\(column) = ?", [needle.databaseValue])
            }
            return comparison == .equals ? equals : negated(equals)
        case .contains:
            if ignoringCase && needle.unicodeScalars.count >= 3 {
                let phrase = "\"" + needle.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let match = tag.map { "{\(LibraryDatabase.textColumn($0))} : \(phrase)" } ?? phrase
                return FilterSQL(
                    sql: "s.id IN (SELECT rowid FROM song_text WHERE song_text MATCH ?)",
                    arguments: [match.databaseValue])
            }
            return songs(where: "instr(\(column), ?) > 0", [needle.databaseValue])
        case .startsWith:
            return songs(where: "substr(\(column), 1, length(?)) = ?", [needle.databaseValue, needle.databaseValue])
        case .matchesRegex, .notMatchesRegex:
            let pattern = ignoringCase ? "(?i)" + value : value
            let matches = songs(where: "regexp(?, value)", [pattern.databaseValue])
            return comparison == .matchesRegex ? matches : negated(matches)
        }
    }

    private static func compareURI(
        _ comparison: FilterOperator, value: String, needle: String, ignoringCase: Bool
    ) -> FilterSQL {
        let uri = ignoringCase ? "fold(s.uri)" : "s.uri"
        if ignoringCase, comparison == .contains, !needle.contains("/") {
            // A needle without "/" lies in the directory's path or in the file's name, never across the
            // two: each directory is folded once, not once per song in it, and the names were folded
            // when they were written (folding every path at each search made it 3x mpd's).
            return FilterSQL(
                sql: "(s.directory IN (SELECT id FROM directory WHERE instr(fold(uri), ?) > 0)"
                    + " OR s.id IN (SELECT id FROM song_folded_name WHERE instr(folded, ?) > 0))",
                arguments: [needle.databaseValue, needle.databaseValue])
        }
        switch comparison {
        case .equals: return FilterSQL(sql: "\(uri) = ?", arguments: [needle.databaseValue])
        case .notEquals: return FilterSQL(sql: "\(uri) != ?", arguments: [needle.databaseValue])
        case .contains: return FilterSQL(sql: "instr(\(uri), ?) > 0", arguments: [needle.databaseValue])
        case .startsWith:
            return FilterSQL(
                sql: "substr(\(uri), 1, length(?)) = ?", arguments: [needle.databaseValue, needle.databaseValue])
        case .matchesRegex, .notMatchesRegex:
            let pattern = ignoringCase ? "(?i)" + value : value
            let sql = comparison == .matchesRegex ? "regexp(?, s.uri)" : "NOT regexp(?, s.uri)"
            return FilterSQL(sql: sql, arguments: [pattern.databaseValue])
        }
    }

    /// The ORDER BY clause for `sort` (nil: MPD's listing order, directory by directory).
    static func order(_ sort: ControlProtocol.SortOrder?) -> FilterSQL {
        let listing = "d.position, s.listing"
        guard let sort else { return FilterSQL(sql: listing, arguments: []) }
        let direction = sort.descending ? " DESC" : ""
        switch sort.key {
        case .lastModified:
            return FilterSQL(sql: "s.mtime\(direction), \(listing)", arguments: [])
        case .added:
            return FilterSQL(sql: "s.added\(direction), \(listing)", arguments: [])
        case .tag(let tag):
            // As MPD 0.23 sorts (`CompareTags`): Disc and Track as numbers ("3/12" as 3, "10" after "9"),
            // every other tag by its bytes (`strcmp`: case and accents count); a song without the tag
            // as "" (0), ties in listing order.
            let numeric: Set<TagName> = [.track, .disc]
            let value = numeric.contains(tag) ? "CAST(value AS INTEGER)" : "value"
            let none = numeric.contains(tag) ? "0" : "''"
            return FilterSQL(
                sql:
                    "coalesce((SELECT \(value) FROM tag WHERE song = s.id AND name = ? ORDER BY rowid LIMIT 1), \(none))"
                    + "\(direction), \(listing)",
                arguments: [tag.order.databaseValue])
        }
    }
}
