import ArgumentParser
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// `update [PATH] [--rescan] [--wait]`: starts an update of the library and, with --wait, waits for it
/// the way `mpc update --wait` does, then says what changed.
struct Update: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Update the library from the music directory (all of it, or PATH in it).",
        discussion: """
            Prints the update's job number. With --wait, waits until the job is over (a progress line on \
            a terminal), then prints how many songs were added or removed and what the library holds.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("A directory or file, relative to the music directory.", valueName: "path"))
    var path: String?

    @Flag(help: "Read every file again, also those that have not changed.")
    var rescan = false

    @Flag(help: "Wait until the update is over, then print a summary.")
    var wait = false

    /// How often the progress line is redrawn on a terminal.
    private static let tick: Duration = .milliseconds(500)

    func run() throws {
        let connection = try self.global.connect()
        let command = self.rescan ? "rescan" : "update"
        let answers = try libraryRequest {
            try connection.commandList([("stats", []), (command, self.path.map { [$0] } ?? [])])
        }
        let before = try LibraryStats(fields: answers[0])
        guard let field = answers[1].first(where: { $0.key == "updating_db" }), let job = Int(field.value) else {
            throw ClientError.malformed("no updating_db in the answer to \(command)")
        }
        print("updating the library (job \(job))")
        // An update of a music directory that is not there finds nothing: say why, rather than let
        // "0 songs" speak for it.
        let missing = try missingMusicDirectory(connection)
        guard self.wait else {
            try missing.map(failBecause)
            return
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        let start = ContinuousClock.now
        var drawn = false
        while true {
            let status = try connection.command("status")
            let running = status.first { $0.key == "updating_db" }.flatMap { Int($0.value) }
            if updateFinished(job: job, updatingDB: running) {
                break
            }
            if terminal {
                let songs = try LibraryStats(fields: try connection.command("stats")).songs
                let took = formatDuration(Double((ContinuousClock.now - start).components.seconds))
                let line = "updating the library (job \(running ?? job)): \(counted(songs, "song")), \(took)"
                writeAll(STDOUT_FILENO, "\r" + fittedToTerminal(line) + "\u{1B}[K")
                drawn = true
            }
            // The job's end is an `update` event; one since the last idle makes this return at once, so
            // an end between `status` and here is not missed.
            _ = try connection.idle(["update"], timeout: terminal ? Update.tick : nil)
        }
        if drawn {
            writeAll(STDOUT_FILENO, "\r\u{1B}[K")
        }
        let after = try LibraryStats(fields: try connection.command("stats"))
        print(LibraryStats.summary(before: before, after: after))
        try missing.map(failBecause)
    }

    private func failBecause(_ problem: String) throws -> Never {
        printError(problem)
        throw ExitCode(ExitStatus.failed)
    }
}

/// Why the server's music directory, as its `config` names it, cannot be there: it does not exist or is
/// not a directory. nil when it is, or when the server does not say (a client over the network, a server
/// without a music directory), or when this process may merely not look into it (another user's).
func missingMusicDirectory(_ connection: MPDConnection) throws(ClientError) -> String? {
    let fields: [(key: String, value: String)]
    do {
        fields = try connection.command("config")
    } catch {
        guard case .refused = error else { throw error }
        return nil
    }
    guard let directory = fields.first(where: { $0.key == "music_directory" })?.value else {
        return nil
    }
    var status = stat()
    if stat(directory, &status) != 0 {
        guard errno == ENOENT || errno == ENOTDIR else { return nil }
        return "the music directory \(directory) does not exist: the library cannot find any song there"
    }
    guard status.st_mode & S_IFMT == S_IFDIR else {
        return "the music directory \(directory) is not a directory: the library cannot find any song there"
    }
    return nil
}

/// `search TEXT... [--artist A] [--album B] [--title C] [--limit N] [--json]`.
struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Search the library: songs with every word in some tag (any case).",
        discussion: """
            Prints one song a line: Artist — Title (Album, 3:45) and its path. --artist, --album and \
            --title look in that tag only. Exits 1 when nothing matches.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Words that must each appear in some tag.", valueName: "text"))
    var words: [String] = []

    @OptionGroup var tags: SearchTagOptions

    @Option(help: ArgumentHelp("Print at most this many songs.", valueName: "n"))
    var limit: Int?

    @Flag(help: "Print a JSON array of songs.")
    var json = false

    var search: LibrarySearch {
        LibrarySearch(words: self.words, artist: self.tags.artist, album: self.tags.album, title: self.tags.title)
    }

    func validate() throws {
        if self.search.expression == nil {
            throw ValidationError("search needs words to look for, or --artist, --album or --title")
        }
        if let limit = self.limit, limit < 1 {
            throw ValidationError("--limit must be at least 1")
        }
    }

    func run() throws {
        let connection = try self.global.connect()
        let window = self.limit.map { ["window", "0:\($0)"] } ?? []
        let songs = try findSongs(connection, "search", [self.search.expression ?? ""] + window)
        if self.json {
            print(jsonArray(songs.map { songJSON($0).text }))
        } else {
            for song in songs {
                print(songLine(song))
            }
        }
        if songs.isEmpty {
            printError("nothing in the library matches \(self.search.description)")
            throw ExitCode(ExitStatus.failed)
        }
    }
}

