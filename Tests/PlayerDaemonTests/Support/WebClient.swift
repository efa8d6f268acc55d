import Foundation
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

// A small HTTP/1.1 and WebSocket client of the web remote (`playerd --http`), written for the tests over
// raw sockets (LineClient) so that they depend on no HTTP library and can send what no library would.

/// A JSON value as it was sent: numbers keep their text, so that an integer is told from a number and a
/// boolean from both.
enum JSONValue: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses one JSON text (RFC 8259); throws naming the offset of the first problem.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.value()
        parser.skipSpace()
        guard parser.offset == bytes.count else {
            throw HarnessError("JSON: extra bytes at offset \(parser.offset)")
        }
        return value
    }

    static func parse(_ text: String) throws -> JSONValue {
        try parse(Array(text.utf8))
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    subscript(index: Int) -> JSONValue? {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var int: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    var double: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    var object: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }

    var isNull: Bool { self == .null }

    /// Compact JSON text (object keys sorted).
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let text): return text
        case .string(let text): return Self.quoted(text)
        case .array(let items): return "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let fields):
            return "{"
                + fields.keys.sorted().map { Self.quoted($0) + ":" + fields[$0]!.description }
                .joined(separator: ",") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        jsonString(text)
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var offset = 0
    var depth = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func skipSpace() {
        while self.offset < self.bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(self.bytes[self.offset]) {
            self.offset += 1
        }
    }

    func problem(_ what: String) -> HarnessError {
        HarnessError("JSON: \(what) at offset \(self.offset)")
    }

    mutating func value() throws -> JSONValue {
        self.skipSpace()
        guard self.offset < self.bytes.count else { throw self.problem("unexpected end") }
        switch self.bytes[self.offset] {
        case UInt8(ascii: "{"):
            return try self.object()
        case UInt8(ascii: "["):
            return try self.array()
        case UInt8(ascii: "\""):
            return .string(try self.string())
        case UInt8(ascii: "t"):
            try self.literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try self.literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try self.literal("null")
            return .null
        default:
            return try self.number()
        }
    }

    mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8)
        guard self.offset + expected.count <= self.bytes.count,
            Array(self.bytes[self.offset..<self.offset + expected.count]) == expected
        else { throw self.problem("expected \(word)") }
        self.offset += expected.count
    }

    mutating func number() throws -> JSONValue {
        let start = self.offset
        let allowed = Set("+-0123456789.eE".utf8)
        while self.offset < self.bytes.count, allowed.contains(self.bytes[self.offset]) {
            self.offset += 1
        }
        let text = String(decoding: self.bytes[start..<self.offset], as: UTF8.self)
        guard !text.isEmpty, Double(text) != nil, text.first != "+" else {
            self.offset = start
            throw self.problem("not a value")
        }
        return .number(text)
    }

    mutating func string() throws -> String {
        self.offset += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll()
        }
        while true {
            guard self.offset < self.bytes.count else { throw self.problem("unterminated string") }
            let byte = self.bytes[self.offset]
            self.offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard self.offset < self.bytes.count else { throw self.problem("unterminated escape") }
                let escape = self.bytes[self.offset]
                self.offset += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try self.hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        try self.literal("\\u")
                        let low = try self.hex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw self.problem("bad \\u escape") }
                    scalars.append(scalar)
                default:
                    throw self.problem("bad escape")
                }
            default:
                guard byte >= 0x20 else { throw self.problem("control character in a string") }
                raw.append(byte)
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard self.offset + 4 <= self.bytes.count,
            let code = UInt32(String(decoding: self.bytes[self.offset..<self.offset + 4], as: UTF8.self), radix: 16)
        else { throw self.problem("bad \\u escape") }
        self.offset += 4
        return code
    }

    mutating func array() throws -> JSONValue {
        self.offset += 1
        self.depth += 1
        guard self.depth < 200 else { throw self.problem("too deep") }
        defer { self.depth -= 1 }
        var items: [JSONValue] = []
        self.skipSpace()
        if self.offset < self.bytes.count, self.bytes[self.offset] == UInt8(ascii: "]") {
            self.offset += 1
            return .array(items)
        }
        while true {
            items.append(try self.value())
            self.skipSpace()
            guard self.offset < self.bytes.count else { throw self.problem("unterminated array") }
            let byte = self.bytes[self.offset]
            self.offset += 1
            if byte == UInt8(ascii: "]") { return .array(items) }
            guard byte == UInt8(ascii: ",") else { throw self.problem("expected , or ]") }
        }
    }

    mutating func object() throws -> JSONValue {
        self.offset += 1
        self.depth += 1
        guard self.depth < 200 else { throw self.problem("too deep") }
        defer { self.depth -= 1 }
        var fields: [String: JSONValue] = [:]
        self.skipSpace()
        if self.offset < self.bytes.count, self.bytes[self.offset] == UInt8(ascii: "}") {
            self.offset += 1
            return .object(fields)
        }
        while true {
            self.skipSpace()
            guard self.offset < self.bytes.count, self.bytes[self.offset] == UInt8(ascii: "\"") else {
                throw self.problem("expected a key")
            }
            let key = try self.string()
            self.skipSpace()
            guard self.offset < self.bytes.count, self.bytes[self.offset] == UInt8(ascii: ":") else {
                throw self.problem("expected :")
            }
            self.offset += 1
            fields[key] = try self.value()
            self.skipSpace()
            guard self.offset < self.bytes.count else { throw self.problem("unterminated object") }
            let byte = self.bytes[self.offset]
            self.offset += 1
            if byte == UInt8(ascii: "}") { return .object(fields) }
            guard byte == UInt8(ascii: ",") else { throw self.problem("expected , or }") }
        }
    }
}

