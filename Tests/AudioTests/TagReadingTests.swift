import Foundation
import MusicTags
import Testing

@testable import Audio

// MARK: - Building tags byte by byte

/// A text encoding of ID3v2 (the frame's first byte).
enum TextEncoding: UInt8 {
    case latin1 = 0
    case utf16 = 1
    case utf16BigEndian = 2
    case utf8 = 3

    /// `strings` encoded and separated by NUL (two bytes in UTF-16), each UTF-16 string with a BOM.
    func encode(_ strings: [String]) -> [UInt8] {
        let encoded = strings.map { string -> [UInt8] in
            switch self {
            case .latin1: string.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
            case .utf8: Array(string.utf8)
            case .utf16: [0xFF, 0xFE] + string.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            case .utf16BigEndian: string.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            }
        }
        let separator: [UInt8] = self == .utf16 || self == .utf16BigEndian ? [0, 0] : [0]
        return Array(encoded.joined(separator: separator))
    }

    var terminator: [UInt8] { self == .utf16 || self == .utf16BigEndian ? [0, 0] : [0] }
}

/// Builds ID3v2.2, 2.3 and 2.4 tags: a header and frames, sizes written as each version writes them.
struct ID3v2 {
    var major: UInt8
    var flags: UInt8 = 0
    var frames: [[UInt8]] = []
    var padding = 0

    static func syncsafe(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }

    /// A frame with `data` as its body; `size` overrides the size written in the header (to lie).
    func frame(_ id: String, _ data: [UInt8], size: Int? = nil, frameFlags: [UInt8] = [0, 0]) -> [UInt8] {
        let declared = size ?? data.count
        switch self.major {
        case 2:
            return Array(id.utf8) + [UInt8(declared >> 16 & 0xFF), UInt8(declared >> 8 & 0xFF), UInt8(declared & 0xFF)]
                + data
        case 3:
            return Array(id.utf8) + withUnsafeBytes(of: UInt32(declared).bigEndian, Array.init) + frameFlags + data
        default:
            return Array(id.utf8) + Self.syncsafe(declared) + frameFlags + data
        }
    }

    /// A text frame (`T???`) holding `values` in `encoding`.
    mutating func text(_ id: String, _ values: String..., encoding: TextEncoding = .utf8) {
        self.frames.append(self.frame(id, [encoding.rawValue] + encoding.encode(values)))
    }

    /// A `TXXX` frame: a description, then the values.
    mutating func userText(_ description: String, _ values: String..., encoding: TextEncoding = .utf8) {
        self.frames.append(
            self.frame(
                "TXXX",
                [encoding.rawValue] + encoding.encode([description]) + encoding.terminator + encoding.encode(values)))
    }

    /// A `COMM` frame.
    mutating func comment(_ text: String, description: String = "", encoding: TextEncoding = .utf8) {
        self.frames.append(
            self.frame(
                "COMM",
                [encoding.rawValue] + Array("eng".utf8) + encoding.encode([description]) + encoding.terminator
                    + encoding.encode([text])))
    }

    /// A `UFID` frame.
    mutating func uniqueFileID(owner: String, _ identifier: String) {
        self.frames.append(
            self.frame(self.major == 2 ? "UFI" : "UFID", Array(owner.utf8) + [0] + Array(identifier.utf8)))
    }

    /// An `APIC` frame (v2.3/2.4).
    mutating func picture(mimeType: String, type: UInt8, data: [UInt8], description: String = "") {
        self.frames.append(
            self.frame("APIC", [3] + Array(mimeType.utf8) + [0, type] + Array(description.utf8) + [0] + data))
    }

    /// The whole tag; `size` overrides the tag size in the header.
    func bytes(size: Int? = nil) -> [UInt8] {
        let body = Array(self.frames.joined()) + [UInt8](repeating: 0, count: self.padding)
        return Array("ID3".utf8) + [self.major, 0, self.flags] + Self.syncsafe(size ?? body.count) + body
    }
}

/// An ID3v1.1 tag (128 bytes).
func id3v1(
    title: String = "", artist: String = "", album: String = "", year: String = "", comment: String = "",
    track: UInt8 = 0, genre: UInt8 = 255
) -> [UInt8] {
    func field(_ text: String, _ length: Int) -> [UInt8] {
        let bytes = text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }.prefix(length)
        return Array(bytes) + [UInt8](repeating: 0, count: length - bytes.count)
    }
    let commentField = track == 0 ? field(comment, 30) : field(comment, 28) + [0, track]
    return Array("TAG".utf8) + field(title, 30) + field(artist, 30) + field(album, 30) + field(year, 4)
        + commentField + [genre]
}

