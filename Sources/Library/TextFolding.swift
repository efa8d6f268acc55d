import Foundation

/// Case- and accent-folded text, which `search` compares and the full-text index holds: "Beyoncé" and
/// "BEYONCE" both fold to "beyonce". This SQLite has no ICU (its `LIKE` folds ASCII only), so text is
/// folded here, in Swift, before it is stored or compared.
public enum TextFolding {
    /// `text` lowercased, without diacritics, with compatibility forms (ligatures, full-width letters)
    /// spelled out.
    public static func fold(_ text: String) -> String {
        if Self.isASCII(text) {
            // ASCII, most tags: lowercasing is all there is to do, and far cheaper.
            return text.lowercased()
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    static func isASCII(_ text: String) -> Bool { text.utf8.allSatisfy { $0 < 0x80 } }
}

/// Remembers the folds of text that is not ASCII, for a scan: a library's artists, albums and genres
/// come back song after song (and a song's Artist is folded again as its AlbumArtist and *Sort
/// fallbacks), and Foundation's folding was a quarter of the time a scan spent reading a file.
struct FoldingMemo {
    private var folded: [String: String] = [:]
    /// Enough for the artists and albums of the directories one thread reads in a batch.
    static let capacity = 4096

    mutating func fold(_ text: String) -> String {
        if TextFolding.isASCII(text) { return text.lowercased() }
        if let known = self.folded[text] { return known }
        if self.folded.count >= Self.capacity { self.folded.removeAll(keepingCapacity: true) }
        let result = TextFolding.fold(text)
        self.folded[text] = result
        return result
    }
}
