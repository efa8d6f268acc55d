/// An http or https address taken apart: what a connection needs.
struct StreamURL: Equatable, Sendable {
    var secure: Bool
    var host: String
    var port: Int
    /// The path and query, beginning with "/".
    var target: String

    /// The `Host` header's value: the port only when it is not the scheme's own.
    var hostHeader: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    /// The origin, "http://host:port", without the path.
    var origin: String { (secure ? "https://" : "http://") + hostHeader }

    var description: String { origin + target }

    init(secure: Bool, host: String, port: Int, target: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.target = target
    }

    /// Parses "http://host[:port][/path][?query]" (or https; an IPv6 host in brackets). A fragment is
    /// dropped; user information ("user@") is not supported. Nil for anything else.
    init?(_ text: String) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else if lowered.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        var authority = rest
        var target = "/"
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            authority = rest[..<slash]
            var tail = rest[slash...]
            if let hash = tail.firstIndex(of: "#") { tail = tail[..<hash] }
            target = tail.first == "?" ? "/" + tail : String(tail)
            if target.isEmpty { target = "/" }
        }
        if authority.isEmpty || authority.contains("@") || authority.contains(where: { $0 == " " || $0 == "\t" }) {
            return nil
        }
        var port = secure ? 443 : 80
        var host: Substring
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":", let value = Int(after.dropFirst()), (1...65535).contains(value) else {
                    return nil
                }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            let portText = authority[authority.index(after: colon)...]
            if !portText.isEmpty {
                guard let value = Int(portText), (1...65535).contains(value) else { return nil }
                port = value
            }
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
        self.target = target.replacingSpaces()
    }

    /// A `Location` resolved against this address: absolute, scheme-relative ("//host/x"),
    /// absolute-path ("/x") or relative ("x", against this path's directory).
    func resolving(_ location: String) -> StreamURL? {
        let trimmed = location.trimmingWhitespace()
        if let absolute = StreamURL(trimmed) { return absolute }
        if trimmed.hasPrefix("//") { return StreamURL((secure ? "https:" : "http:") + trimmed) }
        if trimmed.hasPrefix("/") { return StreamURL(origin + trimmed) }
        if trimmed.contains("://") { return nil }
        var path = target
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        let directory = path[...(path.lastIndex(of: "/") ?? path.startIndex)]
        return StreamURL(origin + directory + trimmed)
    }
}

extension String {
    /// Spaces in a request target sent as "%20" (station lists hold such addresses).
    fileprivate func replacingSpaces() -> String {
        guard contains(" ") else { return self }
        return split(separator: " ", omittingEmptySubsequences: false).joined(separator: "%20")
    }
}

extension StringProtocol {
    /// Without spaces, tabs, CR and LF at either end.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}

/// Text from bytes: UTF-8 when they are valid UTF-8, else Latin-1 (ISO-8859-1), byte for code point.
func decodeText<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    var scalars = String.UnicodeScalarView()
    for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
    return String(scalars)
}
