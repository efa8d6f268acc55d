import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// One directory's entries as the file system has them, music or not (`listfiles`).
public enum DirectoryListing {
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var isDirectory: Bool
        public var size: Int64
        public var mtime: Int64
    }

    /// What an unreadable directory gives.
    public struct Failure: Error, Sendable {
        public var reason: String
    }

    /// The entries of the directory at `path` (escaped, see `PathEscaping`) that are directories or
    /// regular files, in the order the directory gives them (`readdir`), as MPD lists them; names that
    /// are not UTF-8 escaped. Hidden ones are listed too (MPD leaves out `.` and `..` only).
    public static func entries(of path: String) throws(Failure) -> [Entry] {
        guard let handle = opendir(PathEscaping.systemPath(path)) else {
            throw Failure(reason: String(cString: strerror(errno)))
        }
        defer { closedir(handle) }
        let descriptor = dirfd(handle)
        var entries: [Entry] = []
        while let entry = readdir(handle) {
            let name = PathEscaping.name(of: entry)
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard PathEscaping.statEntry(entry, in: descriptor, &info) else { continue }
            let kind = info.st_mode & S_IFMT
            guard kind == S_IFDIR || kind == S_IFREG else { continue }
            entries.append(
                Entry(
                    name: name, isDirectory: kind == S_IFDIR, size: Int64(info.st_size),
                    mtime: Int64(info.st_mtim.tv_sec)))
        }
        return entries
    }
}
