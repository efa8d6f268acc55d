import MusicTags

/// Decodes Opus files with libopusfile. Being built: until it lands, every file of this kind is refused.
public final class OpusDecoder: AudioDecoder {
    public let path: String
    public let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .signed16)
    public let lengthFrames: Int? = nil
    public let tags = Tags()
    public let appliedGainDB = 0.0
    public let mixRamp = MixRamp()
    public let position = 0
    public let bitrate = 0

    public init(path: String, sampleFormat: SampleFormat = .signed16, replayGain: ReplayGain = .off)
        throws(DecoderError)
    {
        self.path = path
        throw .unsupported(path: path, reason: "Opus is not decoded yet")
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(DecoderError) -> Int { 0 }

    public func seek(toFrame frame: Int) throws(DecoderError) {}

    public static func facts(path: String) throws(DecoderError) -> SongFacts {
        throw .unsupported(path: path, reason: "Opus is not decoded yet")
    }

    public static func picture(path: String) throws(DecoderError) -> EmbeddedPicture? { nil }

    public static func comments(path: String) throws(DecoderError) -> [(name: String, value: String)] { [] }
}
