import Audio
import CStatFS
import Dispatch
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a directory of the music tree holds, as the walk saw it.
struct WalkedDirectory {
    var mtime: Int64
    /// Song files (`AudioFileKind.songSuffixes`) by name: modification time and size.
    var songs: [PathKey: (mtime: Int64, size: Int64)] = [:]
    /// Playlist files (`.m3u`, `.m3u8`) by name: modification time.
    var playlists: [PathKey: Int64] = [:]
    /// Subdirectories by name.
    var subdirectories: [String] = []
}

/// A bounded walk of the music directory, with the rules every walk in playerd keeps: no directory is
/// entered twice (symlink loops end), kernel file systems are not entered, unreadable entries are
/// skipped and named, and cancellation is checked as it goes.
struct LibraryWalk {
    let musicDirectory: String
    let cancellation: WalkCancellation?
    /// The directories seen, by URI ("" is the music directory itself).
    private(set) var directories: [PathKey: WalkedDirectory] = [:]
    /// What could not be read, with the reason: named once in the log, counted in the update's result.
    private(set) var skipped: [(path: String, reason: String)] = []
    /// The kernel file system of each device met, or nil for a real one: one `statfs` per device.
    private var kernelFileSystems: [UInt64: String?] = [:]

    private struct FileKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    init(musicDirectory: String, cancellation: WalkCancellation? = nil) {
        self.musicDirectory = musicDirectory
        self.cancellation = cancellation
    }

    /// The path of `uri`, escaped as the URI is (`PathEscaping.systemPath` gives the real one).
    func path(of uri: String) -> String {
        uri.isEmpty ? self.musicDirectory : self.musicDirectory + "/" + uri
    }

    /// Walks the directory at `uri` and everything under it, on `workers` threads (the walk is mostly
    /// system calls, which both cores can make at once). Returns false when the walk was cancelled.
    mutating func walk(_ uri: String, workers: Int = 2) -> Bool {
        var info = stat()
        guard stat(PathEscaping.systemPath(self.path(of: uri)), &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return true
        }
        let shared = SharedWalk(first: (uri, info))
        let results = Mutex<[LibraryWalk]>([])
        let template = self
        DispatchQueue.concurrentPerform(iterations: max(1, workers)) { _ in
            var worker = LibraryWalk(musicDirectory: template.musicDirectory, cancellation: template.cancellation)
            while let (uri, info) = shared.next(template.cancellation) {
                let key = FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                let children = shared.firstVisit(key) ? worker.read(uri, info) : []
                shared.done(adding: children)
            }
            results.withLock { $0.append(worker) }
        }
        for worker in results.withLock({ $0 }) {
            self.directories.merge(worker.directories) { first, _ in first }
            self.skipped += worker.skipped
        }
        return self.cancellation?.isCancelled != true
    }

    /// The directories waiting to be read, shared by the walk's threads, and the ones already entered.
    private final class SharedWalk: @unchecked Sendable {
        private let lock = Mutex(())
        // Guarded by `lock`.
        private var pending: [(uri: String, info: stat)]
        private var inFlight = 0
        private var visited: Set<FileKey> = []

        init(first: (uri: String, info: stat)) {
            self.pending = [first]
        }

        /// The next directory to read, or nil when none is left and none is being read (whose
        /// subdirectories would come).
        func next(_ cancellation: WalkCancellation?) -> (uri: String, info: stat)? {
            while true {
                if cancellation?.isCancelled == true { return nil }
                let item: (uri: String, info: stat)?? = self.lock.withLock { _ in
                    if let item = self.pending.popLast() {
                        self.inFlight += 1
                        return .some(item)
                    }
                    return self.inFlight == 0 ? .some(nil) : nil
                }
                if let item { return item }
                usleep(100)
            }
        }

        func firstVisit(_ key: FileKey) -> Bool {
            self.lock.withLock { _ in self.visited.insert(key).inserted }
        }

        func done(adding children: [(uri: String, info: stat)]) {
            self.lock.withLock { _ in
                self.pending.append(contentsOf: children)
                self.inFlight -= 1
            }
        }
    }

    /// Reads one directory, records it, and returns its subdirectories to walk.
    private mutating func read(_ uri: String, _ info: stat) -> [(uri: String, info: stat)] {
        let path = self.path(of: uri)
        let device = UInt64(info.st_dev)
        if self.kernelFileSystems[device] == nil {
            var statfsInfo = statfs()
            self.kernelFileSystems[device] =
                statfs(PathEscaping.systemPath(path), &statfsInfo) == 0
                ? KernelFileSystem.name(ofType: Int64(statfsInfo.f_type)) : nil
        }
        if let kernel = self.kernelFileSystems[device] ?? nil {
            self.skipped.append((path, "a kernel file system (\(kernel)), which holds no music"))
            return []
        }
        guard let handle = opendir(PathEscaping.systemPath(path)) else {
            self.skipped.append((path, String(cString: strerror(errno))))
            return []
        }
        defer { closedir(handle) }
        let descriptor = dirfd(handle)
        var directory = WalkedDirectory(mtime: Int64(info.st_mtim.tv_sec))
        var subdirectories: [(uri: String, info: stat)] = []
        while let entry = readdir(handle) {
            // A name that is not UTF-8 is kept, escaped: it plays, and clients see and send it escaped.
            let name = PathEscaping.name(of: entry)
            if name == "." || name == ".." || name.hasPrefix(".") { continue }
            let type = Int32(entry.pointee.d_type)
            let isSong = AudioFileKind.hasSongSuffix(name)
            let isPlaylist = Self.hasSuffix(name, ".m3u") || Self.hasSuffix(name, ".m3u8")
            // A regular file that is neither costs no stat: readdir said what it is.
            if type == DT_REG && !isSong && !isPlaylist { continue }
            var child = stat()
            guard PathEscaping.statEntry(entry, in: descriptor, &child) else {
                if type == DT_LNK { continue }  // a dangling symlink
                self.skipped.append((path + "/" + name, String(cString: strerror(errno))))
                continue
            }
            let childURI = uri.isEmpty ? name : uri + "/" + name
            switch child.st_mode & S_IFMT {
            case S_IFDIR:
                directory.subdirectories.append(name)
                subdirectories.append((childURI, child))
            case S_IFREG where isSong:
                // Whether it can be read is found when it is read (and then named once).
                directory.songs[PathKey(name)] = (Int64(child.st_mtim.tv_sec), Int64(child.st_size))
            case S_IFREG where isPlaylist:
                directory.playlists[PathKey(name)] = Int64(child.st_mtim.tv_sec)
            default:
                break
            }
        }
        directory.subdirectories.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        subdirectories.sort { $0.uri.utf8.lexicographicallyPrecedes($1.uri.utf8) }
        self.directories[PathKey(uri)] = directory
        return subdirectories
    }

    /// Whether `name` ends in `suffix` (lowercase ASCII), in any case.
    static func hasSuffix(_ name: String, _ suffix: String) -> Bool {
        let tail = name.utf8.suffix(suffix.utf8.count)
        guard tail.count == suffix.utf8.count else { return false }
        return zip(tail, suffix.utf8).allSatisfy { byte, wanted in byte | 0x20 == wanted || byte == wanted }
    }
}
