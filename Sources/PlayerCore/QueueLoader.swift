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
        /// A directory or playlist already expanded through another path: each is entered once.
        case alreadyVisited
        /// A kernel file system such as /proc or /sys (named here), which holds no music.
        case kernelFileSystem(String)
        /// The expansion found more songs than the limit allows (the queue's length limit).
        case tooManySongs(limit: Int)
        /// The walk was called off before it ended (its client went away).
        case cancelled
        /// A playlist file larger than any real one (`QueueLoader.maximumPlaylistBytes`).
        case playlistTooLarge
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
            case .alreadyVisited: "already added through another path"
            case .kernelFileSystem(let name): "a kernel file system (\(name)), which holds no music"
            case .tooManySongs(let limit): "more than \(limit) songs, the queue's limit"
            case .cancelled: "cancelled"
            case .playlistTooLarge: "too large for a playlist (over \(QueueLoader.maximumPlaylistBytes >> 20) MiB)"
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
///   only where a name holds a byte below `/`). Names starting with `.` are skipped and symlinks are
///   followed, but no directory is entered twice (known by device and inode): one reached again below
///   itself is reported as a loop, one reached again by another path as already visited. Kernel file
///   systems (/proc, /sys and their kind) are not entered, so a walk from `/` ends as fast as the
///   real files allow.
/// - An `.m3u` or `.m3u8` file is its lines: blank lines and `#` lines are ignored, a UTF-8 BOM and
///   `\r` are dropped, `file://` URLs are percent-decoded, relative paths are taken from the
///   playlist's directory, and each entry expands by these same rules; each playlist is read once.
///
/// Paths come back absolute, with `.` and `..` resolved by name as a shell's `cd` does. The walk stops
/// with an error once it has found more than `limits.maximumSongs` songs or its `cancellation` fires.
public enum QueueLoader {
    /// The largest playlist file read: 64 MiB holds over half a million lines, more than any real
    /// playlist, and keeps a renamed video or disk image from being read whole into memory.
    public static let maximumPlaylistBytes = 64 << 20

    /// Bounds on one expansion.
    public struct Limits: Sendable {
        /// The most songs an expansion may give; one more ends it with `tooManySongs`.
        public var maximumSongs: Int
        /// The most skipped entries recorded; the rest are counted in `Result.moreSkipped`.
        public var maximumSkipped: Int

        /// Limits of `maximumSongs` songs and `maximumSkipped` recorded skips.
        public init(maximumSongs: Int = 1_000_000, maximumSkipped: Int = 1000) {
            self.maximumSongs = maximumSongs
            self.maximumSkipped = maximumSkipped
        }
    }

    /// What `expand` found.
    public struct Result: Sendable, Equatable {
        /// The files to queue, absolute, in play order.
        public var paths: [String]
        /// Entries below the named path that could not be queued; the rest still load.
        public var skipped: [Skipped]
        /// Skipped entries beyond `Limits.maximumSkipped`, counted but not recorded.
        public var moreSkipped = 0

        /// Creates a result.
        public init(paths: [String] = [], skipped: [Skipped] = [], moreSkipped: Int = 0) {
            self.paths = paths
            self.skipped = skipped
            self.moreSkipped = moreSkipped
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
    /// - Throws: `QueueLoaderError` when `path` itself is missing, unreadable or unusable, when the
    ///   songs found pass `limits.maximumSongs` (`tooManySongs`, about `path`), or when `cancellation`
    ///   fires (`cancelled`).
    public static func expand(
        _ path: String,
        relativeTo directory: String? = nil,
        limits: Limits = Limits(),
        cancellation: WalkCancellation? = nil
    ) throws(QueueLoaderError) -> Result {
        let absolute = normalized(path.hasPrefix("/") ? path : (directory ?? currentDirectory()) + "/" + path)
        var walk = DirectoryWalk(limits: limits, cancellation: cancellation)
        do {
            try walk.add(absolute, try FileInfo(lookingUp: absolute), inDirectoryWalk: false)
        } catch  where error.reason == .cancelled || error.reason == .tooManySongs(limit: limits.maximumSongs) {
            // Whichever entry it happened at, the expansion of `path` as a whole is what failed.
            throw QueueLoaderError(path: absolute, reason: error.reason)
        }
        return Result(paths: walk.paths, skipped: walk.skipped, moreSkipped: walk.moreSkipped)
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

    static func currentDirectory() -> String {
        guard let buffer = getcwd(nil, 0) else { return "/" }
        defer { free(buffer) }
        return String(cString: buffer)
    }
}
