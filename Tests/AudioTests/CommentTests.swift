import Foundation
import Testing

@testable import Audio

/// The comments `readcomments` lists (`SongReader.comments`): ID3v2 `TXXX` frames raw, and APEv2 items,
/// read as MPD 0.23 reads them; and APE tags that do not add up.
@Suite("Comments: TXXX frames and APE items")
struct CommentTests {
    @Test("TXXX frames in file order, untrimmed, the first value of each, empty ones kept")
    func userTextFrames() throws {
        let comments = try SongReader().comments(path: fixture("comments-id3v24.mp3"))
        #expect(comments.map(\.name).contains("MusicBrainz Album Id"))
        #expect(comments.first { $0.name == "CATALOG-NUMBER" }?.value == "ABC 123")
        #expect(comments.first { $0.name == "Latin" }?.value == "Café")
        #expect(comments.first { $0.name == "EMPTY" }?.value == "")
        #expect(comments.first { $0.name == "multi" }?.value == "one")
        #expect(comments.filter { $0.name == "MOOD" }.map(\.value) == ["calm", "  second mood "])
        #expect(comments.first { $0.name == "" }?.value == "no name")
        // COMM frames are no comments here, and no other frame is.
        #expect(!comments.contains { $0.value.contains("comment") })
        #expect(comments.count == 12)
    }

    @Test("APE text items come first, every value; TXXX follow unless an APE item is a known tag")
    func apeItems() throws {
        let plain = try SongReader().comments(path: fixture("comments-ape.mp3"))
        #expect(
            plain.map { "\($0.name)=\($0.value)" } == [
                "REPLAYGAIN_TRACK_GAIN=-3.20 dB", "MP3GAIN_MINMAX=112,167", "Multi=first", "Multi=second", "Empty=",
                "MOOD=from ID3",
            ])
        let titled = try SongReader().comments(path: fixture("comments-ape-title.mp3"))
        #expect(titled.map { "\($0.name)=\($0.value)" } == ["Title=Title from APE", "Mood=from APE"])
        // Files without an APE tag, or without any tag.
        #expect(try SongReader().comments(path: fixture("one-second.mp3")).isEmpty)
        #expect(try SongReader().comments(path: fixture("tagged-id3v1.mp3")).isEmpty)
    }

    @Test("APE items whose sizes do not add up end the walk; nothing is read past the tag")
    func brokenAPE() {
        func item(_ key: String, _ value: [UInt8], size: UInt32? = nil, flags: UInt32 = 0) -> [UInt8] {
            let size = size ?? UInt32(value.count)
            return withUnsafeBytes(of: size.littleEndian, Array.init)
                + withUnsafeBytes(of: flags.littleEndian, Array.init)
                + Array(key.utf8) + [0] + value
        }
        let good = item("Artist", Array("Somebody".utf8))
        #expect(APETags.items(in: good, count: 1) == [APETags.Item(key: "Artist", values: ["Somebody"], isText: true)])
        // A value claiming more bytes than the tag holds, a key without its NUL, a count past the items.
        #expect(APETags.items(in: good + item("Huge", [1, 2, 3], size: .max), count: 2).count == 1)
        #expect(APETags.items(in: good + Array("NoTerminatorAtAll".utf8), count: 2).count == 1)
        #expect(APETags.items(in: good, count: Int(UInt32.max)).count == 1)
        #expect(APETags.items(in: [], count: 5).isEmpty)
        #expect(APETags.isKnownTag("album artist") && APETags.isKnownTag("YEAR") && APETags.isKnownTag("title"))
        #expect(!APETags.isKnownTag("REPLAYGAIN_TRACK_GAIN") && !APETags.isKnownTag("Mood"))
    }
}
