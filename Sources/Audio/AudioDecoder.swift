import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// One song decoded to interleaved PCM, streaming: what the engine plays, whatever the file's format.
/// Each format's reference library is one implementation (`MP3Decoder` with libmpg123, `FLACDecoder`
/// with libFLAC, `VorbisDecoder` with libvorbisfile, `OpusDecoder` with libopusfile); `AudioDecoders`
/// opens the one a file's content calls for. A decoder belongs to one thread at a time: it is not
/// `Sendable`.
public protocol AudioDecoder: AnyObject {
    /// The path the decoder was opened with, as given.
    var path: String { get }
    /// The PCM format `read(into:)` produces.
    var format: AudioFormat { get }
    /// The song's length in frames, exact where the format records it (gapless: encoder delay and
    /// padding cut), or nil where it cannot be told.
    var lengthFrames: Int? { get }
    /// The song's tags, in MPD's names; empty when the file has none.
    var tags: Tags { get }
    /// The ReplayGain applied, in dB (0 when off).
    var appliedGainDB: Double { get }
    /// The song's MixRamp profile, for crossfades.
    var mixRamp: MixRamp { get }
    /// The next frame `read(into:)` returns, counted from the start of the song.
    var position: Int { get }
    /// The bitrate of what was last decoded, in kbit/s; 0 when unknown.
    var bitrate: Int { get }

    /// Opens `path`, reads enough of it to know its format, length and tags, and sets up `replayGain`.
    /// `sampleFormat` asks for integers (`.signed16`: at the file's own resolution, 16 bits or more)
    /// or floats (`.float32`); `format` says what is produced.
    init(path: String, sampleFormat: SampleFormat, replayGain: ReplayGain) throws(DecoderError)

    /// Decodes into `buffer` as many whole frames as fit and returns how many it wrote; 0 means the
    /// song has ended.
    /// - Throws: `DecoderError` when the stream breaks off in a way the library cannot get over.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int

    /// Moves to `frame` (0 is the song's first frame), sample-exactly.
    /// - Throws: `DecoderError.seekOutOfRange` for a frame before the start or past the end.
    func seek(toFrame frame: Int) throws(DecoderError)

    /// The tags, format and length of the file at `path`, for the library, without decoding audio.
    static func facts(path: String) throws(DecoderError) -> SongFacts
    /// The embedded front cover (or first picture) of the file at `path`, or nil when it has none.
    static func picture(path: String) throws(DecoderError) -> EmbeddedPicture?
    /// The file's own name-value comments, as MPD's `readcomments` lists them, in file order.
    static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)]
}

/// What a file holds, told from its first bytes (its content, not its name).
public enum AudioFileKind: String, Sendable, CaseIterable {
    case mp3
    case flac
    /// FLAC in an Ogg container (`.oga`).
    case oggFLAC
    case vorbis
    case opus

    /// The format's name in messages: "FLAC", "Ogg Vorbis" ...
    public var displayName: String {
        switch self {
        case .mp3: "MP3"
        case .flac: "FLAC"
        case .oggFLAC: "Ogg FLAC"
        case .vorbis: "Ogg Vorbis"
        case .opus: "Ogg Opus"
        }
    }

    /// The suffixes of the files playerd takes for songs, lowercased, as MPD's decoder plugins list
    /// them: a library scan, a directory added to the queue and `add` of a file go by these (the decoder
    /// is then chosen by the content).
    public static let songSuffixes = ["mp3", "flac", "ogg", "oga", "opus"]

    /// Whether `name` ends in `.` and one of `songSuffixes`, in any case, compared as bytes (a walk asks
    /// it of every file).
    public static func hasSongSuffix(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let suffix = bytes[bytes.index(after: dot)...]
        guard suffix.count >= 3, suffix.count <= 4 else { return false }
        return Self.songSuffixes.contains { wanted in
            wanted.utf8.count == suffix.count
                && zip(suffix, wanted.utf8).allSatisfy { byte, letter in byte | 0x20 == letter }
        }
    }

    /// The decoder that plays it.
    public var decoderType: any AudioDecoder.Type {
        switch self {
        case .mp3: MP3Decoder.self
        case .flac, .oggFLAC: FLACDecoder.self
        case .vorbis: VorbisDecoder.self
        case .opus: OpusDecoder.self
        }
    }

