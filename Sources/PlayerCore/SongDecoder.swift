import Audio
import StreamInput

/// A queue entry's decoder: the file's decoder (whichever its format calls for) seen through the
/// entry's range (MPD's `rangeid`), or a network stream's decoder with the station that feeds it.
/// Frames count from the range's start; reading stops at its end, sample-exactly, so that the song
/// ends there and the next one follows gaplessly. Without a range it is the decoder as it is. Owned by
/// the audio thread.
final class SongDecoder {
    /// The entry it plays.
    let entry: QueueEntry
    /// The file's decoder; nil for a stream.
    let file: (any AudioDecoder)?
    /// The stream's decoder; nil for a file.
    let stream: (any StreamDecoder)?
    /// The station the stream's bytes come from; nil for a file.
    let station: StationStream?
    /// The PCM format read.
    let format: AudioFormat
    /// The file's frame where the song starts.
    let startFrame: Int
    /// The file's frame the song ends before; nil: the file's end.
    let endFrame: Int?
    /// True after a read found nothing of a stream to decode yet (the station is slow or reconnecting):
    /// the song goes on, it has not ended.
    private(set) var isStarved = false

    /// Opens the entry's file and moves to the range's start.
    init(entry: QueueEntry, sampleFormat: SampleFormat, replayGain: ReplayGain) throws(DecoderError) {
        if StationStream.isStation(entry.path) {
            // A station is opened by the engine, off the audio thread (`init(entry:stream:station:)`).
            throw .unsupported(path: entry.path, reason: "a network stream is not opened as a file")
        }
        let decoder = try AudioDecoders.open(path: entry.path, sampleFormat: sampleFormat, replayGain: replayGain)
        self.entry = entry
        self.file = decoder
        self.stream = nil
        self.station = nil
        self.format = decoder.format
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

    /// A station's stream, its decoder prepared (its format known). A stream has no range: it plays
    /// as it comes.
    init(entry: QueueEntry, stream: any StreamDecoder, format: AudioFormat, station: StationStream) {
        self.entry = entry
        self.file = nil
        self.stream = stream
        self.station = station
        self.format = format
        self.startFrame = 0
        self.endFrame = nil
    }

    deinit {
        self.station?.cancel()
    }

    /// The song's length in frames (the range's), when known; a stream's is not.
    var lengthFrames: Int? {
        guard let file = self.file else { return nil }
        return (self.endFrame ?? file.lengthFrames).map { $0 - self.startFrame }
    }

    /// The next frame `read(into:)` returns, from the song's start.
    var position: Int { (self.file?.position ?? self.stream?.position ?? 0) - self.startFrame }

    /// The bitrate of the frame last decoded, kbit/s.
    var bitrate: Int { self.file?.bitrate ?? self.stream?.bitrate ?? 0 }

    /// The song's MixRamp profile (a stream has none).
    var mixRamp: MixRamp { self.file?.mixRamp ?? MixRamp() }

    /// The ReplayGain applied, in dB.
    var appliedGainDB: Double { self.file?.appliedGainDB ?? 0 }

    /// Why the song ended, when it ended with a fault: a station given up.
    var endMessage: String? { self.station?.failure }

    /// Decodes into `buffer` as many frames as fit, up to the song's end; 0 at the end, or while a
    /// stream is starved (`isStarved`).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int {
        if let stream = self.stream {
            switch try stream.read(into: buffer) {
            case .frames(let frames):
                self.isStarved = false
                return frames
            case .waiting:
                self.isStarved = true
                return 0
            case .ended:
                self.isStarved = false
                return 0
            }
        }
        guard let file = self.file else { return 0 }
        guard let endFrame = self.endFrame else { return try file.read(into: buffer) }
        let left = endFrame - file.position
        guard left > 0 else { return 0 }
        let bytes = min(buffer.count, left * self.format.bytesPerFrame)
        return try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes]))
    }

    /// Moves to `frame` from the song's start, sample-exactly. A stream cannot move: it stays where it is.
    func seek(toFrame frame: Int) throws(DecoderError) {
        guard let file = self.file else { return }
        try file.seek(toFrame: self.startFrame + frame)
    }
}
