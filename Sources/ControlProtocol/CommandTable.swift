/// What a client may do, as MPD grants it per password or per local/remote connection.
public struct Permission: OptionSet, Sendable, Hashable {
    /// Read status, the queue and the database.
    public static let read = Permission(rawValue: 1)
    /// Add songs to the queue.
    public static let add = Permission(rawValue: 2)
    /// Edit stored playlists and update the database.
    public static let control = Permission(rawValue: 4)
    /// Configure outputs and read the configuration.
    public static let admin = Permission(rawValue: 8)
    /// Control playback and edit the queue (MPD 0.23's `player`).
    public static let player = Permission(rawValue: 16)

    /// Every permission: what a client gets when no password is configured.
    public static let all: Permission = [.read, .add, .player, .control, .admin]

    /// MPD's bit values: 1, 2, 4, 8, 16.
    public let rawValue: Int

    /// Creates a set from MPD's bit values.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The names MPD's configuration and `password` lines use, in MPD's order.
    public static let names: [(name: String, permission: Permission)] = [
        ("read", .read), ("add", .add), ("player", .player), ("control", .control), ("admin", .admin),
    ]

    /// Parses MPD's comma-separated list (`read,add,player`): empty items are passed over, as in MPD,
    /// and `control` brings `player` with it, as MPD 0.23 grants it for configurations written before
    /// `player` existed.
    /// - Throws: `PermissionError.unknown` naming the first word that is no permission.
    public init(parsing list: String) throws(PermissionError) {
        var permission: Permission = []
        for word in list.split(separator: ",", omittingEmptySubsequences: true) {
            let name = word.trimmingCharacters(in: " \t")
            guard !name.isEmpty else { continue }
            guard let known = Self.names.first(where: { $0.name == name }) else {
                throw .unknown(String(name))
            }
            permission.insert(known.permission)
        }
        if permission.contains(.control) {
            permission.insert(.player)
        }
        self = permission
    }

    /// The names of the permissions held, comma-separated, in MPD's order ("" for none).
    public var listed: String {
        Self.names.filter { self.contains($0.permission) }.map(\.name).joined(separator: ",")
    }
}

/// Why a permission list could not be read.
public enum PermissionError: Error, Hashable, CustomStringConvertible {
    case unknown(String)

    public var description: String {
        switch self {
        case .unknown(let name):
            "unknown permission \"\(name)\" (known: \(Permission.names.map(\.name).joined(separator: ", ")))"
        }
    }
}

extension Substring {
    /// The text without the given characters at either end.
    fileprivate func trimmingCharacters(in characters: String) -> Substring {
        var text = self
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return text
    }
}

/// A command's shape: its name, how many arguments it takes, and what permission it needs.
public struct CommandSpec: Sendable, Hashable {
    /// The name a client sends.
    public var name: String
    /// The fewest arguments accepted.
    public var minimumArguments: Int
    /// The most arguments accepted; `nil` for no limit.
    public var maximumArguments: Int?
    /// What the client must hold; empty for commands anyone may send (`ping`, `password`).
    public var permission: Permission

    /// Creates a spec; `minimumArguments...maximumArguments` must not be empty.
    public init(_ name: String, arguments: Int, _ permission: Permission) {
        self.init(name, minimumArguments: arguments, maximumArguments: arguments, permission)
    }

    /// Creates a spec with a range of argument counts; `nil` as the maximum for no limit.
    public init(_ name: String, minimumArguments: Int, maximumArguments: Int?, _ permission: Permission) {
        precondition(minimumArguments >= 0 && minimumArguments <= (maximumArguments ?? .max), "empty arity")
        self.name = name
        self.minimumArguments = minimumArguments
        self.maximumArguments = maximumArguments
        self.permission = permission
    }

