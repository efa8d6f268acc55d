import Audio
import MusicTags

/// One song as the library stores it: where it is, what the file was when read, its tags.
struct SongRecord: Sendable {
    var uri: String
    var directoryURI: String
    var name: String
    var mtime: Int64
    var size: Int64
    var tags: Tags
    var sampleRate: Int?
    var channels: Int?
    var duration: Double?
    /// The bits of a sample MPD shows in `Format:` (16, 24, 32), or `floatBits` for floats.
    var bits: Int?
    /// What the database rows need, worked out where the file was read (on every core) rather than
    /// on the one thread that writes: the song block's tag lines, each (tag, value, folded value,
    /// fallback) row, and each tag's folded text for the full-text index.
    private(set) var block = ""
    private(set) var tagRows: [(order: Int64, value: String, folded: String, fallback: Bool)] = []
    private(set) var searchTexts: [String?] = []
    /// Its place among its directory's songs (`Collation.songListingKey`).
    private(set) var listing: [UInt8] = []

    /// Works out `block`, `tagRows` and `searchTexts` from the tags.
    mutating func prepare(folding: inout FoldingMemo) {
        var text = ""
        for (tag, value) in self.tags.items where TagName.announced.contains(tag) {
            text += tag.rawValue
            text += ": "
            text += value
            text += "\n"
        }
        self.block = text
        self.listing = Collation.songListingKey(name: self.name, tags: self.tags)
        self.tagRows = []
        self.searchTexts = []
        for tag in TagName.allCases {
            // Comment is not kept, as MPD keeps none by default: no filter, `list` or search finds it.
            let (values, fallback) = tag == .comment ? ([], false) : self.effectiveValues(tag)
            guard !values.isEmpty else {
                self.searchTexts.append(nil)
                continue
            }
            var folded: [String] = []
            for value in values {
                let foldedValue = folding.fold(value)
                folded.append(foldedValue)
                self.tagRows.append((Int64(tag.order), value, foldedValue, fallback))
            }
            self.searchTexts.append(folded.count == 1 ? folded[0] : folded.joined(separator: "\u{1F}"))
        }
    }

    /// The longest tag value stored: libmpdclient cannot read a response line past 4 KB, and a lying
    /// tag can be megabytes long.
    static let maximumValueBytes = 3_900

    /// Reads `path` for the library.
    static func read(
        with reader: SongReader, folding: inout FoldingMemo, path: String, uri: String, directoryURI: String,
        name: String, mtime: Int64,
        size: Int64
    ) throws(DecoderError) -> SongRecord {
        let facts = try SongFile.read(path: path, reader: reader)
        var record = SongRecord(
            uri: uri, directoryURI: directoryURI, name: name, mtime: mtime, size: size,
            tags: Self.cleaned(Self.withoutTotals(facts.tags)), sampleRate: facts.sampleRate,
            channels: facts.channels, duration: facts.duration, bits: Self.bits(facts.sampleFormat))
        record.prepare(folding: &folding)
        return record
    }

    /// Track and Disc without their totals ("3/12" is track 3), as MPD shows them.
    static func withoutTotals(_ tags: Tags) -> Tags {
        var result = tags
        for tag in [TagName.track, .disc] {
            result[tag] = tags[tag].map { value in
                value.firstIndex(of: "/").map { String(value[..<$0]) } ?? value
            }
        }
        return result
    }

    /// The `bits` column's value for a sample format: its bits, or `floatBits` for floats.
    static func bits(_ format: SampleFormat) -> Int {
        format == .float32 ? Self.floatBits : format.bits
    }

    /// `bits` of a float format (MPD's `f`), as `AudioFormatPattern` has it.
    static let floatBits = -1

    /// MPD's `Format:` value for a rate, the `bits` column and a channel count: `44100:24:2`, `44100:f:2`.
    static func format(sampleRate: Int64, bits: Int64, channels: Int64) -> String {
        "\(sampleRate):\(bits == Self.floatBits ? "f" : String(bits)):\(channels)"
    }

    /// Tags fit for the protocol: one line each (control characters become spaces), bounded in length.
    /// Their order is kept.
    static func cleaned(_ tags: Tags) -> Tags {
        Tags(items: tags.items.map { ($0.tag, Self.cleanedValue($0.value)) })
    }

    static func cleanedValue(_ value: String) -> String {
        let bytes = value.utf8
        let clean =
            bytes.count <= Self.maximumValueBytes && bytes.first != 0x20 && bytes.last != 0x20
            && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        // Nearly every value is clean already: checked on bytes, returned as it is.
        if clean { return value }
        var text = value
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            text = String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        }
        let trimmed = text.utf8.drop { $0 == 0x20 }
        let end = trimmed.lastIndex { $0 != 0x20 }.map { text.utf8.index(after: $0) } ?? trimmed.startIndex
        text = String(text[trimmed.startIndex..<end])
        if text.utf8.count > Self.maximumValueBytes {
            var cut = text.utf8.index(text.utf8.startIndex, offsetBy: Self.maximumValueBytes)
            while !text.unicodeScalars.indices.contains(cut) && cut > text.startIndex {
                cut = text.utf8.index(before: cut)
            }
            text = String(text[..<cut])
        }
        return text
    }

    /// The values queries see for `tag`: its own, or (marked as such) the values of the tag MPD falls
    /// back to when the song lacks it (AlbumArtist to Artist ...).
    func effectiveValues(_ tag: TagName) -> (values: [String], fallback: Bool) {
        let own = self.tags[tag]
        if !own.isEmpty {
            return (own, false)
        }
        var next = tag.fallback
        while let fallback = next {
            let values = self.tags[fallback]
            if !values.isEmpty {
                return (values, true)
            }
            next = fallback.fallback
        }
        return ([], false)
    }

    /// The audio format as MPD prints it.
    var format: String? {
        guard let sampleRate, let channels else { return nil }
        return Self.format(sampleRate: Int64(sampleRate), bits: Int64(self.bits ?? 16), channels: Int64(channels))
    }
}
