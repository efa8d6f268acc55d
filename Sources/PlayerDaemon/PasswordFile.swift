import ControlProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The passwords clients may send (`--password-file`), each with what it grants: one
/// `PASSWORD@PERMISSIONS` a line, as MPD's `password` setting reads (`secret@read,add,player`).
/// Blank lines and lines starting with `#` are passed over.
///
/// The file must not be readable or writable by others: a password in a world-readable file is no
/// secret, and one others may write grants whatever they like. playerd refuses to start on such a file.
public struct PasswordFile: Sendable, Equatable {
    /// What each password grants.
    public let grants: [String: Permission]

    /// The largest file read: a password file is a few lines.
    static let largestFile = 1 << 20

    /// What `password` grants, or nil for a wrong one.
    public func permission(for password: String) -> Permission? {
        self.grants[password]
    }

    /// Reads and checks the file at `path`.
    public static func load(_ path: String) throws(PasswordFileError) -> PasswordFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        // The mode of the file opened, not of whatever the path names a moment later.
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        if info.st_mode & (S_IROTH | S_IWOTH) != 0 {
            throw .openToOthers(path: path, mode: info.st_mode & 0o777)
        }
        guard Int(info.st_size) <= Self.largestFile else {
            throw .unreadable(path: path, reason: "larger than \(Self.largestFile) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + filled, raw.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= Self.largestFile else {
            throw .unreadable(path: path, reason: "larger than \(Self.largestFile) bytes")
        }
        guard let text = String(validating: bytes[0..<filled], as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return try Self.parse(text, path: path)
    }

    /// Reads the lines of a password file; `path` names it in errors.
    static func parse(_ text: String, path: String) throws(PasswordFileError) -> PasswordFile {
        var grants: [String: Permission] = [:]
        // Lines end in LF or CRLF (one Character to Swift, so not split by "\n" alone).
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) || line.first == "#" { continue }
            // The last `@` separates: a password may hold one, a permission name never does.
            guard let at = line.lastIndex(of: "@") else {
                throw .line(path: path, number: number, reason: "expected PASSWORD@PERMISSIONS")
            }
            let password = String(line[..<at])
            guard !password.isEmpty else {
                throw .line(path: path, number: number, reason: "the password is empty")
            }
            let permission: Permission
            do {
                permission = try Permission(parsing: String(line[line.index(after: at)...]))
            } catch {
                throw .line(path: path, number: number, reason: error.description)
            }
            guard grants[password] == nil else {
                throw .line(path: path, number: number, reason: "this password is already on an earlier line")
            }
            grants[password] = permission
        }
        return PasswordFile(grants: grants)
    }
}

/// Why the password file was refused.
public enum PasswordFileError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case openToOthers(path: String, mode: mode_t)
    case line(path: String, number: Int, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "the password file \(path) cannot be read: \(reason)"
        case .openToOthers(let path, let mode):
            "the password file \(path) is open to other users (mode \(String(mode, radix: 8))): "
                + "chmod o-rwx it, so that its passwords stay secret"
        case .line(let path, let number, let reason):
            "the password file \(path), line \(number): \(reason)"
        }
    }
}
