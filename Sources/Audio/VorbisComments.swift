import CVorbisFile
import MusicTags

/// Vorbis comments, the `NAME=value` metadata of FLAC, Ogg Vorbis and Opus files, read as MPD reads
/// them (its `ScanVorbisComment`): MPD's Xiph names first (`TRACKNUMBER` is Track, `DISCNUMBER` Disc,
/// `DESCRIPTION` Comment, `MOVEMENTNAME` Movement, `MOVEMENT` MovementNumber), then MPD's own tag names
/// in any case (`ARTIST`, `AlbumArtist`, `MUSICBRAINZ_TRACKID` ...). A name given several times keeps
/// every value, in file order.
public enum VorbisComments {
    /// libvorbis's comments (a Vorbis stream's, a file's first link's), each split at its first `=`, in
    /// stream order; a comment with no `=` or an empty name is passed over.
    static func pairs(of comment: vorbis_comment) -> [(name: String, value: String)] {
        guard comment.comments > 0, let texts = comment.user_comments, let lengths = comment.comment_lengths else {
            return []
        }
        var pairs: [(name: String, value: String)] = []
        for index in 0..<Int(comment.comments) {
            guard let text = texts[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: text, count: max(0, Int(lengths[index])))
            if let pair = VorbisComments.split(bytes) { pairs.append(pair) }
        }
        return pairs
    }

    /// Splits one comment at its first `=`; nil for a comment with no `=` or an empty name.
    public static func split(_ comment: some Collection<UInt8>) -> (name: String, value: String)? {
        guard let equals = comment.firstIndex(of: UInt8(ascii: "=")), equals != comment.startIndex else { return nil }
        let name = String(decoding: comment[comment.startIndex..<equals], as: UTF8.self)
        let value = String(decoding: comment[comment.index(after: equals)...], as: UTF8.self)
        return (name, value)
    }

    /// MPD's names for comments that are not spelled as its tags.
    private static let xiphNames: [String: TagName] = [
        "tracknumber": .track, "discnumber": .disc, "description": .comment, "movementname": .movement,
        "movement": .movementNumber,
    ]

    /// The tag a comment's name stands for, if any.
    public static func tagName(_ name: String) -> TagName? {
        let lowered = name.lowercased()
        return Self.xiphNames[lowered] ?? TagName(name: lowered)
    }

    /// The tags the comments carry, in MPD's names, in the file's order (`Tags.items`).
    public static func tags(_ comments: [(name: String, value: String)]) -> Tags {
        var tags = Tags()
        for comment in comments {
            guard let tag = Self.tagName(comment.name) else { continue }
            tags.append(comment.value, to: tag)
        }
        return tags
    }

    /// The ReplayGain values the comments store (`REPLAYGAIN_TRACK_GAIN` ... in any case, as MPD's
    /// `ParseReplayGainVorbis` reads them: a number, with or without " dB"); nil when none is stored.
    public static func storedGain(_ comments: [(name: String, value: String)]) -> StoredReplayGain? {
        var gain = StoredReplayGain()
        var found = false
        for comment in comments {
            let number = Self.leadingNumber(comment.value)
            switch comment.name.lowercased() {
            case "replaygain_track_gain": gain.trackGainDB = number
            case "replaygain_album_gain": gain.albumGainDB = number
            case "replaygain_track_peak": gain.trackPeak = number
            case "replaygain_album_peak": gain.albumPeak = number
            default: continue
            }
            found = true
        }
        return found ? gain : nil
    }

    /// The MixRamp profile in the comments (`MIXRAMP_START`, `MIXRAMP_END` in any case, as MPD's
    /// `ParseMixRampVorbis` reads them); the last of each wins.
    public static func mixRamp(_ comments: [(name: String, value: String)]) -> MixRamp {
        var ramp = MixRamp()
        for comment in comments {
            switch comment.name.lowercased() {
            case "mixramp_start": ramp.start = comment.value
            case "mixramp_end": ramp.end = comment.value
            default: continue
            }
        }
        return ramp
    }

    /// The front cover among `METADATA_BLOCK_PICTURE` comments (base64 FLAC picture blocks, as Ogg
    /// Vorbis and Opus files carry covers), else the first picture; nil when there is none.
    public static func picture(_ comments: [(name: String, value: String)]) -> EmbeddedPicture? {
        var first: EmbeddedPicture?
        for comment in comments where comment.name.lowercased() == "metadata_block_picture" {
            guard let bytes = Base64.decode(comment.value), let block = FLACPicture(block: bytes) else { continue }
            if block.type == FLACPicture.frontCover { return block.picture }
            first = first ?? block.picture
        }
        return first
    }

    /// The number a value starts with, as C's `strtod` reads it (MPD's `ParseFloat`): the longest
    /// leading decimal number (exponent included); 0 when there is none or it is not finite.
    static func leadingNumber(_ text: String) -> Double {
        let allowed = Set("0123456789+-.eE")
        var candidate = Substring(text.drop { $0 == " " || $0 == "\t" }.prefix(64).prefix { allowed.contains($0) })
        while !candidate.isEmpty {
            if let value = Double(candidate) { return value.isFinite ? value : 0 }
            candidate = candidate.dropLast()
        }
        return 0
    }
}

/// A FLAC `PICTURE` metadata block's content (also what a `METADATA_BLOCK_PICTURE` comment holds, in
/// base64): a picture type, a MIME type, a description, dimensions and the image's bytes.
public struct FLACPicture: Sendable, Hashable {
    /// The picture type of a front cover (ID3v2's APIC types).
    public static let frontCover: UInt32 = 3
    /// The picture's type: 3 is the front cover.
    public var type: UInt32
    /// The MIME type and the image.
    public var picture: EmbeddedPicture

    /// Parses a picture block's body; nil when its lengths run past its end.
    public init?(block bytes: [UInt8]) {
        var offset = 0
        func u32() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        func field() -> ArraySlice<UInt8>? {
            guard let length = u32(), Int(length) <= bytes.count - offset else { return nil }
            defer { offset += Int(length) }
            return bytes[offset..<offset + Int(length)]
        }
        guard let type = u32(), let mime = field(), field() != nil else { return nil }
        // Width, height, depth and the colour count: not needed.
        for _ in 0..<4 { guard u32() != nil else { return nil } }
        guard let data = field(), !data.isEmpty else { return nil }
        let mimeType = String(decoding: mime, as: UTF8.self)
        self.type = type
        self.picture = EmbeddedPicture(mimeType: mimeType.isEmpty ? nil : mimeType, data: Array(data))
    }
}

/// Base64 as RFC 4648 writes it (the alphabet with `+` and `/`), for `METADATA_BLOCK_PICTURE`.
enum Base64 {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// The bytes `text` encodes; whitespace is passed over, `=` ends it; nil on any other character.
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") { break }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { continue }
            let value = Self.values[Int(byte)]
            guard value != 0xff else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