/// The bytes of Fixtures/one-second.mp3 (tag-less), read once.
let oneSecondAudio = [UInt8](FileManager.default.contents(atPath: fixture("one-second.mp3"))!)

/// Writes `prefix` + one-second.mp3 + `suffix` into a file of `directory` and returns its path.
func writeSong(_ prefix: [UInt8], suffix: [UInt8] = [], in directory: ScratchDirectory, name: String = "song.mp3")
    -> String
{
    let path = directory.path(name)
    _ = FileManager.default.createFile(atPath: path, contents: Data(prefix + oneSecondAudio + suffix))
    return path
}

/// Reads the tags of a file made of `tag` + one-second.mp3 + `suffix`.
func tags(of tag: [UInt8], suffix: [UInt8] = []) throws -> Tags {
    let directory = try ScratchDirectory()
    return try SongReader().read(path: writeSong(tag, suffix: suffix, in: directory)).tags
}

/// A small deterministic generator (SplitMix64) for the fuzz test.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: - The mapping

@Suite("Tag reading: every frame MPD maps")
struct TagMappingTests {
    @Test("maps every ID3v2.4 text frame, TXXX MusicBrainz ids, UFID and COMM as MPD does")
    func everyFrameV24() throws {
        var tag = ID3v2(major: 4)
        tag.text("TPE1", "Artist")
        tag.text("TPE2", "Album Artist")
        tag.text("TALB", "Album")
        tag.text("TIT2", "Title")
        tag.text("TRCK", "3/12")
        tag.text("TPOS", "1/2")
        tag.text("TCON", "Synthpop")
        tag.text("TDRC", "2021-05-04")
        tag.text("TDOR", "1999")
        tag.text("TCOM", "Composer")
        tag.text("TPE3", "Conductor")
        tag.text("TPE4", "Remixer")
        tag.text("TIT1", "Grouping")
        tag.text("TPUB", "Label")
        tag.text("TSOP", "Artist, The")
        tag.text("TSOA", "Album, The")
        tag.text("TSO2", "Album Artist, The")
        tag.text("TSOC", "Composer, The")
        tag.text("TLEN", "1000")  // not a tag
        tag.text("TMCL", "piano", "Someone")  // MPD maps neither TMCL nor TIPL nor TOPE
        tag.text("TOPE", "Original")
        tag.comment("A comment")
        tag.userText("MusicBrainz Artist Id", "a-1")
        tag.userText("MusicBrainz Album Id", "b-2")
        tag.userText("MusicBrainz Album Artist Id", "c-3")
        tag.userText("MusicBrainz Release Track Id", "d-4")
        tag.userText("MusicBrainz Work Id", "e-5")
        tag.userText("MusicBrainz Release Group Id", "f-6")  // no such tag here
        tag.userText("replaygain_track_gain", "-6.5 dB")
        tag.uniqueFileID(owner: "http://musicbrainz.org", "track-7")
        tag.uniqueFileID(owner: "http://example.org", "other")
        let read = try tags(of: tag.bytes())
        let expected: [TagName: [String]] = [
            .artist: ["Artist"], .albumArtist: ["Album Artist"], .album: ["Album"], .title: ["Title"],
            .track: ["3/12"], .disc: ["1/2"], .genre: ["Synthpop"], .date: ["2021-05-04"],
            .originalDate: ["1999"], .composer: ["Composer"], .conductor: ["Conductor"], .performer: ["Remixer"],
            .grouping: ["Grouping"], .label: ["Label"], .artistSort: ["Artist, The"], .albumSort: ["Album, The"],
            .albumArtistSort: ["Album Artist, The"], .composerSort: ["Composer, The"], .comment: ["A comment"],
            .musicBrainzArtistID: ["a-1"], .musicBrainzAlbumID: ["b-2"], .musicBrainzAlbumArtistID: ["c-3"],
            .musicBrainzReleaseTrackID: ["d-4"], .musicBrainzWorkID: ["e-5"], .musicBrainzTrackID: ["track-7"],
        ]
        #expect(Set(read.names) == Set(expected.keys))
        for (name, values) in expected {
            #expect(read[name] == values, "\(name)")
        }
    }

