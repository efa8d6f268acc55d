import CMPG123
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Turns a file's ID3 tags into `Tags`, frame for frame as MPD's `Id3Scan.cxx` maps them.
///
/// How libmpg123 1.31 hands over ID3v2 text (checked byte by byte on this machine):
/// - Text frames go to `text`, `TXXX` to `extra`, `COMM` to `comment_list`; v2.2 ids are promoted to
///   their v2.3 names (`TP1` → `TPE1`, `TYE` → `TYER` ...). `UFID` is not parsed at all, nor `PIC`.
/// - A later frame *replaces* an earlier one with the same id (`TXXX`: the same description; `COMM`:
///   the same language and description): of two `TPE1` frames only the second survives.
/// - The text is UTF-8 whatever the frame's encoding. A frame's several strings stay separated by NUL
///   bytes in the one `mpg123_string`; `fill` counts them and the closing NUL (`"A\0B"` arrives as
///   `41 00 42 00`, fill 4; a frame ending in its own NUL adds an empty string at the end).
/// - In UTF-16, the BOM of each string after the first survives as U+FEFF (`EF BB BF`); Latin-1 is
///   converted; UTF-8 is copied as it is, invalid bytes included; a broken surrogate pair ends the
///   text. `TXXX`/`COMM` descriptions end in NUL bytes of their own.
///
/// - Its raw copy of the tag (`MPG123_STORE_RAW_ID3`, `mpg123_id3_raw`) is not the file's bytes:
///   parsing `TXXX` and `COMM` overwrites the last byte of each description's terminator (and the
///   language's last byte) with the encoding byte.
///
/// So the ID3v2 frames are read here from the file itself, frame header by frame header (every
/// repeated frame and `UFID` included, picture bodies skipped); libmpg123's structures serve only when
/// the tag is not at the start of the file. Either way values are split at NUL, byte-order marks are dropped, invalid
/// text becomes U+FFFD, whitespace around a value is stripped (as MPD strips it) and empty values are
/// dropped; "/" and ";" are never split on.
enum ID3Tags {
    /// One ID3v2 frame that may carry a tag: its (v2.3/2.4) id, the description of `TXXX`/`COMM` or
    /// the owner of `UFID`, and its values.
    struct Frame: Equatable {
        var id: String
        var description: String? = nil
        var values: [String]
    }

    /// The tags of the file `handle` has open (after `mpg123_getformat`) on `descriptor`: ID3v2
    /// first, ID3v1 filling the tags v2 lacks. The ID3v2 frames are read from the file with `pread` (the
    /// file offset libmpg123 reads from does not move), so the handle may skip the tag
    /// (`MPG123_SKIP_ID3V2`); libmpg123's structures serve when the tag does not start the file.
    static func read(_ handle: OpaquePointer, descriptor: Int32) -> Tags {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        if mpg123_meta_check(handle) & MPG123_ID3 == 0 || mpg123_id3(handle, &v1, &v2) != MPG123_OK.rawValue {
            v1 = nil
            v2 = nil
        }
        var frames = Self.frames(inFile: descriptor)
        if frames == nil, let v2, v2.pointee.version != 0 {
            frames = Self.frames(fromV2: v2.pointee)
        }
        let fromV2 = frames.map(Self.tags(from:)) ?? Tags()
        let fromV1 = v1.map { Self.tags(fromV1: $0.pointee) } ?? Tags()
        return fromV2.filling(from: fromV1)
    }

    // MARK: - Mapping frames to tags

    /// Text frames and the tag each fills, as MPD maps them (`TSOC`, iTunes' composer sort, too).
    /// MPD maps neither `TMCL`, `TIPL` nor `TOPE` (dropped in 0.16: it is the *original* artist);
    /// `TPE4` (remixed by) is its Performer.
    static let textFrames: [String: TagName] = [
        "TPE1": .artist, "TPE2": .albumArtist, "TSOP": .artistSort, "TSOA": .albumSort,
        "TSO2": .albumArtistSort, "TIT2": .title, "TALB": .album, "TRCK": .track, "TDRC": .date,
        "TDOR": .originalDate, "TCON": .genre, "TCOM": .composer, "TPE3": .conductor, "TPE4": .performer,
        "TIT1": .grouping, "TPOS": .disc, "TPUB": .label, "TSOC": .composerSort,
    ]

