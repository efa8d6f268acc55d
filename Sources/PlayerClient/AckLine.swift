/// A refusal as the server sends it: `ACK [code@index] {command} message`.
public struct AckLine: Sendable, Hashable {
    /// The error class, MPD's number (`5` unknown command, `55` player state ...).
    public var code: Int
    /// The failing command's position in a command list; 0 outside a list.
    public var listIndex: Int
    /// The command that failed, empty when the server could not tell (an unknown command).
    public var command: String
    /// What went wrong, in the server's words.
    public var message: String

    /// Creates an ACK from its parts.
    public init(code: Int, listIndex: Int, command: String, message: String) {
        self.code = code
        self.listIndex = listIndex
        self.command = command
        self.message = message
    }

    /// Reads one line (without its newline); `nil` when it is not a well-formed ACK line.
    public init?(parsing line: String) {
        var rest = Substring(line)
        guard rest.hasPrefix("ACK [") else {
            return nil
        }
        rest = rest.dropFirst(5)
        guard let at = rest.firstIndex(of: "@"), let code = Int(rest[..<at]) else {
            return nil
        }
        rest = rest[rest.index(after: at)...]
        guard let bracket = rest.firstIndex(of: "]"), let listIndex = Int(rest[..<bracket]) else {
            return nil
        }
        rest = rest[rest.index(after: bracket)...]
        guard rest.hasPrefix(" {") else {
            return nil
        }
        rest = rest.dropFirst(2)
        // A command name never holds a `}`, so the first one closes it even when the message has more.
        guard let brace = rest.firstIndex(of: "}") else {
            return nil
        }
        let command = String(rest[..<brace])
        rest = rest[rest.index(after: brace)...]
        if rest.hasPrefix(" ") {
            rest = rest.dropFirst()
        }
        self.init(code: code, listIndex: listIndex, command: command, message: String(rest))
    }

    /// The error a client throws for this refusal.
    public var error: ClientError {
        .refused(code: self.code, command: self.command, message: self.message)
    }
}