    @Test("reads ID3v2.3 in UTF-16: TYER and TORY give Date and OriginalDate")
    func v23() throws {
        var tag = ID3v2(major: 3)
        tag.text("TPE1", "Björk", encoding: .utf16)
        tag.text("TIT2", "日本語 ☃", encoding: .utf16)
        tag.text("TYER", "1997", encoding: .utf16)
        tag.text("TORY", "1995", encoding: .latin1)
        tag.text("TCON", "(17)", encoding: .latin1)
        tag.userText("ALBUMARTISTSORT", "Sort, The", encoding: .utf16)
        tag.userText("MusicBrainz Track Id", "t-1", encoding: .latin1)
        tag.comment("Ünïcødé", description: "", encoding: .utf16)
        tag.uniqueFileID(owner: "http://musicbrainz.org", "t-1")  // the same id twice is one value
        let read = try tags(of: tag.bytes())
        #expect(read.artist == "Björk")
        #expect(read.title == "日本語 ☃")
        #expect(read.date == "1997")
        #expect(read[.originalDate] == ["1995"])
        #expect(read.genre == "Rock")
        #expect(read[.albumArtistSort] == ["Sort, The"])
        #expect(read[.musicBrainzTrackID] == ["t-1"])
        #expect(read[.comment] == ["Ünïcødé"])
    }

    @Test("TDRC wins over TYER, TDOR over TORY")
    func newerDateFrames() throws {
        var tag = ID3v2(major: 4)
        tag.text("TYER", "1990")
        tag.text("TDRC", "2020-01-02")
        tag.text("TORY", "1980")
        tag.text("TDOR", "1981")
        let read = try tags(of: tag.bytes())
        #expect(read[.date] == ["2020-01-02"])
        #expect(read[.originalDate] == ["1981"])
    }

    @Test("reads ID3v2.2: three-letter frames and UFI")
    func v22() throws {
        var tag = ID3v2(major: 2)
        tag.frames.append(tag.frame("TP1", [0] + Array("Old Artist".utf8)))
        tag.frames.append(tag.frame("TT2", [0] + Array("Old Title".utf8)))
        tag.frames.append(tag.frame("TYE", [0] + Array("1985".utf8)))
        tag.frames.append(tag.frame("TPA", [0] + Array("2".utf8)))
        tag.uniqueFileID(owner: "http://musicbrainz.org", "old-id")
        let read = try tags(of: tag.bytes())
        #expect(read.artist == "Old Artist")
        #expect(read.title == "Old Title")
        #expect(read.date == "1985")
        #expect(read[.disc] == ["2"])
        #expect(read[.musicBrainzTrackID] == ["old-id"])
    }

    @Test("COMM: every comment, iTunes' data comments left out")
    func comments() throws {
        var tag = ID3v2(major: 3)
        tag.comment(" 00000A2C 00000B1D", description: "iTunNORM", encoding: .latin1)
        tag.comment("First", encoding: .latin1)
        tag.comment("Second", description: "note", encoding: .utf16)
        #expect(try tags(of: tag.bytes())[.comment] == ["First", "Second"])
    }

    @Test("ID3v1 fills the tags ID3v2 lacks; ID3v2 wins where both have one")
    func v1FillIn() throws {
        var tag = ID3v2(major: 4)
        tag.text("TIT2", "V2 Title")
        let v1 = id3v1(
            title: "V1 Title", artist: "Motörhead", album: "Album", year: "1999", comment: "v1 note", track: 5,
            genre: 17)
        let read = try tags(of: tag.bytes(), suffix: v1)
        #expect(read.title == "V2 Title")
        #expect(read.artist == "Motörhead")
        #expect(read.album == "Album")
        #expect(read.date == "1999")
        #expect(read.track == "5")
        #expect(read.genre == "Rock")
        #expect(read[.comment] == ["v1 note"])
        let only = try tags(of: [], suffix: id3v1(title: "Only V1", comment: "thirty characters of comment!!"))
        #expect(only.title == "Only V1")
        #expect(only[.comment] == ["thirty characters of comment!!"])
        #expect(only.track == nil)
    }

