/// A response's status line and header fields, parsed by us rather than by NIO's HTTP decoder: SHOUTcast
/// v1 answers `ICY 200 OK`, and the head's size must be bounded by our own limit.
struct HTTPResponseHead: Equatable, Sendable {
    var status: Int
    var reason: String
    /// The fields in order, names lowercased.
    var fields: [(name: String, value: String)]

    static func == (lhs: HTTPResponseHead, rhs: HTTPResponseHead) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    /// The first value of a field (its name in lowercase).
    subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    /// "404 Not Found".
    var statusText: String { reason.isEmpty ? "\(status)" : "\(status) \(reason)" }

    /// The end of the head in `bytes`: the index just past the blank line ("\r\n\r\n", or "\n\n" from
    /// sloppy servers); nil when it has not all arrived.
    static func end(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 2 else { return nil }
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A {
                // "\n\n" or "\n\r\n".
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    enum ParseError: Error, Equatable {
        case notHTTP(String)
    }

    /// Parses a whole head (up to and including its blank line). HTTP/1.0, HTTP/1.1 and ICY status lines.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(ParseError) -> HTTPResponseHead {
        // Each line decoded by itself (UTF-8, else Latin-1): one Latin-1 field leaves the others as they are.
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            Substring(decodeText(line.last == 0x0D ? line.dropLast() : line))
        }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        guard let statusLine = lines.first else { throw .notHTTP("an empty response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        let version = parts.first.map { $0.uppercased() } ?? ""
        guard version.hasPrefix("HTTP/1.") || version == "ICY", parts.count >= 2,
            let status = Int(parts[1]), (100...999).contains(status)
        else {
            throw .notHTTP("not an HTTP response (\(String(statusLine.prefix(40)).debugDescription))")
        }
        let reason = parts.count > 2 ? parts[2].trimmingWhitespace() : ""
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            if line.first == " " || line.first == "\t", !fields.isEmpty {
                // An obsolete folded continuation.
                fields[fields.count - 1].value += " " + line.trimmingWhitespace()
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingWhitespace().lowercased()
            guard !name.isEmpty else { continue }
            fields.append((name, line[line.index(after: colon)...].trimmingWhitespace()))
        }
        return HTTPResponseHead(status: status, reason: reason, fields: fields)
    }
}