    /// ID3v2.3 frames that v2.4 replaced: read only when the v2.4 frame is absent (libid3tag, under
    /// MPD, converts them the same way).
    static let olderFrames: [String: TagName] = ["TYER": .date, "TORY": .originalDate]

    /// `TXXX` descriptions MPD understands (its `musicbrainz_txxx_tags`), lowercased: matched ignoring case.
    static let userTextFrames: [String: TagName] = [
        "albumartistsort": .albumArtistSort,
        "musicbrainz artist id": .musicBrainzArtistID,
        "musicbrainz album id": .musicBrainzAlbumID,
        "musicbrainz album artist id": .musicBrainzAlbumArtistID,
        "musicbrainz track id": .musicBrainzTrackID,
        "musicbrainz release track id": .musicBrainzReleaseTrackID,
        "musicbrainz work id": .musicBrainzWorkID,
    ]

    /// The owner a `UFID` frame names when it holds a MusicBrainz recording (track) id.
    static let musicBrainzOwner = "http://musicbrainz.org"

    /// The tags `frames` carry, values in file order (a value repeated within one tag is kept once).
    static func tags(from frames: [Frame]) -> Tags {
        var found: [TagName: [String]] = [:]
        var older: [TagName: [String]] = [:]
        // MPD's order: text frames, then COMM, TXXX, UFID.
        for frame in frames {
            if let name = Self.textFrames[frame.id] {
                found[name, default: []] += name == .genre ? frame.values.flatMap(ID3Genre.resolveAll) : frame.values
            } else if let name = Self.olderFrames[frame.id] {
                older[name, default: []] += frame.values
            }
        }
        for (name, values) in older where found[name] == nil {
            found[name] = values
        }
        // iTunes keeps its gapless and loudness data in COMM frames (iTunNORM, iTunSMPB ...): not text.
        for frame in frames where frame.id == "COMM" && frame.description?.hasPrefix("iTun") != true {
            found[.comment, default: []] += frame.values.prefix(1)
        }
        for frame in frames where frame.id == "TXXX" {
            guard let description = frame.description, let name = Self.userTextFrames[description.lowercased()]
            else { continue }
            found[name, default: []] += frame.values
        }
        for frame in frames where frame.id == "UFID" && frame.description == Self.musicBrainzOwner {
            found[.musicBrainzTrackID, default: []] += frame.values
        }
        var tags = Tags()
        for (name, values) in found {
            var seen = Set<String>()
            tags[name] = values.filter { seen.insert($0).inserted }
        }
        return tags
    }

    // MARK: - Frames from libmpg123's structures

    /// The frames libmpg123 parsed (the last of each id only; no `UFID`).
    static func frames(fromV2 tag: mpg123_id3v2) -> [Frame] {
        var frames: [Frame] = []
        for entry in Self.entries(tag.text, tag.texts) {
            frames.append(Frame(id: Self.frameID(entry), values: Self.values(entry.text)))
        }
        for entry in Self.entries(tag.comment_list, tag.comments) {
            frames.append(
                Frame(id: "COMM", description: Self.values(entry.description).first, values: Self.values(entry.text)))
        }
        for entry in Self.entries(tag.extra, tag.extras) {
            frames.append(
                Frame(id: "TXXX", description: Self.values(entry.description).first, values: Self.values(entry.text)))
        }
        return frames
    }