    @Test(
        "resolves TCON references into genres",
        arguments: [
            ("(17)(6)", ["Rock", "Grunge"]), ("(13)Pop music", ["Pop music"]), ("((Foo)", ["(Foo)"]),
            ("17", ["Rock"]), ("(RX)(CR)", ["Remix", "Cover"]), ("(999)", ["(999)"]), ("Jazz", ["Jazz"]),
            ("(17", ["(17"]), ("", [""]),
        ])
    func genreLists(_ value: String, _ expected: [String]) {
        #expect(ID3Genre.resolveAll(value) == expected)
    }

    @Test("a v2.4 TCON with several values, numeric ones resolved")
    func genreValues() throws {
        var tag = ID3v2(major: 4)
        tag.text("TCON", "17", "Shoegaze", "(8)")
        #expect(try tags(of: tag.bytes())[.genre] == ["Rock", "Shoegaze", "Jazz"])
    }
}

// MARK: - Several values

@Suite("Tag reading: several values")
struct MultiValueTests {
    @Test(
        "an ID3v2.4 frame's NUL-separated strings are separate values, in every encoding",
        arguments: [
            TextEncoding.utf8, .latin1, .utf16, .utf16BigEndian,
        ])
    func nulSeparated(_ encoding: TextEncoding) throws {
        var tag = ID3v2(major: 4)
        tag.text("TPE1", "Alpha", "Béta", encoding: encoding)
        tag.userText("MusicBrainz Artist Id", "id-1", "id-2", encoding: encoding)
        // A frame that ends in its own terminator, as some taggers write.
        tag.frames.append(tag.frame("TCOM", [encoding.rawValue] + encoding.encode(["Gamma"]) + encoding.terminator))
        let read = try tags(of: tag.bytes())
        #expect(read[.artist] == ["Alpha", "Béta"])
        #expect(read[.musicBrainzArtistID] == ["id-1", "id-2"])
        #expect(read[.composer] == ["Gamma"])
    }

    @Test("several frames of one id are several values, in file order")
    func repeatedFrames() throws {
        var tag = ID3v2(major: 3)
        tag.text("TPE1", "First", encoding: .utf16)
        tag.text("TIT2", "Title", encoding: .utf16)
        tag.text("TPE1", "Second", encoding: .latin1)
        tag.userText("MusicBrainz Album Id", "x")
        tag.userText("MusicBrainz Album Id", "y")
        let read = try tags(of: tag.bytes())
        #expect(read[.artist] == ["First", "Second"])
        #expect(read[.musicBrainzAlbumID] == ["x", "y"])
    }

    @Test("'/' and ';' are not separators; spaces around a value are stripped, empty values dropped")
    func noSplittingOnPunctuation() throws {
        var tag = ID3v2(major: 4)
        tag.text("TPE1", "AC/DC", " Earth; Wind & Fire ", "", "   ")
        tag.text("TIT2", "")
        let read = try tags(of: tag.bytes())
        #expect(read[.artist] == ["AC/DC", "Earth; Wind & Fire"])
        #expect(read[.title].isEmpty)
    }
}

// MARK: - Bad tags

@Suite("Tag reading: garbage, lies and huge tags")
struct BadTagTests {
    @Test("invalid UTF-8 and a broken UTF-16 surrogate become U+FFFD")
    func invalidText() throws {
        var tag = ID3v2(major: 4)
        tag.frames.append(tag.frame("TPE1", [3, 0x41, 0xFF, 0xFE, 0x42, 0xC3]))
        tag.frames.append(tag.frame("TIT2", [1, 0xFF, 0xFE, 0x41, 0x00, 0x00, 0xD8, 0x42, 0x00]))
        let read = try tags(of: tag.bytes())
        #expect(read.artist == "A\u{FFFD}\u{FFFD}B\u{FFFD}")
        #expect(read.title == "A\u{FFFD}B")
    }

    @Test("an unknown encoding, empty frames, a frame that is only its encoding byte")
    func emptyAndUnknown() throws {
        var tag = ID3v2(major: 4)
        tag.frames.append(tag.frame("TPE1", [7] + Array("Nope".utf8)))
        tag.frames.append(tag.frame("TALB", []))
        tag.frames.append(tag.frame("TIT2", [3]))
        tag.frames.append(tag.frame("TXXX", [3]))
        tag.frames.append(tag.frame("COMM", [3, 0x65]))
        tag.frames.append(tag.frame("UFID", []))
        tag.text("TCOM", "Still here")
        let read = try tags(of: tag.bytes())
        #expect(read.names == [.composer])
    }

