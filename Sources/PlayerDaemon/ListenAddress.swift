#if canImport(Glibc)
    import Glibc
#endif

/// Where playerd accepts clients besides its control socket (`--listen`, repeatable): another socket
/// file, an abstract Unix socket, or TCP.
public enum ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A socket file: `/run/playerd/other.sock`, `./ctl`.
    case path(String)
    /// A Linux abstract socket, `@name`: no file, so no file mode guards it (peers are told apart by uid).
    case abstract(String)
    /// TCP on `host` (a literal address or a name to resolve; `::` for every address) and `port`.
    case tcp(host: String, port: Int)

    /// What `--listen` accepts: a path (holding a `/`), `@name`, `HOST:PORT`, `[IPv6]:PORT`, and `any:PORT`
    /// or `*:PORT` for every address, IPv4 and IPv6 alike. Port 0 takes any free port (the log names it).
    public init(parsing text: String) throws(ListenAddressError) {
        let sunPathSize = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        if text.hasPrefix("@") {
            let name = text.dropFirst()
            guard !name.isEmpty, name.utf8.count < sunPathSize - 1 else {
                throw ListenAddressError(text, "an abstract socket's name must be 1 to \(sunPathSize - 2) bytes")
            }
            self = .abstract(String(name))
            return
        }
        if text.contains("/") {
            guard text.utf8.count < sunPathSize else {
                throw ListenAddressError(text, "a socket path must be shorter than \(sunPathSize) bytes")
            }
            self = .path(text)
            return
        }
        var host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError(text, "an IPv6 address is written [ADDRESS]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host), &address) == 1 else {
                throw ListenAddressError(text, "\"\(host)\" is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else {
                throw ListenAddressError(
                    text, "expected a socket path (with a /), @NAME, HOST:PORT or [IPv6]:PORT")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.isEmpty else {
                throw ListenAddressError(text, "no host before the port (any:PORT listens on every address)")
            }
        }
        guard let port = Int(portText), (0...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw ListenAddressError(text, "\"\(portText)\" is not a port from 1 to 65535 (or 0: any free one)")
        }
        if host == "any" || host == "*" {
            host = "::"
        }
        self = .tcp(host: String(host), port: port)
    }

    /// Clients of a TCP address are remote: they get the default permissions, no absolute local paths.
    public var isRemote: Bool {
        if case .tcp = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .path(let path): path
        case .abstract(let name): "@" + name
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}

/// A `--listen` value playerd cannot read.
public struct ListenAddressError: Error, CustomStringConvertible, Sendable {
    /// The value as given.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    init(_ text: String, _ reason: String) {
        self.text = text
        self.reason = reason
    }

    public var description: String { "invalid listen address \"\(self.text)\": \(self.reason)" }
}
