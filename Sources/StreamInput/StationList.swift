/// One entry of a station list: the address and, when the list names it, a title.
public struct StationListEntry: Sendable, Equatable {
    public var url: String
    public var title: String?

    public init(url: String, title: String? = nil) {
        self.url = url
        self.title = title
    }
}

/// Station lists: m3u, extended m3u (`#EXTINF:secs,Title`), pls (`FileN`/`TitleN`/`LengthN`).
public enum StationList {
    /// Entries read from one list, at most.
    public static let maxEntries = 4096
    /// A line longer than this is junk and ignored.
    public static let maxLineLength = 8192

    /// Parses a list's text (m3u, extended m3u or pls, told apart by the text; CRLF or LF; a BOM
    /// ignored); relative entries are resolved against `base` (the list's URL, or the directory
    /// holding it). Comments, blank lines and junk are ignored; at most `maxEntries` entries.
    public static func parse(_ text: String, base: String?) -> [StationListEntry] {
        var body = Substring(text)
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        let lines = body.split(
            omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        )
        .lazy.filter { $0.utf8.count <= maxLineLength }.map { $0.trimmingWhitespace() }
        let isPLS = lines.contains { line in
            let lowered = line.lowercased()
            return lowered == "[playlist]" || (lowered.hasPrefix("file") && lowered.contains("="))
        }
        let entries = isPLS ? parsePLS(lines) : parseM3U(lines)
        return entries.prefix(maxEntries).compactMap { entry in
            guard let url = resolve(entry.url, base: base) else { return nil }
            return StationListEntry(url: url, title: entry.title)
        }
    }

    private static func parseM3U(_ lines: some Sequence<String>) -> [StationListEntry] {
        var entries: [StationListEntry] = []
        var title: String?
        for line in lines where !line.isEmpty {
            if entries.count >= maxEntries { break }
            if line.hasPrefix("#") {
                if line.uppercased().hasPrefix("#EXTINF:") {
                    title = extinfTitle(line.dropFirst(8))
                }
                continue
            }
            guard !line.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                title = nil
                continue
            }
            entries.append(StationListEntry(url: line, title: title))
            title = nil
        }
        return entries
    }

    /// The title of `#EXTINF:secs[ attributes],Title`: after the first comma outside quotes.
    private static func extinfTitle(_ rest: Substring) -> String? {
        var quoted = false
        for index in rest.indices {
            let character = rest[index]
            if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                let title = rest[rest.index(after: index)...].trimmingWhitespace()
                return title.isEmpty ? nil : title
            }
        }
        return nil
    }

    private static func parsePLS(_ lines: some Sequence<String>) -> [StationListEntry] {
        var files: [Int: String] = [:]
        var titles: [Int: String] = [:]
        for line in lines {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace().lowercased()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            if key.hasPrefix("file"), let number = Int(key.dropFirst(4)), number >= 0, !value.isEmpty {
                if files.count < maxEntries || files[number] != nil { files[number] = value }
            } else if key.hasPrefix("title"), let number = Int(key.dropFirst(5)), !value.isEmpty {
                if titles.count < maxEntries || titles[number] != nil { titles[number] = value }
            }
        }
        return files.keys.sorted().compactMap { number in
            let url = files[number]!
            guard !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
            return StationListEntry(url: url, title: titles[number])
        }
    }

    /// An entry as an absolute URL or path: an entry with a scheme stays as it is; a relative one is
    /// resolved against the list's URL or directory.
    static func resolve(_ entry: String, base: String?) -> String? {
        if entry.contains("://") || entry.lowercased().hasPrefix("file:") { return entry }
        guard let base, !base.isEmpty else { return entry }
        if base.contains("://") {
            guard let url = StreamURL(base) else { return entry.hasPrefix("/") ? entry : nil }
            return url.resolving(entry)?.description
        }
        if entry.hasPrefix("/") { return entry }
        return base.hasSuffix("/") ? base + entry : base + "/" + entry
    }

    /// Whether a name or URL looks like a station list: it ends (before any query) with .m3u, .m3u8
    /// or .pls.
    public static func isList(name: String) -> Bool {
        var lowered = Substring(name.lowercased())
        if lowered.contains("://"), let cut = lowered.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            lowered = lowered[..<cut]
        }
        return lowered.hasSuffix(".m3u") || lowered.hasSuffix(".m3u8") || lowered.hasSuffix(".pls")
    }

    /// Whether a content type is a station list's: audio/x-mpegurl, audio/mpegurl,
    /// application/vnd.apple.mpegurl, application/x-mpegurl, audio/x-scpls (parameters ignored).
    public static func isList(contentType: String) -> Bool {
        let type = mediaType(contentType)
        return [
            "audio/x-mpegurl", "audio/mpegurl", "application/vnd.apple.mpegurl", "application/x-mpegurl",
            "audio/x-scpls", "application/pls+xml",
        ].contains(type)
    }
}

/// A Content-Type's media type: lowercased, without parameters or spaces.
func mediaType(_ contentType: String) -> String {
    let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    return type.trimmingWhitespace().lowercased()
}