    @Test("a frame claiming more bytes than the tag has ends the tag; what came before is kept")
    func lyingFrameSize() throws {
        for major: UInt8 in [2, 3, 4] {
            var tag = ID3v2(major: major)
            tag.frames.append(tag.frame(major == 2 ? "TT2" : "TIT2", [0] + Array("Kept".utf8)))
            tag.frames.append(tag.frame(major == 2 ? "TP1" : "TPE1", [0] + Array("Liar".utf8), size: 0x0FFF_FFFF))
            tag.uniqueFileID(owner: "http://musicbrainz.org", "after the lie")
            let read = try tags(of: tag.bytes())
            #expect(read.title == "Kept", "v2.\(major)")
            #expect(read.artist == nil, "v2.\(major)")
            #expect(read[.musicBrainzTrackID].isEmpty, "v2.\(major)")
        }
    }

    @Test("a tag claiming more bytes than the file, or fewer than its frames, or a non-syncsafe size")
    func lyingTagSize() throws {
        var tag = ID3v2(major: 4)
        tag.text("TIT2", "Title")
        let directory = try ScratchDirectory()
        let beyond = writeSong(tag.bytes(size: 50_000_000), in: directory, name: "beyond.mp3")
        #expect(throws: DecoderError.self) { try SongReader().read(path: beyond) }
        // Too short: the audio starts inside the frames; libmpg123 resyncs to the first real frame.
        let short = writeSong(tag.bytes(size: 4), in: directory, name: "short.mp3")
        _ = try? SongReader().read(path: short)
        var header = tag.bytes()
        header[6] = 0xFF
        let notSyncsafe = writeSong(header, in: directory, name: "not-syncsafe.mp3")
        _ = try? SongReader().read(path: notSyncsafe)
    }

    @Test("unsynchronised tags and frames, extended headers, unknown flags")
    func flags() throws {
        var tag = ID3v2(major: 4, flags: 0x80)
        tag.text("TIT2", "Unsync")
        tag.uniqueFileID(owner: "http://musicbrainz.org", "u-1")
        #expect(try tags(of: tag.bytes())[.musicBrainzTrackID] == ["u-1"])

        var extended = ID3v2(major: 3, flags: 0x40)
        extended.frames.append([0, 0, 0, 6, 0, 0, 0, 0, 0, 0])  // v2.3 extended header: size 6 + 4
        extended.text("TIT2", "Extended", encoding: .latin1)
        extended.uniqueFileID(owner: "http://musicbrainz.org", "e-1")
        let read = try tags(of: extended.bytes())
        #expect(read[.musicBrainzTrackID] == ["e-1"])

        var unknown = ID3v2(major: 4, flags: 0x0F)
        unknown.text("TIT2", "Unknown flags")
        _ = try tags(of: unknown.bytes())
        var future = ID3v2(major: 5)
        future.text("TIT2", "Future")
        #expect(try tags(of: future.bytes()).isEmpty)
    }

    @Test("a tag and a frame both claiming 256 MB: nothing is read past the file, no huge allocation")
    func hugeClaims() throws {
        var tag = ID3v2(major: 4)
        tag.text("TIT2", "Kept")
        tag.frames.append(tag.frame("TPE1", [3] + Array("Liar".utf8), size: 0x0FFF_FFF0))
        let bytes = tag.bytes(size: 0x0FFF_FFFF)
        #expect(ID3Tags.frames(inRawTag: bytes) == [ID3Tags.Frame(id: "TIT2", values: ["Kept"])])
        let directory = try ScratchDirectory()
        let path = writeSong(bytes, in: directory)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        #expect(ID3Tags.frames(inFile: descriptor) == [ID3Tags.Frame(id: "TIT2", values: ["Kept"])])
        #expect(throws: DecoderError.self) { try SongReader().read(path: path) }
    }

    @Test("a 2 MiB text frame is passed over")
    func hugeTextFrame() throws {
        var tag = ID3v2(major: 4)
        tag.frames.append(tag.frame("TIT2", [3] + [UInt8](repeating: 0x41, count: 2 << 20)))
        tag.text("TPE1", "After")
        let read = try tags(of: tag.bytes())
        #expect(read.title == nil)
        #expect(read.artist == "After")
    }

