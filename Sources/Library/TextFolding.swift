import Foundation

/// Case- and accent-folded text, which `search` compares and the full-text index holds: "Beyoncé" and
/// "BEYONCE" both fold to "beyonce". This SQLite has no ICU (its `LIKE` folds ASCII only), so text is
/// folded here, in Swift, before it is stored or compared.
public enum TextFolding {
    /// `text` lowercased, without diacritics, with compatibility forms (ligatures, full-width letters)
    /// spelled out.
    public static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII, most tags: lowercasing is all there is to do, and far cheaper.
            return text.lowercased()
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}
