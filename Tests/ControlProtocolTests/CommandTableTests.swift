import ControlProtocol
import Testing

@Suite("The command table")
struct CommandTableTests {
    /// A table of the standard specs whose handler is the command's own name.
    static func standardTable() -> CommandTable<String> {
        var table = CommandTable<String>()
        for spec in CommandSpec.mpdStandard {
            table.register(spec, spec.name)
        }
        return table
    }

    @Test("finds a command and its handler")
    func lookup() throws {
        let table = CommandTableTests.standardTable()
        let found = try table.lookup(Request(name: "play", arguments: ["3"]))
        #expect(found.spec == CommandSpec.standard("play"))
        #expect(found.handler == "play")
    }

    @Test("an unknown command, with the name case-sensitive as in MPD")
    func unknown() {
        let table = CommandTableTests.standardTable()
        for name in ["foo", "Status", "pLay"] {
            let error = #expect(throws: Ack.self) { try table.lookup(Request(name: name)) }
            #expect(error?.line == "ACK [5@0] {} unknown command \"\(name)\"\n")
        }
        let error = #expect(throws: Ack.self) { try table.lookup(Request(name: "foo"), listIndex: 3) }
        #expect(error?.line == "ACK [5@3] {} unknown command \"foo\"\n")
    }

    @Test(
        "argument counts are refused with the words mpd 0.23.12 uses",
        arguments: [
            ("play", 2, "ACK [2@0] {play} too many arguments for \"play\"\n"),
            ("ping", 1, "ACK [2@0] {ping} wrong number of arguments for \"ping\"\n"),
            ("status", 1, "ACK [2@0] {status} wrong number of arguments for \"status\"\n"),
            ("seek", 1, "ACK [2@0] {seek} wrong number of arguments for \"seek\"\n"),
            ("seek", 3, "ACK [2@0] {seek} wrong number of arguments for \"seek\"\n"),
            ("add", 0, "ACK [2@0] {add} too few arguments for \"add\"\n"),
            ("add", 3, "ACK [2@0] {add} too many arguments for \"add\"\n"),
            ("find", 0, "ACK [2@0] {find} too few arguments for \"find\"\n"),
            ("plchanges", 3, "ACK [2@0] {plchanges} too many arguments for \"plchanges\"\n"),
        ])
    func arity(_ name: String, _ count: Int, _ line: String) {
        let table = CommandTableTests.standardTable()
        let request = Request(name: name, arguments: Array(repeating: "1", count: count))
        let error = #expect(throws: Ack.self) { try table.lookup(request) }
        #expect(error?.line == line)
    }

    @Test(
        "accepts every count within a command's range",
        arguments: [
            ("play", 0), ("play", 1), ("add", 1), ("add", 2), ("find", 40), ("idle", 0), ("idle", 14),
            ("close", 5), ("tagtypes", 3),
        ])
    func accepts(_ name: String, _ count: Int) throws {
        let table = CommandTableTests.standardTable()
        let request = Request(name: name, arguments: Array(repeating: "x", count: count))
        #expect(try table.lookup(request).handler == name)
    }