/// `--artist`, `--album`, `--title` of `search`.
struct SearchTagOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Text the Artist tag must contain.", valueName: "text"))
    var artist: String?

    @Option(help: ArgumentHelp("Text the Album tag must contain.", valueName: "text"))
    var album: String?

    @Option(help: ArgumentHelp("Text the Title tag must contain.", valueName: "text"))
    var title: String?
}

/// `list artists|albums [ARTIST]|genres`.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the library's artists, albums or genres.",
        subcommands: [Artists.self, Albums.self, Genres.self])

    /// `list artists`.
    struct Artists: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the artists, one a line.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print a JSON array of names.")
        var json = false

        func run() throws {
            try printValues(self.global, tag: "artist", key: "Artist", json: self.json)
        }
    }

    /// `list genres`.
    struct Genres: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the genres, one a line.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print a JSON array of names.")
        var json = false

        func run() throws {
            try printValues(self.global, tag: "genre", key: "Genre", json: self.json)
        }
    }

    /// `list albums [ARTIST]`.
    struct Albums: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the albums with their year, under their artists; or one artist's albums.",
            discussion: """
                ARTIST is the album artist's exact name (or, failing that, the artist's); songs without \
                an AlbumArtist tag count under their Artist.
                """)

        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("Only this artist's albums.", valueName: "artist"))
        var artist: String?

        @Flag(help: "Print a JSON array of {artist, album, year} objects.")
        var json = false

        func run() throws {
            let connection = try self.global.connect()
            var albums: [LibraryAlbum]
            if let artist = self.artist {
                albums = try self.albums(connection, by: "albumartist", artist)
                if albums.isEmpty {
                    albums = try self.albums(connection, by: "artist", artist)
                }
            } else {
                albums = LibraryAlbum.list(
                    from: try libraryRequest {
                        try connection.command("list", ["album", "group", "date", "group", "albumartist"])
                    })
            }
            if self.json {
                print(
                    jsonArray(
                        albums.map { album in
                            var object = JSONObject()
                            object.add("artist", album.artist.map(JSONValue.string) ?? .null)
                            object.add("album", .string(album.album))
                            object.add("year", album.year.map(JSONValue.string) ?? .null)
                            return object.text
                        }))
                return
            }
            if self.artist != nil {
                for album in albums {
                    print(album.text)
                }
                return
            }
            var lastArtist: String??
            for album in albums {
                if lastArtist != .some(album.artist) {
                    print(album.artist ?? "(no artist)")
                    lastArtist = .some(album.artist)
                }
                print("  " + album.text)
            }
        }

        private func albums(_ connection: MPDConnection, by tag: String, _ artist: String) throws -> [LibraryAlbum] {
            let fields = try libraryRequest {
                try connection.command(
                    "list", ["album", LibraryFilter.clause(tag, "==", artist), "group", "date"])
            }
            return LibraryAlbum.list(from: fields).map { album in
                LibraryAlbum(artist: artist, album: album.album, year: album.year)
            }
        }
    }
}

