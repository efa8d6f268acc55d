import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// The JSON API's routes (see Assets/openapi.yaml) and the page's files. Each call runs the daemon's
/// own commands on the caller's session, so the answers are what any MPD client would be told.
struct WebAPI: Sendable {
    let sessions: WebSessionStore
    let passwordSet: Bool
    let logger: Logger

    static let cookieName = "playerd_session"

    func register(on router: Router<WebContext>) {
        for (path, asset) in WebAssets.byPath {
            router.get(RouterPath(path)) { request, _ in
                Self.asset(asset, request: request)
            }
        }
        router.get("/api/session") { request, context in
            await self.call(request, context) { session in try await self.sessionAnswer(session) }
        }
        router.post("/api/session") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(LoginBody.self, request, context)
                try Self.refuseControlCharacters(body.password, "the password")
                do {
                    try await session.logIn(password: body.password)
                } catch let error as WebError {
                    // A wrong password is refused, not a prompt for one.
                    throw WebError(status: .forbidden, error.message)
                }
                return try await self.sessionAnswer(session)
            }
        }
        router.delete("/api/session") { request, context in
            await self.call(request, context) { session in
                await session.logOut()
                self.sessions.remove(session)
                return Self.noContent()
            }
        }
        router.get("/api/status") { request, context in
            await self.call(request, context) { session in Self.json(try await Self.status(session)) }
        }
        self.registerPlayer(on: router)
        self.registerQueue(on: router)
        self.registerLibrary(on: router)
        self.registerEvents(on: router)
    }

    // MARK: - Player

    private func registerPlayer(on router: Router<WebContext>) {
        router.post("/api/player") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(PlayerBody.self, request, context)
                switch body.action {
                case "play":
                    if let id = body.id {
                        do {
                            _ = try await session.run("playid", [String(try Self.checked(id, "id"))])
                        } catch let error as WebError where [.notFound, .badRequest].contains(error.status) {
                            throw WebError(status: .notFound, "no song with id \(id) in the queue")
                        }
                    } else if let position = body.position {
                        do {
                            _ = try await session.run("play", [String(try Self.checked(position, "position"))])
                        } catch let error as WebError where [.notFound, .badRequest].contains(error.status) {
                            throw WebError(status: .notFound, "no song at position \(position) in the queue")
                        }
                    } else {
                        _ = try await session.run("play")
                    }
                case "pause": _ = try await session.run("pause", ["1"])
                case "resume": _ = try await session.run("pause", ["0"])
                case "toggle": _ = try await session.run("pause")
                case "stop", "next", "previous": _ = try await session.run(body.action)
                default:
                    throw WebError(
                        status: .badRequest,
                        "unknown action \"\(body.action)\": expected play, pause, resume, toggle, stop, next or previous"
                    )
                }
                return Self.json(try await Self.status(session))
            }
        }
        router.post("/api/seek") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(SeekBody.self, request, context)
                guard body.seconds.isFinite, body.seconds >= 0, body.seconds < 1e9 else {
                    throw WebError(status: .badRequest, "seconds must be a number from 0, not \(body.seconds)")
                }
                _ = try await session.run("seekcur", [String(format: "%.3f", body.seconds)])
                return Self.json(try await Self.status(session))
            }
        }
        router.put("/api/volume") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(VolumeBody.self, request, context)
                guard (0...100).contains(body.volume) else {
                    throw WebError(status: .badRequest, "volume must be from 0 to 100, not \(body.volume)")
                }
                _ = try await session.run("setvol", [String(body.volume)])
                return Self.json(try await Self.status(session))
            }
        }
        router.put("/api/options") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(OptionsBody.self, request, context)
                if let single = body.single, !["0", "1", "oneshot"].contains(single) {
                    throw WebError(status: .badRequest, "single must be \"0\", \"1\" or \"oneshot\", not \"\(single)\"")
                }
                if let repeatMode = body.repeat { _ = try await session.run("repeat", [repeatMode ? "1" : "0"]) }
                if let random = body.random { _ = try await session.run("random", [random ? "1" : "0"]) }
                if let single = body.single { _ = try await session.run("single", [single]) }
                if let consume = body.consume { _ = try await session.run("consume", [consume ? "1" : "0"]) }
                return Self.json(try await Self.status(session))
            }
        }
        router.put("/api/timers") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(TimersBody.self, request, context)
                if let sleep = body.sleep {
                    let argument: String
                    switch sleep {
                    case .end: argument = "end"
                    case .off: argument = "off"
                    case .seconds(let seconds): argument = try Self.secondsArgument(seconds, "sleep")
                    }
                    _ = try await session.run("sleeptimer", [argument])
                }
                if let pauseFor = body.pauseFor {
                    _ = try await session.run("pausefor", [try Self.secondsArgument(pauseFor, "pauseFor")])
                }
                return Self.json(try await Self.status(session))
            }
        }
        router.get("/api/outputs") { request, context in
            await self.call(request, context) { session in
                let answer = try await session.run("outputs")
                let outputs = WebModel.blocks(answer.fields, startingAt: ["outputid"]).compactMap { block -> JSON? in
                    func value(_ key: String) -> String? { block.first { $0.key == key }?.value }
                    guard let id = value("outputid").flatMap({ Int($0) }) else { return nil }
                    return .object([
                        ("id", .int(id)), ("name", .string(value("outputname") ?? "")),
                        ("plugin", .string(value("plugin") ?? "")), ("enabled", .bool(value("outputenabled") == "1")),
                    ])
                }
                return Self.json(.object([("outputs", .array(outputs))]))
            }
        }
        router.put("/api/outputs/{id}") { request, context in
            await self.call(request, context) { session in
                let id = try Self.pathNumber(context, "id")
                let body = try await Self.body(OutputBody.self, request, context)
                _ = try await session.run(body.enabled ? "enableoutput" : "disableoutput", [String(id)])
                return Self.noContent()
            }
        }
    }

    // MARK: - Queue

    private func registerQueue(on router: Router<WebContext>) {
        router.get("/api/queue") { request, context in
            await self.call(request, context) { session in
                async let status = session.run("status")
                async let songs = session.run("playlistinfo")
                let version = Int(try await status["playlist"] ?? "") ?? 0
                return Self.json(
                    .object([("version", .int(version)), ("songs", WebModel.songs(try await songs.fields))]))
            }
        }
        router.post("/api/queue") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(AddBody.self, request, context)
                let uri = try Self.libraryURI(body.uri)
                let before = Int(try await session.run("status")["playlistlength"] ?? "") ?? 0
                do {
                    _ = try await session.run("add", [uri])
                } catch let error as WebError where error.status == .notFound {
                    // Not a song or folder: a stored playlist's songs, as MPD clients add them (`load`).
                    guard !uri.contains("/"), uri.utf8.count <= Self.playlistNameLimit else {
                        throw WebError(status: .notFound, "\(uri): no such song, folder or playlist")
                    }
                    do {
                        _ = try await session.run("load", [uri])
                    } catch let loadError as WebError where loadError.status == .notFound {
                        throw WebError(status: .notFound, "\(uri): no such song, folder or playlist")
                    }
                }
                let after = Int(try await session.run("status")["playlistlength"] ?? "") ?? before
                if body.play == true, after > before {
                    _ = try await session.run("play", [String(before)])
                }
                return Self.json(.object([("added", .int(max(0, after - before)))]))
            }
        }
        router.delete("/api/queue") { request, context in
            await self.call(request, context) { session in
                _ = try await session.run("clear")
                return Self.noContent()
            }
        }
        router.delete("/api/queue/{id}") { request, context in
            await self.call(request, context) { session in
                let id = try Self.pathNumber(context, "id")
                do {
                    _ = try await session.run("deleteid", [String(id)])
                } catch let error as WebError where error.status == .notFound {
                    throw WebError(status: .notFound, "no song with id \(id) in the queue")
                }
                return Self.noContent()
            }
        }
        router.post("/api/queue/{id}/move") { request, context in
            await self.call(request, context) { session in
                let id = try Self.pathNumber(context, "id")
                let body = try await Self.body(MoveBody.self, request, context)
                do {
                    _ = try await session.run("moveid", [String(id), String(try Self.checked(body.to, "to"))])
                } catch let error as WebError where error.status == .notFound {
                    throw WebError(status: .notFound, "no song with id \(id) in the queue")
                }
                return Self.noContent()
            }
        }
        router.post("/api/queue/save") { request, context in
            await self.call(request, context) { session in
                let body = try await Self.body(NameBody.self, request, context)
                _ = try await session.run("save", [try Self.playlistName(body.name)])
                return Self.noContent()
            }
        }
        router.get("/api/playlists") { request, context in
            await self.call(request, context) { session in
                let answer = try await session.run("listplaylists")
                let playlists = WebModel.blocks(answer.fields, startingAt: ["playlist"]).compactMap { block -> JSON? in
                    guard let name = block.first(where: { $0.key == "playlist" })?.value else { return nil }
                    let modified = block.first { $0.key == "Last-Modified" }?.value
                    return .object([("name", .string(name)), ("modified", .optional(modified))])
                }
                return Self.json(.object([("playlists", .array(playlists))]))
            }
        }
        router.get("/api/playlists/{name}") { request, context in
            await self.call(request, context) { session in
                let name = try Self.playlistName(try Self.pathText(context, "name"))
                let answer = try await session.run("listplaylistinfo", [name])
                return Self.json(.object([("name", .string(name)), ("songs", WebModel.songs(answer.fields))]))
            }
        }
        router.post("/api/playlists/{name}/load") { request, context in
            await self.call(request, context) { session in
                _ = try await session.run("load", [try Self.playlistName(try Self.pathText(context, "name"))])
                return Self.noContent()
            }
        }
        router.delete("/api/playlists/{name}") { request, context in
            await self.call(request, context) { session in
                _ = try await session.run("rm", [try Self.playlistName(try Self.pathText(context, "name"))])
                return Self.noContent()
            }
        }
    }

    // MARK: - Library

    private func registerLibrary(on router: Router<WebContext>) {
        router.get("/api/library/folder") { request, context in
            await self.call(request, context) { session in
                let path = try Self.libraryURI(request.uri.queryParameters.get("path") ?? "", allowsEmpty: true)
                let answer = try await session.run("lsinfo", path.isEmpty ? [] : [path])
                var folders: [JSON] = []
                var playlists: [JSON] = []
                var songs: [JSON] = []
                for block in WebModel.blocks(answer.fields) {
                    guard let first = block.first else { continue }
                    switch first.key {
                    case "directory":
                        let name = String(first.value.split(separator: "/").last ?? Substring(first.value))
                        folders.append(.object([("path", .string(first.value)), ("name", .string(name))]))
                    case "playlist":
                        playlists.append(.object([("name", .string(first.value))]))
                    case "file":
                        songs.append(WebModel.song(block))
                    default: break
                    }
                }
                return Self.json(
                    .object([
                        ("path", .string(path)), ("folders", .array(folders)), ("songs", .array(songs)),
                        ("playlists", .array(playlists)),
                    ]))
            }
        }
        router.get("/api/library/artists") { request, context in
            await self.call(request, context) { session in
                let answer = try await session.run("list", ["albumartist"])
                let artists = answer.fields.filter { $0.key == "AlbumArtist" && !$0.value.isEmpty }.map {
                    JSON.string($0.value)
                }
                return Self.json(.object([("artists", .array(artists))]))
            }
        }
        router.get("/api/library/albums") { request, context in
            await self.call(request, context) { session in
                let artist = try Self.query(request, "artist")
                let answer = try await session.run(
                    "list", ["album", "(AlbumArtist == \(WebModel.filterString(artist)))"])
                let albums = answer.fields.filter { $0.key == "Album" }.map { JSON.string($0.value) }
                return Self.json(.object([("albums", .array(albums))]))
            }
        }
        router.get("/api/library/songs") { request, context in
            await self.call(request, context) { session in
                let artist = try Self.query(request, "artist")
                let album = try Self.query(request, "album")
                let answer = try await session.run(
                    "find",
                    [
                        "((AlbumArtist == \(WebModel.filterString(artist))) AND (Album == \(WebModel.filterString(album))))"
                    ])
                return Self.json(.object([("songs", WebModel.songs(answer.fields))]))
            }
        }
        router.get("/api/search") { request, context in
            await self.call(request, context) { session in
                let text = try Self.query(request, "q")
                guard !text.isEmpty else { return Self.json(.object([("songs", .array([]))])) }
                // Any tag, then the file name (the daemon's `any` holds tags only; MPD 0.23 has no OR).
                let filter = WebModel.filterString(text)
                let byTag = try await session.run("search", ["(any contains \(filter))", "window", "0:500"])
                var blocks = WebModel.blocks(byTag.fields).filter { $0.first?.key == "file" }
                if blocks.count < 500 {
                    let byName = try await session.run("search", ["(file contains \(filter))", "window", "0:500"])
                    var seen = Set(blocks.compactMap { $0.first?.value })
                    for block in WebModel.blocks(byName.fields) where block.first?.key == "file" && blocks.count < 500 {
                        if let file = block.first?.value, seen.insert(file).inserted { blocks.append(block) }
                    }
                }
                return Self.json(.object([("songs", .array(blocks.map(WebModel.song)))]))
            }
        }
        router.get("/api/cover") { request, context in
            await self.call(request, context) { session in
                let uri = try Self.libraryURI(try Self.query(request, "uri"))
                let bytes = try await Self.cover(of: uri, session: session)
                let tag = WebModel.entityTag(bytes)
                var headers: HTTPFields = [
                    .cacheControl: "private, max-age=3600", .eTag: tag, .contentType: WebModel.imageType(bytes),
                ]
                if request.headers[.ifNoneMatch] == tag {
                    headers[.contentType] = nil
                    return Response(status: .notModified, headers: headers)
                }
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
    }

    /// The cover of `uri`: a picture file in its folder (`albumart`), else one in its tags
    /// (`readpicture`), read whole in chunks.
    private static func cover(of uri: String, session: WebSession) async throws(WebError) -> [UInt8] {
        for command in ["albumart", "readpicture"] {
            var bytes: [UInt8] = []
            var size = 0
            do {
                repeat {
                    let answer = try await session.run(command, [uri, String(bytes.count)])
                    guard let chunk = answer.binary, !chunk.isEmpty, let total = answer["size"].flatMap({ Int($0) })
                    else { break }
                    size = total
                    bytes += chunk
                } while bytes.count < size && bytes.count < 32 * 1024 * 1024
            } catch  where error.status == .notFound {
                continue
            }
            if !bytes.isEmpty, bytes.count >= size { return bytes }
        }
        throw WebError(status: .notFound, "\(uri) has no cover")
    }

    // MARK: - Events

    private func registerEvents(on router: Router<WebContext>) {
        router.ws("/api/events") { request, _ in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                throw HTTPError(.upgradeRequired, message: "/api/events is a WebSocket: ask for an upgrade")
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let request = context.request
            let host = context.requestContext.remoteHost
            let session: WebSession
            if let found = self.sessions.find(request.cookies[Self.cookieName]?.value, host: host) {
                session = found
            } else {
                session = await self.sessions.make(host: host)
            }
            let client: DaemonClient
            do {
                client = try await session.openEventClient()
            } catch let error as WebError {
                try await outbound.close(.policyViolation, reason: error.message)
                return
            }
            do {
                // `idle` needs the right to read: refused now, with the reason, not after a first frame.
                _ = try await client.run("status")
            } catch {
                client.close()
                let reason = (error as? DaemonFailure).map { WebError($0, passwordGiven: false).message } ?? "\(error)"
                try await outbound.close(.policyViolation, reason: reason)
                return
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The page says nothing; its end (or a close) ends the subscription.
                    for try await _ in inbound {}
                    client.close()
                }
                group.addTask {
                    try await outbound.write(.text(JSON.object([("changed", .array([]))]).serialized))
                    while true {
                        let answer: DaemonAnswer
                        do {
                            answer = try await client.run("idle")
                        } catch {
                            break
                        }
                        let changed = answer.fields.filter { $0.key == "changed" }.map { JSON.string($0.value) }
                        try await outbound.write(.text(JSON.object([("changed", .array(changed))]).serialized))
                    }
                    client.close()
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        }
    }

    // MARK: - Plumbing

    /// Runs `body` on the request's session (a new one, with its cookie set, when it brought none):
    /// its answer, or its failure as `{"error": ...}`.
    private func call(
        _ request: Request, _ context: WebContext,
        _ body: (WebSession) async throws -> Response
    ) async -> Response {
        let token = request.cookies[Self.cookieName]?.value
        var isNew = false
        let session: WebSession
        if let found = self.sessions.find(token, host: context.remoteHost) {
            session = found
        } else {
            session = await self.sessions.make(host: context.remoteHost)
            isNew = true
        }
        var response: Response
        do {
            response = try await body(session)
        } catch let error as WebError {
            response = Self.failure(error)
        } catch {
            response = Self.failure(WebError(status: .internalServerError, "\(error)"))
        }
        if isNew {
            response.setCookie(
                Cookie(name: Self.cookieName, value: session.token, path: "/", httpOnly: true, sameSite: .strict))
        }
        if token == nil {
            // A script without cookies makes a session a call: its connection ends with the call.
            await session.closeConnection()
        }
        response.headers[.cacheControl] = response.headers[.cacheControl] ?? "no-store"
        return response
    }

    private func sessionAnswer(_ session: WebSession) async throws(WebError) -> Response {
        let answer = try await session.run("commands")
        let allowed = Set(answer.fields.filter { $0.key == "command" }.map(\.value))
        let permissions = [
            ("read", "status"), ("add", "add"), ("player", "play"), ("control", "save"), ("admin", "enableoutput"),
        ].filter { allowed.contains($0.1) }.map { JSON.string($0.0) }
        return Self.json(.object([("permissions", .array(permissions)), ("passwordSet", .bool(self.passwordSet))]))
    }

    /// `status` and `currentsong`, asked together.
    static func status(_ session: WebSession) async throws(WebError) -> JSON {
        do {
            async let status = session.run("status")
            async let current = session.run("currentsong")
            return WebModel.status(try await status, current: try await current)
        } catch let error as WebError {
            throw error
        } catch {
            throw WebError(status: .internalServerError, "\(error)")
        }
    }

    static func json(_ value: JSON, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: value.serialized)))
    }

    static func noContent() -> Response {
        Response(status: .noContent)
    }

    static func failure(_ error: WebError) -> Response {
        Self.json(.object([("error", .string(error.message))]), status: error.status)
    }

    private static func asset(_ asset: WebAssets.Asset, request: Request) -> Response {
        let tag = WebModel.entityTag(asset.bytes)
        var headers: HTTPFields = [.contentType: asset.contentType, .eTag: tag, .cacheControl: "no-cache"]
        if request.headers[.ifNoneMatch] == tag {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    /// The request's JSON body as `T`, or a 400 naming what is wrong (413 when too large).
    static func body<T: Decodable>(_: T.Type, _ request: Request, _ context: WebContext) async throws(WebError) -> T {
        let tooLarge = WebError(status: .contentTooLarge, "the body is larger than \(context.maxUploadSize) bytes")
        if let announced = request.headers[.contentLength].flatMap({ Int($0) }), announced > context.maxUploadSize {
            throw tooLarge
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch is NIOTooManyBytesError {
            throw tooLarge
        } catch {
            throw WebError(status: .badRequest, "cannot read the body: \(error)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw WebError(status: .badRequest, "bad JSON body: \(Self.describe(error))")
        } catch {
            throw WebError(status: .badRequest, "bad JSON body: \(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let names = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return names.isEmpty ? "" : names.joined(separator: ".") + ": "
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context))\"\(key.stringValue)\" is missing"
        case .typeMismatch(let type, let context):
            let expected = type == Int.self ? "a whole number" : type == Double.self ? "a number" : "\(type)"
            return path(context) + "expected \(expected)"
        case .valueNotFound(_, let context), .dataCorrupted(let context):
            // Foundation calls a number too large for its field "not valid JSON": say what it is.
            if let underlying = context.underlyingError {
                return path(context) + context.debugDescription + " (\(underlying))"
            }
            return path(context) + context.debugDescription
        @unknown default: return "\(error)"
        }
    }

    private static func checked(_ number: Int, _ name: String) throws(WebError) -> Int {
        guard (0...Int(Int32.max)).contains(number) else {
            throw WebError(status: .badRequest, "\(name) must be a whole number from 0, not \(number)")
        }
        return number
    }

    private static func pathNumber(_ context: WebContext, _ name: String) throws(WebError) -> Int {
        guard let text = context.parameters.get(name), let number = Int(text), (0...Int(Int32.max)).contains(number)
        else {
            throw WebError(status: .badRequest, "\(name) must be a whole number from 0")
        }
        return number
    }

    private static func pathText(_ context: WebContext, _ name: String) throws(WebError) -> String {
        guard let text = context.parameters.get(name), let decoded = text.removingPercentEncoding else {
            throw WebError(status: .badRequest, "\(name) is missing")
        }
        return decoded
    }

    private static func query(_ request: Request, _ name: String) throws(WebError) -> String {
        guard let value = request.uri.queryParameters.get(name) else {
            throw WebError(status: .badRequest, "the query parameter \(name) is missing")
        }
        // A filter's quoted value may hold 4095 bytes: 1000 characters of any script fit.
        guard value.count <= 1000, value.utf8.count <= 4000 else {
            throw WebError(status: .badRequest, "the query parameter \(name) is longer than 1000 characters")
        }
        try Self.refuseControlCharacters(value, name)
        return value
    }

    /// A library path from the network: relative, as MPD requires of network clients.
    private static func libraryURI(_ uri: String, allowsEmpty: Bool = false) throws(WebError) -> String {
        guard allowsEmpty || !uri.isEmpty else { throw WebError(status: .badRequest, "uri is empty") }
        guard !uri.hasPrefix("/"), !uri.lowercased().hasPrefix("file:") else {
            throw WebError(
                status: .forbidden, "\(uri): local files outside the library cannot be named from the network")
        }
        guard uri.utf8.count <= 4096 else { throw WebError(status: .badRequest, "uri is longer than 4096 bytes") }
        try Self.refuseControlCharacters(uri, "uri")
        return uri
    }

    /// The longest playlist name: its file, NAME.m3u, must fit a file name's 255 bytes.
    static let playlistNameLimit = 251

    private static func playlistName(_ name: String) throws(WebError) -> String {
        guard !name.isEmpty, name.utf8.count <= Self.playlistNameLimit, !name.contains("/") else {
            throw WebError(
                status: .badRequest, "a playlist name is 1 to \(Self.playlistNameLimit) bytes, without /")
        }
        try Self.refuseControlCharacters(name, "a playlist name")
        return name
    }

    /// Line breaks would end a command and a NUL ends a C string: neither can be in an argument.
    private static func refuseControlCharacters(_ value: String, _ name: String) throws(WebError) {
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw WebError(status: .badRequest, "\(name) holds a control character")
        }
    }

    private static func secondsArgument(_ seconds: Double, _ name: String) throws(WebError) -> String {
        guard seconds.isFinite, seconds > 0, seconds <= 7 * 86400 else {
            throw WebError(status: .badRequest, "\(name) must be seconds from 0 to a week, not \(seconds)")
        }
        return String(format: "%.3f", seconds)
    }
}

// MARK: - Request bodies

private struct LoginBody: Decodable { var password: String }
/// A whole number in a body: read as any JSON number, then refused with a clear reason when it has a
/// fraction or lies outside 0...2147483647 (Foundation would call 1e300 "not valid JSON").
private struct WholeNumber: Decodable {
    let value: Int

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let number = try container.decode(Double.self)
        guard number == number.rounded(), number >= 0, number <= Double(Int32.max) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a whole number from 0 to 2147483647, not \(number)")
        }
        self.value = Int(number)
    }
}
private struct PlayerBody: Decodable {
    var action: String
    private var positionNumber: WholeNumber?
    private var idNumber: WholeNumber?
    var position: Int? { self.positionNumber?.value }
    var id: Int? { self.idNumber?.value }

