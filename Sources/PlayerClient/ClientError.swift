// The client side of the control protocol: playerctl, the tests and the benchmarks use it. It is
// synchronous on purpose: a command-line tool sends a few lines and exits, and must start at once.

/// Why a conversation with playerd (or any MPD server) failed.
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the socket path: the file is missing, or the socket refuses connections.
    case notRunning(String)
    /// The server did not answer, or did not take our request, within the connection's timeout.
    case timedOut
    /// Something answered that is not an MPD server: the greeting it sent instead of `OK MPD x.y.z`.
    case notMPD(String)
    /// The server refused a command with an ACK line; the description is the server's message.
    case refused(code: Int, command: String, message: String)
    /// The server closed the connection in the middle of an answer.
    case closed
    /// The server sent a line this client cannot read.
    case malformed(String)
    /// The request cannot be sent as one protocol line (a command name with a space, say).
    case invalidRequest(String)
    /// A socket call failed for a reason other than the ones above: the call's name and its `errno`.
    case system(function: String, errno: Int32)

    /// A message for a person: for `refused`, exactly the server's message.
    public var description: String {
        switch self {
        case .notRunning(let path):
            "playerd is not running: no socket at \(path)"
        case .timedOut:
            "playerd did not answer in time"
        case .notMPD(let greeting):
            "the server does not speak the MPD protocol (it said \"\(greeting)\")"
        case .refused(_, _, let message):
            message
        case .closed:
            "playerd closed the connection"
        case .malformed(let line):
            "unreadable answer from playerd: \(line)"
        case .invalidRequest(let reason):
            "cannot send the request: \(reason)"
        case .system(let function, let errno):
            "\(function) failed: \(systemErrorMessage(errno))"
        }
    }
}
