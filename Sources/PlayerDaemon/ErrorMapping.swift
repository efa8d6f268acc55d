import ControlProtocol
import PlayerCore

/// The one place where the player's errors become ACKs.
extension Ack {
    /// The ACK a refused player request answers with, for `command`.
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
            }
        self.init(code, error.description, command: command)
    }
}