    enum CodingKeys: String, CodingKey {
        case action
        case positionNumber = "position"
        case idNumber = "id"
    }
}
private struct SeekBody: Decodable { var seconds: Double }
private struct VolumeBody: Decodable {
    private var number: WholeNumber
    var volume: Int { self.number.value }
    enum CodingKeys: String, CodingKey { case number = "volume" }
}
private struct OptionsBody: Decodable {
    var `repeat`: Bool?
    var random: Bool?
    var single: String?
    var consume: Bool?

    enum CodingKeys: String, CodingKey { case `repeat`, random, single, consume }

    /// A mode left out is left as it is; one given as null is a mistake, refused.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for key in [CodingKeys.repeat, .random, .single, .consume] {
            if container.contains(key), try container.decodeNil(forKey: key) {
                throw DecodingError.valueNotFound(
                    Bool.self,
                    .init(codingPath: [key], debugDescription: "null is no value: leave the mode out instead"))
            }
        }
        self.repeat = try container.decodeIfPresent(Bool.self, forKey: .repeat)
        self.random = try container.decodeIfPresent(Bool.self, forKey: .random)
        self.single = try container.decodeIfPresent(String.self, forKey: .single)
        self.consume = try container.decodeIfPresent(Bool.self, forKey: .consume)
    }
}
private struct TimersBody: Decodable {
    enum Sleep: Decodable {
        case seconds(Double)
        case end
        case off

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) {
                self = .seconds(seconds)
                return
            }
            switch try container.decode(String.self) {
            case "end": self = .end
            case "off": self = .off
            case let other:
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "sleep is seconds, \"end\" or \"off\", not \"\(other)\"")
            }
        }
    }
    var sleep: Sleep?
    var pauseFor: Double?
}
private struct OutputBody: Decodable { var enabled: Bool }
private struct AddBody: Decodable {
    var uri: String
    var play: Bool?
}
private struct MoveBody: Decodable {
    private var number: WholeNumber
    var to: Int { self.number.value }
    enum CodingKeys: String, CodingKey { case number = "to" }
}
private struct NameBody: Decodable { var name: String }
