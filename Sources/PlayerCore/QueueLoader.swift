// Turns what a user names — a file, a directory, an M3U playlist — into the files to queue. Only the
// file system is consulted: whether a file really is audio is the decoder's call when it plays.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a path could not be queued.
public struct QueueLoaderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong with a path.
    public enum Reason: Error, Equatable, Sendable, CustomStringConvertible {
        /// Nothing exists at the path (or a symlink points nowhere).
        case fileNotFound
        /// The caller may not read the file or list the directory.
        case permissionDenied
        /// A directory contains itself through a symlink, or a symlink chain never ends.
        case symlinkLoop
        /// A playlist includes itself, directly or through other playlists.
        case playlistLoop
        /// A device, socket or FIFO: nothing a decoder can play.
        case notRegularFile
        /// A playlist line names a URL that is not a local `file://` one.
        case unsupportedURL
        /// Any other system error, with the system's message.
        case system(String)

        /// The reason in a few lowercase words, to follow the path in a message.
        public var description: String {
            switch self {
            case .fileNotFound: "file not found"
            case .permissionDenied: "permission denied"
            case .symlinkLoop: "symlink loop"
            case .playlistLoop: "playlist includes itself"
            case .notRegularFile: "not a regular file or directory"
            case .unsupportedURL: "unsupported URL"
            case .system(let message): message
            }
        }
    }

    /// The path that failed, absolute.
    public let path: String
    /// Why it failed.
    public let reason: Reason

    /// Creates an error about `path`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// "PATH: reason".
    public var description: String { "\(self.path): \(self.reason)" }
}

/// Expands a path into the files to queue.
///
/// - A regular file is itself, whatever its extension.
/// - A directory is every `.mp3` file below it (extension matched without regard to case), depth
///   first, each directory's entries sorted by the bytes of their names: the order of comparing
///   paths component by component, so `a/b.mp3` < `a/c/d.mp3` < `a/e.mp3` (`find | sort` differs
///   only where a name holds a byte below `/`). Names starting with `.` are skipped, symlinks are
///   followed, and a directory reached again below itself is reported as a loop.
/// - An `.m3u` or `.m3u8` file is its lines: blank lines and `#` lines are ignored, a UTF-8 BOM and
///   `\r` are dropped, `file://` URLs are percent-decoded, relative paths are taken from the
///   playlist's directory, and each entry expands by these same rules.
///
/// Paths come back absolute, with `.` and `..` resolved by name as a shell's `cd` does.
public enum QueueLoader {
    /// What `expand` found.
    public struct Result: Sendable, Equatable {
        /// The files to queue, absolute, in play order.
        public var paths: [String]
        /// Entries below the named path that could not be queued; the rest still load.
        public var skipped: [Skipped]

        /// Creates a result.
        public init(paths: [String] = [], skipped: [Skipped] = []) {
            self.paths = paths
            self.skipped = skipped
        }
    }

    /// An entry left out, and why.
    public struct Skipped: Sendable, Equatable, CustomStringConvertible {
        /// The entry's absolute path (or the playlist line, for a URL).
        public let path: String
        /// Why it was left out.
        public let reason: QueueLoaderError.Reason

        /// Creates a record of a skipped entry.
        public init(path: String, reason: QueueLoaderError.Reason) {
            self.path = path
            self.reason = reason
        }

        /// "PATH: reason".
        public var description: String { "\(self.path): \(self.reason)" }
    }

    /// Expands `path`; a relative one is taken from `directory`, or the working directory when nil.
    /// An empty directory or playlist gives an empty result, not an error.
    /// - Throws: `QueueLoaderError` when `path` itself is missing, unreadable or unusable.
    public static func expand(_ path: String, relativeTo directory: String? = nil) throws(QueueLoaderError) -> Result {
        let absolute = normalized(path.hasPrefix("/") ? path : (directory ?? currentDirectory()) + "/" + path)
        var expansion = Expansion()
        try expansion.add(absolute, try FileInfo(lookingUp: absolute), inDirectoryWalk: false)
        return Result(paths: expansion.paths, skipped: expansion.skipped)
    }

