// The MPD protocol as playerd speaks it: pure grammar, no I/O, no player. The daemon owns sockets and
// handlers; this module only says what a line means and how an answer is spelled.

/// MPD's error classes, with the numbers clients see between `[` and `@` in an ACK line.
public enum AckCode: Int, Sendable, Hashable, CaseIterable {
    /// A command that only makes sense inside a command list was sent outside one.
    case notList = 1
    /// An argument is missing, extra, or malformed.
    case argument = 2
    /// The password is wrong.
    case password = 3
    /// The client's permissions do not cover the command.
    case permission = 4
    /// The command is unknown, or the request could not be read at all.
    case unknown = 5
    /// The song, playlist or file named does not exist.
    case noExist = 50
    /// The queue or a stored playlist is full.
    case playlistMax = 51
    /// The operating system failed (I/O, mixer, out of memory ...).
    case system = 52
    /// A stored playlist could not be loaded.
    case playlistLoad = 53
    /// A database update is already running.
    case updateAlready = 54
    /// The player's state does not allow the command (seeking while stopped ...).
    case playerSync = 55
    /// The thing to create already exists.
    case exist = 56
}

/// A refusal the way MPD reports it: one line, `ACK [code@index] {command} message`.
public struct Ack: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error class.
    public var code: AckCode
    /// The command that failed, empty when the request failed before its command was known.
    public var command: String
    /// What went wrong, in MPD's words where MPD has words for it.
    public var message: String
    /// The failing command's position in a command list; 0 outside a list.
    public var listIndex: Int

    /// Creates an ACK; `command` and `listIndex` are usually filled in later by `attributed(to:listIndex:)`.
    public init(_ code: AckCode, _ message: String, command: String = "", listIndex: Int = 0) {
        self.code = code
        self.command = command
        self.message = message
        self.listIndex = listIndex
    }

    /// The same refusal, attributed to `command` at `listIndex`: argument parsers do not know either, the
    /// dispatcher does.
    public func attributed(to command: String, listIndex: Int) -> Ack {
        Ack(self.code, self.message, command: command, listIndex: listIndex)
    }

    /// The same refusal at another position in a command list, keeping its command.
    public func at(listIndex: Int) -> Ack {
        Ack(self.code, self.message, command: self.command, listIndex: listIndex)
    }

    /// The wire form, newline included: `ACK [2@0] {play} Bad song index\n`.
    public var line: String {
        var writer = ResponseWriter(capacity: 32 + self.command.utf8.count + self.message.utf8.count)
        writer.ack(self)
        return writer.text
    }

    /// The wire form without its newline, for logs.
    public var description: String {
        String(self.line.dropLast())
    }
}
