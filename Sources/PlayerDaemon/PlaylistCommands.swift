import Audio
import ControlProtocol
import Library
import MusicTags
import PlayerCore
import StreamInput

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's stored-playlist commands (`listplaylists` ... `rename`) and its binary answers (`albumart`,
/// `readpicture`, `binarylimit`), with MPD 0.23.12's refusals. File work runs on the walk threads;
/// every change to a playlist wakes `idle stored_playlist`.
extension Commands {
    /// Registers the stored-playlist and picture commands in the daemon's table.
    static func registerStoredPlaylistCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("listplaylists", .deferred(listPlaylists))
        add("listplaylist", .deferred(listPlaylist))
        add("listplaylistinfo", .deferred(listPlaylistInfo))
        add("load", .deferred(load))
        add("save", .deferred(save))
        add("playlistadd", .deferred(playlistAdd))
        add("playlistdelete", .deferred(playlistDelete))
        add("playlistmove", .deferred(playlistMove))
        add("playlistclear", .deferred(playlistClear))
        add("rm", .deferred(removePlaylist))
        add("rename", .deferred(renamePlaylist))
        add("albumart", .deferred(albumArt))
        add("readpicture", .deferred(readPicture))
        add("binarylimit", .immediate(binaryLimit))
    }

    // MARK: - Stored playlists

    /// The playlists, or MPD's refusal when no playlist directory is configured.
    private static func storedPlaylists(_ service: PlayerService, _ call: CommandCall) throws(Ack) -> StoredPlaylists {
        guard let playlists = service.storedPlaylists else {
            throw Ack(.unknown, "Stored playlists are disabled", command: call.name)
        }
        return playlists
    }

    /// Runs `body` with the playlists on the walk threads, names its ACK, and wakes `idle
    /// stored_playlist` when `body` says it changed a playlist.
    private static func change(
        _ service: PlayerService,
        _ call: CommandCall,
        _ body: @escaping @Sendable (StoredPlaylists) throws(Ack) -> Bool
    ) async throws(Ack) -> CommandCall {
        let playlists = try storedPlaylists(service, call)
        let changed: Bool
        do {
            changed = try await FileSystemWork.run { _ throws(Ack) in try body(playlists) }
        } catch {
            throw error.attributed(to: call.name, listIndex: 0)
        }
        if changed {
            service.hub.broadcast([.storedPlaylist])
        }
        return call
    }

    /// `listplaylists`: `playlist:` and `Last-Modified:` for each. With no playlist directory, none (as
    /// before stored playlists existed: clients ask at start).
    private static func listPlaylists(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        guard let playlists = service.storedPlaylists else { return call }
        let name = call.name
        return try await FileSystemWork.run { _ throws(Ack) in
            var call = call
            do throws(Ack) {
                for summary in try playlists.list() {
                    call.response.field("playlist", summary.name)
                    call.response.field("Last-Modified", timestamp(summary.lastModified))
                }
            } catch {
                throw error.attributed(to: name, listIndex: 0)
            }
            return call
        }
    }

    /// The entries of playlist NAME: a stored playlist, else, as MPD looks next, a playlist file in the
    /// music directory (`Album/list.m3u`), its entries relative to the music directory.
    private static func entries(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> [String] {
        let name = call.argument(0)
        if StationStream.isStation(name) {
            // A station list on the network (m3u, extended m3u, pls), as MPD's playlist plugins read it.
            return try await FileSystemWork.run { _ throws(Ack) in
                let fetched: (contentType: String?, body: [UInt8])
                do throws(StreamInputError) {
                    fetched = try StationFetcher.fetch(url: name, limits: service.configuration.streamLimits)
                } catch {
                    throw Ack(.noExist, error.description, command: call.name)
                }
                return Self.stations(in: String(decoding: fetched.body, as: UTF8.self), base: name, service)
            }
        }
        let playlists = try storedPlaylists(service, call)
        let musicDirectory = service.configuration.musicDirectory
        do {
            return try await FileSystemWork.run { _ throws(Ack) in
                do throws(Ack) {
                    return try playlists.entries(of: name)
                } catch {
                    guard error.code == .noExist, Self.isSafeLocalURI(name) else { throw error }
                    if let musicDirectory, StationList.isList(name: name),
                        let text = Self.readStationList(musicDirectory + "/" + name)
                    {
                        // Its stations' names (#EXTINF, TitleN) for their song blocks; a .pls is read here.
                        let stations = Self.stations(in: text, base: nil, service)
                        if name.lowercased().hasSuffix(".pls") {
                            return stations
                        }
                    }
                    guard let entries = playlists.musicDirectoryEntries(of: name) else { throw error }
                    return entries
                }
            }
        } catch {
            throw error.attributed(to: call.name, listIndex: 0)
        }
    }

    /// The most of a local station list read: a list of stations is small.
    static let maximumStationListBytes = 1 << 20

    /// The text of the station list at `path`, when it is a regular file of a sensible size.
    private static func readStationList(_ path: String) -> String? {
        guard let handle = fopen(PathEscaping.systemPath(path), "rb") else { return nil }
        defer { fclose(handle) }
        var bytes = [UInt8](repeating: 0, count: Self.maximumStationListBytes)
        let count = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }

    /// The entries of a station list's `text`, relative ones resolved against `base`; the names it
    /// gives its stations are kept for their song blocks (MPD's `Title`).
    private static func stations(in text: String, base: String?, _ service: PlayerService) -> [String] {
        let stations = StationList.parse(text, base: base)
        // As MPD's playlist plugins name them: a pls's TitleN is the song's Title, an #EXTINF its Name.
        let isPLS = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).lowercased().hasPrefix("[playlist]")
        for station in stations where StationStream.isStation(station.url) {
            if let title = station.title, !title.isEmpty {
                var tags = Tags()
                tags[isPLS ? .title : .name] = [title]
                service.songs.setStationTags(tags, for: station.url)
            }
        }
        return stations.map(\.url)
    }

    /// `listplaylist NAME`: the entries as stored, `file:` each.
    private static func listPlaylist(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        var call = call
        for entry in try await entries(service, call) {
            call.response.field("file", entry)
        }
        return call
    }

    /// `listplaylistinfo NAME`: a song block for each entry (no `Pos` or `Id`: they are not queued); an
    /// entry that cannot be read, or a URL, shows its `file:` only, as in MPD.
    private static func listPlaylistInfo(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall
    {
        let entries = try await entries(service, call)
        let musicDirectory = service.configuration.musicDirectory
        return try await FileSystemWork.run(on: .songInfo) { cancellation throws(Ack) in
            var call = call
            for entry in entries {
                if cancellation.isCancelled { break }
                guard let path = localPath(entry, musicDirectory: musicDirectory) else {
                    call.response.field("file", entry)
                    continue
                }
                let info = service.songs.info(for: path)
                Answer.songInfo(
                    file: entry, tags: info.tags, duration: info.duration, tagTypes: call.session.tagTypes,
                    lastModified: info.lastModified, format: info.format, to: &call.response)
            }
            return call
        }
    }

    /// Where a playlist entry is on disk: absolute as it is, relative inside the music directory; nil
    /// for URLs and for relative entries that would climb out.
    private static func localPath(_ entry: String, musicDirectory: String?) -> String? {
        if entry.hasPrefix("/") { return entry }
        guard !entry.contains("://"), !QueueLoader.climbsUp(entry), let musicDirectory else { return nil }
        return musicDirectory + "/" + entry
    }

    /// `load NAME [START:END] [POS]`: queues the entries in the range (all by default; a range past the
    /// end queues nothing), at POS (`N`, or `+N`/`-N` from the current song, as MPD reads it) or at the
    /// end. Entries that cannot be queued (gone, not a song, a URL, not readable by the client) are
    /// skipped, as MPD skips them.
    private static func load(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let range = try call.optionalArgument(1).map { text throws(Ack) in try Argument.range(text) } ?? .all
        let position = call.optionalArgument(2)
        try checkInsertPosition(position, service)
        let entries = try await entries(service, call)
        let start = min(range.start, entries.count)
        let selected = Array(entries[start..<min(range.end ?? entries.count, entries.count)])
        let session = call.session
        let name = call.name
        let paths = try await FileSystemWork.run { cancellation throws(Ack) in
            var paths: [String] = []
            for entry in selected {
                guard !cancellation.isCancelled else { throw Ack(.system, "cancelled", command: name) }
                if let resolved = try? service.resolve(
                    entry, for: session, command: name, cancellation: cancellation)
                {
                    paths += resolved
                }
            }
            return paths
        }
        guard !paths.isEmpty else { return call }
        _ = try await insert(paths, at: position, service, call)
        return call
    }

    /// `save NAME [create|append|replace]`: writes the queue's songs, relative to the music directory
    /// when inside it.
    private static func save(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let mode = StoredPlaylists.SaveMode(rawValue: call.optionalArgument(1) ?? "create")
        guard let mode else {
            throw Ack(
                .argument, "Unrecognized save mode, expected one of 'create', 'append', 'replace'", command: call.name)
        }
        let paths = try await read(service, call) { queue throws(Ack) in queue.entries.map(\.path) }
        let uris = paths.map { service.displayPath($0) }
        let name = call.argument(0)
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.save(name, uris, mode: mode)
            return true
        }
    }

    /// `playlistadd NAME URI [POS]`: a URL is stored as it is; a file or directory (its songs) is
    /// resolved as `add` resolves it and stored as clients name it. The playlist is created when
    /// missing; nothing found changes nothing.
    private static func playlistAdd(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let playlists = try storedPlaylists(service, call)
        let name = call.argument(0)
        let uri = call.argument(1)
        let position = try call.optionalArgument(2).map { text throws(Ack) in try Argument.unsigned(text) }
        if let position {
            // MPD checks the position before it looks at the URI.
            let count = try? await FileSystemWork.run { _ throws(Ack) in
                guard playlists.exists(name) else { return 0 }
                return try playlists.entries(of: name).count
            }
            if let count, position > count {
                throw Ack(.argument, "Bad position", command: call.name)
            }
        }
        let uris: [String]
        if Self.hasScheme(uri) && !uri.hasPrefix("file://") {
            uris = [uri]
        } else {
            do {
                uris = try await service.resolve(uri, for: call.session, command: call.name).map {
                    service.displayPath($0)
                }
            } catch  where error.code == .noExist {
                throw Ack(.noExist, "No such directory", command: call.name)
            }
        }
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.add(name, uris, at: position)
        }
    }

    /// Whether `uri` starts with a URL scheme (`http://`), as MPD's `uri_has_scheme` decides.
    private static func hasScheme(_ uri: String) -> Bool {
        guard let colon = uri.firstIndex(of: ":"), uri[colon...].hasPrefix("://"), colon != uri.startIndex else {
            return false
        }
        return uri[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// `playlistdelete NAME POS|START:END`.
    private static func playlistDelete(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.argument(0)
        let range = try Argument.range(call.argument(1))
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.delete(name, range)
            return true
        }
    }

    /// `playlistmove NAME FROM TO` (single positions in MPD 0.23: `Integer expected: 0:1`).
    private static func playlistMove(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.argument(0)
        let from = try Argument.unsigned(call.argument(1))
        let to = try Argument.unsigned(call.argument(2))
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.move(name, from: from, to: to)
        }
    }

    /// `playlistclear NAME`.
    private static func playlistClear(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.argument(0)
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.clear(name)
            return true
        }
    }

    /// `rm NAME`.
    private static func removePlaylist(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.argument(0)
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.remove(name)
            return true
        }
    }

    /// `rename FROM TO`.
    private static func renamePlaylist(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let from = call.argument(0)
        let to = call.argument(1)
        return try await change(service, call) { playlists throws(Ack) in
            try playlists.rename(from, to: to)
            return true
        }
    }

    /// `Last-Modified`'s form: ISO 8601 in UTC, `2024-05-01T12:00:00Z`.
    static func timestamp(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(parts.tm_year + 1900)
        return "\(year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    // MARK: - Pictures

    /// A song's or directory's path on disk from a client's URI: relative inside the music directory
    /// (never out of it with `..`), absolute when the client may read it, as `add` allows. Refusals use
    /// `missing`'s words.
    private static func picturePath(
        _ uri: String, _ service: PlayerService, _ call: CommandCall, missing: String
    ) throws(Ack) -> String {
        var path = uri
        if path.hasPrefix("file://") {
            path.removeFirst("file://".count)
        }
        if path.hasPrefix("/") {
            var info = stat()
            guard
                !call.session.isLocal || stat(PathEscaping.systemPath(path), &info) == 0
                    || stat(PathEscaping.systemPath(directory(of: path)), &info) == 0
            else {
                throw Ack(.noExist, missing, command: call.name)
            }
            try PlayerService.checkAccess(path, session: call.session, info: info, command: call.name)
            return path
        }
        guard let musicDirectory = service.configuration.musicDirectory else {
            throw Ack(.noExist, "No database", command: call.name)
        }
        guard !QueueLoader.climbsUp(path), !path.contains("://") else {
            throw Ack(.noExist, missing, command: call.name)
        }
        return musicDirectory + "/" + path
    }

    /// Everything before the last `/`: `Artist/Album/` names `Artist/Album` (Cantata sends that), a
    /// song names its directory.
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    /// `albumart URI OFFSET`: a chunk of the cover file in the song's directory, MPD 0.23's way: `size:`
    /// and `binary:` without `type:`; no cover is ACK 50 `No file exists`. The offset is an unsigned
    /// 32-bit number, as MPD reads it.
    private static func albumArt(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let offset = try Argument.unsigned(call.argument(1))
        let path = try picturePath(call.argument(0), service, call, missing: "No file exists")
        let songDirectory = directory(of: path)
        let name = call.name
        return try await FileSystemWork.run { _ throws(Ack) in
            var call = call
            let base = songDirectory.isEmpty ? "/" : songDirectory
            guard let cover = CoverArt.file(inDirectory: base) else {
                throw Ack(.noExist, "No file exists", command: name)
            }
            do throws(Ack) {
                let chunk = try CoverArt.chunk(ofFile: cover, offset: offset, limit: call.session.binaryLimit)
                call.response.binary(totalSize: chunk.totalSize, type: nil, chunk: chunk.bytes)
            } catch {
                throw error.attributed(to: name, listIndex: 0)
            }
            return call
        }
    }

    /// `readpicture URI OFFSET`: a chunk of the song's embedded picture (an MP3's ID3v2 APIC, a FLAC
    /// PICTURE block, an Ogg file's `METADATA_BLOCK_PICTURE`), with its type, read by the decoder the
    /// content calls for. No picture is just `OK`; a song that cannot be read is ACK 50 `No such song`.
    /// The offset is an unsigned 32-bit number, as MPD reads it.
    private static func readPicture(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let offset = try Argument.unsigned(call.argument(1))
        let path = try picturePath(call.argument(0), service, call, missing: "No such song")
        let name = call.name
        return try await FileSystemWork.run(on: .songInfo) { _ throws(Ack) in
            var call = call
            let picture: EmbeddedPicture?
            do throws(DecoderError) {
                picture = try AudioDecoders.picture(path: path)
            } catch {
                throw Ack(.noExist, "No such song", command: name)
            }
            guard let picture else { return call }
            guard offset <= picture.data.count else {
                throw Ack(.argument, "Bad file offset", command: name)
            }
            let end = offset + min(picture.data.count - offset, call.session.binaryLimit)
            call.response.binary(
                totalSize: picture.data.count, type: picture.mimeType, chunk: picture.data[offset..<end])
            return call
        }
    }

    /// The largest `binarylimit` MPD 0.23 accepts with its default 8 MiB output buffer.
    static let maximumBinaryLimit = 8_400_896

    /// `binarylimit N`: the client's chunk size for binary answers, 64 bytes at least.
    private static func binaryLimit(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let limit = try Argument.unsigned(call.argument(0), maximum: maximumBinaryLimit)
        guard limit >= 64 else {
            throw Ack(.argument, "Value too small", command: call.name)
        }
        call.session.binaryLimit = limit
    }
}
