import Testing

@testable import Library

@Suite struct TextFoldingTests {
    @Test(arguments: [
        ("Beyoncé", "beyonce"), ("MOTÖRHEAD", "motorhead"), ("Straße", "strasse"), ("ﬁve", "five"),
        ("Ελληνικά", "ελληνικα"), ("AC/DC", "ac/dc"), ("日本語", "日本語"), ("", ""),
    ])
    func folds(_ text: String, _ folded: String) {
        #expect(TextFolding.fold(text) == folded)
    }
}
