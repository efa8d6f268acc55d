import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// An APEv2 tag at the end of a file (mp3gain and foobar2000 write them into MP3s), read as MPD 0.23's
/// `tag_ape_scan` reads it (src/tag/ApeLoader.cxx): only a footer that ends the file counts, a tag of
/// more than 1 MiB is passed over, and the items are walked until one does not add up.
enum APETags {
    /// One item of the tag.
    struct Item: Equatable {
        /// The item's key, as stored.
        var key: String
        /// Its values (the item's bytes split at NUL; an empty item is one empty value).
        var values: [String]
        /// Whether the item holds UTF-8 text (not binary data or a link): only these are read.
        var isText: Bool
    }

    /// MPD's limit on the bytes of a tag it reads.
    static let largestTag = 1 << 20

    /// The footer's size, and the version MPD reads.
    private static let footerLength = 32
    private static let version = 2000

    /// The items of the APEv2 tag ending the file open on `descriptor`, in file order; nil when the file
    /// ends in no APEv2 footer, or the tag is too small or too large to read.
    static func items(inFile descriptor: Int32) -> [Item]? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) >= Self.footerLength else { return nil }
        let size = Int(info.st_size)
        guard let footer = Self.read(descriptor, at: size - Self.footerLength, count: Self.footerLength),
            footer.prefix(8).elementsEqual("APETAGEX".utf8), Self.littleEndian(footer, at: 8) == Self.version
        else { return nil }
        let length = Self.littleEndian(footer, at: 12)
        guard length > Self.footerLength + 10, length <= Self.largestTag, length <= size else { return nil }
        guard let body = Self.read(descriptor, at: size - length, count: length - Self.footerLength) else {
            return nil
        }
        return Self.items(in: body, count: Self.littleEndian(footer, at: 16))
    }

    /// The items of a tag's body (without its footer): at most `count`, each a 32-bit size and flags
    /// (little-endian), a NUL-terminated key and the value's bytes.
    static func items(in body: [UInt8], count: Int) -> [Item] {
        var items: [Item] = []
        var position = 0
        var left = count
        while left > 0 && body.count - position > 10 {
            left -= 1
            let valueSize = Self.littleEndian(body, at: position)
            let flags = Self.littleEndian(body, at: position + 4)
            position += 8
            guard let keyEnd = body[position...].firstIndex(of: 0) else { break }
            let key = String(decoding: body[position..<keyEnd], as: UTF8.self)
            position = keyEnd + 1
            guard body.count - position >= valueSize else { break }
            let value = body[position..<position + valueSize]
            position += valueSize
            items.append(
                Item(
                    key: key,
                    values: value.split(separator: 0, omittingEmptySubsequences: false).map {
                        String(decoding: $0, as: UTF8.self)
                    },
                    isText: flags & 0x6 == 0))
        }
        return items
    }

    /// Whether an item's key names a tag MPD knows (its `tag_ape_name_parse`: "album artist", "year",
    /// or a tag's own name, ignoring case). A file whose APE tag has one is not searched for ID3.
    static func isKnownTag(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return lowered == "album artist" || lowered == "year" || TagName(name: key) != nil
    }

    private static func read(_ descriptor: Int32, at offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> Int {
        guard offset + 4 <= bytes.count else { return 0 }
        return (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
    }
}
