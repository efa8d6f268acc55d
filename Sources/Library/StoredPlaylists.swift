import ControlProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's stored playlists: one `NAME.m3u` file per playlist in one directory, one URI a line, as MPD
/// 0.23 keeps them, so that a playlist directory can be shared with MPD both ways.
///
/// Entries are stored as clients name them: relative to the music directory when inside it, else
/// absolute (or a URL). Files written by other tools are read too: CRLF line ends, `#EXTM3U`/`#EXTINF`
/// comments, blank lines, absolute paths into the music directory (shown relative, as MPD shows them).
///
/// Every change rewrites the whole file through a temporary file and `rename(2)`: a crash or a full disk
/// leaves the old playlist as it was, never half a file. Changes are serialised by one lock; reads take
/// none (a reader sees the old file or the new one). The refusals are MPD 0.23.12's, code and text.
public final class StoredPlaylists: Sendable {
    /// What `save` does when the playlist exists (MPD 0.24's modes; 0.23 knows only `create`).
    public enum SaveMode: String, Sendable, CaseIterable {
        /// Refuse when it exists (`Playlist already exists`).
        case create
        /// Add to the end of an existing playlist.
        case append
        /// Overwrite an existing playlist.
        case replace
    }

    /// One playlist as `listplaylists` shows it.
    public struct Summary: Sendable, Hashable {
        /// The name, without `.m3u`.
        public var name: String
        /// The file's modification time, in seconds since 1970 (UTC).
        public var lastModified: Int64
    }

    /// The playlist directory.
    public let directory: String
    /// Where relative entries point; absolute entries inside it are shown relative.
    public let musicDirectory: String?
    /// The most entries a playlist holds (MPD's `max_playlist_length`): longer files are read up to
    /// here, and additions beyond it are refused.
    public let maximumLength: Int

    /// Writes bytes to a descriptor, as `write(2)`: replaceable so that tests can fill the disk.
    typealias Writer = @Sendable (Int32, UnsafeRawBufferPointer) -> Int

    private let writer: Writer
    private let lock = Mutex(())

    /// MPD's suffix for stored playlists.
    public static let suffix = ".m3u"

    /// Opens the playlist directory, creating it (and its parents) when missing. A directory that cannot
    /// be created is reported by the first command that needs it.
    public convenience init(directory: String, musicDirectory: String?, maximumLength: Int = 16384) {
        self.init(directory: directory, musicDirectory: musicDirectory, maximumLength: maximumLength) {
            descriptor, buffer in
            Glibc.write(descriptor, buffer.baseAddress, buffer.count)
        }
    }

    init(directory: String, musicDirectory: String?, maximumLength: Int, writer: @escaping Writer) {
        var trimmed = directory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.directory = trimmed
        self.musicDirectory = musicDirectory
        self.maximumLength = max(1, maximumLength)
        self.writer = writer
        Self.makeDirectories(trimmed)
    }

    // MARK: - Names