    /// `path` (absolute) without `.`, `..` and repeated slashes.
    static func normalized(_ path: String) -> String {
        // Most paths are normal already; splitting them into Characters was most of the cost of `add`.
        let isNormal = Self.components(of: path).allSatisfy {
            !$0.isEmpty && !$0.elementsEqual(".".utf8) && !$0.elementsEqual("..".utf8)
        }
        if isNormal && path.utf8.first == UInt8(ascii: "/") {
            return path
        }
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".":
                continue
            case "..":
                _ = components.popLast()
            default:
                components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// Whether a path has a `..` component, which would climb out of the directory it is relative to.
    public static func climbsUp(_ path: String) -> Bool {
        Self.components(of: path).contains { $0.elementsEqual("..".utf8) }
    }

    /// The components of an absolute path after its first slash, as UTF-8: empty ones where slashes
    /// repeat or end the path.
    private static func components(of path: String) -> [Substring.UTF8View] {
        var utf8 = Substring(path).utf8
        if utf8.first == UInt8(ascii: "/") { utf8 = utf8.dropFirst() }
        return utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    }

    /// The directory part of an absolute path.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// A playlist line as an absolute path, or why it cannot be one.
    static func resolve(playlistLine line: String, in directory: String)
        -> Swift.Result<String, QueueLoaderError.Reason>
    {
        if line.hasPrefix("file://") {
            var rest = line.dropFirst("file://".count)
            if rest.hasPrefix("localhost/") {
                rest = rest.dropFirst("localhost".count)
            }
            guard rest.hasPrefix("/"), let decoded = percentDecoded(rest) else { return .failure(.unsupportedURL) }
            return .success(normalized(decoded))
        }
        if isURL(line) {
            return .failure(.unsupportedURL)
        }
        return .success(normalized(line.hasPrefix("/") ? line : directory + "/" + line))
    }

    /// True for `scheme://...`: a stream, which is not ours to play.
    private static func isURL(_ line: String) -> Bool {
        guard let colon = line.firstIndex(of: ":"), line[colon...].hasPrefix("://") else { return false }
        let scheme = line[..<colon]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// `%XX` escapes decoded as UTF-8 bytes; nil for a malformed escape.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The entries of a playlist's text.
    static func playlistLines(_ bytes: [UInt8]) -> [String] {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) {
            body = body.dropFirst(3)
        }
        // `.m3u` predates UTF-8 and is often Latin-1; every byte is a valid Latin-1 character.
        let text =
            String(validating: body, as: UTF8.self)
            ?? String(String.UnicodeScalarView(body.map { Unicode.Scalar($0) }))
        // `isNewline` splits on "\n", "\r\n" (one Character in Swift) and a lone "\r".
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            let trimmed = line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
            let entry = String(trimmed)
            return entry.isEmpty || entry.hasPrefix("#") ? nil : entry
        }
    }

    private static func currentDirectory() -> String {
        guard let buffer = getcwd(nil, 0) else { return "/" }
        defer { free(buffer) }
        return String(cString: buffer)
    }
}

/// The walk's state: what was found so far, and the directories and playlists being expanded, to
/// catch loops.
private struct Expansion {
    var paths: [String] = []
    var skipped: [QueueLoader.Skipped] = []
    var openDirectories: [FileID] = []
    var openPlaylists: [FileID] = []

    /// Adds what `path` expands to. Throws only when `path` itself cannot be used; trouble below it
    /// goes to `skipped`.
    mutating func add(_ path: String, _ info: FileInfo, inDirectoryWalk: Bool) throws(QueueLoaderError) {
        switch info.kind {
        case .directory:
            try self.addDirectory(path, info)
        case .regular where !inDirectoryWalk && Self.isPlaylist(path):
            try self.addPlaylist(path, info)
        case .regular:
            guard access(path, R_OK) == 0 else { throw QueueLoaderError(path: path, reason: .lastError()) }
            self.paths.append(path)
        case .other:
            throw QueueLoaderError(path: path, reason: .notRegularFile)
        }
    }