    /// MPD's refusal of `count` arguments, or `nil` if they fit. The text depends on the shape, exactly
    /// as in MPD: a fixed count says "wrong number", a range says "too few" or "too many".
    public func arityError(forCount count: Int) -> Ack? {
        let problem: String
        if self.minimumArguments == self.maximumArguments && count != self.minimumArguments {
            problem = "wrong number of arguments"
        } else if count < self.minimumArguments {
            problem = "too few arguments"
        } else if let maximum = self.maximumArguments, count > maximum {
            problem = "too many arguments"
        } else {
            return nil
        }
        return Ack(.argument, "\(problem) for \"\(self.name)\"", command: self.name)
    }

    /// MPD's refusal of a name no command has.
    @usableFromInline
    static func unknown(_ request: Request, listIndex: Int) -> Ack {
        Ack(.unknown, "unknown command \"\(request.name)\"", listIndex: listIndex)
    }

    /// MPD's checks of a request for this command, in MPD's order: the permission, then the argument
    /// count (what `CommandTable.lookup` checks once it has found the command).
    public func check(_ request: Request, permission: Permission, listIndex: Int) throws(Ack) {
        guard permission.isSuperset(of: self.permission) else {
            throw Ack(
                .permission, "you don't have permission for \"\(request.name)\"", command: request.name,
                listIndex: listIndex)
        }
        let count = request.arguments.count
        guard count < self.minimumArguments || count > self.maximumArguments ?? .max,
            let ack = self.arityError(forCount: count)
        else { return }
        throw ack.at(listIndex: listIndex)
    }

    /// The spec MPD 0.23 gives `name`, from `mpdStandard`.
    public static func standard(_ name: String) -> CommandSpec? {
        CommandSpec.standardByName[name]
    }

    private static let standardByName: [String: CommandSpec] = Dictionary(
        uniqueKeysWithValues: CommandSpec.mpdStandard.map { ($0.name, $0) })

