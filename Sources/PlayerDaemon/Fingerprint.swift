import Audio
import CChromaprint

#if canImport(Glibc)
    import Glibc
#endif

/// A song's Chromaprint fingerprint, computed as MPD's `getfingerprint` computes it
/// (src/lib/chromaprint/DecoderClient.cxx): the song decoded to signed 16-bit PCM at its own rate and
/// channel count, fed to libchromaprint's default algorithm until two minutes have gone in (the decoded
/// block that crosses two minutes goes in whole), then the compressed, base64 fingerprint.
enum Fingerprint {
    /// Why a fingerprint could not be made.
    enum Failure: Error, Equatable {
        /// The decoder refused the file (missing, unreadable, not MP3 ...).
        case decoder(DecoderError)
        /// libchromaprint refused the audio.
        case chromaprint(String)
        /// The client went away.
        case cancelled
    }

    /// The audio MPD feeds libchromaprint: the first two minutes.
    static let seconds = 120

    /// Frames decoded per block: an MPEG-1 Layer III frame's samples, the block MPD's decoders hand over.
    static let blockFrames = 1152

    /// Loads libchromaprint for one fingerprint and hands its calls to `body`; unloads it after. It is not
    /// linked (see CChromaprint's shim.h): loading it costs tens of milliseconds, its 15 MB are held only
    /// while fingerprints are made.
    private static func withLibrary<Result>(_ body: (Library) throws(Failure) -> Result) throws(Failure) -> Result {
        var api = playerd_chromaprint_api()
        guard let handle = playerd_chromaprint_load(&api) else {
            let reason = dlerror().map { String(cString: $0) } ?? "a call is missing"
            throw .chromaprint("libchromaprint cannot be loaded: \(reason)")
        }
        defer { playerd_chromaprint_unload(handle) }
        guard let create = api.create, let destroy = api.destroy, let start = api.start, let feed = api.feed,
            let finish = api.finish, let fingerprint = api.fingerprint, let dealloc = api.dealloc
        else { throw .chromaprint("libchromaprint cannot be loaded: a call is missing") }
        return try body(
            Library(
                create: create, destroy: destroy, start: start, feed: feed, finish: finish, fingerprint: fingerprint,
                dealloc: dealloc))
    }

    /// libchromaprint's calls playerd makes.
    private struct Library {
        let create: @convention(c) (Int32) -> OpaquePointer?
        let destroy: @convention(c) (OpaquePointer?) -> Void
        let start: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
        let feed: @convention(c) (OpaquePointer?, UnsafePointer<Int16>?, Int32) -> Int32
        let finish: @convention(c) (OpaquePointer?) -> Int32
        let fingerprint: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
        let dealloc: @convention(c) (UnsafeMutableRawPointer?) -> Void
    }

    /// The fingerprint of the MP3 file at `path`; `isCancelled` is asked between blocks.
    static func compute(path: String, isCancelled: () -> Bool) throws(Failure) -> String {
        let decoder: MP3Decoder
        do throws(DecoderError) {
            decoder = try MP3Decoder(path: path, sampleFormat: .signed16)
        } catch {
            throw .decoder(error)
        }
        return try Self.withLibrary { chromaprint throws(Failure) in
            try Self.fingerprint(decoder, chromaprint, isCancelled: isCancelled)
        }
    }

    /// The fingerprint of what `decoder` decodes, made with `chromaprint`'s calls.
    private static func fingerprint(_ decoder: MP3Decoder, _ chromaprint: Library, isCancelled: () -> Bool)
        throws(Failure) -> String
    {
        guard let context = chromaprint.create(Int32(CHROMAPRINT_ALGORITHM_DEFAULT.rawValue)) else {
            throw .chromaprint("chromaprint_new() failed")
        }
        defer { chromaprint.destroy(context) }
        let channels = decoder.format.channels
        guard chromaprint.start(context, Int32(decoder.format.sampleRate), Int32(channels)) == 1 else {
            throw .chromaprint("chromaprint_start() failed")
        }
        var remaining = decoder.format.sampleRate * Self.seconds
        let block = UnsafeMutableBufferPointer<Int16>.allocate(capacity: Self.blockFrames * channels)
        defer { block.deallocate() }
        while remaining > 0 {
            guard !isCancelled() else { throw .cancelled }
            let frames: Int
            do throws(DecoderError) {
                frames = try decoder.read(into: UnsafeMutableRawBufferPointer(block))
            } catch {
                // Damage past the start ends the song there, as it ends playback.
                break
            }
            guard frames > 0 else { break }
            guard chromaprint.feed(context, block.baseAddress, Int32(frames * channels)) == 1 else {
                throw .chromaprint("chromaprint_feed() failed")
            }
            remaining -= frames
        }
        guard chromaprint.finish(context) == 1 else { throw .chromaprint("chromaprint_finish() failed") }
        var fingerprint: UnsafeMutablePointer<CChar>?
        guard chromaprint.fingerprint(context, &fingerprint) == 1, let fingerprint else {
            throw .chromaprint("chromaprint_get_fingerprint() failed")
        }
        defer { chromaprint.dealloc(fingerprint) }
        return String(cString: fingerprint)
    }
}
