import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// The current song's cover as a file desktop widgets can read: fetched from the server (`albumart`,
/// the cover file of the song's directory, else `readpicture`, the picture embedded in the song) and
/// written to `$XDG_RUNTIME_DIR/playerd-mpris/`, so that it works also when the music directory is not
/// readable to the session's user (the system service's). One file at a time; each new cover gets a
/// new name, so that clients that cache by URL see the change.
final class CoverFiles {
    /// Where the files go; nil (no art) without a runtime directory.
    private let directory: String?
    /// What the last lookup found: the song's directory (an `albumart` cover serves all its songs),
    /// its file, and the URL of the written cover (nil when there was none).
    private var last: (directory: String, file: String, sharedByDirectory: Bool, url: String?, path: String?)?
    private var counter = 0

    init(runtimeDirectory: String?) {
        guard let runtimeDirectory, runtimeDirectory.hasPrefix("/") else {
            self.directory = nil
            return
        }
        let directory = runtimeDirectory + "/playerd-mpris"
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            self.directory = nil
            return
        }
        self.directory = directory
        Self.removeLeftovers(in: directory)
    }

    /// The `mpris:artUrl` for `track`, fetching and writing its cover when it differs from the last
    /// one's. Refusals (no cover, a server without the commands, no permission) mean no art; a broken
    /// connection throws.
    func url(for track: Track, using connection: MPDConnection) throws(ClientError) -> String? {
        guard let directory, !track.file.contains("://") else { return nil }
        if let last = self.last,
            last.file == track.file || (last.sharedByDirectory && last.directory == track.directory)
        {
            return last.url
        }
        var picture = try Self.fetch("albumart", track.file, connection)
        let sharedByDirectory = picture != nil
        if picture == nil {
            picture = try Self.fetch("readpicture", track.file, connection)
        }
        self.removeCurrent()
        var url: String?
        var path: String?
        if let picture {
            self.counter += 1
            let name = "\(getpid())-\(self.counter).\(Self.suffix(picture))"
            if Self.write(picture.data, to: directory + "/" + name) {
                path = directory + "/" + name
                url = FileURL.fileURL(path: directory + "/" + name)
            }
        }
        self.last = (track.directory, track.file, sharedByDirectory, url, path)
        return url
    }

    /// Removes the current cover file (at the end, or when the cover changes).
    func removeCurrent() {
        if let path = self.last?.path {
            unlink(path)
        }
        self.last = nil
    }

    private static func fetch(_ command: String, _ uri: String, _ connection: MPDConnection) throws(ClientError)
        -> Picture?
    {
        do {
            return try connection.picture(command, of: uri)
        } catch {
            switch error {
            case .refused, .malformed: return nil
            default: throw error
            }
        }
    }

    // The file's suffix from the picture's first bytes (`albumart` gives no type), else its MIME type.
    private static func suffix(_ picture: Picture) -> String {
        let bytes = picture.data
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "webp"
        }
        if bytes.starts(with: Array("GIF8".utf8)) { return "gif" }
        switch picture.type {
        case "image/png": return "png"
        case "image/jpeg": return "jpg"
        case "image/webp": return "webp"
        default: return "img"
        }
    }

    private static func write(_ data: [UInt8], to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { bytes in
                Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                unlink(path)
                return false
            }
            offset += written
        }
        return true
    }

    /// Covers left by bridges that ended without cleaning up (killed): their names start with a pid
    /// that no longer runs.
    private static func removeLeftovers(in directory: String) {
        guard let stream = opendir(directory) else { return }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                unlink(directory + "/" + name)
            }
        }
    }
}
