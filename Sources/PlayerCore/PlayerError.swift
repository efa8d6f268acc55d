/// A request the player refused. Nothing changed.
public enum PlayerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request makes no sense in the current state: "cannot pause: player is stopped".
    case notAllowed(request: String, state: PlayerStateKind)
    /// The request needs a song in the queue and there is none.
    case emptyQueue(request: String)
    /// A position or id that is not in the queue.
    case noSuchSong(request: String, detail: String)
    /// A value out of its range (volume above 100, a seek past the end ...).
    case badArgument(request: String, detail: String)
    /// A queue edit failed (too long, bad range ...); `detail` is the queue's own message.
    case queue(request: String, detail: String)
    /// A transition the table forbids: a broken internal path, reported rather than crashing.
    case illegalTransition(from: PlayerStateKind, to: PlayerStateKind)
    /// A seek in a network stream, which plays as it comes.
    case notSeekable(request: String)
    /// The engine is shut down.
    case shutDown

    public var description: String {
        switch self {
        case .notAllowed(let request, let state): "cannot \(request): player is \(state)"
        case .emptyQueue(let request): "cannot \(request): the queue is empty"
        case .noSuchSong(let request, let detail): "cannot \(request): \(detail)"
        case .badArgument(let request, let detail): "cannot \(request): \(detail)"
        case .queue(let request, let detail): "cannot \(request): \(detail)"
        case .illegalTransition(let from, let to): "illegal transition from \(from) to \(to)"
        case .notSeekable(let request): "cannot \(request): a network stream plays as it comes"
        case .shutDown: "the player is shut down"
        }
    }
}
