// The formats of a mixed library (`daemon-bench make-library DIR COUNT mixed`): MP3, FLAC, Ogg Vorbis
// and Ogg Opus in turn. Each format's audio is encoded once by its reference encoder (lame, flac,
// oggenc, opusenc, from the same 0.2 s tone sox makes) and each song's tags are written into a copy:
// an ID3v2.4 tag before the MPEG frames, a VORBIS_COMMENT block after FLAC's STREAMINFO, a comment
// header packet in the Ogg stream's header pages (the pages renumbered and their CRCs computed anew).

#if canImport(Glibc)
    import Glibc
#endif

/// The format a generated song is written in.
enum LibraryFormat: String, CaseIterable {
    case mp3
    case flac
    case vorbis = "ogg"
    case opus

    /// The file name's suffix.
    var suffix: String { self.rawValue }
}

/// Each format's untagged audio, and how a song's tags go into it.
struct FormatTemplates {
    let mp3: [UInt8]
    /// fLaC and STREAMINFO, then the frames (no other metadata block).
    let flacStreamInfo: [UInt8]
    let flacFrames: [UInt8]
    let vorbis: OggTemplate
    let opus: OggTemplate

    /// Encodes the tone in every format in `root` (the files are removed again). `mp3` is the MPEG
    /// frames the all-MP3 library uses.
    static func encode(in root: String, mp3: [UInt8]) throws(BenchFailure) -> FormatTemplates {
        let wav = root + "/.tone.wav"
        let flac = root + "/.tone.flac"
        let ogg = root + "/.tone.ogg"
        let opus = root + "/.tone.opus"
        let script =
            "sox -R -n -r 44100 -c 1 -b 16 \"$1\" synth 0.2 sine 440 vol 0.1"
            + " && flac --silent --no-padding --no-seektable -f -o \"$2\" \"$1\""
            + " && oggenc -Q -q 0 -s 1 -o \"$3\" \"$1\""
            + " && opusenc --quiet --bitrate 24 --serial 1 \"$1\" \"$4\""
        let status = try runCommand(["/bin/sh", "-c", script, "sh", wav, flac, ogg, opus])
        defer {
            for path in [wav, flac, ogg, opus] { unlink(path) }
        }
        guard status == 0 else {
            throw .daemon(
                "sox, flac, oggenc or opusenc failed (status \(status)); are sox, flac, vorbis-tools, opus-tools installed?"
            )
        }
        let (streamInfo, frames) = try Self.splitFLAC(try readFile(flac))
        return FormatTemplates(
            mp3: mp3, flacStreamInfo: streamInfo, flacFrames: frames,
            vorbis: try OggTemplate(try readFile(ogg), headerPackets: 3),
            opus: try OggTemplate(try readFile(opus), headerPackets: 2))
    }

    /// The song's file in `format`, with its tags.
    func file(_ song: PlannedSong, format: LibraryFormat) -> [UInt8] {
        switch format {
        case .mp3:
            return song.tag() + self.mp3
        case .flac:
            let comments = vorbisCommentBody(song.vorbisComments)
            // The last block (bit 7) of type 4 (VORBIS_COMMENT), its 24-bit length.
            let header: [UInt8] = [
                0x84, UInt8(comments.count >> 16 & 0xFF), UInt8(comments.count >> 8 & 0xFF),
                UInt8(comments.count & 0xFF),
            ]
            return self.flacStreamInfo + header + comments + self.flacFrames
        case .vorbis:
            let packet = [0x03] + Array("vorbis".utf8) + vorbisCommentBody(song.vorbisComments) + [0x01]
            return self.vorbis.file(comments: packet)
        case .opus:
            return self.opus.file(comments: Array("OpusTags".utf8) + vorbisCommentBody(song.vorbisComments))
        }
    }

    /// fLaC with STREAMINFO marked the last block, and the frames after all metadata blocks.
    private static func splitFLAC(_ bytes: [UInt8]) throws(BenchFailure) -> ([UInt8], [UInt8]) {
        guard bytes.count > 42, bytes.starts(with: "fLaC".utf8), bytes[4] & 0x7F == 0 else {
            throw .daemon("flac's output does not start with fLaC and STREAMINFO")
        }
        var offset = 4
        var last = false
        while !last {
            guard offset + 4 <= bytes.count else { throw .daemon("flac's output ends in its metadata") }
            last = bytes[offset] & 0x80 != 0
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4 + length
        }
        guard offset < bytes.count else { throw .daemon("flac's output has no frames") }
        var streamInfo = Array(bytes[0..<42])
        streamInfo[4] = 0  // not the last block: VORBIS_COMMENT follows
        return (streamInfo, Array(bytes[offset...]))
    }
}

extension PlannedSong {
    /// The song's tags as Vorbis comments, the same values as its ID3v2.4 tag.
    var vorbisComments: [String] {
        [
            "TITLE=\(self.title)", "ARTIST=\(self.artist)", "ALBUMARTIST=\(self.artist)", "ALBUM=\(self.album)",
            "TRACKNUMBER=\(self.track)/\(self.tracks)", "DISCNUMBER=1/1", "DATE=\(self.year)", "GENRE=\(self.genre)",
        ]
    }
}

/// A Vorbis comment list (the vendor string, then each `NAME=value`), as FLAC's VORBIS_COMMENT block and
/// the Ogg codecs' comment packets hold it.
func vorbisCommentBody(_ comments: [String]) -> [UInt8] {
    func littleEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> ($0 * 8) & 0xFF) } }
    let vendor = Array("playerd daemon-bench".utf8)
    var body = littleEndian(vendor.count) + vendor + littleEndian(comments.count)
    for comment in comments {
        body += littleEndian(comment.utf8.count) + Array(comment.utf8)
    }
    return body
}

