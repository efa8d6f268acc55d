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
        add("lsinfo", .deferred(listInfo))
        add("listall", .deferred { service, call throws(Ack) in try await listAll(service, call, info: false) })
        add("listallinfo", .deferred { service, call throws(Ack) in try await listAll(service, call, info: true) })
        add("listfiles", .deferred(listFiles))
        add("find", .deferred { service, call throws(Ack) in try await find(service, call, ignoringCase: false) })
        add("search", .deferred { service, call throws(Ack) in try await find(service, call, ignoringCase: true) })
        add("findadd", .deferred { service, call throws(Ack) in try await findAdd(service, call, ignoringCase: false) })
        add(
            "searchadd", .deferred { service, call throws(Ack) in try await findAdd(service, call, ignoringCase: true) }
        )
        add("list", .deferred(list))
        add("count", .deferred(count))
    }

    /// The library, or MPD's refusal when there is none.
    static func library(_ service: PlayerService, _ call: CommandCall) throws(Ack) -> MusicLibrary {
        guard let library = service.library else {
            throw Ack(.noExist, "No database", command: call.name)
        }
        return library
    }

    /// Runs a library query on its own threads, streaming what it writes; its ACK names the command.
    private static func query(
        _ service: PlayerService, _ call: CommandCall,
        _ body: @escaping @Sendable (MusicLibrary, inout CommandCall) throws(Ack) -> Void
    ) async throws(Ack) -> CommandCall {
        try await self.libraryWork(service, call) { library throws(Ack) in
            var call = call
            try body(library, &call)
            return call
        }
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
        let uri = MusicLibrary.normalized(call.optionalArgument(0) ?? "")
        guard !QueueLoader.climbsUp(uri) else {
            throw Ack(.argument, "Malformed path", command: call.name)
        }
        do {
            call.response.field("updating_db", try library.update(uri, rescan: rescan))
        } catch {
            throw Ack(.updateAlready, "Update queue is full", command: call.name)
        }
    }

    private static func listInfo(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let uri = call.optionalArgument(0) ?? ""
        if uri.hasPrefix("/") && MusicLibrary.normalized(uri) != "" || uri.hasPrefix("file://") {
            // An absolute path names a file outside the library, as in MPD: its song block.
            let paths = try await service.resolve(uri, for: call.session, command: call.name)
            var call = call
            for path in paths.prefix(1) {
                let info = service.songs.info(for: path)
                Answer.songInfo(
                    file: path, tags: info.tags, duration: info.duration, tagTypes: call.session.tagTypes,
                    to: &call.response)
            }
            return call
        }
        return try await self.query(service, call) { library, call throws(Ack) in
            try library.listInfo(uri, tagTypes: call.session.tagTypes, to: &call.response)
        }
    }

    private static func listAll(_ service: PlayerService, _ call: CommandCall, info: Bool) async throws(Ack)
        -> CommandCall
    {
        try await self.query(service, call) { library, call throws(Ack) in
            let stream = call.stream
            try library.listAll(
                call.optionalArgument(0) ?? "", info: info, tagTypes: call.session.tagTypes, to: &call.response
            ) { response in stream?.send(&response) ?? true }
        }
    }

    /// `listfiles [URI]`: what the directory holds on disk, music or not, with sizes and times.
    private static func listFiles(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let library = try self.library(service, call)
        let uri = MusicLibrary.normalized(call.optionalArgument(0) ?? "")
        guard !QueueLoader.climbsUp(uri) else {
            throw Ack(.noExist, "No such directory", command: call.name)
        }
        return try await FileSystemWork.run(on: .library) { _ throws(Ack) in
            var call = call
            do {
                for entry in try DirectoryListing.entries(of: library.path(of: uri)) {
                    call.response.field(entry.isDirectory ? "directory" : "file", entry.name)
                    if !entry.isDirectory {
                        call.response.field("size", Int(entry.size))
                    }
                    call.response.field("Last-Modified", MusicLibrary.timestamp(entry.mtime))
                }
            } catch {
                throw Ack(.noExist, "No such directory", command: call.name)
            }
            return call
        }
    }

    private static func find(_ service: PlayerService, _ call: CommandCall, ignoringCase: Bool) async throws(Ack)
        -> CommandCall
    {
        let query = try parseQuery(call, call.arguments[...], ignoringCase: ignoringCase, allowing: [.sort, .window])
        return try await self.query(service, call) { library, call throws(Ack) in
            let stream = call.stream
            try library.find(query, tagTypes: call.session.tagTypes, to: &call.response) { response in
                stream?.send(&response) ?? true
            }
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

    /// `findadd`/`searchadd FILTER [sort] [window] [position]`: queues what the query selects.
    private static func findAdd(_ service: PlayerService, _ call: CommandCall, ignoringCase: Bool) async throws(Ack)
        -> CommandCall
    {
        let query = try parseQuery(call, call.arguments[...], ignoringCase: ignoringCase, allowing: [.sort, .window])
        let paths = try await self.libraryWork(service, call) { library throws(Ack) in
            try library.songURIs(query).map { library.path(of: $0) }
        }
        _ = try await edit(service, call) { queue throws(QueueError) in try queue.add(paths, at: nil) }
        return call
    }

    private static func list(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let request: ListRequest
        do {
            request = try ListRequest.parse(call.arguments)
        } catch {
            throw Ack(error.code, error.message, command: call.name)
        }
        return try await self.query(service, call) { library, call throws(Ack) in
            let stream = call.stream
            try library.list(request.subject, query: request.query, to: &call.response) { response in
                stream?.send(&response) ?? true
            }
        }
    }

    private static func count(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let query = try parseQuery(call, call.arguments[...], ignoringCase: false, allowing: [.group])
        return try await self.query(service, call) { library, call throws(Ack) in
            try library.count(query, to: &call.response)
        }
    }
}
