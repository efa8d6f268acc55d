import Audio
import CChromaprint

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

    /// The fingerprint of the MP3 file at `path`; `isCancelled` is asked between blocks.
    static func compute(path: String, isCancelled: () -> Bool) throws(Failure) -> String {
        let decoder: MP3Decoder
        do throws(DecoderError) {
            decoder = try MP3Decoder(path: path, sampleFormat: .signed16)
        } catch {
            throw .decoder(error)
        }
        guard let context = chromaprint_new(Int32(CHROMAPRINT_ALGORITHM_DEFAULT.rawValue)) else {
            throw .chromaprint("chromaprint_new() failed")
        }
        defer { chromaprint_free(context) }
        let channels = decoder.format.channels
        guard chromaprint_start(context, Int32(decoder.format.sampleRate), Int32(channels)) == 1 else {
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
            guard chromaprint_feed(context, block.baseAddress, Int32(frames * channels)) == 1 else {
                throw .chromaprint("chromaprint_feed() failed")
            }
            remaining -= frames
        }
        guard chromaprint_finish(context) == 1 else { throw .chromaprint("chromaprint_finish() failed") }
        var fingerprint: UnsafeMutablePointer<CChar>?
        guard chromaprint_get_fingerprint(context, &fingerprint) == 1, let fingerprint else {
            throw .chromaprint("chromaprint_get_fingerprint() failed")
        }
        defer { chromaprint_dealloc(fingerprint) }
        return String(cString: fingerprint)
    }
}
