import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The web remote's JSON API (`playerd --http`, issue 25) against the real daemon: the OpenAPI document
/// checked against the server, each endpoint compared with what the MPD socket of the same daemon says,
/// the live WebSocket, and the permissions of the MPD socket.
@Suite("Web remote: the JSON API, its OpenAPI document, live events and permissions")
struct WebRemoteAPITests {
    /// The committed OpenAPI document.
    static let documentPath = URL(fileURLWithPath: Paths.testsDirectory).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/WebRemote/Assets/openapi.yaml").path

    /// The project's Python virtual environment (`scripts/setup.sh test` makes it).
    static let venv = URL(fileURLWithPath: Paths.testsDirectory).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".venv").path

    /// The document as JSON, read from YAML by PyYAML: the .venv's (schemathesis brings it), else the
    /// system Python's (Debian's python3-yaml).
    static func document(_ yaml: String) throws -> JSONValue {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try yaml.write(toFile: directory + "/openapi.yaml", atomically: true, encoding: .utf8)
        let venvPython = Self.venv + "/bin/python"
        let result = try runProgram(
            FileManager.default.isExecutableFile(atPath: venvPython) ? venvPython : Paths.python,
            [
                "-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)",
                directory + "/openapi.yaml",
            ])
        guard result.status == 0 else { throw HarnessError("reading openapi.yaml as YAML failed: \(result)") }
        return try JSONValue.parse(result.stdout)
    }

    /// A query or path value, percent-encoded.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))!
    }

    static let methods = ["get", "post", "put", "delete", "patch"]

    /// Checks one answer against the document's operation: its status is one the operation lists, and a
    /// JSON body validates against that status's schema. Returns the problems.
    static func conformance(
        _ response: HTTPResponse, _ operation: JSONValue, _ checker: OpenAPISchemaChecker, what: String
    ) throws -> [String] {
        guard let documented = try operation["responses"]?.object?[String(response.status)].map(checker.dereferenced)
        else {
            let listed = operation["responses"]?.object?.keys.sorted() ?? []
            return ["\(what): status \(response.status) is not among \(listed): \(response)"]
        }
        guard let content = documented["content"]?.object else {
            return response.body.isEmpty ? [] : ["\(what): a body where the document says none: \(response)"]
        }
        guard let schema = content["application/json"]?["schema"] else { return [] }
        guard response.header("content-type")?.hasPrefix("application/json") == true else {
            return ["\(what): Content-Type \(response.header("content-type") ?? "none"), not JSON: \(response)"]
        }
        let body: JSONValue
        do {
            body = try response.json()
        } catch {
            return ["\(what): \(error)"]
        }
        return try checker.problems(body, schema).map { "\(what): \($0)" }
    }

    @Test("every operation of openapi.yaml answers a status it lists with a body its schema allows; bad bodies get 400")
    func openAPIDocumentAgainstServer() throws {
        let yaml = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
        let document = try Self.document(yaml)
        let checker = OpenAPISchemaChecker(document: document)
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let served = try web.get("/api/openapi.yaml")
            #expect(served.status == 200)
            #expect(served.text == yaml, "the served document is the committed one")
            #expect(served.header("content-type")?.contains("yaml") == true, "\(served)")

            // The requests, in an order that gives each one something to work on; each path template is
            // filled in when its turn comes (a song id from the queue, the playlist saved before).
            let mpd = try daemon.connect()
            var id = ""
            let playlist = "openapi-check"
            let examples: [(operation: String, target: () -> String, body: String?, expected: Int)] = [
                ("GET /api/openapi.yaml", { "/api/openapi.yaml" }, nil, 200),
                ("GET /api/session", { "/api/session" }, nil, 200),
                ("POST /api/session", { "/api/session" }, #"{"password": "not-a-password"}"#, 403),
                ("POST /api/queue", { "/api/queue" }, #"{"uri": "stereo-44k-cbr.mp3"}"#, 200),
                ("GET /api/queue", { "/api/queue" }, nil, 200),
                ("POST /api/player", { "/api/player" }, #"{"action": "play", "position": 0}"#, 200),
                ("POST /api/seek", { "/api/seek" }, #"{"seconds": 1.5}"#, 200),
                ("PUT /api/volume", { "/api/volume" }, #"{"volume": 40}"#, 200),
                ("PUT /api/options", { "/api/options" }, #"{"repeat": true, "single": "0"}"#, 200),
                ("PUT /api/timers", { "/api/timers" }, #"{"sleep": 600}"#, 200),
                ("GET /api/status", { "/api/status" }, nil, 200),
                ("POST /api/queue/{id}/move", { "/api/queue/\(id)/move" }, #"{"to": 0}"#, 204),
                ("POST /api/queue/save", { "/api/queue/save" }, #"{"name": "\#(playlist)"}"#, 204),
                ("GET /api/playlists", { "/api/playlists" }, nil, 200),
                ("GET /api/playlists/{name}", { "/api/playlists/\(playlist)" }, nil, 200),
                ("POST /api/playlists/{name}/load", { "/api/playlists/\(playlist)/load" }, nil, 204),
                ("GET /api/library/folder", { "/api/library/folder?path=" }, nil, 200),
                ("GET /api/library/artists", { "/api/library/artists" }, nil, 200),
                ("GET /api/library/albums", { "/api/library/albums?artist=" + Self.encoded("Sigur Rós") }, nil, 200),
                (
                    "GET /api/library/songs",
                    {
                        "/api/library/songs?artist=" + Self.encoded("Sigur Rós") + "&album="
                            + Self.encoded("Ágætis byrjun")
                    },
                    nil, 200
                ),
                ("GET /api/search", { "/api/search?q=cafe" }, nil, 200),
                ("GET /api/cover", { "/api/cover?uri=big-id3.mp3" }, nil, 200),
                ("GET /api/outputs", { "/api/outputs" }, nil, 200),
                ("PUT /api/outputs/{id}", { "/api/outputs/0" }, #"{"enabled": true}"#, 204),
                ("DELETE /api/queue/{id}", { "/api/queue/\(id)" }, nil, 204),
                ("DELETE /api/playlists/{name}", { "/api/playlists/\(playlist)" }, nil, 204),
                ("DELETE /api/queue", { "/api/queue" }, nil, 204),
                ("DELETE /api/session", { "/api/session" }, nil, 204),
            ]
            // Every operation of the document has an example, and every example is an operation.
            var documented: Set<String> = []
            for (path, item) in document["paths"]?.object ?? [:] {
                for method in Self.methods where item[method] != nil {
                    documented.insert(method.uppercased() + " " + path)
                }
            }
            #expect(documented.count >= 24, "\(documented.sorted())")
            let exercised = Set(examples.map(\.operation)).union(["GET /api/events"])
            #expect(
                exercised == documented,
                "documented, not tried: \(documented.subtracting(exercised).sorted()); tried, not documented: \(exercised.subtracting(documented).sorted())"
            )

            var problems: [String] = []
            for example in examples {
                if example.operation.contains("{id}") {
                    id = try web.getJSON("/api/queue")["songs"]?[0]?["id"]?.int.map(String.init) ?? "none"
                }
                let parts = example.operation.split(separator: " ")
                guard let operation = document["paths"]?[String(parts[1])]?[parts[0].lowercased()] else { continue }
                let target = example.target()
                let response = try web.request(String(parts[0]), target, json: example.body)
                if response.status != example.expected {
                    problems.append("\(parts[0]) \(target): expected \(example.expected), got \(response)")
                }
                problems += try Self.conformance(response, operation, checker, what: "\(parts[0]) \(target)")
            }
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
            // The MPD side saw the effects.
            #expect(try mpd.fields("status")["playlistlength"] == "0")
            #expect(try mpd.values("listplaylists", "playlist").contains(playlist) == false)

            // The WebSocket: its upgrade as described, its first frame a Changes object.
            let socket = try WebSocketClient(port: port)
            let first = try socket.readJSON()
            #expect(first == .object(["changed": .array([])]))
            let changes = JSONValue.object(["$ref": .string("#/components/schemas/Changes")])
            #expect(try checker.problems(first, changes).isEmpty)
            #expect(try socket.close() == .close(code: 1000))
            let plain = try web.get("/api/events")
            #expect(plain.status == 426, "\(plain)")

            // Bodies the schemas refuse: each is a 400 with an Error naming the problem.
            var refusals: [(String, String, String)] = []
            for (path, item) in document["paths"]?.object ?? [:] where !path.contains("{") {
                for method in Self.methods {
                    guard
                        let schema = try item[method]?["requestBody"]?["content"]?["application/json"]?["schema"]
                            .map(checker.dereferenced)
                    else { continue }
                    refusals.append((method.uppercased(), path, "[]"))
                    refusals.append((method.uppercased(), path, "{\"unknown\": 1"))
                    for (key, property) in schema["properties"]?.object ?? [:] {
                        let type = try checker.dereferenced(property)["type"]?.string
                        let wrong = type == "string" ? "17" : type == nil ? "[true]" : "\"seventeen\""
                        refusals.append((method.uppercased(), path, "{\"\(key)\": \(wrong)}"))
                    }
                    if let required = schema["required"]?.array, !required.isEmpty {
                        refusals.append((method.uppercased(), path, "{}"))
                    }
                }
            }
            var badAnswers: [String] = []
            for (method, path, body) in refusals {
                let response = try web.request(method, path, json: body)
                if response.status != 400 || (response.errorText ?? "").isEmpty {
                    badAnswers.append("\(method) \(path) \(body): \(response)")
                }
                if let operation = document["paths"]?[path]?[method.lowercased()] {
                    badAnswers += try Self.conformance(response, operation, checker, what: "\(method) \(path) \(body)")
                }
            }
            #expect(refusals.count > 30)
            #expect(badAnswers.isEmpty, "\(badAnswers.joined(separator: "\n"))")
        }
    }

    /// The departures from the document schemathesis is known to find, as `METHOD PATH CODE`: play at a
    /// position past the queue is the daemon's ACK 2 (400, where a valid request wants 2xx or 404); a
    /// playlist name of 252 to 255 bytes makes a file name too long (500, naming the playlist directory);
    /// `null` for an option is taken as leaving it alone; a uri too long for a file name, tried as a stored
    /// playlist, is a 500 (see WebRemoteHostileTests.badBodies).
    /// What schemathesis may find that is no fault: a playlist name's limit is 251 bytes of UTF-8 (its
    /// file, NAME.m3u, must fit a file name), which a schema can only say in characters, so a name of
    /// fewer than 251 characters but more bytes is "schema-valid" and refused (alone, or in a sequence).
    static let knownSchemathesisFindings: Set<String> = [
        "POST /api/queue/save ST202", "Stateful tests ST202",
    ]

    @Test("schemathesis (the project's .venv) checks every operation but the WebSocket against the server")
    func schemathesis() throws {
        let tool = Self.venv + "/bin/schemathesis"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw HarnessError("\(tool) is missing: scripts/setup.sh test makes the project's .venv")
        }
        try withWebPlayerd { _, port in
            // Every check but unsupported_method (an undocumented method is 404, Hummingbird's answer, not
            // 405); the WebSocket is checked by liveEvents and openAPIDocumentAgainstServer.
            // From a scratch directory: schemathesis leaves a .schemathesis folder where it runs.
            let scratch = try Paths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let result = try runProgram(
                "/usr/bin/env",
                [
                    "-C", scratch, tool, "run", "http://127.0.0.1:\(port)/api/openapi.yaml", "--checks", "all",
                    "--exclude-checks",
                    "unsupported_method", "--exclude-path", "/api/events", "--max-examples", "10",
                    "--generation-deterministic", "--no-color",
                ], within: .seconds(300))
            var findings: Set<String> = []
            var operation = ""
            for line in result.stdout.split(separator: "\n") {
                if line.hasPrefix("___"), line.hasSuffix("___") {
                    operation = line.trimmingCharacters(in: CharacterSet(charactersIn: "_ "))
                } else if line.hasPrefix("- ST"), let code = line.dropFirst(2).split(separator: " ").first {
                    findings.insert(operation + " " + code)
                }
            }
            #expect(result.stdout.contains("Tested: 27"), "\(result.stdout.suffix(3000))")
            #expect(result.status == 0 || !findings.isEmpty, "\(result)")
            let unknown = findings.subtracting(Self.knownSchemathesisFindings)
            #expect(unknown.isEmpty, "\(unknown.sorted())\n\(result.stdout.suffix(12000))")
        }
    }

    @Test("the server answers no route the document leaves out")
    func noUndocumentedRoutes() throws {
        let document = try Self.document(try String(contentsOfFile: Self.documentPath, encoding: .utf8))
        var documented: Set<String> = []
        for (path, item) in document["paths"]?.object ?? [:] {
            for method in Self.methods where item[method] != nil {
                documented.insert(method.uppercased() + " " + path)
            }
        }
        // The routes the server registers (`router.get("/api/...")`, `router.ws(...)` for a GET), read from
        // its source: each is documented, and each documented operation is registered.
        let sources = URL(fileURLWithPath: Self.documentPath).deletingLastPathComponent().deletingLastPathComponent()
        var registered: Set<String> = []
        let route = try NSRegularExpression(pattern: #"router\.(get|post|put|delete|patch|head|ws)\("(/[^"]*)""#)
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOfFile: sources.path + "/" + name, encoding: .utf8)
            for match in route.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let method = String(text[Range(match.range(at: 1), in: text)!])
                let path = String(text[Range(match.range(at: 2), in: text)!])
                registered.insert((method == "ws" ? "GET" : method.uppercased()) + " " + path)
            }
        }
        // The page's files are registered from WebAssets.byPath, not by name.
        #expect(registered.count >= 23, "\(registered.sorted())")
        #expect(
            registered.subtracting(documented).isEmpty, "undocumented: \(registered.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(registered).subtracting(["GET /api/openapi.yaml"]).isEmpty,
            "documented, not served: \(documented.subtracting(registered).sorted())")
        try withWebPlayerd(library: false) { _, port in
            let web = WebClient(port: port)
            var answered: [String] = []
            for (path, item) in document["paths"]?.object ?? [:] {
                let target = path.replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(
                    of: "{name}", with: "x")
                for method in Self.methods where item[method] == nil {
                    let response = try web.request(method.uppercased(), target, json: method == "get" ? nil : "{}")
                    if response.status != 404 && response.status != 405 {
                        answered.append("\(method.uppercased()) \(target): \(response)")
                    }
                }
            }
            let strangers = [
                "/api", "/api/", "/api/statuses", "/api/queue/1/extra", "/api/library", "/api/library/folder/x",
                "/api/player/play", "/api/openapi.json", "/api/../../etc/passwd", "/api/session/1", "/api/outputs/0/x",
                "/api/queue/save/x", "/api/events/x", "/index.html/../../../etc/passwd", "/etc/passwd",
                "/app.js.map", "/.git/config",
            ]
            for target in strangers {
                let response = try web.get(target)
                if response.status != 404 {
                    answered.append("GET \(target): \(response)")
                }
            }
            #expect(answered.isEmpty, "\(answered.joined(separator: "\n"))")
            // The page's files are served as the contract lists them.
            for (target, type) in [
                ("/", "text/html"), ("/app.css", "text/css"), ("/app.js", "javascript"), ("/icon.svg", "image/svg+xml"),
            ] {
                let response = try web.get(target)
                #expect(response.status == 200, "\(target): \(response)")
                #expect(response.header("content-type")?.contains(type) == true, "\(target): \(response)")
            }
        }
    }

    /// MPD's `status` and the API's Status agree on what both show.
    static func expectSameStatus(
        _ status: JSONValue, _ mpd: [String: String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(status["state"]?.string == mpd["state"], "\(status) \(mpd)", sourceLocation: sourceLocation)
        #expect(
            status["volume"]?.int == mpd["volume"].flatMap { Int($0) }.flatMap { $0 < 0 ? nil : $0 },
            sourceLocation: sourceLocation)
        #expect(status["repeat"]?.bool == (mpd["repeat"] == "1"), sourceLocation: sourceLocation)
        #expect(status["random"]?.bool == (mpd["random"] == "1"), sourceLocation: sourceLocation)
        #expect(status["single"]?.string == mpd["single"], sourceLocation: sourceLocation)
        #expect(status["consume"]?.bool == (mpd["consume"] == "1"), sourceLocation: sourceLocation)
        #expect(status["queueLength"]?.int == mpd["playlistlength"].flatMap { Int($0) }, sourceLocation: sourceLocation)
        #expect(status["queueVersion"]?.int == mpd["playlist"].flatMap { Int($0) }, sourceLocation: sourceLocation)
        #expect(status["position"]?.int == mpd["song"].flatMap { Int($0) }, sourceLocation: sourceLocation)
        #expect(status["id"]?.int == mpd["songid"].flatMap { Int($0) }, sourceLocation: sourceLocation)
    }

    @Test("player, volume, options, seek and timers do what MPD's status then shows")
    func playerAgainstMPD() throws {
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            for uri in ["stereo-44k-cbr.mp3", "mono-48k-vbr.mp3", "gapless-whole.mp3"] {
                let added = try web.post("/api/queue", #"{"uri": "\#(uri)"}"#)
                #expect(added.status == 200, "\(added)")
                #expect(try added.json()["added"]?.int == 1)
            }
            #expect(try web.put("/api/options", #"{"repeat": true}"#).status == 200)
            let ids = try mpd.values("playlistinfo", "Id")
            #expect(ids.count == 3)

            var answer = try web.post("/api/player", #"{"action": "play", "position": 1}"#)
            #expect(answer.status == 200, "\(answer)")
            var status = try mpd.fields("status")
            #expect(status["state"] == "play")
            #expect(status["song"] == "1")
            Self.expectSameStatus(try answer.json(), status)
            #expect(try answer.json()["current"]?["uri"]?.string == "mono-48k-vbr.mp3")

            answer = try web.post("/api/player", #"{"action": "play", "id": \#(ids[2])}"#)
            #expect(try mpd.fields("status")["songid"] == ids[2])
            answer = try web.post("/api/player", #"{"action": "pause"}"#)
            status = try mpd.fields("status")
            #expect(status["state"] == "pause")
            Self.expectSameStatus(try answer.json(), status)
            answer = try web.post("/api/seek", #"{"seconds": 2}"#)
            #expect(answer.status == 200, "\(answer)")
            let elapsed = Double(try mpd.fields("status")["elapsed"] ?? "") ?? -1
            #expect(abs(elapsed - 2) < 0.1, "elapsed \(elapsed) after seeking to 2 s")
            #expect(abs((try answer.json()["elapsed"]?.double ?? -1) - 2) < 0.1, "\(answer)")
            // Back to the start, so that the song does not end during what follows.
            #expect(try web.post("/api/seek", #"{"seconds": 0}"#).status == 200)
            answer = try web.post("/api/player", #"{"action": "resume"}"#)
            #expect(try mpd.fields("status")["state"] == "play")
            answer = try web.post("/api/player", #"{"action": "toggle"}"#)
            #expect(try mpd.fields("status")["state"] == "pause")
            answer = try web.post("/api/player", #"{"action": "toggle"}"#)
            #expect(try mpd.fields("status")["state"] == "play")
            answer = try web.post("/api/player", #"{"action": "previous"}"#)
            #expect(try mpd.fields("status")["song"] == "1")
            answer = try web.post("/api/player", #"{"action": "next"}"#)
            #expect(try mpd.fields("status")["song"] == "2")
            answer = try web.post("/api/player", #"{"action": "stop"}"#)
            status = try mpd.fields("status")
            #expect(status["state"] == "stop")
            Self.expectSameStatus(try answer.json(), status)

            // Volume and options, as MPD's status shows them.
            answer = try web.put("/api/volume", #"{"volume": 37}"#)
            #expect(answer.status == 200, "\(answer)")
            #expect(try mpd.fields("status")["volume"] == "37")
            #expect(try answer.json()["volume"]?.int == 37)
            answer = try web.put(
                "/api/options", #"{"repeat": false, "random": true, "single": "oneshot", "consume": true}"#)
            status = try mpd.fields("status")
            #expect(
                status["repeat"] == "0" && status["random"] == "1" && status["single"] == "oneshot"
                    && status["consume"] == "1", "\(status)")
            Self.expectSameStatus(try answer.json(), status)
            answer = try web.put("/api/options", #"{"single": "1"}"#)
            status = try mpd.fields("status")
            #expect(
                status["single"] == "1" && status["random"] == "1" && status["consume"] == "1",
                "only single changed: \(status)")
            _ = try web.put("/api/options", #"{"random": false, "single": "0", "consume": false}"#)
            Self.expectSameStatus(try web.getJSON("/api/status"), try mpd.fields("status"))

            // Nothing to play: 409, the player untouched.
            #expect(try web.delete("/api/queue").status == 204)
            #expect(try mpd.fields("status")["playlistlength"] == "0")
            answer = try web.post("/api/player", #"{"action": "next"}"#)
            #expect(answer.status == 409, "\(answer)")
            #expect(answer.errorText?.isEmpty == false)
            answer = try web.post("/api/player", #"{"action": "play", "position": 5}"#)
            #expect([400, 404, 409].contains(answer.status), "\(answer)")

            // Timers: what is set shows in the status.
            _ = try web.post("/api/queue", #"{"uri": "stereo-44k-cbr.mp3", "play": true}"#)
            #expect(try mpd.fields("status")["state"] == "play")
            answer = try web.put("/api/timers", #"{"sleep": 600}"#)
            #expect(answer.status == 200, "\(answer)")
            let left = try answer.json()["sleepTimer"]?.double ?? -1
            #expect(left > 590 && left <= 600, "\(answer)")
            answer = try web.put("/api/timers", #"{"sleep": "end"}"#)
            #expect(try answer.json()["sleepTimer"]?.string == "end", "\(answer)")
            answer = try web.put("/api/timers", #"{"sleep": "off"}"#)
            #expect(try answer.json()["sleepTimer"]?.isNull == true, "\(answer)")
            answer = try web.put("/api/timers", #"{"pauseFor": 120}"#)
            #expect(answer.status == 200, "\(answer)")
            let resumeIn = try answer.json()["resumeIn"]?.double ?? -1
            #expect(resumeIn > 110 && resumeIn <= 120, "\(answer)")
            #expect(try mpd.fields("status")["state"] == "pause")
            #expect(try web.getJSON("/api/status")["state"]?.string == "pause")
        }
    }

    @Test("queue add, move, remove, clear and save show in playlistinfo and the stored playlists as MPD lists them")
    func queueAgainstMPD() throws {
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            let uris = ["tagged-id3v23.mp3", "tagged-id3v24.mp3", "tagged-id3v1.mp3", "one-second.mp3"]
            for uri in uris {
                #expect(try web.post("/api/queue", #"{"uri": "\#(uri)"}"#).status == 200)
            }
            func sameQueue(sourceLocation: SourceLocation = #_sourceLocation) throws {
                let queue = try web.getJSON("/api/queue")
                let songs = try mpd.blocks("playlistinfo")
                let listed = queue["songs"]?.array ?? []
                #expect(
                    queue["version"]?.int == Int(try mpd.fields("status")["playlist"] ?? ""),
                    sourceLocation: sourceLocation)
                #expect(listed.map { $0["uri"]?.string } == songs.map { $0["file"] }, sourceLocation: sourceLocation)
                #expect(
                    listed.map { $0["id"]?.int } == songs.map { $0["Id"].flatMap { Int($0) } },
                    sourceLocation: sourceLocation)
                #expect(
                    listed.map { $0["position"]?.int } == songs.map { $0["Pos"].flatMap { Int($0) } },
                    sourceLocation: sourceLocation)
                for (song, block) in zip(listed, songs) {
                    let title = block["Title"] ?? (block["file"].map { ($0 as NSString).lastPathComponent } ?? "")
                    #expect(song["title"]?.string == title, sourceLocation: sourceLocation)
                    #expect(song["artist"]?.string == block["Artist"], sourceLocation: sourceLocation)
                    #expect(song["album"]?.string == block["Album"], sourceLocation: sourceLocation)
                    #expect(song["track"]?.string == block["Track"], sourceLocation: sourceLocation)
                    #expect(song["date"]?.string == block["Date"], sourceLocation: sourceLocation)
                    #expect(song["genre"]?.string == block["Genre"], sourceLocation: sourceLocation)
                    let duration = block["duration"].flatMap { Double($0) }
                    #expect(
                        abs((song["duration"]?.double ?? -1) - (duration ?? -2)) < 0.01, sourceLocation: sourceLocation)
                    #expect(song["cover"]?.string?.hasPrefix("/api/cover?uri=") == true, sourceLocation: sourceLocation)
                }
            }
            try sameQueue()
            let queue = try web.getJSON("/api/queue")
            #expect(queue["songs"]?[0]?["title"]?.string == "Café Noir — Ünïcødé ☃")
            #expect(queue["songs"]?[3]?["title"]?.string == "one-second.mp3")
            #expect(queue["songs"]?[3]?["artist"]?.isNull == true)

            // Move the last to the front, then the front to position 2.
            let ids = try mpd.values("playlistinfo", "Id")
            var answer = try web.post("/api/queue/\(ids[3])/move", #"{"to": 0}"#)
            #expect(answer.status == 204, "\(answer)")
            #expect(try mpd.values("playlistinfo", "Id") == [ids[3], ids[0], ids[1], ids[2]])
            answer = try web.post("/api/queue/\(ids[3])/move", #"{"to": 2}"#)
            #expect(try mpd.values("playlistinfo", "Id") == [ids[0], ids[1], ids[3], ids[2]])
            try sameQueue()
            answer = try web.post("/api/queue/\(ids[3])/move", #"{"to": 4}"#)
            #expect(answer.status == 400, "a move past the end: \(answer)")
            answer = try web.post("/api/queue/999999/move", #"{"to": 0}"#)
            #expect(answer.status == 404, "\(answer)")

            // Remove one; a second time it is gone.
            #expect(try web.delete("/api/queue/\(ids[1])").status == 204)
            #expect(try mpd.values("playlistinfo", "Id") == [ids[0], ids[3], ids[2]])
            answer = try web.delete("/api/queue/\(ids[1])")
            #expect(answer.status == 404, "\(answer)")
            #expect(answer.errorText?.contains(ids[1]) == true, "the error names the id: \(answer)")
            try sameQueue()

            // Save; saving again under the name is a conflict; the stored playlist is MPD's.
            #expect(try web.post("/api/queue/save", #"{"name": "web saved"}"#).status == 204)
            answer = try web.post("/api/queue/save", #"{"name": "web saved"}"#)
            #expect(answer.status == 409, "\(answer)")
            #expect(try mpd.values("listplaylists", "playlist") == ["web saved"])
            let playlists = try web.getJSON("/api/playlists")
            #expect(playlists["playlists"]?.array?.map { $0["name"]?.string } == ["web saved"])
            #expect(
                playlists["playlists"]?[0]?["modified"]?.string
                    == (try mpd.blocks("listplaylists", startingWith: "playlist").first?["Last-Modified"]))
            let stored = try web.getJSON("/api/playlists/" + Self.encoded("web saved"))
            #expect(stored["name"]?.string == "web saved")
            #expect(
                stored["songs"]?.array?.map { $0["uri"]?.string }
                    == (try mpd.values("listplaylist \"web saved\"", "file")))
            #expect(try web.get("/api/playlists/nothing-here").status == 404)

            // Clear, load it back, delete it.
            #expect(try web.delete("/api/queue").status == 204)
            #expect(try mpd.fields("status")["playlistlength"] == "0")
            #expect(try web.post("/api/playlists/" + Self.encoded("web saved") + "/load").status == 204)
            #expect(
                try mpd.values("playlistinfo", "file") == ["tagged-id3v23.mp3", "one-second.mp3", "tagged-id3v1.mp3"])
            try sameQueue()
            // A stored playlist's songs through POST /api/queue too.
            answer = try web.post("/api/queue", #"{"uri": "web saved"}"#)
            #expect(answer.status == 200, "\(answer)")
            #expect(try answer.json()["added"]?.int == 3, "\(answer)")
            #expect(try mpd.fields("status")["playlistlength"] == "6")
            #expect(try web.delete("/api/playlists/" + Self.encoded("web saved")).status == 204)
            #expect(try mpd.values("listplaylists", "playlist") == [])
            #expect(try web.delete("/api/playlists/" + Self.encoded("web saved")).status == 404)
            // A folder adds its songs; a song that is not there is 404.
            answer = try web.post("/api/queue", #"{"uri": "no-such-song.mp3"}"#)
            #expect(answer.status == 404, "\(answer)")
            #expect(!answer.text.contains(Paths.fixtures), "no local path in an answer: \(answer)")
        }
    }

    @Test("the library by folder, artist, album and search (accents folded) lists what MPD's commands list")
    func libraryAgainstMPD() throws {
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            let top = try web.getJSON("/api/library/folder?path=")
            #expect(top["path"]?.string == "")
            let lsinfo = try mpd.blocks("lsinfo")
            #expect(top["songs"]?.array?.map { $0["uri"]?.string } == lsinfo.map { $0["file"] })
            #expect(top["folders"]?.array?.map { $0["path"]?.string } == (try mpd.values("lsinfo", "directory")))
            #expect((top["songs"]?.array?.count ?? 0) > 10)
            #expect(try web.get("/api/library/folder?path=no-such-folder").status == 404)

            let artists = try web.getJSON("/api/library/artists")["artists"]?.array?.compactMap(\.string)
            // Songs without the tag make an empty name in MPD's list, which is no artist to show.
            #expect(artists == (try mpd.values("list albumartist", "AlbumArtist").filter { !$0.isEmpty }))
            #expect(artists?.contains("Sigur Rós") == true)
            let albums = try web.getJSON("/api/library/albums?artist=" + Self.encoded("Sigur Rós"))
            #expect(
                albums["albums"]?.array?.compactMap(\.string)
                    == (try mpd.values("list album albumartist \"Sigur Rós\"", "Album")))
            #expect(albums["albums"]?.array?.compactMap(\.string) == ["Ágætis byrjun"])
            let songs = try web.getJSON(
                "/api/library/songs?artist=" + Self.encoded("Sigur Rós") + "&album=" + Self.encoded("Ágætis byrjun"))
            #expect(songs["songs"]?.array?.map { $0["uri"]?.string } == ["tagged-id3v1.mp3"])
            #expect(songs["songs"]?[0]?["title"]?.string == "Motörhead Übung")
            #expect(songs["songs"]?[0]?["id"]?.isNull == true, "no id outside the queue")

            // Any tag or the file name: what `search any` and `search file` find together.
            func expectSameSearch(_ query: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let found = try web.getJSON("/api/search?q=" + Self.encoded(query))["songs"]?.array?.compactMap {
                    $0["uri"]?.string
                }
                let expected = Set(
                    try mpd.values("search any \"\(query)\"", "file") + mpd.values("search file \"\(query)\"", "file"))
                #expect(found.map(Set.init) == expected, "search \(query)", sourceLocation: sourceLocation)
                #expect(found?.count == expected.count, "search \(query)", sourceLocation: sourceLocation)
            }
            for query in ["cafe", "CAFÉ", "bjork", "sigur ros", "ελληνικα", "electronique", "ÇA IRA", "zzz-nothing"] {
                try expectSameSearch(query)
            }
            try expectSameSearch("one-second")
            #expect(try web.getJSON("/api/search?q=cafe")["songs"]?.array?.count == 1)
            #expect(try web.getJSON("/api/search?q=bjork")["songs"]?.array?.count == 1)
            #expect(try web.get("/api/search").status == 400)
        }
    }

    @Test("cover art with caching headers, 304 on its ETag, 404 without one; outputs as MPD shows them")
    func coverAndOutputs() throws {
        var daemonArguments: [String] = []
        daemonArguments += ["--output", "null,name=Second", "--output", "null:unpaced,name=Third"]
        try withWebPlayerd(extraArguments: daemonArguments) { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            let cover = try web.get("/api/cover?uri=big-id3.mp3")
            #expect(cover.status == 200, "\(cover)")
            #expect(cover.body.count == 300_000, "the embedded picture's bytes")
            #expect(cover.header("cache-control") == "private, max-age=3600")
            let tag = try #require(cover.header("etag"))
            let again = try web.request("GET", "/api/cover?uri=big-id3.mp3", headers: [("If-None-Match", tag)])
            #expect(again.status == 304, "\(again)")
            #expect(again.body.isEmpty)
            #expect(try web.get("/api/cover?uri=one-second.mp3").status == 404)
            #expect(try web.get("/api/cover?uri=no-such.mp3").status == 404)

            let outputs = try web.getJSON("/api/outputs")["outputs"]?.array ?? []
            let blocks = try mpd.blocks("outputs", startingWith: "outputid")
            #expect(outputs.count == blocks.count && outputs.count >= 2)
            #expect(outputs.map { $0["id"]?.int } == blocks.map { $0["outputid"].flatMap { Int($0) } })
            #expect(outputs.map { $0["name"]?.string } == blocks.map { $0["outputname"] })
            #expect(outputs.map { $0["plugin"]?.string } == blocks.map { $0["plugin"] })
            #expect(outputs.map { $0["enabled"]?.bool } == blocks.map { $0["outputenabled"] == "1" })
            #expect(try web.put("/api/outputs/1", #"{"enabled": false}"#).status == 204)
            #expect(try mpd.blocks("outputs", startingWith: "outputid")[1]["outputenabled"] == "0")
            #expect(try web.getJSON("/api/outputs")["outputs"]?[1]?["enabled"]?.bool == false)
            #expect(try web.put("/api/outputs/1", #"{"enabled": true}"#).status == 204)
            #expect(try mpd.blocks("outputs", startingWith: "outputid")[1]["outputenabled"] == "1")
            #expect(try web.put("/api/outputs/99", #"{"enabled": true}"#).status == 404)
        }
    }

    /// Reads frames until one names `name`, returning how long after `start` it came; throws when none
    /// does within `limit`.
    static func frameNaming(
        _ name: String, on socket: WebSocketClient, since start: ContinuousClock.Instant, within limit: Duration
    ) throws -> Duration {
        while true {
            let left = limit - (ContinuousClock.now - start)
            guard left > .zero else { throw HarnessError("no frame naming \(name) within \(limit)") }
            if try socket.readChanges(timeout: left).contains(name) {
                return ContinuousClock.now - start
            }
        }
    }

    @Test(
        "a WebSocket hears player, mixer and playlist within 0.25 s of an MPD client's play, setvol and add; nothing when nothing changes"
    )
    func liveEvents() throws {
        try withWebPlayerd { daemon, port in
            let mpd = try daemon.connect()
            #expect(try mpd.command("add stereo-44k-cbr.mp3").last == "OK")
            #expect(try mpd.command("repeat 1").last == "OK")
            let socket = try WebSocketClient(port: port)
            #expect(try socket.readChanges() == [], "the first frame says the subscription stands")
            let other = try WebSocketClient(port: port)
            #expect(try other.readChanges() == [])
            #expect(try socket.hasInput(within: .seconds(1)) == false, "no frame while nothing changes")

            for (command, name) in [
                ("play", "player"), ("setvol 55", "mixer"), ("add one-second.mp3", "playlist"), ("random 1", "options"),
                ("pause 1", "player"),
            ] {
                let start = ContinuousClock.now
                #expect(try mpd.command(command).last == "OK")
                let took = try Self.frameNaming(name, on: socket, since: start, within: .seconds(2))
                #expect(took <= .milliseconds(250), "\(command) → \(name) took \(took)")
                _ = try Self.frameNaming(name, on: other, since: start, within: .seconds(2))
            }
            // Paused, nothing changes: no frame for a second (the frames of the changes above are read).
            while try socket.hasInput(within: .milliseconds(300)) {
                _ = try socket.readChanges()
            }
            #expect(try socket.hasInput(within: .seconds(1)) == false, "no frame while nothing changes")
            // A change through the API reaches the WebSocket too.
            let start = ContinuousClock.now
            #expect(try WebClient(port: port).put("/api/volume", #"{"volume": 20}"#).status == 200)
            _ = try Self.frameNaming("mixer", on: socket, since: start, within: .seconds(2))
            #expect(try socket.close() == .close(code: 1000))
            #expect(try other.close() == .close(code: 1000))
        }
    }

    @Test("SIGTERM with WebSockets open: the daemon ends within 5 s, cleanly, and the sockets see their end")
    func shutdownWithWebSocketsOpen() throws {
        try withWebPlayerd(library: false) { daemon, port in
            let sockets = try (0..<3).map { _ in try WebSocketClient(port: port) }
            for socket in sockets {
                #expect(try socket.readChanges() == [])
            }
            try daemon.stop(within: .seconds(5))
            for socket in sockets {
                #expect(socket.connection.isClosedByPeer(within: .seconds(1)))
            }
        }
    }

    private func passwordFile(_ text: String) throws -> String {
        let path = try Paths.makeTemporaryDirectory() + "/passwords"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o600) == 0)
        return path
    }

    @Test(
        "--default-permissions read with a password file: 401 without login, 403 and backoff on a wrong password, allowed after the right one, ended by logout"
    )
    func permissions() throws {
        let passwords = try self.passwordFile("secret@read,add,control,admin\n")
        try withWebPlayerd(extraArguments: ["--default-permissions", "read", "--password-file", passwords]) {
            daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            #expect(try mpd.command("add stereo-44k-cbr.mp3").last == "OK")
            let session = try web.getJSON("/api/session")
            #expect(session["permissions"] == .array([.string("read")]))
            #expect(session["passwordSet"]?.bool == true)
            let cookie = try #require(web.sessionCookie)
            #expect(cookie.contains("HttpOnly"), "\(cookie)")
            #expect(cookie.contains("SameSite=Strict"), "\(cookie)")
            // Read is allowed; control is not, and no password has been given: 401.
            #expect(try web.get("/api/status").status == 200)
            var answer = try web.post("/api/player", #"{"action": "play"}"#)
            #expect(answer.status == 401, "\(answer)")
            #expect(answer.errorText?.isEmpty == false)
            #expect(try mpd.fields("status")["state"] == "stop")
            #expect(try web.put("/api/volume", #"{"volume": 10}"#).status == 401)
            #expect(try web.post("/api/queue", #"{"uri": "one-second.mp3"}"#).status == 401)

            // Wrong passwords: 403, each answered later than the one before (the daemon's backoff).
            var waits: [Duration] = []
            for _ in 0..<3 {
                let start = ContinuousClock.now
                answer = try web.post("/api/session", #"{"password": "guess"}"#)
                waits.append(ContinuousClock.now - start)
                #expect(answer.status == 403, "\(answer)")
            }
            #expect(waits[0] >= .milliseconds(200), "\(waits)")
            #expect(waits[1] >= .milliseconds(450) && waits[2] >= .milliseconds(900), "\(waits)")
            // After a wrong password, a refused call is 403, not 401.
            answer = try web.post("/api/player", #"{"action": "play"}"#)
            #expect([401, 403].contains(answer.status), "\(answer)")

            // The right one: allowed, in this session only.
            answer = try web.post("/api/session", #"{"password": "secret"}"#)
            #expect(answer.status == 200, "\(answer)")
            #expect(
                Set(try answer.json()["permissions"]?.array?.compactMap(\.string) ?? []) == [
                    "read", "add", "player", "control", "admin",
                ], "control brings player with it, as on the MPD socket")
            answer = try web.post("/api/player", #"{"action": "play"}"#)
            #expect(answer.status == 200, "\(answer)")
            #expect(try mpd.fields("status")["state"] == "play")
            #expect(
                try WebClient(port: port).post("/api/player", #"{"action": "stop"}"#).status == 401,
                "another session is not logged in")
            #expect(
                try WebClient(port: port, keepsSession: false).post("/api/player", #"{"action": "stop"}"#).status == 401
            )

            // Logout ends it: the same cookie is a session no more.
            #expect(try web.delete("/api/session").status == 204)
            answer = try web.post("/api/player", #"{"action": "stop"}"#)
            #expect(answer.status == 401, "\(answer)")
            #expect(try mpd.fields("status")["state"] == "play")
            #expect(try web.getJSON("/api/session")["permissions"] == .array([.string("read")]))
            _ = try mpd.command("stop")
        }
    }

    @Test("with no default permissions, the WebSocket of a session that may not read is closed 1008 until it logs in")
    func webSocketNeedsRead() throws {
        let passwords = try self.passwordFile("secret@read\n")
        try withWebPlayerd(library: false, extraArguments: ["--default-permissions", "", "--password-file", passwords])
        {
            _, port in
            let web = WebClient(port: port)
            #expect(try web.getJSON("/api/session")["permissions"] == .array([]))
            #expect(try web.get("/api/status").status == 401)
            let refused = try WebSocketClient(port: port, cookie: web.session)
            var frames: [WebSocketClient.Frame] = []
            while frames.count < 5 {
                frames.append(try refused.readFrame())
                if case .close = frames.last { break }
            }
            #expect(frames == [.close(code: 1008)], "\(frames)")
            #expect(try web.post("/api/session", #"{"password": "secret"}"#).status == 200)
            let allowed = try WebSocketClient(port: port, cookie: web.session)
            #expect(try allowed.readChanges() == [])
            #expect(try allowed.close() == .close(code: 1000))
        }
    }

    @Test(
        "no local path crosses the network: absolute paths are refused, a song added by one shows uri null and its file name"
    )
    func noLocalPaths() throws {
        try withWebPlayerd { daemon, port in
            let web = WebClient(port: port)
            let mpd = try daemon.connect()
            let absolute = Paths.fixture("one-second.mp3")
            for uri in [absolute, "file://" + absolute, "/etc/passwd", "../../etc/passwd", "file:///etc/passwd"] {
                let answer = try web.post("/api/queue", #"{"uri": \#(JSONValue.quoted(uri))}"#)
                #expect([400, 403, 404].contains(answer.status), "\(uri): \(answer)")
                // The error may repeat what was sent, and nothing more of the machine's paths.
                let told = answer.text.replacingOccurrences(of: uri, with: "")
                #expect(!told.contains(Paths.fixtures) && !told.contains("/work/"), "\(uri): \(answer)")
            }
            #expect(try mpd.fields("status")["playlistlength"] == "0")
            for target in [
                "/api/cover?uri=" + Self.encoded(absolute), "/api/library/folder?path=" + Self.encoded("/etc"),
            ] {
                let answer = try web.get(target)
                #expect([400, 403, 404].contains(answer.status), "\(target): \(answer)")
            }

            // Added by absolute path over the local MPD socket, from outside the music directory (inside
            // it, the daemon takes the song as the library's): the network sees no path.
            let outside = daemon.directory + "/outside-song.mp3"
            try FileManager.default.copyItem(atPath: absolute, toPath: outside)
            #expect(try mpd.command("add \"\(outside)\"").last == "OK")
            #expect(try mpd.command("add tagged-id3v24.mp3").last == "OK")
            #expect(try mpd.command("play 0").last == "OK")
            let queue = try web.get("/api/queue")
            let song = try queue.json()["songs"]?[0]
            #expect(song?["uri"]?.isNull == true, "\(queue)")
            #expect(song?["title"]?.string == "outside-song.mp3", "\(queue)")
            #expect(song?["cover"]?.isNull == true, "\(queue)")
            let status = try web.get("/api/status")
            #expect(try status.json()["current"]?["uri"]?.isNull == true, "\(status)")
            for answer in [queue, status] {
                #expect(!answer.text.contains(Paths.fixtures), "\(answer)")
                #expect(!answer.text.contains("/tmp/"), "\(answer)")
            }
            #expect(try mpd.command("stop").last == "OK")
        }
    }
}
