import ControlProtocol
import Library
import MusicTags
import PlayerCore

/// MPD's database commands, answered from the library: browsing (`lsinfo`, `listall`, `listallinfo`,
/// `listfiles`), searching (`find`, `search`, `list`, `count`), queueing from it (`findadd`,
/// `searchadd`, `searchaddpl`) and updating it (`update`, `rescan`).
extension Commands {
    static func registerLibraryCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("update", .immediate { service, call throws(Ack) in try update(service, &call, rescan: false) })
        add("rescan", .immediate { service, call throws(Ack) in try update(service, &call, rescan: true) })
        // Queries of the database are tried at once first (`quick`); listfiles reads the disk.
        add("lsinfo", .library(listInfo, quick: true))
        add(
            "listall",
            .library({ service, call, _ throws(Ack) in try listAll(service, &call, info: false) }, quick: true))
        add(
            "listallinfo",
            .library({ service, call, _ throws(Ack) in try listAll(service, &call, info: true) }, quick: true))
        add("listfiles", .library({ service, call, _ throws(Ack) in try listFiles(service, &call) }, quick: false))
        add(
            "find",
            .library({ service, call, _ throws(Ack) in try find(service, &call, ignoringCase: false) }, quick: true))
        add(
            "search",
            .library({ service, call, _ throws(Ack) in try find(service, &call, ignoringCase: true) }, quick: true))
        add("findadd", .deferred { service, call throws(Ack) in try await findAdd(service, call, ignoringCase: false) })
        add(
            "searchadd", .deferred { service, call throws(Ack) in try await findAdd(service, call, ignoringCase: true) }
        )
        add("searchaddpl", .deferred(searchAddToPlaylist))
        add("list", .library({ service, call, _ throws(Ack) in try list(service, &call) }, quick: true))
        add("count", .library({ service, call, _ throws(Ack) in try count(service, &call) }, quick: true))
    }

    /// The library, or MPD's refusal when there is none.
    static func library(_ service: PlayerService, _ call: CommandCall) throws(Ack) -> MusicLibrary {
        guard let library = service.library else {
            throw Ack(.noExist, "No database", command: call.name)
        }
        return library
    }

    /// Runs `body` with the library on the library's threads; its ACK names the command.
    private static func libraryWork<Value: Sendable>(
        _ service: PlayerService, _ call: CommandCall,
        _ body: @escaping @Sendable (MusicLibrary) throws(Ack) -> Value
    ) async throws(Ack) -> Value {
        let library = try self.library(service, call)
        do {
            return try await FileSystemWork.run(on: .library) { _ throws(Ack) in try body(library) }
        } catch {
            throw error.command.isEmpty ? Ack(error.code, error.message, command: call.name) : error
        }
    }

    private static func update(_ service: PlayerService, _ call: inout CommandCall, rescan: Bool) throws(Ack) {
        let library = try self.library(service, call)
        // As MPD: "" and "/" are the root; any other URI must be a plain relative path (no empty,
        // `.` or `..` segment, so no leading or trailing slash either).
        var uri = call.optionalArgument(0) ?? ""
        if uri == "/" { uri = "" }
        guard uri.isEmpty || Self.isSafeLocalURI(uri) else {
            throw Ack(.argument, "Malformed path", command: call.name)
        }
        do {
            call.response.field("updating_db", try library.update(uri, rescan: rescan))
        } catch {
            throw Ack(.updateAlready, "Update queue is full", command: call.name)
        }
    }

    /// MPD's `uri_safe_local`: no segment is empty, `.` or `..`.
    static func isSafeLocalURI(_ uri: String) -> Bool {
        !uri.split(separator: "/", omittingEmptySubsequences: false).contains { segment in
            segment.count <= 2 && segment.allSatisfy { $0 == "." }
        }
    }

    private static func listInfo(
        _ service: PlayerService, _ call: inout CommandCall, _ cancellation: WalkCancellation
    ) throws(Ack) {
        let uri = call.optionalArgument(0) ?? ""
        if uri.hasPrefix("/") && MusicLibrary.normalized(uri) != "" || uri.hasPrefix("file://") {
            // An absolute path names a file outside the library, as in MPD: its song block, from the disk.
            if MusicLibrary.abandonsQuickQuery() { return }
            let paths = try service.resolve(uri, for: call.session, command: call.name, cancellation: cancellation)
            for path in paths.prefix(1) {
                let info = service.songs.info(for: path)
                Answer.songInfo(
                    file: path, tags: info.tags, duration: info.duration, tagTypes: call.session.tagTypes,
                    lastModified: info.lastModified, format: info.format, to: &call.response)
            }
            return
        }
        // A URI with a scheme is not a directory: mpd refuses one it has no plugin for (Cantata asks
        // for `mpd-client://cantata/2.5.0` at every connection).
        try PlayerService.checkScheme(uri, command: call.name)
        let library = try self.library(service, call)
        let stream = call.stream
        try library.listInfo(uri, tagTypes: call.session.tagTypes, to: &call.response) { response in
            stream?.send(&response) ?? true
        }
        // The root also lists the stored playlists, as in MPD (`mpc lsplaylists` reads them here).
        if MusicLibrary.normalized(uri).isEmpty, let playlists = service.storedPlaylists {
            for summary in (try? playlists.list()) ?? [] {
                call.response.field("playlist", summary.name)
                call.response.field("Last-Modified", MusicLibrary.timestamp(summary.lastModified))
            }
        }
    }

    private static func listAll(_ service: PlayerService, _ call: inout CommandCall, info: Bool) throws(Ack) {
        let library = try self.library(service, call)
        let stream = call.stream
        try library.listAll(
            call.optionalArgument(0) ?? "", info: info, tagTypes: call.session.tagTypes, to: &call.response
        ) { response in stream?.send(&response) ?? true }
    }

    /// `listfiles [URI]`: what the directory holds on disk, music or not, with sizes and times, in the
    /// order the directory gives them, as MPD lists them; one it cannot open is MPD's ACK 52 naming
    /// the path and the reason. A URI climbing out of the music directory is refused (MPD lists it).
    private static func listFiles(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let library = try self.library(service, call)
        let uri = MusicLibrary.normalized(call.optionalArgument(0) ?? "")
        guard !QueueLoader.climbsUp(uri) else {
            throw Ack(.noExist, "No such directory", command: call.name)
        }
        let path = library.path(of: uri)
        do {
            for entry in try DirectoryListing.entries(of: path) {
                call.response.field(entry.isDirectory ? "directory" : "file", entry.name)
                if !entry.isDirectory {
                    call.response.field("size", Int(entry.size))
                }
                call.response.field("Last-Modified", MusicLibrary.timestamp(entry.mtime))
            }
        } catch {
            throw Ack(.system, "Failed to open \(path): \(error.reason)", command: call.name)
        }
    }

    private static func find(_ service: PlayerService, _ call: inout CommandCall, ignoringCase: Bool) throws(Ack) {
        let query = try parseQuery(call, call.arguments[...], ignoringCase: ignoringCase, allowing: [.sort, .window])
        let library = try self.library(service, call)
        let stream = call.stream
        try library.find(query, tagTypes: call.session.tagTypes, to: &call.response) { response in
            stream?.send(&response) ?? true
        }
    }

    private static func parseQuery(
        _ call: CommandCall, _ arguments: ArraySlice<String>, ignoringCase: Bool, allowing: LibraryQuery.Clauses
    ) throws(Ack) -> LibraryQuery {
        do {
            return try LibraryQuery.parse(arguments, ignoringCase: ignoringCase, allowing: allowing)
        } catch {
            throw Ack(error.code, error.message, command: call.name)
        }
    }

    /// `findadd`/`searchadd FILTER [sort] [window] [position POS]`: queues what the query selects, at
    /// POS when given (`N`, or `+N`/`-N` from the current song), which is read, as MPD reads it,
    /// before the songs are added.
    private static func findAdd(_ service: PlayerService, _ call: CommandCall, ignoringCase: Bool) async throws(Ack)
        -> CommandCall
    {
        // `position POS` comes last, and MPD reads it before the filter.
        var arguments = call.arguments[...]
        var position: String?
        if arguments.count >= 2, arguments[arguments.endIndex - 2] == "position" {
            position = arguments.last
            arguments = arguments.dropLast(2)
            try checkInsertPosition(position, service)
        }
        let query = try parseQuery(call, arguments, ignoringCase: ignoringCase, allowing: [.sort, .window])
        let paths = try await self.libraryWork(service, call) { library throws(Ack) in
            try library.songURIs(query).map { library.path(of: $0) }
        }
        _ = try await insert(paths, at: position, songBySong: true, service, call)
        return call
    }

    /// `searchaddpl NAME FILTER...`: appends what the search selects to a stored playlist (made if
    /// missing).
    private static func searchAddToPlaylist(_ service: PlayerService, _ call: CommandCall) async throws(Ack)
        -> CommandCall
    {
        guard let playlists = service.storedPlaylists else {
            throw Ack(.unknown, "Stored playlists are disabled", command: call.name)
        }
        let name = call.argument(0)
        let query = try parseQuery(call, call.arguments.dropFirst(), ignoringCase: true, allowing: [.sort, .window])
        let changed = try await self.libraryWork(service, call) { library throws(Ack) in
            try playlists.add(name, try library.songURIs(query))
        }
        if changed { service.hub.broadcast([.storedPlaylist]) }
        return call
    }

    private static func list(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let request: ListRequest
        do {
            request = try ListRequest.parse(call.arguments)
        } catch {
            throw Ack(error.code, error.message, command: call.name)
        }
        let library = try self.library(service, call)
        let stream = call.stream
        try library.list(request.subject, query: request.query, to: &call.response) { response in
            stream?.send(&response) ?? true
        }
    }

    private static func count(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let query = try parseQuery(call, call.arguments[...], ignoringCase: false, allowing: [.group])
        let stream = call.stream
        try self.library(service, call).count(query, to: &call.response) { response in
            stream?.send(&response) ?? true
        }
    }
}