    /// The commands playerd answers as MPD does, with MPD 0.23's argument counts and permissions (from
    /// its `AllCommands.cxx`, checked against a running mpd 0.23.12).
    ///
    /// `noidle` is not in MPD's table: MPD catches the bare line before the table and answers nothing
    /// unless the client is idle; it is listed so that the daemon can route it like the rest. `close`
    /// takes any arguments, as in MPD, which never checks them.
    public static let mpdStandard: [CommandSpec] = [
        // Status and the current song.
        CommandSpec("status", arguments: 0, .read),
        CommandSpec("currentsong", arguments: 0, .read),
        CommandSpec("stats", arguments: 0, .read),
        CommandSpec("replay_gain_status", arguments: 0, .read),
        CommandSpec("replay_gain_mode", arguments: 1, .player),
        // Playback (`player`: MPD 0.23 split it from `control`).
        CommandSpec("play", minimumArguments: 0, maximumArguments: 1, .player),
        CommandSpec("playid", minimumArguments: 0, maximumArguments: 1, .player),
        CommandSpec("pause", minimumArguments: 0, maximumArguments: 1, .player),
        CommandSpec("stop", arguments: 0, .player),
        CommandSpec("next", arguments: 0, .player),
        CommandSpec("previous", arguments: 0, .player),
        CommandSpec("seek", arguments: 2, .player),
        CommandSpec("seekid", arguments: 2, .player),
        CommandSpec("seekcur", arguments: 1, .player),
        // Volume.
        CommandSpec("setvol", arguments: 1, .player),
        CommandSpec("volume", arguments: 1, .player),
        CommandSpec("getvol", arguments: 0, .read),
        // The queue.
        CommandSpec("add", minimumArguments: 1, maximumArguments: 2, .add),
        CommandSpec("addid", minimumArguments: 1, maximumArguments: 2, .add),
        CommandSpec("delete", arguments: 1, .player),
        CommandSpec("deleteid", arguments: 1, .player),
        CommandSpec("move", arguments: 2, .player),
        CommandSpec("moveid", arguments: 2, .player),
        CommandSpec("clear", arguments: 0, .player),
        CommandSpec("playlistinfo", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("playlistid", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("plchanges", minimumArguments: 1, maximumArguments: 2, .read),
        CommandSpec("plchangesposid", minimumArguments: 1, maximumArguments: 2, .read),
        // Playback options.
        CommandSpec("repeat", arguments: 1, .player),
        CommandSpec("random", arguments: 1, .player),
        CommandSpec("single", arguments: 1, .player),
        CommandSpec("consume", arguments: 1, .player),
        CommandSpec("crossfade", arguments: 1, .player),
        CommandSpec("mixrampdb", arguments: 1, .player),
        CommandSpec("mixrampdelay", arguments: 1, .player),
        // Outputs.
        CommandSpec("outputs", arguments: 0, .read),
        CommandSpec("enableoutput", arguments: 1, .admin),
        CommandSpec("disableoutput", arguments: 1, .admin),
        CommandSpec("toggleoutput", arguments: 1, .admin),
        CommandSpec("outputset", arguments: 3, .admin),
        // The connection and what the server offers.
        CommandSpec("tagtypes", minimumArguments: 0, maximumArguments: nil, []),
        CommandSpec("config", arguments: 0, .admin),
        CommandSpec("commands", arguments: 0, []),
        CommandSpec("notcommands", arguments: 0, []),
        CommandSpec("urlhandlers", arguments: 0, .read),
        CommandSpec("decoders", arguments: 0, .read),
        CommandSpec("ping", arguments: 0, []),
        CommandSpec("close", minimumArguments: 0, maximumArguments: nil, []),
        CommandSpec("password", arguments: 1, []),
        CommandSpec("idle", minimumArguments: 0, maximumArguments: nil, .read),
        CommandSpec("noidle", arguments: 0, []),
        // The database and stored playlists.
        CommandSpec("listplaylists", arguments: 0, .read),
        CommandSpec("listplaylist", arguments: 1, .read),
        CommandSpec("listplaylistinfo", arguments: 1, .read),
        CommandSpec("load", minimumArguments: 1, maximumArguments: 3, .add),
        // MPD 0.23 takes the name only; the optional mode (`create`, `append`, `replace`) is 0.24's.
        CommandSpec("save", minimumArguments: 1, maximumArguments: 2, .control),
        CommandSpec("playlistadd", minimumArguments: 2, maximumArguments: 3, .control),
        CommandSpec("playlistdelete", arguments: 2, .control),
        CommandSpec("playlistmove", arguments: 3, .control),
        CommandSpec("playlistclear", arguments: 1, .control),
        CommandSpec("rm", arguments: 1, .control),
        CommandSpec("rename", arguments: 2, .control),
        // Pictures, in chunks of the client's `binarylimit`.
        CommandSpec("albumart", arguments: 2, .read),
        CommandSpec("readpicture", arguments: 2, .read),
        CommandSpec("binarylimit", arguments: 1, []),
        CommandSpec("lsinfo", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("list", minimumArguments: 1, maximumArguments: nil, .read),
        CommandSpec("find", minimumArguments: 1, maximumArguments: nil, .read),
        CommandSpec("search", minimumArguments: 1, maximumArguments: nil, .read),
        CommandSpec("update", minimumArguments: 0, maximumArguments: 1, .control),
        CommandSpec("rescan", minimumArguments: 0, maximumArguments: 1, .control),
        CommandSpec("listall", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("listallinfo", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("listfiles", minimumArguments: 0, maximumArguments: 1, .read),
        CommandSpec("findadd", minimumArguments: 1, maximumArguments: nil, .add),
        CommandSpec("searchadd", minimumArguments: 1, maximumArguments: nil, .add),
        CommandSpec("searchaddpl", minimumArguments: 2, maximumArguments: nil, .control),
        CommandSpec("count", minimumArguments: 1, maximumArguments: nil, .read),
        // More of the queue.
        CommandSpec("shuffle", minimumArguments: 0, maximumArguments: 1, .player),
        CommandSpec("swap", arguments: 2, .player),
        CommandSpec("swapid", arguments: 2, .player),
        CommandSpec("prio", minimumArguments: 2, maximumArguments: nil, .player),
        CommandSpec("prioid", minimumArguments: 2, maximumArguments: nil, .player),
        CommandSpec("rangeid", arguments: 2, .add),
        CommandSpec("addtagid", arguments: 3, .add),
        CommandSpec("cleartagid", minimumArguments: 1, maximumArguments: 2, .add),
        CommandSpec("playlist", arguments: 0, .read),
        CommandSpec("playlistfind", minimumArguments: 1, maximumArguments: nil, .read),
        CommandSpec("playlistsearch", minimumArguments: 1, maximumArguments: nil, .read),
        // Stickers, client-to-client channels, partitions.
        CommandSpec("sticker", minimumArguments: 3, maximumArguments: nil, .admin),
        CommandSpec("subscribe", arguments: 1, .read),
        CommandSpec("unsubscribe", arguments: 1, .read),
        CommandSpec("channels", arguments: 0, .read),
        CommandSpec("readmessages", arguments: 0, .read),
        CommandSpec("sendmessage", arguments: 2, .control),
        CommandSpec("partition", arguments: 1, .read),
        CommandSpec("listpartitions", arguments: 0, .read),
        CommandSpec("newpartition", arguments: 1, .admin),
        CommandSpec("delpartition", arguments: 1, .admin),
        CommandSpec("moveoutput", arguments: 1, .admin),
        // A song's own data, storage and the server.
        CommandSpec("getfingerprint", arguments: 1, .read),
        CommandSpec("readcomments", arguments: 1, .read),
        CommandSpec("listmounts", arguments: 0, .read),
        CommandSpec("mount", arguments: 2, .admin),
        CommandSpec("unmount", arguments: 1, .admin),
        // `kill` takes any arguments, as `close` does.
        CommandSpec("kill", minimumArguments: 0, maximumArguments: nil, .admin),
    ]
}

/// The daemon's commands: each name's spec and the handler that runs it.
///
/// Arguments are counted and permissions checked here, once, so that handlers only parse and act.
public struct CommandTable<Handler> {
    // Visible to inlinable code so that `lookup` is specialized for the daemon's handler type: called
    // generically across the module boundary, every lookup instantiated the entry's tuple metadata.
    @usableFromInline
    var entries: [String: (spec: CommandSpec, handler: Handler)] = [:]

    /// Creates an empty table.
    public init() {}

    /// Adds a command. Registering a name twice is a programming error.
    public mutating func register(_ spec: CommandSpec, _ handler: Handler) {
        precondition(self.entries[spec.name] == nil, "command \(spec.name) registered twice")
        self.entries[spec.name] = (spec, handler)
    }

    /// The spec and handler for `name`, if registered.
    public subscript(name: String) -> (spec: CommandSpec, handler: Handler)? {
        self.entries[name]
    }

    /// The registered names, sorted as MPD lists them for `commands`.
    public var names: [String] { self.entries.keys.sorted() }

    /// What `commands` lists for a client holding `permission`, sorted.
    public func names(permittedTo permission: Permission) -> [String] {
        self.entries.values.filter { permission.isSuperset(of: $0.spec.permission) }.map(\.spec.name).sorted()
    }

    /// What `notcommands` lists for a client holding `permission`, sorted.
    public func names(deniedTo permission: Permission) -> [String] {
        self.entries.values.filter { !permission.isSuperset(of: $0.spec.permission) }.map(\.spec.name).sorted()
    }

    /// Finds the command for `request` and checks it the way MPD does, in MPD's order: the name, then
    /// the permission, then the argument count. Every ACK carries `listIndex`; those after the name is
    /// known also carry the command's name.
    @inlinable
    public func lookup(
        _ request: Request, permission: Permission = .all, listIndex: Int = 0
    ) throws(Ack) -> (spec: CommandSpec, handler: Handler) {
        guard let entry = self.entries[request.name] else {
            throw CommandSpec.unknown(request, listIndex: listIndex)
        }
        try entry.spec.check(request, permission: permission, listIndex: listIndex)
        return entry
    }
}

extension CommandTable: Sendable where Handler: Sendable {}