    @Test("a frame unsynchronised on its own (v2.4 flag): FF 00 becomes FF again")
    func frameUnsynchronisation() throws {
        var tag = ID3v2(major: 4)
        let body = [TextEncoding.utf16.rawValue] + TextEncoding.utf16.encode(["Björk", "ÿ"])
        let unsynchronised = body.flatMap { $0 == 0xFF ? [0xFF, 0x00] : [$0] }
        tag.frames.append(tag.frame("TPE1", unsynchronised, frameFlags: [0, 0x02]))
        #expect(try tags(of: tag.bytes())[.artist] == ["Björk", "ÿ"])
    }

    @Test("the raw walk stops at anything that does not add up, without reading past the tag")
    func rawWalk() {
        var tag = ID3v2(major: 4)
        tag.text("TIT2", "Title")
        tag.uniqueFileID(owner: "http://musicbrainz.org", "id")
        let good = tag.bytes()
        let expected = [
            ID3Tags.Frame(id: "TIT2", values: ["Title"]),
            ID3Tags.Frame(id: "UFID", description: "http://musicbrainz.org", values: ["id"]),
        ]
        #expect(ID3Tags.frames(inRawTag: good) == expected)
        for cut in 0..<good.count {
            _ = ID3Tags.frames(inRawTag: Array(good.prefix(cut)))
        }
        var lying = good
        lying[6...9] = [0x7F, 0x7F, 0x7F, 0x7F]
        #expect(ID3Tags.frames(inRawTag: lying) == expected)
    }

    @Test("300 randomly damaged tags: no crash, no hang")
    func fuzz() throws {
        var tag = ID3v2(major: 4)
        tag.text("TPE1", "Alpha", "Beta", encoding: .utf16)
        tag.text("TIT2", "Title")
        tag.userText("MusicBrainz Artist Id", "a", "b")
        tag.comment("Comment", description: "d", encoding: .utf16BigEndian)
        tag.uniqueFileID(owner: "http://musicbrainz.org", "id")
        tag.picture(mimeType: "image/png", type: 3, data: [1, 2, 3, 4])
        let good = tag.bytes()
        let directory = try ScratchDirectory()
        let reader = SongReader()
        var random = SplitMix64(state: 42)
        for round in 0..<300 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let index = Int.random(in: 3..<bytes.count, using: &random)
                bytes[index] = UInt8.random(in: 0...255, using: &random)
            }
            let path = writeSong(bytes, in: directory, name: "fuzz-\(round % 4).mp3")
            _ = try? reader.read(path: path)
            _ = try? reader.picture(path: path)
        }
        #expect(try reader.read(path: writeSong(good, in: directory)).tags.title == "Title")
    }
}

// MARK: - SongReader

@Suite("SongReader")
struct SongReaderTests {
    @Test("format and length from the headers, tags as MP3Decoder reads them", arguments: GoodFixture.all)
    func matchesDecoder(_ fixture: GoodFixture) throws {
        let facts = try SongReader().read(path: fixture.path)
        let decoder = try MP3Decoder(path: fixture.path)
        #expect(facts.sampleRate == fixture.sampleRate)
        #expect(facts.channels == fixture.channels)
        #expect(facts.duration == Double(fixture.frames) / Double(fixture.sampleRate))
        #expect(facts.tags == decoder.tags)
    }

    @Test("MP3Decoder reads the same tags: repeated frames, UFID, ID3v1 fill-in")
    func decoderAgrees() throws {
        var tag = ID3v2(major: 3)
        tag.text("TPE1", "One", encoding: .utf16)
        tag.text("TPE1", "Two", encoding: .latin1)
        tag.userText("MusicBrainz Album Id", "x")
        tag.userText("MusicBrainz Album Id", "y")
        tag.uniqueFileID(owner: "http://musicbrainz.org", "track")
        let directory = try ScratchDirectory()
        let path = writeSong(tag.bytes(), suffix: id3v1(album: "From V1"), in: directory)
        let facts = try SongReader().read(path: path)
        #expect(facts.tags[.artist] == ["One", "Two"])
        #expect(facts.tags[.musicBrainzAlbumID] == ["x", "y"])
        #expect(facts.tags[.musicBrainzTrackID] == ["track"])
        #expect(facts.tags.album == "From V1")
        #expect(try MP3Decoder(path: path).tags == facts.tags)
    }

