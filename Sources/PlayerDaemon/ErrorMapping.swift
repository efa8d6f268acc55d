import ControlProtocol
import PlayerCore

/// The one place where the player's errors become ACKs.
extension Ack {
    /// The ACK a refused player request answers with, for `command`. MPD's own commands answer in
    /// MPD's words (`Bad song index`, `No such song`, `Not playing`), which clients show or parse;
    /// playerd's own commands say what was refused and why.
    init(_ error: PlayerError, command: String) {
        let code: AckCode =
            switch error {
            case .notAllowed, .emptyQueue, .illegalTransition: .playerSync
            case .noSuchSong(_, let detail) where detail.hasPrefix("no song at position"): .argument
            case .noSuchSong: .noExist
            case .badArgument: .argument
            case .queue(_, let detail) where detail == "Playlist is too large": .playlistMax
            case .queue(_, let detail) where detail == "No such song": .noExist
            case .queue: .argument
            case .shutDown: .system
            case .notSeekable: .unknown
            }
        self.init(code, Self.mpdMessage(error, command: command) ?? error.description, command: command)
    }

    /// MPD's wording for `error` when `command` is one of MPD's; nil where MPD has none.
    private static func mpdMessage(_ error: PlayerError, command: String) -> String? {
        guard CommandSpec.standard(command) != nil else { return nil }
        switch error {
        case .notAllowed(_, .stop): return "Not playing"
        case .noSuchSong(_, let detail) where detail.hasPrefix("no song at position"): return "Bad song index"
        case .noSuchSong: return "No such song"
        case .queue(_, let detail): return detail
        case .notSeekable: return "Not seekable"
        default: return nil
        }
    }
}
