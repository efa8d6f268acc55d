/// Follows `command_list_begin` / `command_list_ok_begin` ... `command_list_end` over a connection's
/// lines and says when to run what.
///
/// It takes raw lines, not requests, because MPD stores a list's lines as they come and tokenizes each
/// one only when the list runs: a malformed line in a list fails at its own index after the commands
/// before it have run, instead of being refused up front. Tokenizing early and keeping the failure in
/// its slot gives the same answers.
public struct CommandListParser: Sendable {
    /// One slot of a list: the request, or why its line cannot run, with the ACK index already set.
    public typealias Entry = Result<Request, RequestError>

    /// What the daemon does after a line.
    public enum Action: Sendable, Hashable {
        /// Send nothing: the line opened a list or was stored in the open one.
        case collect
        /// Run one command outside any list (ACK index 0), then send `OK`.
        case execute(Request)
        /// Run the entries in order; the first failure sends its ACK and ends the list, and a failed
        /// entry fails when it is reached. In `okMode` send `list_OK` after each success; send `OK`
        /// once all succeed.
        case executeList([Entry], okMode: Bool)
        /// Nothing runs: act on the error (send its reply, and hang up if it ends the connection).
        case reject(RequestError)
    }

    /// MPD's `max_command_list_size` default: 2 MiB, counting each line plus one byte.
    public static let defaultMaximumBytes = 2 * 1024 * 1024

    /// The default number of commands a list may hold. MPD counts only bytes; this bounds the memory
    /// of a list of tiny commands, and is high enough for the lists clients send to fill a queue (a
    /// list of 5,000 `add`s, which 4,096 refused, is common).
    public static let defaultMaximumCommands = 65536

    /// The most commands one list may hold.
    public let maximumCommands: Int
    /// The most bytes one list may hold, each line counting its length plus one, as MPD counts.
    public let maximumBytes: Int
    /// The argument limit passed to `tokenize`.
    public let maximumArguments: Int

    private enum State: Sendable {
        case idle
        case collecting(entries: [Entry], bytes: Int, okMode: Bool)
        // The list outgrew a limit: its lines are dropped until `command_list_end`, which answers with
        // the ACK. Refusing at once would leave the client's remaining lines to run one by one.
        case overflowed(Ack)
    }

    private var state: State = .idle

    /// Creates a parser outside any list.
    public init(
        maximumCommands: Int = CommandListParser.defaultMaximumCommands,
        maximumBytes: Int = CommandListParser.defaultMaximumBytes,
        maximumArguments: Int = Request.maximumArguments
    ) {
        self.maximumCommands = maximumCommands
        self.maximumBytes = maximumBytes
        self.maximumArguments = maximumArguments
    }

    /// Whether a list is open, so that nothing the client sends runs yet.
    public var isCollecting: Bool {
        if case .idle = self.state {
            return false
        }
        return true
    }

    /// Takes one line (without its newline) and says what to do.
    public mutating func consume(_ line: String) -> Action {
        let entry = Entry { () throws(RequestError) -> Request in
            try tokenize(line, maximumArguments: self.maximumArguments)
        }
        if case .failure(.notMPD) = entry {
            // MPD checks this before looking at any list and hangs up, list or not.
            self.state = .idle
            return .reject(.notMPD)
        }
        switch self.state {
        case .idle:
            return self.consumeOutside(entry)
        case .collecting(var entries, var bytes, let okMode):
            if case .success(let request) = entry, CommandListParser.isEnd(request) {
                self.state = .idle
                return .executeList(entries, okMode: okMode)
            }
            bytes += line.utf8.count + 1
            if entries.count == self.maximumCommands || bytes > self.maximumBytes {
                self.state = .overflowed(self.overflow(accepted: entries.count, byBytes: bytes > self.maximumBytes))
                return .collect
            }
            // Giving up the state's copy first lets the append happen in place.
            self.state = .idle
            entries.append(CommandListParser.slot(entry, index: entries.count))
            self.state = .collecting(entries: entries, bytes: bytes, okMode: okMode)
            return .collect
        case .overflowed(let ack):
            if case .success(let request) = entry, CommandListParser.isEnd(request) {
                self.state = .idle
                return .reject(.rejected(ack))
            }
            return .collect
        }
    }

    /// Takes a line that could not be read (past the length limit, or not UTF-8) in place of a line.
    /// Outside a list it is refused at once. Inside one it takes a slot and fails when its turn comes,
    /// like a malformed line, so that the list still has exactly one answer.
    public mutating func consumeUnreadable(_ ack: Ack) -> Action {
        switch self.state {
        case .idle:
            return .reject(.rejected(ack))
        case .collecting(var entries, let bytes, let okMode):
            if entries.count == self.maximumCommands {
                self.state = .overflowed(self.overflow(accepted: entries.count, byBytes: false))
                return .collect
            }
            self.state = .idle
            entries.append(.failure(.rejected(ack.at(listIndex: entries.count))))
            self.state = .collecting(entries: entries, bytes: bytes, okMode: okMode)
            return .collect
        case .overflowed:
            return .collect
        }
    }

    private mutating func consumeOutside(_ entry: Entry) -> Action {
        switch entry {
        case .failure(let error):
            return .reject(error)
        case .success(let request) where !CommandListParser.mayBeListControl(request.name):
            // Nearly every line: a name too short to be a list command needs no comparing.
            return .execute(request)
        case .success(let request) where request.arguments.isEmpty && request.name == "command_list_begin":
            self.state = .collecting(entries: [], bytes: 0, okMode: false)
            return .collect
        case .success(let request) where request.arguments.isEmpty && request.name == "command_list_ok_begin":
            self.state = .collecting(entries: [], bytes: 0, okMode: true)
            return .collect
        case .success(let request) where CommandListParser.isListControl(request.name):
            // Only the bare line is a list command to MPD; anything else with these names, and
            // `command_list_end` with no list open, falls through to its command table, which has
            // no such entry.
            return .reject(.rejected(CommandListParser.unknown(request.name, index: 0)))
        case .success(let request):
            return .execute(request)
        }
    }

    private func overflow(accepted: Int, byBytes: Bool) -> Ack {
        let limit =
            byBytes ? "more than \(self.maximumBytes) bytes" : "more than \(self.maximumCommands) commands"
        return Ack(.argument, "command list too long: \(limit)", listIndex: accepted)
    }

    private static func slot(_ entry: Entry, index: Int) -> Entry {
        switch entry {
        case .success(let request) where CommandListParser.isListControl(request.name):
            // A nested begin is stored like any line and fails when reached, as in MPD.
            .failure(.rejected(CommandListParser.unknown(request.name, index: index)))
        case .success:
            entry
        case .failure(let error):
            .failure(error.at(listIndex: index))
        }
    }

    private static func isEnd(_ request: Request) -> Bool {
        request.arguments.isEmpty && CommandListParser.mayBeListControl(request.name)
            && request.name == "command_list_end"
    }

    private static func isListControl(_ name: String) -> Bool {
        CommandListParser.mayBeListControl(name)
            && (name == "command_list_begin" || name == "command_list_ok_begin" || name == "command_list_end")
    }

    /// False for names shorter than the shortest list command, `command_list_end`: a length is known
    /// at once, where comparing a short name with a long literal went the slow way of string comparison.
    private static func mayBeListControl(_ name: String) -> Bool {
        name.utf8.count >= 16
    }

    private static func unknown(_ name: String, index: Int) -> Ack {
        Ack(.unknown, "unknown command \"\(name)\"", listIndex: index)
    }
}
