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

    /// The longest tag value stored: libmpdclient cannot read a response line past 4 KB, and a lying
    /// tag can be megabytes long.
    static let maximumValueBytes = 3_900

    /// Reads `path` for the library.
    static func read(
        path: String, uri: String, directoryURI: String, name: String, mtime: Int64, size: Int64
    ) throws(DecoderError) -> SongRecord {
        let decoder = try MP3Decoder(path: path)
        let rate = decoder.format.sampleRate
        return SongRecord(
            uri: uri, directoryURI: directoryURI, name: name, mtime: mtime, size: size,
            tags: Self.cleaned(decoder.tags), sampleRate: rate, channels: decoder.format.channels,
            duration: decoder.lengthFrames.map { Double($0) / Double(rate) })
    }

    /// Tags fit for the protocol: one line each (control characters become spaces), bounded in length.
    static func cleaned(_ tags: Tags) -> Tags {
        var result = Tags()
        for tag in tags.names {
            result[tag] = tags[tag].map(Self.cleanedValue)
        }
        return result
    }

    static func cleanedValue(_ value: String) -> String {
        var text = value
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            text = String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        }
        text = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        if text.utf8.count > Self.maximumValueBytes {
            var end = text.utf8.index(text.utf8.startIndex, offsetBy: Self.maximumValueBytes)
            while !text.unicodeScalars.indices.contains(end) && end > text.startIndex {
                end = text.utf8.index(before: end)
            }
            text = String(text[..<end])
        }
        return text
    }

    /// The tag lines of the song block, in MPD's order: `Artist: X\n...`, as stored.
    var block: String {
        var text = ""
        for (tag, value) in self.tags.pairs {
            text += tag.rawValue
            text += ": "
            text += value
            text += "\n"
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

    /// The audio format as MPD prints it; playerd decodes to 16-bit samples.
    var format: String? {
        guard let sampleRate, let channels else { return nil }
        return "\(sampleRate):16:\(channels)"
    }
}
