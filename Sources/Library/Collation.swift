import MusicTags
import _FoundationICU

/// MPD's order of names (mpd 0.23 links ICU and compares with `ucol_strcollUTF8` on the root locale's
/// collator, `ucol_open("")`: case and accents fold at the first level, so `apple` sits beside
/// `Apple` and "Ágætis byrjun" comes before "Takk"; it does not depend on the locale). playerd keeps
/// ICU sort keys of the same collator (the ICU inside Foundation): comparing two keys byte by byte
/// gives the collator's order, so SQLite sorts by them with its plain memcmp, as fast as by name.
public enum Collation {
    /// The root collator. ICU's collators may be used from any thread for what does not change them
    /// (`ucol_getSortKey`, `ucol_strcoll`).
    private nonisolated(unsafe) static let collator: OpaquePointer? = {
        var status = U_ZERO_ERROR
        let collator = swift_ucol_open("", &status)
        return status.rawValue > U_ZERO_ERROR.rawValue ? nil : collator
    }()

    /// The sort key of `text`: bytes ending in 0 with no 0 before it (byte order of keys is the
    /// collator's order of texts). Without a collator (it cannot be opened), the text's own UTF-8.
    public static func key(_ text: String) -> [UInt8] {
        guard let collator = Self.collator else { return Array(text.utf8) + [0] }
        let utf16 = Array(text.utf16)
        guard utf16.count < Int32.max / 4 else { return Array(text.utf8) + [0] }
        var buffer = [UInt8](repeating: 0, count: max(16, utf16.count * 3 + 8))
        while true {
            let needed = utf16.withUnsafeBufferPointer { characters in
                buffer.withUnsafeMutableBufferPointer { bytes in
                    swift_ucol_getSortKey(
                        collator, characters.baseAddress, Int32(characters.count), bytes.baseAddress,
                        Int32(bytes.count))
                }
            }
            let count = Int(needed)
            if count <= 0 { return Array(text.utf8) + [0] }
            if count <= buffer.count { return Array(buffer[..<count]) }
            buffer = [UInt8](repeating: 0, count: count)
        }
    }

    /// Whether `left` comes before `right` in MPD's order.
    public static func precedes(_ left: String, _ right: String) -> Bool {
        Self.key(left).lexicographicallyPrecedes(Self.key(right))
    }

    /// The key that puts a song in its place among its directory's songs, as MPD lists them: by album
    /// (songs without one first), then disc, then track (numbers; none, 0 or less first), then file
    /// name, names and albums collated.
    static func songListingKey(name: String, tags: Tags) -> [UInt8] {
        var key: [UInt8] = []
        if let album = tags.first(.album) {
            key.append(1)
            key += Self.key(album)
        } else {
            key.append(0)
        }
        for tag in [TagName.disc, .track] {
            let number = tags.first(tag).map(Self.leadingNumber) ?? 0
            withUnsafeBytes(of: UInt64(number).bigEndian) { key += $0 }
        }
        key += Self.key(name)
        return key
    }

    /// The number at the start of `text` as C's `strtol` reads it (spaces, a sign, digits), clamped to
    /// 0 ... Int64.max: MPD counts 0 and below as no number.
    static func leadingNumber(_ text: String) -> Int64 {
        var bytes = text.utf8.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var value: Int64 = 0
        for byte in bytes {
            guard (0x30...0x39).contains(byte) else { break }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = times.addingReportingOverflow(Int64(byte - 0x30))
            if overflow || overflowAgain {
                value = .max
                break
            }
            value = sum
        }
        return negative ? 0 : value
    }
}