/// One HTTP answer.
struct HTTPResponse: CustomStringConvertible {
    let status: Int
    /// Header names in lower case, in the order sent.
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        self.headers.first { $0.name == name.lowercased() }?.value
    }

    func headers(_ name: String) -> [String] {
        self.headers.filter { $0.name == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: self.body, as: UTF8.self) }

    /// The body as JSON; throws when it is not.
    func json() throws -> JSONValue {
        do {
            return try JSONValue.parse(self.body)
        } catch {
            throw HarnessError("\(error) in the answer \(self)")
        }
    }

    /// The `error` text of an error answer, or nil.
    var errorText: String? { (try? JSONValue.parse(self.body))?["error"]?.string }

    var description: String {
        let shown = self.body.count > 600 ? String(decoding: self.body.prefix(600), as: UTF8.self) + "…" : self.text
        return "HTTP \(self.status) \(self.header("content-type") ?? "") \(shown)"
    }
}

/// A client of `playerd --http` on loopback: each request on a new connection (`Connection: close`),
/// the session cookie kept between requests unless told otherwise, each read bounded by a timeout.
final class WebClient {
    let host: String
    let port: Int
    /// Whether the `playerd_session` cookie is kept and sent back (a browser); false makes every request a
    /// fresh session (a script without cookies).
    let keepsSession: Bool
    /// The address the connections come from (any of 127.0.0.0/8: tests can be several hosts).
    let source: String?
    /// The session cookie's value, once the daemon set one.
    private(set) var session: String?
    /// The `Set-Cookie` header that made the session.
    private(set) var sessionCookie: String?

    init(port: Int, host: String = "127.0.0.1", keepsSession: Bool = true, from source: String? = nil) {
        self.host = host
        self.port = port
        self.keepsSession = keepsSession
        self.source = source
    }