/// An Ogg stream split into its header packets and its audio pages, to be written again with another
/// comment packet (the codec's second header packet).
struct OggTemplate {
    private let serial: [UInt8]
    private let headers: [[UInt8]]
    private let audioPages: [[UInt8]]

    /// Splits `bytes`, a one-stream Ogg file whose first `headerPackets` packets end its header pages
    /// (as every encoder writes them: the audio starts on a page of its own).
    init(_ bytes: [UInt8], headerPackets: Int) throws(BenchFailure) {
        var pages: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard offset + 27 <= bytes.count, bytes[offset..<offset + 4].elementsEqual("OggS".utf8) else {
                throw .daemon("the encoder's Ogg stream is broken at byte \(offset)")
            }
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { throw .daemon("an Ogg page is cut off") }
            let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            let end = offset + 27 + segments + body
            guard end <= bytes.count else { throw .daemon("an Ogg page is cut off") }
            pages.append(Array(bytes[offset..<end]))
            offset = end
        }
        var headers: [[UInt8]] = []
        var packet: [UInt8] = []
        var headerPages = 0
        while headers.count < headerPackets {
            guard headerPages < pages.count else {
                throw .daemon("the Ogg stream has fewer than \(headerPackets) packets")
            }
            let page = pages[headerPages]
            let segments = Int(page[26])
            var position = 27 + segments
            for index in 0..<segments {
                let lacing = Int(page[27 + index])
                packet += page[position..<(position + lacing)]
                position += lacing
                if lacing < 255 {
                    guard headers.count < headerPackets else {
                        throw .daemon("the Ogg stream's audio begins on a header page")
                    }
                    headers.append(packet)
                    packet = []
                }
            }
            headerPages += 1
        }
        self.serial = Array(pages[0][14..<18])
        self.headers = headers
        self.audioPages = Array(pages[headerPages...])
    }

    /// The stream with `comments` for its second header packet: the header pages made anew, the audio
    /// pages renumbered after them, every page's CRC computed.
    func file(comments: [UInt8]) -> [UInt8] {
        var packets = self.headers
        packets[1] = comments
        // The first packet alone on the first page (beginning of stream), the others after it.
        var pages = [self.page(packets: [packets[0]], flags: 0x02, sequence: 0)]
        pages += self.pages(packets: Array(packets[1...]), firstSequence: 1)
        var file: [UInt8] = []
        for page in pages { file += page }
        for (index, page) in self.audioPages.enumerated() {
            var copy = page
            let sequence = pages.count + index
            for byte in 0..<4 { copy[18 + byte] = UInt8(sequence >> (byte * 8) & 0xFF) }
            oggChecksum(&copy)
            file += copy
        }
        return file
    }

    /// Header packets laced onto as many pages as they need (255 segments a page at most).
    private func pages(packets: [[UInt8]], firstSequence: Int) -> [[UInt8]] {
        // Each segment: its bytes and whether a packet ends with it.
        var segments: [(ArraySlice<UInt8>, Bool)] = []
        for packet in packets {
            var start = 0
            while packet.count - start >= 255 {
                segments.append((packet[start..<start + 255], false))
                start += 255
            }
            segments.append((packet[start...], true))
        }
        var pages: [[UInt8]] = []
        var continued = false
        var index = 0
        while index < segments.count {
            let chunk = segments[index..<min(index + 255, segments.count)]
            let ends = chunk.contains { $0.1 }
            var page = self.header(
                flags: continued ? 0x01 : 0, granule: ends ? 0 : UInt64.max, sequence: firstSequence + pages.count,
                lacing: chunk.map { UInt8($0.0.count) })
            for (bytes, _) in chunk { page += bytes }
            oggChecksum(&page)
            pages.append(page)
            continued = !(chunk.last?.1 ?? true)
            index += chunk.count
        }
        return pages
    }

    private func page(packets: [[UInt8]], flags: UInt8, sequence: Int) -> [UInt8] {
        var page = self.pages(packets: packets, firstSequence: sequence)[0]
        page[5] |= flags
        oggChecksum(&page)
        return page
    }

    private func header(flags: UInt8, granule: UInt64, sequence: Int, lacing: [UInt8]) -> [UInt8] {
        var header = Array("OggS".utf8) + [0, flags]
        header += (0..<8).map { UInt8(granule >> ($0 * 8) & 0xFF) }
        header += self.serial
        header += (0..<4).map { UInt8(sequence >> ($0 * 8) & 0xFF) }
        header += [0, 0, 0, 0, UInt8(lacing.count)] + lacing
        return header
    }
}

/// Ogg's page checksum (CRC-32, polynomial 0x04C11DB7, MSB first, no reflection), computed with the
/// checksum field zeroed and written into it.
private func oggChecksum(_ page: inout [UInt8]) {
    for index in 22..<26 { page[index] = 0 }
    var crc: UInt32 = 0
    for byte in page {
        crc = (crc << 8) ^ oggCRCTable[Int((crc >> 24) ^ UInt32(byte))]
    }
    for index in 0..<4 { page[22 + index] = UInt8(crc >> (index * 8) & 0xFF) }
}

private let oggCRCTable: [UInt32] = (0..<256).map { (index: UInt32) -> UInt32 in
    var value = index << 24
    for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
    return value
}
