/// Opens network streams with the decoder their content calls for.
public enum StreamDecoders {
    /// What a stream is, as far as choosing its decoder goes.
    enum Kind: Equatable {
        case mp3
        case flac
        case ogg
    }

    /// The decoder for a stream: by the announced content type first (audio/mpeg, audio/mp3 → MP3;
    /// audio/ogg, application/ogg, audio/vorbis, audio/opus → Ogg, told apart by the first page;
    /// audio/flac, audio/x-flac → FLAC), then by the first bytes (`source.peek`, past an ID3v2 tag) when
    /// the type is missing, generic (application/octet-stream) or one not known here. Needs at least a
    /// few bytes to have arrived (the network side calls it once its prebuffer is full).
    /// - Throws: `DecoderError.unsupported` naming the URL and what it is (text/html → "an HTML page, not
    ///   audio"; audio/aac, audio/aacp → "AAC, which playerd does not decode"; other types by name).
    public static func open(
        source: any StreamByteSource, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off
    ) throws(DecoderError) -> any StreamDecoder {
        switch try Self.kind(of: source) {
        case .mp3:
            return try MP3StreamDecoder(source: source, sampleFormat: sampleFormat, replayGain: replayGain)
        case .flac:
            return try FLACStreamDecoder(source: source, sampleFormat: sampleFormat, replayGain: replayGain)
        case .ogg:
            return try OggStreamDecoder(source: source, sampleFormat: sampleFormat, replayGain: replayGain)
        }
    }

    /// The kind of `source`: its content type's, else what its first bytes show.
    /// - Throws: `DecoderError.unsupported` for what playerd does not decode.
    static func kind(of source: any StreamByteSource) throws(DecoderError) -> Kind {
        let type = source.contentType.map(Self.essence)
        if let type, let refusal = Self.refusal(type) {
            throw .unsupported(path: source.url, reason: refusal)
        }
        let head = Self.head(of: source)
        // An error page sent as audio (the type a server's configuration gives every answer).
        if let markup = Self.describeMarkup(head: head) {
            throw .unsupported(path: source.url, reason: markup)
        }
        if let type, let kind = Self.kindsByType[type] {
            return kind
        }
        if let kind = Self.kind(head: head) {
            return kind
        }
        if let described = Self.describe(head: head) {
            throw .unsupported(path: source.url, reason: described)
        }
        guard let type, !Self.genericTypes.contains(type) else {
            // No type, or one that says nothing: MP3 has no magic of its own, so libmpg123 decides.
            return .mp3
        }
        if Self.looksLikeMP3(head) { return .mp3 }
        throw .unsupported(path: source.url, reason: "\(type), which playerd does not decode")
    }

    /// The content types that name a decoder.
    static let kindsByType: [String: Kind] = [
        "audio/mpeg": .mp3, "audio/mp3": .mp3, "audio/mpeg3": .mp3, "audio/x-mpeg": .mp3, "audio/x-mp3": .mp3,
        "audio/x-mpeg-3": .mp3, "audio/mpg": .mp3, "audio/x-mpg": .mp3,
        "audio/ogg": .ogg, "application/ogg": .ogg, "audio/x-ogg": .ogg, "application/x-ogg": .ogg,
        "audio/vorbis": .ogg, "audio/x-vorbis": .ogg, "audio/opus": .ogg, "audio/x-opus": .ogg,
        "audio/vorbis+ogg": .ogg, "audio/x-vorbis+ogg": .ogg,
        "audio/flac": .flac, "audio/x-flac": .flac,
    ]

    /// Types that say nothing of the format: the bytes decide.
    static let genericTypes: Set<String> = [
        "application/octet-stream", "binary/octet-stream", "application/x-octet-stream", "application/binary",
        "audio/unknown", "unknown/unknown", "audio/*", "*/*", "",
    ]

    /// Why a type is refused whatever its bytes, or nil.
    static func refusal(_ type: String) -> String? {
        switch type {
        case "text/html", "application/xhtml+xml":
            return "an HTML page, not audio"
        case "audio/aac", "audio/aacp", "audio/x-aac", "audio/x-aacp", "audio/mp4", "audio/x-m4a", "audio/m4a":
            return "AAC, which playerd does not decode"
        default:
            if type.hasPrefix("text/") { return "a text document (\(type)), not audio" }
            return nil
        }
    }

    /// The MIME type without parameters, lowercased and trimmed.
    static func essence(_ type: String) -> String {
        let bare = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(bare.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()).lowercased()
    }

    /// The first bytes of the source, past an ID3v2 tag when the tag has arrived whole.
    static func head(of source: any StreamByteSource) -> [UInt8] {
        let head = source.peek(count: AudioDecoders.headBytes)
        if let size = MP3StreamDecoder.id3v2Size(head), size < 1 << 20 {
            let past = source.peek(count: size + AudioDecoders.headBytes)
            if past.count > size { return Array(past[size...]) }
            // The tag has not arrived whole: a tag before audio is most likely MP3's.
        }
        return head
    }

    /// The kind the first bytes show: FLAC's and Ogg's magic; nil for anything else.
    static func kind(head: [UInt8]) -> Kind? {
        if head.starts(with: Array("fLaC".utf8)) { return .flac }
        if head.starts(with: Array("OggS".utf8)) { return .ogg }
        return nil
    }

    /// What bytes that are not audio playerd decodes look like (documents, other containers, AAC), or
    /// nil when they may be MP3.
    static func describe(head: [UInt8]) -> String? {
        if let markup = Self.describeMarkup(head: head) { return markup }
        if let container = MP3Decoder.containerName(Array(head.prefix(12))) {
            return container == "an MP4/M4A file" ? "MP4 (AAC), which playerd does not decode" : container
        }
        if head.count >= 2, head[0] == 0xff, head[1] & 0xf6 == 0xf0 {
            return "AAC (ADTS), which playerd does not decode"
        }
        return nil
    }

    /// What bytes that are a document, not audio, are; nil for anything else.
    static func describeMarkup(head: [UInt8]) -> String? {
        var text = head[...]
        // A byte-order mark, then white space, before markup.
        if text.starts(with: [0xef, 0xbb, 0xbf]) { text = text.dropFirst(3) }
        text = text.drop { [0x20, 0x09, 0x0a, 0x0d].contains($0) }
        let lower = String(decoding: text.prefix(15), as: UTF8.self).lowercased()
        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.hasPrefix("<head")
            || lower.hasPrefix("<body")
        {
            return "an HTML page, not audio"
        }
        if lower.hasPrefix("<?xml") { return "an XML document, not audio" }
        if lower.hasPrefix("#extm3u") || lower.hasPrefix("[playlist]") {
            return "a station list, not audio"
        }
        return nil
    }

    /// Whether the bytes start with an MPEG audio frame header (layer I to III) or an ID3v2 tag.
    static func looksLikeMP3(_ head: [UInt8]) -> Bool {
        if head.starts(with: Array("ID3".utf8)) { return true }
        guard head.count >= 3, head[0] == 0xff, head[1] & 0xe0 == 0xe0 else { return false }
        let version = (head[1] >> 3) & 0x03
        let layer = (head[1] >> 1) & 0x03
        let bitrate = head[2] >> 4
        let rate = (head[2] >> 2) & 0x03
        return version != 1 && layer != 0 && bitrate != 0x0f && rate != 0x03
    }
}