    @Test("permission is checked before the arguments, and names the command")
    func permission() throws {
        let table = CommandTableTests.standardTable()
        let error = #expect(throws: Ack.self) {
            try table.lookup(Request(name: "play", arguments: ["1", "2"]), permission: [.read], listIndex: 1)
        }
        #expect(error?.line == "ACK [4@1] {play} you don't have permission for \"play\"\n")
        #expect(try table.lookup(Request(name: "ping"), permission: []).handler == "ping")
        #expect(try table.lookup(Request(name: "status"), permission: [.read]).handler == "status")
        #expect(throws: Ack.self) { try table.lookup(Request(name: "add", arguments: ["x"]), permission: [.read]) }
        #expect(throws: Ack.self) { try table.lookup(Request(name: "outputs"), permission: [.add, .control]) }
    }

    @Test("commands and notcommands split the table by permission")
    func commandsListing() {
        let table = CommandTableTests.standardTable()
        let readable = table.names(permittedTo: [.read])
        #expect(readable.contains("status"))
        #expect(readable.contains("ping"))
        #expect(!readable.contains("play"))
        #expect(readable == readable.sorted())
        let denied = table.names(deniedTo: [.read])
        #expect(Set(readable).union(denied) == Set(table.names))
        #expect(Set(readable).isDisjoint(with: denied))
        #expect(table.names(permittedTo: .all).count == CommandSpec.mpdStandard.count)
    }

    @Test("playerd adds its own commands beside MPD's")
    func ownCommands() throws {
        var table = CommandTableTests.standardTable()
        table.register(CommandSpec("sleep", minimumArguments: 0, maximumArguments: 1, .control), "sleep")
        #expect(try table.lookup(Request(name: "sleep", arguments: ["30"])).handler == "sleep")
        #expect(table["sleep"]?.spec.maximumArguments == 1)
    }

    @Test("the standard specs carry MPD 0.23's counts and permissions")
    func standardSpecs() {
        let names = """
            status currentsong play playid pause stop next previous seek seekid seekcur setvol volume getvol add \
            addid delete deleteid move moveid clear playlistinfo playlistid plchanges plchangesposid repeat \
            random single consume tagtypes config outputs enableoutput disableoutput toggleoutput outputset stats commands \
            notcommands urlhandlers decoders ping close password idle noidle replay_gain_status replay_gain_mode crossfade \
            mixrampdb mixrampdelay listplaylists lsinfo list find search update rescan listall listallinfo \
            listfiles findadd searchadd searchaddpl count listplaylist listplaylistinfo load save playlistadd \
            playlistdelete playlistmove playlistclear rm rename albumart readpicture binarylimit shuffle swap \
            swapid prio prioid rangeid addtagid cleartagid playlist playlistfind playlistsearch sticker subscribe \
            unsubscribe channels readmessages sendmessage partition listpartitions newpartition delpartition \
            moveoutput getfingerprint readcomments listmounts mount unmount kill
            """.split(separator: " ").map(String.init)
        #expect(Set(CommandSpec.mpdStandard.map(\.name)) == Set(names))
        #expect(CommandSpec.mpdStandard.count == names.count)
        let expected: [(String, Int, Int?, Permission)] = [
            ("status", 0, 0, .read), ("play", 0, 1, .player), ("seek", 2, 2, .player), ("add", 1, 2, .add),
            ("plchanges", 1, 2, .read), ("tagtypes", 0, nil, []), ("config", 0, 0, .admin),
            ("enableoutput", 1, 1, .admin), ("outputset", 3, 3, .admin), ("close", 0, nil, []), ("password", 1, 1, []),
            ("idle", 0, nil, .read), ("find", 1, nil, .read), ("lsinfo", 0, 1, .read), ("volume", 1, 1, .player),
            ("update", 0, 1, .control), ("save", 1, 2, .control), ("replay_gain_mode", 1, 1, .player),
            ("sticker", 3, nil, .admin), ("kill", 0, nil, .admin), ("rangeid", 2, 2, .add), ("prio", 2, nil, .player),
            ("sendmessage", 2, 2, .control), ("partition", 1, 1, .read), ("cleartagid", 1, 2, .add),
        ]
        for (name, minimum, maximum, permission) in expected {
            let spec = CommandSpec.standard(name)
            #expect(spec?.minimumArguments == minimum, "\(name)")
            #expect(spec?.maximumArguments == maximum, "\(name)")
            #expect(spec?.permission == permission, "\(name)")
        }
        #expect(CommandSpec.standard("listneighbors") == nil)
        // MPD 0.23's `player`: playback and the queue, apart from `control` (stored playlists, updates).
        let player = """
            play playid pause stop next previous seek seekid seekcur setvol volume delete deleteid move moveid \
            clear repeat random single consume crossfade mixrampdb mixrampdelay replay_gain_mode shuffle swap swapid \
            prio prioid
            """.split(separator: " ").map(String.init)
        #expect(Set(CommandSpec.mpdStandard.filter { $0.permission == .player }.map(\.name)) == Set(player))
    }

    @Test(
        "permission lists as MPD reads them",
        arguments: [
            ("read", Permission.read), ("read,add", [.read, .add]), ("read,,add,", [.read, .add]),
            ("player", .player), ("admin", .admin), ("", []),
            // MPD 0.23 grants `player` with `control`, for configurations written before `player` existed.
            ("control", [.control, .player]), ("read, add", [.read, .add]),
            ("read,add,player,control,admin", Permission.all),
        ] as [(String, Permission)])
    func permissionLists(text: String, expected: Permission) throws {
        #expect(try Permission(parsing: text) == expected)
    }

    @Test func unknownPermissionsAreNamed() {
        #expect(throws: PermissionError.unknown("play")) { try Permission(parsing: "read,play") }
        #expect(
            PermissionError.unknown("x").description
                == "unknown permission \"x\" (known: read, add, player, control, admin)")
        #expect(Permission.all.listed == "read,add,player,control,admin")
        #expect(Permission([.add, .read]).listed == "read,add")
    }
}
