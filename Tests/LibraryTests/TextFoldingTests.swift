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

@Suite struct FoldingMemoTests {
    @Test func foldsAsTextFoldingDoesAcrossItsCapacity() {
        var memo = FoldingMemo()
        let texts = ["Beyoncé", "MOTÖRHEAD", "AC/DC", "Straße", "ﬁve", ""]
        for text in texts + texts {
            #expect(memo.fold(text) == TextFolding.fold(text))
        }
        // More distinct values than the memo keeps: it starts again, and what it remembered is
        // folded afresh, the same.
        for index in 0..<(FoldingMemo.capacity + 10) {
            let text = "Ärzte \(index)"
            #expect(memo.fold(text) == "arzte \(index)")
        }
        #expect(memo.fold("Beyoncé") == "beyonce")
        #expect(memo.fold("Ärzte 1") == "arzte 1")
    }
}

@Suite struct TagValueCleaningTests {
    @Test(arguments: [
        ("Plain", "Plain"), ("  padded  ", "padded"), ("two\nlines", "two lines"), ("tab\there", "tab here"),
        ("   ", ""), ("Beyoncé ", "Beyoncé"),
    ])
    func cleans(_ value: String, _ cleaned: String) {
        #expect(SongRecord.cleanedValue(value) == cleaned)
    }

    @Test func cutsLongValuesOnACharacterBoundary() {
        let long = String(repeating: "é", count: 3_000)  // 6,000 bytes
        let cut = SongRecord.cleanedValue(long)
        #expect(cut.utf8.count <= SongRecord.maximumValueBytes)
        #expect(cut.utf8.count >= SongRecord.maximumValueBytes - 1)
        #expect(cut.allSatisfy { $0 == "é" })
    }
}