/// Prints the values of `list TAG`, skipping the empty one (songs without the tag).
private func printValues(_ global: GlobalOptions, tag: String, key: String, json: Bool) throws {
    let connection = try global.connect()
    let fields = try libraryRequest { try connection.command("list", [tag]) }
    let values = fields.filter { $0.key == key && !$0.value.isEmpty }.map { $0.value }
    if json {
        print(jsonArray(values.map(jsonString)))
    } else {
        for value in values {
            print(value)
        }
    }
}

/// Runs a library request, turning the refusals a person can act on into clear messages (and exit 1).
func libraryRequest<Value>(_ body: () throws -> Value) throws -> Value {
    do {
        return try body()
    } catch let error as ClientError {
        switch error {
        case .refused(code: 50, _, let message) where message == "No database":
            printError(
                "the server has no music library (No database); start playerd with --music-dir and a library")
            throw ExitCode(ExitStatus.failed)
        case .refused(code: 54, _, let message):
            printError("the server refuses another update: its queue of updates is full (\(message))")
            throw ExitCode(ExitStatus.failed)
        default:
            throw error
        }
    }
}

/// The songs a `find` or `search` finds.
func findSongs(_ connection: MPDConnection, _ command: String, _ arguments: [String]) throws -> [Song] {
    try Song.list(from: try libraryRequest { try connection.command(command, arguments) })
}

/// The songs an album query finds, in the order the album plays.
func albumSongs(_ connection: MPDConnection, _ query: AlbumQuery) throws -> [Song] {
    Song.albumOrder(try findSongs(connection, "search", [query.expression]))
}

/// `Artist — Title (Album, 3:45)  path`; the parts a song lacks are left out.
func songLine(_ song: Song) -> String {
    var line = ""
    if let artist = song.artist {
        line += artist + " — "
    }
    line += song.title ?? (song.file.split(separator: "/").last.map(String.init) ?? song.file)
    let details = [song.album, song.duration.map(formatDuration)].compactMap { $0 }
    if !details.isEmpty {
        line += " (" + details.joined(separator: ", ") + ")"
    }
    return line + "  " + song.file
}

/// A song as `search --json` prints it.
func songJSON(_ song: Song) -> JSONObject {
    var object = JSONObject()
    object.add("file", .string(song.file))
    object.add("artist", song.artist.map(JSONValue.string) ?? .null)
    object.add("album", song.album.map(JSONValue.string) ?? .null)
    object.add("title", song.title.map(JSONValue.string) ?? .null)
    object.add("track", song.track.map(JSONValue.string) ?? .null)
    object.add("date", song.date.map(JSONValue.string) ?? .null)
    object.add("genre", song.genre.map(JSONValue.string) ?? .null)
    object.add("duration", song.duration.map(JSONValue.seconds) ?? .null)
    return object
}

/// A JSON array of values already in JSON, one a line: `[]` when empty.
func jsonArray(_ items: [String]) -> String {
    items.isEmpty ? "[]" : "[\n  " + items.joined(separator: ",\n  ") + "\n]"
}

/// A line cut to the terminal's width: a line that wraps cannot be redrawn with `\r`.
func fittedToTerminal(_ line: String) -> String {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1 else {
        return line
    }
    let width = Int(size.ws_col) - 1
    return line.count <= width ? line : String(line.prefix(width))
}

