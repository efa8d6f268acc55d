import MusicTags

// Network streams (internet radio) decoded as their bytes arrive. The network side (module
// StreamInput) fills a `StreamByteSource` on threads of its own; a `StreamDecoder` reads it without
// ever waiting, on the audio thread, as a file's `AudioDecoder` is read. What the two sides share is
// here, so that Audio needs no networking.

/// What reading a stream's bytes found.
public enum StreamRead: Equatable, Sendable {
    /// This many bytes (more than 0) were copied.
    case bytes(Int)
    /// Nothing has arrived yet; more may come (the connection is slow, or being made again).
    case waiting
    /// The bytes that follow come from a new connection: what came before was cut off at an arbitrary
    /// point, so a decoder drops what it holds of a partial frame or page and starts afresh (the
    /// stream's format may have changed). Reported once, before the new connection's first bytes.
    case discontinuity
    /// No more bytes will come: the stream ended (a body read whole), or failed for good (`failure`
    /// says why).
    case end
}

/// The bytes of a network stream as they arrive, read without waiting: the audio thread never waits
/// on the network. ICY metadata is taken out before the bytes get here.
public protocol StreamByteSource: AnyObject, Sendable {
    /// The stream's address, for messages.
    var url: String { get }
    /// The MIME type the server announced, lowercased, without parameters; nil when it sent none.
    var contentType: String? { get }
    /// Why the stream ended, when it failed for good; nil while it goes on or after a clean end.
    var failure: String? { get }
    /// Copies up to `buffer.count` of the bytes that have arrived into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead
    /// Up to `count` of the bytes that have arrived, without taking them (to tell the format).
    func peek(count: Int) -> [UInt8]
}

/// What a stream decoder's `read` produced.
public enum StreamDecodeResult: Equatable, Sendable {
    /// This many frames (more than 0) were written.
    case frames(Int)
    /// Not one whole frame can be decoded from what has arrived; ask again later.
    case waiting
    /// The stream has ended: no more frames will come.
    case ended
}

/// A network stream decoded to interleaved PCM as its bytes arrive, never waiting for them: libmpg123's
/// feed interface for MP3, the push interfaces of libogg with libvorbis / libopus, and libFLAC for
/// FLAC. Created and prepared off the audio thread, then handed to it: it belongs to one thread at a
/// time and is not `Sendable`.
public protocol StreamDecoder: AnyObject {
    /// What it reads.
    var source: any StreamByteSource { get }
    /// The format of what `read(into:)` writes; nil until `prepare()` has returned true. It stays as
    /// it is afterwards: a stream that changes its format ends (`DecoderError`).
    var format: AudioFormat? { get }
    /// Frames written so far.
    var position: Int { get }
    /// The bitrate of what was last decoded, kbit/s; 0 when unknown.
    var bitrate: Int { get }
    /// The tags the stream itself carries (an Ogg link's Vorbis comments, an ID3v2 tag before MP3
    /// frames); ICY titles are the network side's.
    var tags: Tags { get }
    /// Changes each time `tags` does.
    var tagsVersion: Int { get }
    /// Reads what has arrived as far as the stream's format and headers; true once `format` is known.
    /// PCM decoded on the way is kept for `read(into:)`. It never waits.
    /// - Throws: `DecoderError` when the bytes are not of the decoder's format.
    func prepare() throws(DecoderError) -> Bool
    /// Decodes what has arrived into `buffer`, as many whole frames as fit.
    /// - Throws: `DecoderError` when the stream breaks in a way the library cannot get over, or
    ///   changes its format.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> StreamDecodeResult
}