    /// The kind the first bytes of a file show, if they show one of ours. An ID3v2 tag before the
    /// audio is looked past (some taggers put one before FLAC's `fLaC`); MP3 has no magic of its own,
    /// so a file that shows none of the others is tried as MP3 (libmpg123 then says what it is not).
    public static func detect(head: [UInt8]) -> AudioFileKind? {
        func starts(with text: String, at offset: Int = 0) -> Bool {
            let bytes = Array(text.utf8)
            return head.count >= offset + bytes.count && Array(head[offset..<offset + bytes.count]) == bytes
        }
        if starts(with: "fLaC") { return .flac }
        if starts(with: "OggS"), head.count >= 27 {
            // The first page's first packet follows the 27-byte header and its segment table.
            let packet = 27 + Int(head[26])
            if starts(with: "\u{01}vorbis", at: packet) { return .vorbis }
            if starts(with: "OpusHead", at: packet) { return .opus }
            if head.count > packet, head[packet] == 0x7f, starts(with: "FLAC", at: packet + 1) { return .oggFLAC }
            return nil
        }
        return nil
    }
}

/// Opens songs with the decoder their content calls for.
public enum AudioDecoders {
    /// How many bytes of a file `kind(path:)` reads: an Ogg page header with a full segment table
    /// and the first packet's signature.
    static let headBytes = 27 + 255 + 8

    /// What the file at `path` holds: its first bytes (past an ID3v2 tag) name FLAC or an Ogg codec;
    /// anything else is MP3's to accept or refuse.
    /// - Throws: `DecoderError` for a file that is missing, unreadable, not a regular file, empty, or
    ///   an Ogg stream of a codec playerd does not decode.
    public static func kind(path: String) throws(DecoderError) -> AudioFileKind {
        let descriptor = try MP3Decoder.openFile(path)
        defer { _ = Glibc.close(descriptor) }
        let head = Self.readHead(descriptor, at: 0)
        if let tagSize = MP3Decoder.id3v2TagSize(head),
            let kind = AudioFileKind.detect(
                head: Self.readHead(descriptor, at: tagSize))
        {
            return kind
        }
        if let kind = AudioFileKind.detect(head: head) { return kind }
        if head.starts(with: Array("OggS".utf8)) {
            throw .unsupported(path: path, reason: "an Ogg stream of a codec other than Vorbis, Opus or FLAC")
        }
        return .mp3
    }

    /// Opens `path` with its format's decoder (see `AudioDecoder.init`).
    public static func open(
        path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off
    ) throws(DecoderError) -> any AudioDecoder {
        try Self.reading(path) { type throws(DecoderError) in
            try type.init(path: path, sampleFormat: sampleFormat, replayGain: replayGain)
        }
    }

    /// The tags, format and length of `path`, read by its format's decoder.
    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        try Self.reading(path) { type throws(DecoderError) in try type.facts(path: path) }
    }

    /// The embedded picture of `path`, read by its format's decoder.
    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        try Self.reading(path) { type throws(DecoderError) in try type.picture(path: path) }
    }

    /// The name-value comments of `path`, read by its format's decoder.
    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        try Self.reading(path) { type throws(DecoderError) in try type.comments(path: path) }
    }

    /// Runs `body` with the decoder `path`'s content calls for. A file that shows no format's marker is
    /// MP3's to take; when libmpg123 refuses it too and its name does not say MP3 (garbage named
    /// `.flac`), the reason says that it is none of the formats, not that it is no MP3.
    private static func reading<Result>(
        _ path: String, _ body: (any AudioDecoder.Type) throws(DecoderError) -> Result
    ) throws(DecoderError) -> Result {
        let kind = try Self.kind(path: path)
        do {
            return try body(kind.decoderType)
        } catch .notMP3(let path, let reason) where kind == .mp3 && !path.lowercased().hasSuffix(".mp3") {
            throw .unsupported(path: path, reason: "none of FLAC, Ogg Vorbis, Opus or MP3: \(reason)")
        }
    }

    private static func readHead(_ descriptor: Int32, at offset: Int) -> [UInt8] {
        var head = [UInt8](repeating: 0, count: Self.headBytes)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Self.headBytes, off_t(offset)) }
        return Array(head.prefix(max(count, 0)))
    }
}