/// Replaces the queue with `uris` and plays, changing nothing unless one of them can play: `playnow`
/// takes them in pieces that fit one request (63 arguments at most); the first piece with a song that
/// plays replaces the queue, the rest is added after it. Returns how many songs were queued.
func playLibrarySongs(_ connection: MPDConnection, _ uris: [String]) throws -> Int {
    let pieces = requestPieces(uris)
    var firstRefusal: ClientError?
    for (index, piece) in pieces.enumerated() {
        do {
            _ = try connection.command("playnow", piece)
        } catch {
            switch error {
            case .refused(code: 5, _, _):
                // Another MPD server has no `playnow`: clear, add and play in one list, as mpc does.
                try appendSongs(connection, uris, first: [("clear", [])], last: [("play", ["0"])])
                return uris.count
            case .refused(code: 50, _, _):
                // Nothing in this piece plays: try the next one, the queue still as it was.
                firstRefusal = firstRefusal ?? error
                continue
            default:
                throw error
            }
        }
        let rest = pieces[(index + 1)...].flatMap { $0 }
        try appendSongs(connection, rest)
        return piece.count + rest.count
    }
    throw firstRefusal ?? ClientError.refused(code: 50, command: "playnow", message: "nothing to play")
}

/// Adds `uris` to the end of the queue with `add` in command lists of a bounded size; `first` and
/// `last` go at the start of the first list and the end of the last one.
func appendSongs(
    _ connection: MPDConnection, _ uris: [String], first: [(String, [String])] = [],
    last: [(String, [String])] = []
) throws {
    var lists: [[(String, [String])]] = [first]
    var bytes = 0
    for uri in uris {
        if lists[lists.count - 1].count >= 2000 || bytes > 500_000 {
            lists.append([])
            bytes = 0
        }
        lists[lists.count - 1].append(("add", [uri]))
        bytes += uri.utf8.count + 8
    }
    lists[lists.count - 1] += last
    for list in lists where !list.isEmpty {
        _ = try connection.commandList(list)
    }
}

/// `uris` in pieces of at most 60 that each fit one request line (well under 64 KiB).
func requestPieces(_ uris: [String]) -> [[String]] {
    var pieces: [[String]] = []
    var bytes = 0
    for uri in uris {
        // Quoted, a URI takes at most twice its bytes (every byte escaped), two quotes and a space.
        let cost = uri.utf8.count * 2 + 3
        if pieces.isEmpty || pieces[pieces.count - 1].count >= 60 || bytes + cost > 60_000 {
            pieces.append([])
            bytes = 0
        }
        pieces[pieces.count - 1].append(uri)
        bytes += cost
    }
    return pieces
}

/// `--search TEXT...` or `--album NAME [--artist X]` of `play` and `queue add`: songs of the library.
struct LibraryChoice: ParsableArguments {
    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp("Songs of the library with every word in some tag (any case).", valueName: "text"))
    var search: [String] = []

    @Option(help: ArgumentHelp("An album of the library, in track order (its name, any case).", valueName: "name"))
    var album: String?

    @Option(
        help: ArgumentHelp(
            "With --album, the album's artist; with --search, text the Artist tag must contain.",
            valueName: "name"))
    var artist: String?

    /// Whether the songs come from the library.
    var isChosen: Bool { !self.search.isEmpty || self.album != nil }

    func validate(withFiles: Bool) throws {
        if !self.search.isEmpty && self.album != nil {
            throw ValidationError("--search and --album exclude each other; give one")
        }
        if self.artist != nil && !self.isChosen {
            throw ValidationError("--artist goes with --search or --album")
        }
        if withFiles && self.isChosen {
            throw ValidationError("give paths, or --search or --album, not both")
        }
    }

    /// The URIs chosen, in the order they go in the queue; nil when none was chosen. When nothing
    /// matches, says so and exits 1, having changed nothing.
    func songs(_ connection: MPDConnection) throws -> [String]? {
        let songs: [Song]
        let description: String
        if let album = self.album {
            let query = AlbumQuery(album: album, artist: self.artist)
            songs = try albumSongs(connection, query)
            description = query.description
        } else if !self.search.isEmpty {
            let search = LibrarySearch(words: self.search, artist: self.artist)
            songs = try findSongs(connection, "search", [search.expression ?? ""])
            description = search.description
        } else {
            return nil
        }
        guard !songs.isEmpty else {
            printError("nothing in the library matches \(description)")
            throw ExitCode(ExitStatus.failed)
        }
        return songs.map(\.file)
    }
}
