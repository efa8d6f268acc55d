import Audio
import MusicTags

/// Reads what the library (and a song block of a file outside it) shows of one song file, whatever its
/// format: its tags in the order MPD lists them, its length and its sample format.
///
/// The format is told from the content, not the name. An MP3 goes through the scanner's reusable
/// `SongReader` (one libmpg123 handle for every file: the fast path of a scan); a file named `.mp3` that
/// libmpg123 refuses is looked at again, and read by its content's decoder when it holds FLAC, Ogg
/// Vorbis or Opus. Any other file is read by the decoder its content calls for.
public enum SongFile {
    /// What one file holds.
    public struct Facts: Sendable, Hashable {
        /// The tags, in the order MPD lists them (`Tags.items`): an MP3's in MPD's fixed order
        /// (`TagName.blockOrder`), a Vorbis comment's in the file's order.
        public var tags: Tags
        public var sampleRate: Int
        public var channels: Int
        public var duration: Double?
        /// The sample format MPD shows in `Format:` (see `SongFacts.sampleFormat`).
        public var sampleFormat: SampleFormat
        /// What the content is.
        public var kind: AudioFileKind

        /// MPD's `Format:` value: `44100:16:2`, `96000:24:2`, `44100:f:2`.
        public var format: String {
            AudioFormat(sampleRate: self.sampleRate, channels: self.channels, sampleFormat: self.sampleFormat)
                .description
        }
    }

    /// Reads the file at `path`; `reader` serves MP3s.
    /// - Throws: `DecoderError` naming the file and why it is not a song playerd can play.
    public static func read(path: String, reader: SongReader) throws(DecoderError) -> Facts {
        if Self.namesMP3(path) {
            do {
                return Self.mp3(try reader.read(path: path))
            } catch {
                // Not MP3 to libmpg123: a FLAC or Ogg file with the wrong name is still a song.
                switch error {
                case .notMP3, .corrupt, .library:
                    guard let kind = try? AudioDecoders.kind(path: path), kind != .mp3 else { throw error }
                    return try Self.read(path: path, kind: kind, reader: reader)
                default:
                    throw error
                }
            }
        }
        let kind = try AudioDecoders.kind(path: path)
        if kind == .mp3 {
            // No format's marker under another name: MP3 (rare) or nothing, which AudioDecoders names so.
            return Self.mp3(try AudioDecoders.facts(path: path))
        }
        return try Self.read(path: path, kind: kind, reader: reader)
    }

    private static func read(path: String, kind: AudioFileKind, reader: SongReader) throws(DecoderError) -> Facts {
        if kind == .mp3 {
            return Self.mp3(try reader.read(path: path))
        }
        let facts = try kind.decoderType.facts(path: path)
        return Facts(
            tags: facts.tags, sampleRate: facts.sampleRate, channels: facts.channels, duration: facts.duration,
            sampleFormat: facts.sampleFormat, kind: kind)
    }

    private static func mp3(_ facts: SongFacts) -> Facts {
        Facts(
            tags: Tags(items: facts.tags.pairs), sampleRate: facts.sampleRate, channels: facts.channels,
            duration: facts.duration, sampleFormat: facts.sampleFormat, kind: .mp3)
    }

    /// Whether the name ends in `.mp3`, in any case.
    static func namesMP3(_ path: String) -> Bool {
        let suffix = path.utf8.suffix(4)
        return suffix.count == 4 && String(decoding: suffix, as: UTF8.self).lowercased() == ".mp3"
    }
}
