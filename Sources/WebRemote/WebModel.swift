import Hummingbird

/// An API call's failure: the HTTP status and the text of `{"error": ...}`.
struct WebError: Error, Sendable {
    let status: HTTPResponse.Status
    let message: String

    init(status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The status that says what the daemon's refusal means (MPD's ACK codes, `Ack.Code`).
    init(_ failure: DaemonFailure, passwordGiven: Bool) {
        switch failure {
        case .ack(let code, let ackMessage):
            // The daemon's errors may name local files: the network is told their names only.
            let message = WebModel.withoutLocalPaths(ackMessage)
            let status: HTTPResponse.Status =
                switch code {
                case 4: passwordGiven ? .forbidden : .unauthorized  // permission
                case 3: .forbidden  // wrong password
                case 50: .notFound  // no such thing
                case 56, 55, 54: .conflict  // exists, not playing / cannot, playlist too long
                case 1, 2: .badRequest  // not a list, bad argument
                default: .internalServerError
                }
            self.init(status: status, message)
        case .refused(let message):
            self.init(status: .tooManyRequests, message.isEmpty ? "too many clients" : message)
        case .closed:
            self.init(status: .serviceUnavailable, "the player closed the connection")
        }
    }
}

/// Songs, folders and playlists out of the daemon's `key: value` lines.
enum WebModel {
    /// The blocks of a listing, each starting at one of `starts` (`file`, `directory`, `playlist`).
    static func blocks(
        _ fields: [(key: String, value: String)], startingAt starts: Set<String> = ["file", "directory", "playlist"]
    ) -> [[(key: String, value: String)]] {
        var blocks: [[(key: String, value: String)]] = []
        for field in fields {
            if starts.contains(field.key) || blocks.isEmpty {
                blocks.append([field])
            } else {
                blocks[blocks.count - 1].append(field)
            }
        }
        return blocks
    }

    /// A song block as the API's `Song`.
    static func song(_ block: [(key: String, value: String)]) -> JSON {
        func value(_ key: String) -> String? { block.first { $0.key == key }?.value }
        let file = value("file") ?? ""
        // A song added by absolute path (or file://) by a local client: the network is told its name only.
        let isLocal = file.hasPrefix("/") || file.hasPrefix("file://")
        let uri: String? = isLocal ? nil : file
        let name = String(file.split(separator: "/").last ?? Substring(file))
        let title = value("Title") ?? value("Name") ?? name
        return .object([
            ("uri", .optional(uri)),
            ("title", .string(title)),
            ("artist", .optional(value("Artist"))),
            ("album", .optional(value("Album"))),
            ("albumArtist", .optional(value("AlbumArtist"))),
            ("track", .optional(value("Track"))),
            ("date", .optional(value("Date"))),
            ("genre", .optional(value("Genre"))),
            ("duration", .optional(value("duration").flatMap(Double.init) ?? value("Time").flatMap(Double.init))),
            ("id", .optional(value("Id").flatMap { Int($0) })),
            ("position", .optional(value("Pos").flatMap { Int($0) })),
            ("cover", .optional(uri.map { "/api/cover?uri=" + Self.percentEncoded($0) })),
        ])
    }

    /// The songs of a listing (its `file` blocks).
    static func songs(_ fields: [(key: String, value: String)]) -> JSON {
        .array(Self.blocks(fields).filter { $0.first?.key == "file" }.map(Self.song))
    }

    /// `status` (and `currentsong`) as the API's `Status`.
    static func status(_ status: DaemonAnswer, current: DaemonAnswer?) -> JSON {
        func int(_ key: String) -> Int? { status[key].flatMap { Int($0) } }
        func seconds(_ key: String) -> Double? { status[key].flatMap(Double.init) }
        let sleepTimer: JSON =
            switch status["sleeptimer"] {
            case "end": .string("end")
            case let text?: .optional(Double(text))
            case nil: .null
            }
        let hasSong = current.map { !$0.fields.isEmpty } ?? false
        return .object([
            ("state", .string(status["state"] ?? "stop")),
            ("volume", .optional(int("volume").flatMap { $0 < 0 ? nil : $0 })),
            ("repeat", .bool(status["repeat"] == "1")),
            ("random", .bool(status["random"] == "1")),
            ("single", .string(status["single"] ?? "0")),
            ("consume", .bool(status["consume"] == "1")),
            ("elapsed", .optional(seconds("elapsed"))),
            ("duration", .optional(seconds("duration"))),
            ("position", .optional(int("song"))),
            ("id", .optional(int("songid"))),
            ("queueLength", .int(int("playlistlength") ?? 0)),
            ("queueVersion", .int(int("playlist") ?? 0)),
            ("audio", .optional(status["audio"])),
            ("bitrate", .optional(int("bitrate"))),
            ("error", .optional(status["error"].map(Self.withoutLocalPaths))),
            ("sleepTimer", sleepTimer),
            ("resumeIn", .optional(seconds("resumein"))),
            ("updating", .bool(status["updating_db"] != nil)),
            ("partition", .string(status["partition"] ?? "default")),
            ("current", hasSong ? Self.song(current!.fields) : .null),
        ])
    }

    /// `text` with every absolute path cut to its last part: errors name files, and the network does
    /// not learn where they live. A path starts with `/` (or `file:///`) at the start of the text, after
    /// a space or a quote, and runs to a colon, a quote or the end (so it may hold spaces).
    static func withoutLocalPaths(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let start = Self.pathStart(in: rest) {
            result += rest[..<start]
            var path = rest[start...]
            if path.hasPrefix("file://") { path = path.dropFirst("file://".count) }
            let end = path.firstIndex { $0 == ":" || $0 == "\"" || $0 == "'" } ?? path.endIndex
            let name = path[..<end].split(separator: "/").last ?? ""
            result += name
            rest = path[end...]
        }
        return result + rest
    }

    private static func pathStart(in text: Substring) -> Substring.Index? {
        var previous: Character?
        for index in text.indices {
            let character = text[index]
            let atBoundary = previous == nil || previous == " " || previous == "\"" || previous == "'"
            if atBoundary, character == "/" || text[index...].hasPrefix("file:///") {
                return index
            }
            previous = character
        }
        return nil
    }

    /// `text` percent-encoded for a query value: unreserved characters stay, every other byte is %XX.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    /// A value quoted for a filter expression (`(Album == 'X')`): `'` and `\` escaped.
    static func filterString(_ value: String) -> String {
        var text = "'"
        for character in value {
            if character == "'" || character == "\\" { text += "\\" }
            text.append(character)
        }
        return text + "'"
    }

    /// The MIME type of image bytes, from their signature.
    static func imageType(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        return "application/octet-stream"
    }

    /// A strong validator of `bytes`: FNV-1a, 64 bits, in hex.
    static func entityTag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return "\"" + String(hash, radix: 16) + "\""
    }
}