    @Test(
        "the same errors as MP3Decoder for bad files",
        arguments: [
            "empty.mp3", "random.mp3", "wav-named.mp3", "id3-beyond-eof.mp3", "no-such-file.mp3",
        ])
    func errors(_ name: String) throws {
        let path = fixture(name)
        let expected = #expect(throws: DecoderError.self) { try MP3Decoder(path: path) }
        let actual = #expect(throws: DecoderError.self) { try SongReader().read(path: path) }
        #expect(actual == expected)
        #expect(actual?.path == path)
        let pictureError = #expect(throws: DecoderError.self) { try SongReader().picture(path: path) }
        #expect(pictureError == expected)
    }

    @Test("a directory and a zero-byte file are refused by name")
    func notFiles() throws {
        let directory = try ScratchDirectory()
        #expect(throws: DecoderError.notARegularFile(path: directory.url.path)) {
            try SongReader().read(path: directory.url.path)
        }
        let empty = directory.path("zero.mp3")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: DecoderError.emptyFile(path: empty)) { try SongReader().read(path: empty) }
    }

    @Test("one reader, 200 reads alternating good and bad files, stays correct")
    func reuse() throws {
        let directory = try ScratchDirectory()
        var paths: [(String, Tags?)] = []
        for index in 0..<4 {
            var tag = ID3v2(major: index % 2 == 0 ? 4 : 3)
            tag.text("TIT2", "Song \(index)", encoding: index % 2 == 0 ? .utf8 : .utf16)
            tag.uniqueFileID(owner: "http://musicbrainz.org", "id-\(index)")
            var expected = Tags(title: "Song \(index)")
            expected[.musicBrainzTrackID] = ["id-\(index)"]
            paths.append((writeSong(tag.bytes(), in: directory, name: "good-\(index).mp3"), expected))
        }
        paths.insert((fixture("tagged-id3v1.mp3"), try MP3Decoder(path: fixture("tagged-id3v1.mp3")).tags), at: 2)
        let bad = ["random.mp3", "empty.mp3", "wav-named.mp3", "truncated.mp3", "no-such-file.mp3"]
        let reader = SongReader()
        for round in 0..<200 {
            if round % 2 == 0 {
                let (path, expected) = paths[round / 2 % paths.count]
                let facts = try reader.read(path: path)
                #expect(facts.tags == expected)
                #expect(facts.sampleRate == 44100)
            } else {
                let path = fixture(bad[round / 2 % bad.count])
                let reference = Result { () throws(DecoderError) in try MP3Decoder(path: path).format }
                let result = Result { () throws(DecoderError) in try reader.read(path: path) }
                switch (reference, result) {
                case (.failure(let expected), .failure(let actual)): #expect(actual == expected)
                case (.success, .success): break
                default: Issue.record("\(path): \(reference) against \(result)")
                }
            }
        }
    }

    @Test("a 1 MB APIC: picture(path:) returns it with its MIME type; read(path:) does not copy it")
    func bigPicture() throws {
        var random = SplitMix64(state: 7)
        let image = (0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &random) }
        var tag = ID3v2(major: 3)
        tag.text("TIT2", "Pictured", encoding: .latin1)
        tag.picture(mimeType: "image/png", type: 4, data: [9, 9, 9], description: "back")
        tag.picture(mimeType: "image/jpeg", type: 3, data: image, description: "front")
        let directory = try ScratchDirectory()
        let path = writeSong(tag.bytes(), in: directory)
        let reader = SongReader()
        let picture = try #require(try reader.picture(path: path))
        #expect(picture.mimeType == "image/jpeg")
        #expect(picture.data == image)
        #expect(try reader.read(path: path).tags.title == "Pictured")
        #expect(try reader.picture(path: fixture("one-second.mp3")) == nil)
        #expect(try reader.picture(path: fixture("big-id3.mp3"))?.data.count == 300_000)

        var backOnly = ID3v2(major: 4)
        backOnly.picture(mimeType: "-->", type: 3, data: Array("http://example.org/a.jpg".utf8))
        backOnly.picture(mimeType: "image/png", type: 4, data: [1, 2])
        let back = try reader.picture(path: writeSong(backOnly.bytes(), in: directory, name: "back.mp3"))
        #expect(back == EmbeddedPicture(mimeType: "image/png", data: [1, 2]))

        // A generous bound (timing belongs to benchmarks): reading the tags of the pictured file stays
        // within a few milliseconds, far from what copying and hashing pictures would cost.
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for _ in 0..<20 { _ = try reader.read(path: path) }
        }
        #expect(elapsed < .milliseconds(400))
    }
}