    /// Sends a request with `json` (already JSON text) or raw `body` and reads the whole answer.
    @discardableResult
    func request(
        _ method: String, _ target: String, json: String? = nil, body: [UInt8]? = nil,
        headers: [(String, String)] = [], timeout: Duration = .seconds(10)
    ) throws -> HTTPResponse {
        let connection = try LineClient(host: self.host, port: self.port, from: self.source)
        defer { connection.close() }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(self.host):\(self.port)\r\nConnection: close\r\n"
        let payload = body ?? json.map { Array($0.utf8) }
        if let payload {
            if json != nil, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                head += "Content-Type: application/json\r\n"
            }
            head += "Content-Length: \(payload.count)\r\n"
        }
        if self.keepsSession, let session = self.session {
            head += "Cookie: playerd_session=\(session)\r\n"
        }
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        try connection.send(bytes: Array(head.utf8) + (payload ?? []), timeout: timeout)
        let response = try Self.readResponse(connection, method: method, timeout: timeout)
        if self.keepsSession {
            for cookie in response.headers("set-cookie") where cookie.hasPrefix("playerd_session=") {
                let value = cookie.dropFirst("playerd_session=".count).prefix { $0 != ";" }
                self.session = value.isEmpty ? nil : String(value)
                self.sessionCookie = cookie
            }
        }
        return response
    }

    func get(_ target: String) throws -> HTTPResponse {
        try self.request("GET", target)
    }

    func post(_ target: String, _ json: String? = nil) throws -> HTTPResponse {
        try self.request("POST", target, json: json)
    }

    func put(_ target: String, _ json: String) throws -> HTTPResponse {
        try self.request("PUT", target, json: json)
    }

    func delete(_ target: String) throws -> HTTPResponse {
        try self.request("DELETE", target)
    }

    /// GETs `target` and checks a 200 with a JSON body, which it returns.
    func getJSON(_ target: String) throws -> JSONValue {
        let response = try self.get(target)
        guard response.status == 200 else {
            throw HarnessError("GET \(target) answered \(response)")
        }
        return try response.json()
    }

    /// Reads a status line, headers and the body (by Content-Length, chunked, or to the end).
    static func readResponse(_ connection: LineClient, method: String, timeout: Duration) throws -> HTTPResponse {
        func line() throws -> String {
            guard let line = try connection.readLine(timeout: timeout) else {
                throw HarnessError("the daemon closed the connection before a whole HTTP answer")
            }
            return line.hasSuffix("\r") ? String(line.dropLast()) : line
        }
        let statusLine = try line()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw HarnessError("not an HTTP status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let header = try line()
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: ":") else {
                throw HarnessError("not an HTTP header: \(header)")
            }
            headers.append(
                (
                    header[..<colon].lowercased(),
                    header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        var body: [UInt8] = []
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if header("transfer-encoding")?.lowercased().contains("chunked") == true {
            while true {
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                    throw HarnessError("bad chunk size line: \(sizeLine)")
                }
                if size == 0 {
                    while try !line().isEmpty {}
                    break
                }
                body += try connection.readBytes(size, timeout: timeout)
                _ = try line()
            }
        } else if let length = header("content-length").flatMap({ Int($0) }) {
            body = try connection.readBytes(length, timeout: timeout)
        } else {
            body = Array(try connection.readToEnd(timeout: timeout).utf8)
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

/// A WebSocket client (RFC 6455) over a raw connection: the upgrade, then reading the server's frames
/// (answering pings), and closing.
final class WebSocketClient {
    let connection: LineClient
    /// The upgrade's answer.
    let upgrade: HTTPResponse

    /// Connects and upgrades `target`; throws unless the daemon answers 101 with the right accept key.
    init(
        port: Int, target: String = "/api/events", host: String = "127.0.0.1", cookie: String? = nil,
        from source: String? = nil
    ) throws {
        self.connection = try LineClient(host: host, port: port, from: source)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var head =
            "GET \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: \(key)\r\n"
        if let cookie {
            head += "Cookie: playerd_session=\(cookie)\r\n"
        }
        head += "\r\n"
        try self.connection.send(bytes: Array(head.utf8))
        self.upgrade = try WebClient.readResponse(self.connection, method: "GET", timeout: .seconds(10))
        guard self.upgrade.status == 101 else {
            throw HarnessError("the WebSocket upgrade was answered \(self.upgrade)")
        }
        let expected = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
            .base64EncodedString()
        guard self.upgrade.header("sec-websocket-accept") == expected else {
            throw HarnessError("Sec-WebSocket-Accept is \(self.upgrade.header("sec-websocket-accept") ?? "missing")")
        }
    }

    enum Frame: Equatable {
        case text(String)
        case binary([UInt8])
        case close(code: Int?)
    }

    /// The next data or close frame (pings are answered and skipped); throws when none comes within
    /// `timeout` or the connection ends without a close frame.
    func readFrame(timeout: Duration = .seconds(5)) throws -> Frame {
        let deadline = ContinuousClock.now + timeout
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        while true {
            let left = max(.milliseconds(1), ContinuousClock.now.duration(to: deadline))
            let head = try self.connection.readBytes(2, timeout: left)
            let final = head[0] & 0x80 != 0
            let opcode = head[0] & 0x0F
            guard head[1] & 0x80 == 0 else { throw HarnessError("the server masked a frame (RFC 6455 5.1)") }
            var length = Int(head[1] & 0x7F)
            if length == 126 {
                let bytes = try self.connection.readBytes(2, timeout: left)
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                let bytes = try self.connection.readBytes(8, timeout: left)
                length = bytes.reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try self.connection.readBytes(length, timeout: left)
            switch opcode {
            case 0x9:
                try self.send(opcode: 0xA, payload)
            case 0xA:
                continue
            case 0x8:
                let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                return .close(code: code)
            case 0x0, 0x1, 0x2:
                if opcode != 0 { messageOpcode = opcode }
                message += payload
                if final {
                    return messageOpcode == 0x1 ? .text(String(decoding: message, as: UTF8.self)) : .binary(message)
                }
            default:
                throw HarnessError("unknown WebSocket opcode \(opcode)")
            }
        }
    }

    /// The next text frame as JSON.
    func readJSON(timeout: Duration = .seconds(5)) throws -> JSONValue {
        let frame = try self.readFrame(timeout: timeout)
        guard case .text(let text) = frame else { throw HarnessError("expected a text frame, got \(frame)") }
        return try JSONValue.parse(text)
    }

    /// The names of the next `{"changed": [...]}` frame.
    func readChanges(timeout: Duration = .seconds(5)) throws -> [String] {
        let value = try self.readJSON(timeout: timeout)
        guard let names = value["changed"]?.array?.compactMap(\.string), value.object?.count == 1 else {
            throw HarnessError("not a {\"changed\": [...]} frame: \(value)")
        }
        return names
    }

    /// Whether anything (a frame or the end) arrives within `wait`.
    func hasInput(within wait: Duration) throws -> Bool {
        try self.connection.hasInput(within: wait)
    }

    /// Sends one masked frame, as a client must.
    func send(opcode: UInt8, _ payload: [UInt8]) throws {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try self.connection.send(bytes: frame)
    }

    /// Sends a close frame (1000) and waits for the server's close.
    func close() throws -> Frame {
        try self.send(opcode: 0x8, [0x03, 0xE8])
        while true {
            let frame = try self.readFrame()
            if case .close = frame { return frame }
        }
    }
}

/// SHA-1 (FIPS 180-4), for the WebSocket handshake's accept key only.
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        let bitLength = UInt64(message.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        data += (0..<8).reversed().map { UInt8((bitLength >> (UInt64($0) * 8)) & 0xFF) }
        for chunk in stride(from: 0, to: data.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 {
                let b = chunk + i * 4
                w[i] =
                    UInt32(data[b]) << 24 | UInt32(data[b + 1]) << 16 | UInt32(data[b + 2]) << 8 | UInt32(data[b + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
            }
            h[0] = h[0] &+ a
            h[1] = h[1] &+ b
            h[2] = h[2] &+ c
            h[3] = h[3] &+ d
            h[4] = h[4] &+ e
        }
        return h.flatMap { word in (0..<4).reversed().map { UInt8((word >> (UInt32($0) * 8)) & 0xFF) } }
    }
}

/// Checks JSON values against the schemas of an OpenAPI 3.0 document (the subset openapi.yaml uses:
/// type, nullable, enum, required, properties, items, minimum, maximum, minLength, allOf, anyOf, oneOf,
/// $ref), naming every problem with its place.
struct OpenAPISchemaChecker {
    let document: JSONValue

    /// The document at a `#/...` reference.
    func resolve(_ reference: String) throws -> JSONValue {
        guard reference.hasPrefix("#/") else { throw HarnessError("unsupported $ref \(reference)") }
        var node = self.document
        for part in reference.dropFirst(2).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard let next = node[key] else { throw HarnessError("dangling $ref \(reference)") }
            node = next
        }
        return node
    }

    /// A node with its `$ref` (if any) followed.
    func dereferenced(_ node: JSONValue) throws -> JSONValue {
        var node = node
        while let reference = node["$ref"]?.string {
            node = try self.resolve(reference)
        }
        return node
    }

    /// The problems of `value` against `schema`; empty when it validates.
    func problems(_ value: JSONValue, _ schema: JSONValue, at place: String = "$") throws -> [String] {
        let schema = try self.dereferenced(schema)
        if value.isNull {
            if schema["nullable"]?.bool == true { return [] }
            if schema["type"] == nil, schema["allOf"] == nil, schema["anyOf"] == nil, schema["oneOf"] == nil {
                return []
            }
            return ["\(place): null where the schema says not nullable"]
        }
        var found: [String] = []
        if let allOf = schema["allOf"]?.array {
            for part in allOf { found += try self.problems(value, part, at: place) }
        }
        if let anyOf = schema["anyOf"]?.array {
            if try !anyOf.contains(where: { try self.problems(value, $0, at: place).isEmpty }) {
                found.append("\(place): \(value) matches none of anyOf")
            }
        }
        if let oneOf = schema["oneOf"]?.array {
            let matches = try oneOf.filter { try self.problems(value, $0, at: place).isEmpty }.count
            if matches != 1 { found.append("\(place): \(value) matches \(matches) of oneOf") }
        }
        if let type = schema["type"]?.string {
            let fits: Bool
            switch (type, value) {
            case ("string", .string), ("boolean", .bool), ("number", .number), ("array", .array), ("object", .object):
                fits = true
            case ("integer", .number(let text)):
                fits = Int(text) != nil
            default:
                fits = false
            }
            guard fits else { return found + ["\(place): \(value) is not of type \(type)"] }
        }
        if let options = schema["enum"]?.array, !options.contains(value) {
            found.append("\(place): \(value) is not one of \(options)")
        }
        if let minimum = schema["minimum"]?.double, let number = value.double, number < minimum {
            found.append("\(place): \(value) is below the minimum \(minimum)")
        }
        if let maximum = schema["maximum"]?.double, let number = value.double, number > maximum {
            found.append("\(place): \(value) is above the maximum \(maximum)")
        }
        if let minLength = schema["minLength"]?.int, let text = value.string, text.count < minLength {
            found.append("\(place): \"\(text)\" is shorter than \(minLength)")
        }
        if let fields = value.object {
            for key in schema["required"]?.array?.compactMap(\.string) ?? [] where fields[key] == nil {
                found.append("\(place): the required key \(key) is missing")
            }
            let properties = schema["properties"]?.object ?? [:]
            for (key, field) in fields {
                if let property = properties[key] {
                    found += try self.problems(field, property, at: place + "." + key)
                }
            }
        }
        if let items = value.array, let itemSchema = schema["items"] {
            for (index, item) in items.enumerated() {
                found += try self.problems(item, itemSchema, at: "\(place)[\(index)]")
            }
        }
        return found
    }
}

/// Runs `body` against a fresh playerd serving the web remote on `--http 127.0.0.1:PORT` (a free port),
/// with a library of the fixtures whose first update has ended (unless `library` is false), once the
/// HTTP server answers. `body` gets the daemon and the port.
func withWebPlayerd<Result>(
    library: Bool = true, output: String = "null", extraArguments: [String] = [],
    _ body: (RunningPlayerd, Int) throws -> Result
) throws -> Result {
    var options = RunningPlayerd.Options()
    options.library = library
    options.output = output
    let port = try freeLoopbackPort()
    options.extraArguments = ["--http", "127.0.0.1:\(port)"] + extraArguments
    return try withPlayerd(options) { daemon in
        let mpd = try daemon.connect()
        if library {
            try expectEventually("the library's first update ends", within: .seconds(30)) {
                let updating = try mpd.fields("status")["updating_db"] != nil
                let songs = try mpd.fields("stats")["songs"].flatMap { Int($0) } ?? 0
                return !updating && songs > 0
            }
        }
        try expectEventually("the web remote answers on port \(port)", within: .seconds(10)) {
            (try? WebClient(port: port, keepsSession: false).get("/api/openapi.yaml").status) == 200
        }
        return try body(daemon, port)
    }
}

extension LineClient {
    /// The blocks of an MPD answer that start with `key` (`file` for songs, `outputid` for outputs), each
    /// as its fields.
    func blocks(_ line: String, startingWith key: String = "file") throws -> [[String: String]] {
        let answer = try self.command(line)
        guard answer.last == "OK" else { throw HarnessError("\(line) was refused: \(answer.last ?? "")") }
        var blocks: [[String: String]] = []
        for entry in answer.dropLast() {
            guard let colon = entry.range(of: ": ") else { continue }
            let name = String(entry[..<colon.lowerBound])
            if name == key { blocks.append([:]) }
            guard !blocks.isEmpty else { continue }
            blocks[blocks.count - 1][name] = String(entry[colon.upperBound...])
        }
        return blocks
    }

    /// The values of `key` in an MPD answer, in order.
    func values(_ line: String, _ key: String) throws -> [String] {
        let answer = try self.command(line)
        guard answer.last == "OK" else { throw HarnessError("\(line) was refused: \(answer.last ?? "")") }
        return answer.compactMap { $0.hasPrefix(key + ": ") ? String($0.dropFirst(key.count + 2)) : nil }
    }
}
