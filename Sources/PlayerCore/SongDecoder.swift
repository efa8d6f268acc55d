import Audio

/// A queue entry's decoder: the file's decoder (whichever its format calls for) seen through the entry's range (MPD's `rangeid`).
/// Frames count from the range's start; reading stops at its end, sample-exactly, so that the song
/// ends there and the next one follows gaplessly. Without a range it is the decoder as it is. Owned by
/// the audio thread.
final class SongDecoder {
    /// The entry it plays.
    let entry: QueueEntry
    /// The file's decoder.
    let decoder: any AudioDecoder
    /// The file's frame where the song starts.
    let startFrame: Int
    /// The file's frame the song ends before; nil: the file's end.
    let endFrame: Int?

    /// Opens the entry's file and moves to the range's start.
    init(entry: QueueEntry, sampleFormat: SampleFormat, replayGain: ReplayGain) throws(DecoderError) {
        let decoder = try AudioDecoders.open(path: entry.path, sampleFormat: sampleFormat, replayGain: replayGain)
        self.entry = entry
        self.decoder = decoder
        let rate = decoder.format.sampleRate
        let fileLength = decoder.lengthFrames
        var start = entry.range?.startFrame(rate: rate) ?? 0
        var end = entry.range?.endFrame(rate: rate)
        if let fileLength {
            // A range past the end (the file changed since the range was set) plays nothing of it.
            start = min(start, fileLength)
            end = end.map { min($0, fileLength) }
        }
        self.startFrame = start
        self.endFrame = end.map { max($0, start) }
        if start > 0 {
            try decoder.seek(toFrame: start)
        }
    }

    /// The PCM format read.
    var format: AudioFormat { self.decoder.format }

    /// The song's length in frames (the range's), when known.
    var lengthFrames: Int? {
        (self.endFrame ?? self.decoder.lengthFrames).map { $0 - self.startFrame }
    }

    /// The next frame `read(into:)` returns, from the song's start.
    var position: Int { self.decoder.position - self.startFrame }

    /// The bitrate of the frame last decoded, kbit/s.
    var bitrate: Int { self.decoder.bitrate }

    /// Decodes into `buffer` as many frames as fit, up to the song's end; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        guard let endFrame = self.endFrame else { return try self.decoder.read(into: buffer) }
        let left = endFrame - self.decoder.position
        guard left > 0 else { return 0 }
        let bytes = min(buffer.count, left * self.format.bytesPerFrame)
        return try self.decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes]))
    }

    /// Moves to `frame` from the song's start, sample-exactly.
    func seek(toFrame frame: Int) throws(DecoderError) {
        try self.decoder.seek(toFrame: self.startFrame + frame)
    }
}
