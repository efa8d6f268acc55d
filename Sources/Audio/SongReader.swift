import CMPG123
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// What the library scanner stores about one song: its tags, its format and its length.
public struct SongFacts: Sendable, Hashable {
    /// The song's tags (ID3v2, with ID3v1 filling what v2 lacks); empty when it has none.
    public var tags: Tags
    /// The sample rate of the stream, in Hz.
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// The length in seconds, as libmpg123 decodes the file (see `StreamLength`): from the Xing/Info
    /// header's frame count (exact after gapless trimming for LAME files), else from the audio's bytes
    /// between the tags, or a scan of the frames; nil when libmpg123 cannot tell.
    public var duration: Double?
    /// The sample format MPD shows in the song's `Format:` (`44100:24:2`): MP3 and Opus 16 bits,
    /// FLAC its own depth, Vorbis floats.
    public var sampleFormat: SampleFormat

    public init(tags: Tags, sampleRate: Int, channels: Int, duration: Double?, sampleFormat: SampleFormat = .signed16) {
        self.tags = tags
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = duration
        self.sampleFormat = sampleFormat
    }
}

/// A picture embedded in a song's ID3v2 tag (an `APIC` frame).
public struct EmbeddedPicture: Sendable, Hashable {
    /// The MIME type the frame declares, e.g. `image/jpeg`; nil when it declares none.
    public var mimeType: String?
    /// The image's bytes.
    public var data: [UInt8]

    public init(mimeType: String?, data: [UInt8]) {
        self.mimeType = mimeType
        self.data = data
    }
}

/// Reads the facts of many MP3 files quickly, for the library scanner: tags, format and length from the
/// headers, without decoding audio. One libmpg123 handle serves every file (opened and closed per file).
/// A reader belongs to one thread at a time: it is not `Sendable`.
public final class SongReader {
    /// How much of a file is read at a time: the tags and first frames of most songs in one read.
    static let blockBytes = 16384

    private let handle: OpaquePointer?
    private let setupFailure: String?

    /// Creates a reader with its libmpg123 handle. Should libmpg123 fail to make one (out of memory),
    /// every read throws `DecoderError.library`.
    public init() {
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            self.handle = nil
            self.setupFailure = String(cString: mpg123_plain_strerror(code))
            return
        }
        // Gapless, so the length is the decoder's. libmpg123 skips the ID3v2 tag (seeks over it): the
        // frames are read by ID3Tags, without reading picture bodies, which libmpg123 would read whole
        // into memory. `picture(path:)` has libmpg123 parse the tag, with MPG123_PICTURE.
        let flags = Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue | MPG123_SKIP_ID3V2.rawValue)
        let status = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0)
        if status == MPG123_OK.rawValue {
            self.handle = handle
            self.setupFailure = nil
        } else {
            self.setupFailure = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            self.handle = nil
        }
    }

    deinit {
        if let handle {
            mpg123_delete(handle)
        }
    }

    /// The tags, format and length of the MP3 file at `path`.
    /// - Throws: `DecoderError` naming the file and the reason: missing, unreadable, not a regular file,
    ///   empty, not MP3.
    public func read(path: String) throws(DecoderError) -> SongFacts {
        try self.withOpenFile(path) { handle, descriptor, rate, channels in
            let length = StreamLength.frames(handle, descriptor: descriptor)
            return SongFacts(
                tags: ID3Tags.read(handle, descriptor: descriptor),
                sampleRate: rate,
                channels: channels,
                duration: length.flatMap { rate > 0 ? Double($0) / Double(rate) : nil }
            )
        }
    }

    /// The file's own name-value comments as MPD's `readcomments` finds them in an MP3 (its generic tag
    /// scan): the text items of an APEv2 tag ending the file, every value of each; then, unless one of
    /// those items is a tag MPD knows, the ID3v2 `TXXX` frames, each description and first value. All
    /// untrimmed, in file order.
    /// - Throws: what `read(path:)` throws: the file must be an MP3 libmpg123 can read.
    public func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] {
        try self.withOpenFile(path) { _, descriptor, _, _ in
            var comments: [(name: String, value: String)] = []
            if let items = APETags.items(inFile: descriptor) {
                for item in items where item.isText {
                    comments += item.values.map { (item.key, $0) }
                }
                if items.contains(where: { $0.isText && APETags.isKnownTag($0.key) }) {
                    return comments
                }
            }
            return comments + ID3Tags.userTexts(inFile: descriptor)
        }
    }

    /// The embedded front-cover (or first) APIC picture, or nil when the file has none.
    /// - Throws: what `read(path:)` throws.
    public func picture(path: String) throws(DecoderError) -> EmbeddedPicture? {
        guard let handle else {
            throw .library(path: path, call: "mpg123_new", reason: self.setupFailure ?? "no handle")
        }
        let skip = Int(MPG123_SKIP_ID3V2.rawValue)
        let picture = Int(MPG123_PICTURE.rawValue)
        guard mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), skip, 0) == MPG123_OK.rawValue,
            mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), picture, 0) == MPG123_OK.rawValue
        else {
            throw .library(path: path, call: "mpg123_param2", reason: String(cString: mpg123_strerror(handle)))
        }
        defer {
            _ = mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), picture, 0)
            _ = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), skip, 0)
        }
        return try self.withOpenFile(path) { handle, _, _, _ in Self.picture(handle) }
    }

    /// Opens `path` on the shared handle, reads up to the first frame's format and hands over the
    /// handle, the file descriptor, the sample rate and the channel count; closes the file afterwards whatever happens.
    private func withOpenFile<Result>(
        _ path: String,
        _ body: (OpaquePointer, Int32, Int, Int) -> Result
    ) throws(DecoderError) -> Result {
        guard let handle else {
            throw .library(path: path, call: "mpg123_new", reason: self.setupFailure ?? "no handle")
        }
        let descriptor = try MP3Decoder.openFile(path)
        defer { _ = Glibc.close(descriptor) }
        // libmpg123 reads the tags and the first frames through one block (a read of each frame's
        // header and body, and a seek for each, was 12 system calls a file in a scan).
        let reader = BlockReader(descriptor: descriptor, blockSize: Self.blockBytes)
        guard reader.open(handle) == MPG123_OK.rawValue else {
            throw .library(path: path, call: "mpg123_open_handle", reason: String(cString: mpg123_strerror(handle)))
        }
        defer { withExtendedLifetime(reader) { _ = mpg123_close(handle) } }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
            throw MP3Decoder.classifyOpenFailure(path, descriptor: descriptor, handle: handle)
        }
        return body(handle, descriptor, rate, Int(channels))
    }

    /// The front cover among the pictures libmpg123 stored, else the first; links (`-->`) and empty
    /// pictures are passed over, as MPD passes them over.
    private static func picture(_ handle: OpaquePointer) -> EmbeddedPicture? {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue, let tag = v2?.pointee, let list = tag.picture,
            tag.pictures > 0
        else { return nil }
        let pictures = UnsafeBufferPointer(start: list, count: tag.pictures).filter { picture in
            picture.data != nil && picture.size > 0 && ID3Tags.values(picture.mime_type).first != "-->"
        }
        let frontCover = CChar(truncatingIfNeeded: mpg123_id3_pic_front_cover.rawValue)
        guard let chosen = pictures.first(where: { $0.type == frontCover }) ?? pictures.first,
            let data = chosen.data
        else { return nil }
        return EmbeddedPicture(
            mimeType: ID3Tags.values(chosen.mime_type).first,
            data: Array(UnsafeBufferPointer(start: data, count: chosen.size))
        )
    }
}
