/// Why a song could not be opened, decoded or positioned. Every case names the file.
public enum DecoderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file exists at the path.
    case fileNotFound(path: String)
    /// The file exists but this process may not read it.
    case permissionDenied(path: String)
    /// The path names a directory, a device or another thing that is not a regular file.
    case notARegularFile(path: String)
    /// The file holds no bytes at all.
    case emptyFile(path: String)
    /// The file holds no MPEG audio that libmpg123 can find; `reason` says what it looks like instead.
    case notMP3(path: String, reason: String)
    /// The stream is damaged beyond what libmpg123 resyncs over.
    case corrupt(path: String, reason: String)
    /// A FLAC, Ogg or WAV file whose decoder refused it: `format` names what the file looks like
    /// ("FLAC", "Ogg Vorbis" ...), `reason` what is wrong (cut short, damaged header ...).
    case damaged(path: String, format: String, reason: String)
    /// The file is none of the formats playerd decodes; `reason` says what it looks like.
    case unsupported(path: String, reason: String)
    /// The operating system failed to open or read the file (an I/O error, too many open files ...).
    case readFailed(path: String, reason: String)
    /// A seek asked for a frame before the start or past the end.
    case seekOutOfRange(path: String, frame: Int, length: Int?)
    /// libmpg123 itself failed in `call` (out of memory, no decoder for this CPU ...).
    case library(path: String, call: String, reason: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case .fileNotFound(let path), .permissionDenied(let path), .notARegularFile(let path),
            .emptyFile(let path), .notMP3(let path, _), .corrupt(let path, _), .damaged(let path, _, _),
            .unsupported(let path, _), .readFailed(let path, _),
            .seekOutOfRange(let path, _, _), .library(let path, _, _):
            path
        }
    }

    /// What is wrong, without the path: "file not found", "not an MP3 stream (...)".
    public var reason: String {
        switch self {
        case .fileNotFound: "file not found"
        case .permissionDenied: "permission denied"
        case .notARegularFile: "not a regular file"
        case .emptyFile: "empty file"
        case .notMP3(_, let reason): "not an MP3 stream (\(reason))"
        case .corrupt(_, let reason): "damaged MP3 stream (\(reason))"
        case .damaged(_, let format, let reason): "damaged \(format) stream (\(reason))"
        case .unsupported(_, let reason): "not a format playerd decodes (\(reason))"
        case .readFailed(_, let reason): "cannot read file (\(reason))"
        case .seekOutOfRange(_, let frame, let length):
            if let length {
                "cannot seek to frame \(frame): the song has \(length) frames"
            } else {
                "cannot seek to frame \(frame)"
            }
        case .library(_, let call, let reason): "\(call) failed (\(reason))"
        }
    }

    /// `PATH: reason`, the form every user-facing message takes.
    public var description: String { "\(self.path): \(self.reason)" }
}