    private static func entries(_ list: UnsafeMutablePointer<mpg123_text>?, _ count: Int) -> UnsafeBufferPointer<
        mpg123_text
    > {
        guard let list, count > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: list, count: count)
    }

    private static func frameID(_ entry: mpg123_text) -> String {
        withUnsafeBytes(of: entry.id) { String(decoding: $0, as: UTF8.self) }
    }

    /// The values in one libmpg123 string (UTF-8, NUL-separated): split, cleaned, never empty.
    static func values(_ string: mpg123_string) -> [String] {
        guard let pointer = string.p, string.fill > 0 else { return [] }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: min(string.fill, string.size))
        return bytes.split(separator: 0).compactMap { Self.cleaned(String(decoding: $0, as: UTF8.self)) }
    }

    /// `text` without byte-order marks, spaces and control characters around it; nil when nothing is left.
    static func cleaned(_ text: String) -> String? {
        let scalars = text.unicodeScalars
        let blank: (Unicode.Scalar) -> Bool = { $0.value <= 0x20 || $0 == "\u{FEFF}" }
        guard let first = scalars.firstIndex(where: { !blank($0) }),
            let last = scalars.lastIndex(where: { !blank($0) })
        else { return nil }
        if first == scalars.startIndex && last == scalars.index(before: scalars.endIndex) {
            return text
        }
        return String(scalars[first...last])
    }

    // MARK: - Frames from the raw tag

    /// ID3v2.2 frame ids and their v2.3 names, as libmpg123 promotes them (plus `UFI`).
    static let promotedIDs: [String: String] = [
        "COM": "COMM", "TAL": "TALB", "TBP": "TBPM", "TCM": "TCOM", "TCO": "TCON", "TCR": "TCOP", "TDA": "TDAT",
        "TDY": "TDLY", "TEN": "TENC", "TFT": "TFLT", "TIM": "TIME", "TKE": "TKEY", "TLA": "TLAN", "TLE": "TLEN",
        "TMT": "TMED", "TOA": "TOPE", "TOF": "TOFN", "TOL": "TOLY", "TOR": "TORY", "TOT": "TOAL", "TP1": "TPE1",
        "TP2": "TPE2", "TP3": "TPE3", "TP4": "TPE4", "TPA": "TPOS", "TPB": "TPUB", "TRC": "TSRC", "TRK": "TRCK",
        "TSI": "TSIZ", "TSS": "TSSE", "TT1": "TIT1", "TT2": "TIT2", "TT3": "TIT3", "TXT": "TEXT", "TXX": "TXXX",
        "TYE": "TYER", "UFI": "UFID",
    ]

    /// Text frames larger than this are passed over.
    static let largestTextFrame = 1 << 20

    /// The frames of the ID3v2 tag at the start of the file open on `descriptor`, read in windows of
    /// 16 KB: only the bodies of the frames wanted are read, so a 1 MB picture is skipped, not read.
    static func frames(inFile descriptor: Int32, raw: Bool = false) -> [Frame]? {
        var header = [UInt8](repeating: 0, count: 10)
        let got = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 10, 0) }
        var info = stat()
        guard got == 10, header[0] == 0x49, header[1] == 0x44, header[2] == 0x33,
            let size = Self.syncsafe(header[6...]), fstat(descriptor, &info) == 0
        else { return nil }
        let fileSize = Int(info.st_size)
        let windowLength = min(16384, size + 10, fileSize)
        var window = header
        var windowStart = 0
        return Self.frames(available: fileSize, raw: raw) { offset, count -> ArraySlice<UInt8>? in
            guard offset >= 0, count >= 0, offset + count <= fileSize else { return nil }
            if offset >= windowStart && offset + count <= windowStart + window.count {
                return window[(offset - windowStart)..<(offset - windowStart + count)]
            }
            let length = max(count, windowLength)
            var bytes = [UInt8](repeating: 0, count: length)
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, off_t(offset)) }
            guard got >= count else { return nil }
            bytes.removeLast(length - got)
            if count <= windowLength {
                window = bytes
                windowStart = offset
            }
            return bytes[0..<count]
        }
    }

    /// The `TXXX` frames of the ID3v2 tag at the start of the file open on `descriptor`, in file order:
    /// each description and first value as the frame holds them (not trimmed, empty ones kept), as MPD's
    /// `readcomments` takes them; frames without a value are left out.
    static func userTexts(inFile descriptor: Int32) -> [(name: String, value: String)] {
        (Self.frames(inFile: descriptor, raw: true) ?? []).compactMap { frame in
            guard frame.id == "TXXX", let name = frame.description, let value = frame.values.first else { return nil }
            return (name, value)
        }
    }

    /// The frames of a whole raw ID3v2 tag (header included) in memory.
    static func frames(inRawTag tag: [UInt8]) -> [Frame]? {
        Self.frames(available: tag.count) { offset, count in
            offset >= 0 && count >= 0 && offset + count <= tag.count ? tag[offset..<offset + count] : nil
        }
    }

    /// The text, `TXXX`, `COMM` and `UFID` frames of the ID3v2 tag whose bytes `read(offset, count)`
    /// gives (nil past the end; `available` bytes in all), in file order; nil when it is no
    /// ID3v2.2–2.4 tag this reader understands. Anything that does not add up (a size past the end of
    /// the tag or the file, a bad id or size) ends the walk, keeping the frames before it, as libmpg123
    /// does; compressed and encrypted frames are skipped, as libmpg123 skips them, and so are text
    /// frames over 1 MiB: nothing is read that the file does not hold, whatever the sizes claim. With
    /// `raw`, values are the frame's strings as they are (see `strings`).
    static func frames(available: Int, raw: Bool = false, _ read: (Int, Int) -> ArraySlice<UInt8>?) -> [Frame]? {
        guard let header = read(0, 10), header.prefix(3).elementsEqual("ID3".utf8) else { return nil }
        let major = header[header.startIndex + 3]
        let flags = header[header.startIndex + 5]
        guard (2...4).contains(major), flags & 0x0F == 0, let size = Self.syncsafe(header.dropFirst(6)) else {
            return nil
        }
        let end = min(10 + size, available)
        let tagUnsynchronised = flags & 0x80 != 0
        var position = 10
        if flags & 0x40 != 0 && major >= 3 {
            // Extended header: v2.3 gives its size without the size field, v2.4 with it (syncsafe).
            guard let sizeBytes = read(position, 4) else { return [] }
            if major == 3 {
                position += 4 + Self.bigEndian(sizeBytes)
            } else {
                guard let extended = Self.syncsafe(sizeBytes) else { return [] }
                position += extended
            }
        }
        let idLength = major == 2 ? 3 : 4
        let headerLength = major == 2 ? 6 : 10
        var frames: [Frame] = []
        while position + headerLength <= end, let frameHeader = read(position, headerLength) {
            let idBytes = frameHeader.prefix(idLength)
            guard idBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { break }
            let sizeBytes = frameHeader.dropFirst(idLength).prefix(major == 2 ? 3 : 4)
            let frameSize: Int
            if major == 4 {
                guard let syncsafe = Self.syncsafe(sizeBytes) else { break }
                frameSize = syncsafe
            } else {
                frameSize = Self.bigEndian(sizeBytes)
            }
            let dataStart = position + headerLength
            guard frameSize <= end - dataStart else { break }
            let frameFlags = major == 2 ? 0 : Self.bigEndian(frameHeader.suffix(2))
            position = dataStart + frameSize
            var id = String(decoding: idBytes, as: UTF8.self)
            if major == 2 {
                guard let promoted = Self.promotedIDs[id] else { continue }
                id = promoted
            }
            guard id.hasPrefix("T") || id == "COMM" || id == "UFID" else { continue }
            let skipMask = major == 3 ? 0x00C0 : 0x000C
            guard frameFlags & skipMask == 0, frameSize <= Self.largestTextFrame else { continue }
            guard let body = read(dataStart, frameSize) else { break }
            var data = Array(body)
            if major == 4 && frameFlags & 0x0001 != 0 {
                data = Array(data.dropFirst(4))  // the data length indicator
            }
            if tagUnsynchronised || (major == 4 && frameFlags & 0x0002 != 0) {
                data = Self.resynchronised(data)
            }
            if let frame = Self.frame(id, data, raw: raw) {
                frames.append(frame)
            }
        }
        return frames
    }

    /// Decodes one frame's body; nil when it is empty or its encoding is unknown.
    private static func frame(_ id: String, _ data: [UInt8], raw: Bool) -> Frame? {
        if id == "UFID" {
            guard let nul = data.firstIndex(of: 0) else { return nil }
            let owner = String(decoding: data[..<nul], as: UTF8.self)
            let identifier = data[(nul + 1)...].prefix { $0 != 0 }
            return Frame(
                id: id, description: owner,
                values: Self.cleaned(String(decoding: identifier, as: UTF8.self)).map { [$0] } ?? [])
        }
        guard let encoding = data.first, encoding <= 3 else { return nil }
        var body = data[1...]
        if id == "COMM" {
            guard body.count >= 3 else { return nil }
            body = body.dropFirst(3)  // the language
        }
        var strings = Self.strings(body, encoding: encoding, raw: raw)
        var description: String?
        if id == "TXXX" || id == "COMM" {
            guard !strings.isEmpty else { return nil }
            description = strings.removeFirst() ?? ""
            if id == "COMM" {
                strings = Array(strings.prefix(1))
            }
        }
        return Frame(id: id, description: description, values: strings.compactMap { $0 })
    }

    /// The NUL-separated strings of an encoded text, each cleaned (nil when empty), or with `raw` as
    /// they are (empty ones too). In UTF-16 each string may have its own byte-order mark; one without
    /// follows the string before it (the first: big-endian, as libmpg123 reads it).
    static func strings(_ bytes: ArraySlice<UInt8>, encoding: UInt8, raw: Bool = false) -> [String?] {
        func cleaned(_ text: String) -> String? {
            raw ? text : Self.cleaned(text)
        }
        switch encoding {
        case 0:
            return bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                cleaned(String(String.UnicodeScalarView($0.map { Unicode.Scalar($0) })))
            }
        case 3:
            return bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                cleaned(String(decoding: $0, as: UTF8.self))
            }
        default:
            var index = bytes.startIndex
            var littleEndian = false
            var atStart = true
            var strings: [String?] = []
            var current: [UInt16] = []
            while index + 1 < bytes.endIndex {
                let first = bytes[index]
                let second = bytes[index + 1]
                index += 2
                if encoding == 1 && atStart && (first, second) == (0xFF, 0xFE) {
                    littleEndian = true
                } else if encoding == 1 && atStart && (first, second) == (0xFE, 0xFF) {
                    littleEndian = false
                } else if first == 0 && second == 0 {
                    strings.append(cleaned(String(decoding: current, as: UTF16.self)))
                    current.removeAll(keepingCapacity: true)
                    atStart = true
                    continue
                } else {
                    current.append(
                        littleEndian ? UInt16(second) << 8 | UInt16(first) : UInt16(first) << 8 | UInt16(second))
                }
                atStart = false
            }
            strings.append(cleaned(String(decoding: current, as: UTF16.self)))
            return strings
        }
    }

    /// A 28-bit syncsafe integer from the first four bytes, or nil when they are not syncsafe.
    private static func syncsafe(_ bytes: ArraySlice<UInt8>) -> Int? {
        let four = bytes.prefix(4)
        guard four.count == 4, four.allSatisfy({ $0 < 0x80 }) else { return nil }
        return four.reduce(0) { $0 << 7 | Int($1) }
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// Undoes ID3v2 unsynchronisation: `FF 00` becomes `FF`.
    private static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xFF && byte == 0) {
                result.append(byte)
            }
            previous = byte
        }
        return result
    }

    // MARK: - ID3v1

    static func tags(fromV1 tag: mpg123_id3v1) -> Tags {
        withUnsafeBytes(of: tag) { raw -> Tags in
            let bytes = Array(raw)
            guard bytes.count >= 128, bytes[0..<3] == [0x54, 0x41, 0x47] else { return Tags() }  // "TAG"
            let comment = bytes[97..<127]
            // ID3v1.1 keeps the track in the comment's last byte, after a zero byte.
            let track = comment[comment.startIndex + 28] == 0 && comment[comment.startIndex + 29] != 0
            var tags = Tags(
                title: Self.latin1(bytes[3..<33]),
                artist: Self.latin1(bytes[33..<63]),
                album: Self.latin1(bytes[63..<93]),
                track: track ? String(comment[comment.startIndex + 29]) : nil,
                date: Self.latin1(bytes[93..<97]),
                genre: ID3Genre.name(Int(bytes[127]))
            )
            tags.comment = Self.latin1(track ? comment.prefix(28) : comment)
            return tags
        }
    }

    /// ID3v1 text is Latin-1, NUL- or space-padded.
    private static func latin1(_ field: ArraySlice<UInt8>) -> String? {
        let used = field.prefix { $0 != 0 }
        let text = String(String.UnicodeScalarView(used.map { Unicode.Scalar($0) }))
        let trimmed = String(text.reversed().drop { $0 == " " }.reversed())
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension Tags {
    /// The (first) comment.
    fileprivate var comment: String? {
        get { self.first(.comment) }
        set { self[.comment] = newValue.map { [$0] } ?? [] }
    }
}