    /// MPD's rule: not empty, and no `/`, `\n` or `\r` (a leading `.` is allowed, as in MPD).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0x0A || $0 == 0x0D || $0 == 0 }
    }

    /// The file of playlist `name`, or ACK 2 `Bad playlist name`.
    public func path(of name: String) throws(Ack) -> String {
        guard Self.isValidName(name) else {
            throw Ack(.argument, "Bad playlist name")
        }
        return self.directory + "/" + name + Self.suffix
    }

    // MARK: - Reading

    /// The playlists, in the order the directory gives them (`readdir`), as MPD lists them. Only regular
    /// files named `NAME.m3u` count: not a bare `.m3u`, not a directory, not a name with a newline.
    public func list() throws(Ack) -> [Summary] {
        guard let stream = opendir(self.directory) else {
            throw Self.systemError("Failed to open playlist directory \(self.directory)")
        }
        defer { closedir(stream) }
        var summaries: [Summary] = []
        while let entry = readdir(stream) {
            let fileName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard fileName.hasSuffix(Self.suffix) else { continue }
            let name = String(fileName.dropLast(Self.suffix.count))
            guard Self.isValidName(name) else { continue }
            var info = stat()
            guard stat(self.directory + "/" + fileName, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                continue
            }
            summaries.append(Summary(name: name, lastModified: Int64(info.st_mtim.tv_sec)))
        }
        return summaries
    }

    /// Whether playlist `name` exists.
    public func exists(_ name: String) -> Bool {
        guard let path = try? self.path(of: name) else { return false }
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// The entries of playlist `name`, as stored, at most `maximumLength` of them. A name that cannot
    /// be a playlist is missing too, as MPD's `listplaylist` and `load` say: ACK 50 `No such playlist`.
    public func entries(of name: String) throws(Ack) -> [String] {
        guard let path = try? self.path(of: name) else {
            throw Self.noSuchPlaylist
        }
        return try self.read(path)
    }

    /// The entries of the playlist file `uri` in the music directory (an `.m3u` or `.m3u8`, read when
    /// no stored playlist has the name, as MPD looks there next), nil when there is none. Relative
    /// entries are taken from the playlist's own directory, `..` climbing from it as MPD squashes it
    /// (an entry climbing out of the music directory is left out); absolute paths and URLs stay.
    public func musicDirectoryEntries(of uri: String) -> [String]? {
        guard let musicDirectory, uri.hasSuffix(".m3u") || uri.hasSuffix(".m3u8"),
            let lines = try? self.read(musicDirectory + "/" + uri)
        else { return nil }
        let base = uri.split(separator: "/").dropLast().map(String.init)
        return lines.compactMap { line in
            guard !line.hasPrefix("/"), !line.contains("://") else { return line }
            var segments = base
            for segment in line.split(separator: "/") where segment != "." {
                if segment == ".." {
                    guard segments.popLast() != nil else { return nil }
                } else {
                    segments.append(String(segment))
                }
            }
            return segments.joined(separator: "/")
        }
    }

    // MARK: - Changes

    /// `save`: writes `uris` as playlist `name`. `create` refuses an existing playlist (ACK 56
    /// `Playlist already exists`); `append` and `replace` need one (ACK 50 `No such playlist`). The queue
    /// is saved whole, as MPD saves it, whatever `maximumLength` says.
    public func save(_ name: String, _ uris: [String], mode: SaveMode = .create) throws(Ack) {
        let path = try self.path(of: name)
        try self.lock.withLock { _ throws(Ack) in
            let exists = self.isRegularFile(path)
            switch mode {
            case .create:
                guard !self.fileExists(path) else {
                    throw Ack(.exist, "Playlist already exists")
                }
                try self.write(uris, to: path)
            case .replace:
                guard exists else { throw Self.noSuchPlaylist }
                try self.write(uris, to: path)
            case .append:
                guard exists else { throw Self.noSuchPlaylist }
                try self.write(try self.readAll(path) + uris, to: path)
            }
        }
    }

    /// `playlistadd NAME URI [POS]`: adds `uris` at `position` (the end when nil), creating the playlist
    /// when missing, as MPD does. A position past the end is ACK 2 `Bad position`; more than
    /// `maximumLength` entries is ACK 51 `Stored playlist is too large`. Nothing to add changes nothing
    /// (and creates nothing): returns whether the playlist changed.
    @discardableResult
    public func add(_ name: String, _ uris: [String], at position: Int? = nil) throws(Ack) -> Bool {
        let path = try self.path(of: name)
        return try self.lock.withLock { _ throws(Ack) in
            var entries: [String]
            do throws(Ack) {
                entries = try self.readAll(path)
            } catch  where error.code == .noExist {
                entries = []
            }
            let index = position ?? entries.count
            guard index <= entries.count else {
                throw Ack(.argument, "Bad position")
            }
            guard !uris.isEmpty else { return false }
            guard entries.count + uris.count <= self.maximumLength else {
                throw Ack(.playlistMax, "Stored playlist is too large")
            }
            entries.insert(contentsOf: uris, at: index)
            try self.write(entries, to: path)
            return true
        }
    }

    /// `playlistdelete NAME POS|START:END`: removes the positions; a range starting past the end is
    /// ACK 2 `Bad song index`, an end past it is cut back, and `-1` empties the playlist, as in MPD.
    public func delete(_ name: String, _ range: PositionRange) throws(Ack) {
        let path = try self.path(of: name)
        try self.lock.withLock { _ throws(Ack) in
            var entries = try self.readAll(path)
            guard let positions = range.clipped(to: entries.count) else {
                throw Ack(.argument, "Bad song index")
            }
            entries.removeSubrange(positions)
            try self.write(entries, to: path)
        }
    }

    /// `playlistmove NAME FROM TO`: moves one entry. Moving an entry onto itself changes nothing and
    /// checks nothing (MPD's shortcut); either position past the last is ACK 2 `Bad range`. Returns
    /// whether the playlist was rewritten.
    @discardableResult
    public func move(_ name: String, from: Int, to: Int) throws(Ack) -> Bool {
        guard from != to else { return false }
        let path = try self.path(of: name)
        return try self.lock.withLock { _ throws(Ack) in
            var entries = try self.readAll(path)
            guard from >= 0, to >= 0, from < entries.count, to < entries.count else {
                throw Ack(.argument, "Bad range")
            }
            let entry = entries.remove(at: from)
            entries.insert(entry, at: to)
            try self.write(entries, to: path)
            return true
        }
    }

    /// `playlistclear NAME`: empties an existing playlist (ACK 50 `No such playlist` otherwise).
    public func clear(_ name: String) throws(Ack) {
        let path = try self.path(of: name)
        try self.lock.withLock { _ throws(Ack) in
            guard self.isRegularFile(path) else { throw Self.noSuchPlaylist }
            try self.write([], to: path)
        }
    }

    /// `rm NAME`.
    public func remove(_ name: String) throws(Ack) {
        let path = try self.path(of: name)
        try self.lock.withLock { _ throws(Ack) in
            guard unlink(path) == 0 else {
                if errno == ENOENT { throw Self.noSuchPlaylist }
                throw Self.systemError("Failed to delete \(path)")
            }
        }
    }

    /// `rename FROM TO`: both names are checked first, then an existing TO is ACK 56
    /// `Playlist exists already` (MPD's words here differ from `save`'s), then a missing FROM ACK 50.
    public func rename(_ from: String, to: String) throws(Ack) {
        let source = try self.path(of: from)
        let destination = try self.path(of: to)
        try self.lock.withLock { _ throws(Ack) in
            guard !self.fileExists(destination) else {
                throw Ack(.exist, "Playlist exists already")
            }
            guard Glibc.rename(source, destination) == 0 else {
                if errno == ENOENT { throw Self.noSuchPlaylist }
                throw Self.systemError("Failed to rename \(source) to \(destination)")
            }
        }
    }

    // MARK: - Files

    static let noSuchPlaylist = Ack(.noExist, "No such playlist")

    private static func systemError(_ what: String, _ code: Int32 = errno) -> Ack {
        Ack(.system, "\(what): \(String(cString: strerror(code)))")
    }

    private func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// The entries of the file at `path`, up to `maximumLength`.
    private func read(_ path: String) throws(Ack) -> [String] {
        let bytes = try self.contents(of: path)
        return self.parse(bytes, limit: self.maximumLength)
    }

    /// Every entry of the file at `path`: what an edit rewrites, so that editing never drops entries.
    private func readAll(_ path: String) throws(Ack) -> [String] {
        self.parse(try self.contents(of: path), limit: .max)
    }

    private func contents(of path: String) throws(Ack) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw Self.noSuchPlaylist }
            throw Self.systemError("Failed to open \(path)")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Self.noSuchPlaylist
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.systemError("Failed to read \(path)")
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }

    /// One entry a line; CR before LF dropped; blank lines and `#` lines skipped; absolute paths into
    /// the music directory made relative, as MPD maps them.
    func parse(_ bytes: [UInt8], limit: Int) -> [String] {
        var entries: [String] = []
        for var line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
            if line.last == 0x0D { line = line.dropLast() }
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            entries.append(self.displayPath(String(decoding: line, as: UTF8.self)))
            if entries.count >= limit { break }
        }
        return entries
    }

    private func displayPath(_ path: String) -> String {
        guard path.hasPrefix("/"), let musicDirectory else { return path }
        let prefix = musicDirectory.hasSuffix("/") ? musicDirectory : musicDirectory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    /// Writes `entries` to a temporary file in the playlist directory, flushes it to the disk, and
    /// renames it over `path`. On any failure the temporary file is removed and `path` is untouched.
    private func write(_ entries: [String], to path: String) throws(Ack) {
        var text: [UInt8] = []
        text.reserveCapacity(entries.reduce(0) { $0 + $1.utf8.count + 1 })
        for entry in entries {
            // A newline inside an entry would split it in two: MPD cannot store one either.
            text.append(contentsOf: entry.utf8.map { $0 == 0x0A || $0 == 0x0D ? UInt8(ascii: " ") : $0 })
            text.append(0x0A)
        }
        var template = Array((self.directory + "/.playerd-playlist-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw Self.systemError("Failed to write \(path)")
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: Int32?
        var offset = 0
        while offset < text.count {
            let count = text[offset...].withUnsafeBytes { self.writer(descriptor, $0) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            if count == 0 {
                failure = ENOSPC
                break
            }
            offset += count
        }
        if failure == nil, fchmod(descriptor, 0o644) != 0 || fsync(descriptor) != 0 {
            failure = errno
        }
        if close(descriptor) != 0, failure == nil {
            failure = errno
        }
        if failure == nil, Glibc.rename(temporary, path) != 0 {
            failure = errno
        }
        if let failure {
            unlink(temporary)
            throw Self.systemError("Failed to write \(path)", failure)
        }
    }

    private static func makeDirectories(_ path: String) {
        var partial = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if !path.hasPrefix("/") && partial.hasPrefix("/") { partial.removeFirst() }
            _ = mkdir(partial, 0o755)
        }
    }
}