    private mutating func addDirectory(_ path: String, _ info: FileInfo) throws(QueueLoaderError) {
        guard !self.openDirectories.contains(info.id) else {
            throw QueueLoaderError(path: path, reason: .symlinkLoop)
        }
        let names = try Self.listDirectory(path)
        self.openDirectories.append(info.id)
        defer { self.openDirectories.removeLast() }
        for name in names where !name.hasPrefix(".") {
            let child = path == "/" ? "/" + name : path + "/" + name
            let childInfo: FileInfo
            do {
                childInfo = try FileInfo(path: child)
            } catch {
                self.skipped.append(QueueLoader.Skipped(path: child, reason: error))
                continue
            }
            guard childInfo.kind == .directory || name.lowercased().hasSuffix(".mp3") else { continue }
            do {
                try self.add(child, childInfo, inDirectoryWalk: true)
            } catch {
                self.skipped.append(QueueLoader.Skipped(path: error.path, reason: error.reason))
            }
        }
    }

    private mutating func addPlaylist(_ path: String, _ info: FileInfo) throws(QueueLoaderError) {
        guard !self.openPlaylists.contains(info.id) else {
            throw QueueLoaderError(path: path, reason: .playlistLoop)
        }
        let lines = QueueLoader.playlistLines(try Self.readFile(path))
        let directory = QueueLoader.directory(of: path)
        self.openPlaylists.append(info.id)
        defer { self.openPlaylists.removeLast() }
        for line in lines {
            let entry: String
            switch QueueLoader.resolve(playlistLine: line, in: directory) {
            case .success(let resolved):
                entry = resolved
            case .failure(let reason):
                self.skipped.append(QueueLoader.Skipped(path: line, reason: reason))
                continue
            }
            do throws(QueueLoaderError) {
                try self.add(entry, try FileInfo(lookingUp: entry), inDirectoryWalk: false)
            } catch {
                self.skipped.append(QueueLoader.Skipped(path: error.path, reason: error.reason))
            }
        }
    }

    private static func isPlaylist(_ path: String) -> Bool {
        let lowercased = path.lowercased()
        return lowercased.hasSuffix(".m3u") || lowercased.hasSuffix(".m3u8")
    }

    /// The names in a directory, sorted by their bytes; `.` and `..` left out.
    private static func listDirectory(_ path: String) throws(QueueLoaderError) -> [String] {
        guard let directory = opendir(path) else { throw QueueLoaderError(path: path, reason: .lastError()) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                guard errno == 0 else { throw QueueLoaderError(path: path, reason: .lastError()) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: pointer.pointee)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." {
                names.append(name)
            }
        }
        // Byte order, not `String`'s Unicode order, so the result does not depend on normalization.
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func readFile(_ path: String) throws(QueueLoaderError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw QueueLoaderError(path: path, reason: .lastError()) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw QueueLoaderError(path: path, reason: .lastError())
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// Identifies a file across the different paths that lead to it.
private struct FileID: Equatable {
    let device: UInt64
    let inode: UInt64
}

/// What `stat` (which follows symlinks) says about a path.
private struct FileInfo {
    enum Kind {
        case directory
        case regular
        case other
    }

    let kind: Kind
    let id: FileID

    init(path: String) throws(QueueLoaderError.Reason) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .lastError() }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: self.kind = .directory
        case S_IFREG: self.kind = .regular
        default: self.kind = .other
        }
        self.id = FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// As `init(path:)`, with the path in the error.
    init(lookingUp path: String) throws(QueueLoaderError) {
        do {
            try self.init(path: path)
        } catch {
            throw QueueLoaderError(path: path, reason: error)
        }
    }
}

extension QueueLoaderError.Reason {
    /// The reason `errno` gives.
    fileprivate static func lastError() -> Self {
        switch errno {
        case ENOENT, ENOTDIR: .fileNotFound
        case EACCES, EPERM: .permissionDenied
        case ELOOP: .symlinkLoop
        case let code: .system(String(cString: strerror(code)))
        }
    }
}
