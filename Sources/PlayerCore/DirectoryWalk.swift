// The walk behind `QueueLoader.expand`. It runs on whatever thread calls it (the daemon gives it one
// of its own) and is bounded three ways, so that no path a client names can keep it going for long:
// no directory or playlist is entered twice, kernel file systems are not entered at all, and it stops
// at a limit on songs or when its cancellation fires.

import Audio
import CStatFS
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calls off a running expansion from another thread: the walk checks it at every directory and
/// every few hundred entries.
public final class WalkCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A cancellation that has not fired.
    public init() {}

    /// Fires: the walk ends with `QueueLoaderError.Reason.cancelled` at its next check.
    public func cancel() {
        self.flag.store(true, ordering: .relaxed)
    }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { self.flag.load(ordering: .relaxed) }
}

/// The walk's state: what was found so far, every directory and playlist entered (each is entered
/// once), and the ones open now, which tell a loop from a second path to the same place.
struct DirectoryWalk {
    let limits: QueueLoader.Limits
    let cancellation: WalkCancellation?
    var paths: [String] = []
    var skipped: [QueueLoader.Skipped] = []
    var moreSkipped = 0
    private var visited: Set<FileID> = []
    private var openDirectories: [FileID] = []
    private var openPlaylists: [FileID] = []
    /// Whether each device seen is a kernel file system, by device number: `statfs` once per device.
    private var kernelFileSystems: [UInt64: String?] = [:]
    private var entriesSinceCheck = 0

    init(limits: QueueLoader.Limits, cancellation: WalkCancellation?) {
        self.limits = limits
        self.cancellation = cancellation
    }

    /// Adds what `path` expands to. Throws when `path` itself cannot be used, and for a limit or a
    /// cancellation; trouble below it goes to `skipped`.
    mutating func add(_ path: String, _ info: FileInfo, inDirectoryWalk: Bool) throws(QueueLoaderError) {
        switch info.kind {
        case .directory:
            try self.addDirectory(path, info)
        case .regular where !inDirectoryWalk && Self.isPlaylist(path):
            try self.addPlaylist(path, info)
        case .regular:
            try self.addSong(path)
        case .other:
            throw QueueLoaderError(path: path, reason: .notRegularFile)
        }
    }

    private mutating func addSong(_ path: String) throws(QueueLoaderError) {
        guard access(PathEscaping.systemPath(path), R_OK) == 0 else {
            throw QueueLoaderError(path: path, reason: .lastError())
        }
        guard self.paths.count < self.limits.maximumSongs else {
            throw QueueLoaderError(path: path, reason: .tooManySongs(limit: self.limits.maximumSongs))
        }
        self.paths.append(path)
    }

    private mutating func addDirectory(_ path: String, _ info: FileInfo) throws(QueueLoaderError) {
        try self.checkCancellation(path)
        if self.openDirectories.contains(info.id) {
            throw QueueLoaderError(path: path, reason: .symlinkLoop)
        }
        if self.visited.contains(info.id) {
            throw QueueLoaderError(path: path, reason: .alreadyVisited)
        }
        if let name = self.kernelFileSystem(path, device: info.id.device) {
            throw QueueLoaderError(path: path, reason: .kernelFileSystem(name))
        }
        let entries = try Self.listDirectory(path)
        self.visited.insert(info.id)
        self.openDirectories.append(info.id)
        defer { self.openDirectories.removeLast() }
        for entry in entries {
            try self.countEntry(path)
            let child = path == "/" ? "/" + entry.name : path + "/" + entry.name
            if entry.type == .regular {
                // Known from the directory itself to be a file with a song's name: no `stat` needed.
                try self.adding(child) { walk throws(QueueLoaderError) in try walk.addSong(child) }
                continue
            }
            let childInfo: FileInfo
            do {
                childInfo = try FileInfo(path: child)
            } catch {
                self.skip(QueueLoader.Skipped(path: child, reason: error))
                continue
            }
            guard childInfo.kind == .directory || Self.hasSongSuffix(entry.name) else { continue }
            try self.adding(child) { walk throws(QueueLoaderError) in
                try walk.add(child, childInfo, inDirectoryWalk: true)
            }
        }
    }

    private mutating func addPlaylist(_ path: String, _ info: FileInfo) throws(QueueLoaderError) {
        if self.openPlaylists.contains(info.id) {
            throw QueueLoaderError(path: path, reason: .playlistLoop)
        }
        if self.visited.contains(info.id) {
            throw QueueLoaderError(path: path, reason: .alreadyVisited)
        }
        let lines = QueueLoader.playlistLines(try Self.readFile(path))
        let directory = QueueLoader.directory(of: path)
        self.visited.insert(info.id)
        self.openPlaylists.append(info.id)
        defer { self.openPlaylists.removeLast() }
        for line in lines {
            try self.countEntry(path)
            let entry: String
            switch QueueLoader.resolve(playlistLine: line, in: directory) {
            case .success(let resolved):
                entry = resolved
            case .failure(let reason):
                self.skip(QueueLoader.Skipped(path: line, reason: reason))
                continue
            }
            try self.adding(entry) { walk throws(QueueLoaderError) in
                try walk.add(entry, try FileInfo(lookingUp: entry), inDirectoryWalk: false)
            }
        }
    }

    /// Runs `body` for an entry below the named path: its trouble is recorded as skipped, while a
    /// limit or a cancellation ends the whole walk.
    private mutating func adding(
        _ path: String,
        _ body: (inout DirectoryWalk) throws(QueueLoaderError) -> Void
    ) throws(QueueLoaderError) {
        do {
            try body(&self)
        } catch {
            switch error.reason {
            case .cancelled, .tooManySongs: throw error
            default: self.skip(QueueLoader.Skipped(path: error.path, reason: error.reason))
            }
        }
    }

    private mutating func skip(_ entry: QueueLoader.Skipped) {
        if self.skipped.count < self.limits.maximumSkipped {
            self.skipped.append(entry)
        } else {
            self.moreSkipped += 1
        }
    }

    /// Checks the cancellation every few hundred entries: often enough to stop within milliseconds,
    /// rarely enough to cost nothing.
    private mutating func countEntry(_ path: String) throws(QueueLoaderError) {
        self.entriesSinceCheck += 1
        if self.entriesSinceCheck >= 256 {
            try self.checkCancellation(path)
        }
    }

    private mutating func checkCancellation(_ path: String) throws(QueueLoaderError) {
        self.entriesSinceCheck = 0
        if self.cancellation?.isCancelled == true {
            throw QueueLoaderError(path: path, reason: .cancelled)
        }
    }

    /// The kernel file system `path` lies on (its name), or nil for one that may hold files.
    private mutating func kernelFileSystem(_ path: String, device: UInt64) -> String? {
        if let known = self.kernelFileSystems[device] {
            return known
        }
        var info = statfs()
        let name =
            statfs(PathEscaping.systemPath(path), &info) == 0 ? KernelFileSystem.name(ofType: Int64(info.f_type)) : nil
        self.kernelFileSystems[device] = name
        return name
    }

    static func isPlaylist(_ path: String) -> Bool {
        let lowercased = path.lowercased()
        return lowercased.hasSuffix(".m3u") || lowercased.hasSuffix(".m3u8")
    }

    /// Whether a name ends in a song's suffix (`AudioFileKind.songSuffixes`).
    static func hasSongSuffix(_ name: String) -> Bool { AudioFileKind.hasSongSuffix(name) }

    /// A directory entry worth a closer look, with what the directory says it is.
    struct Entry {
        enum EntryType {
            /// A regular file with a song's name.
            case regular
            /// A directory, a symlink, or a file system that does not say: `stat` tells.
            case unknown
        }

        let name: String
        let type: EntryType
    }

    /// The entries of a directory that may lead to songs (directories, symlinks, song-named files),
    /// sorted by the bytes of their names; names starting with `.` left out.
    private static func listDirectory(_ path: String) throws(QueueLoaderError) -> [Entry] {
        guard let directory = opendir(PathEscaping.systemPath(path)) else {
            throw QueueLoaderError(path: path, reason: .lastError())
        }
        defer { closedir(directory) }
        var entries: [Entry] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                guard errno == 0 else { throw QueueLoaderError(path: path, reason: .lastError()) }
                break
            }
            let type = Int(entry.pointee.d_type)
            // Escaped when not UTF-8 (as every path in playerd is), so that it can be opened again.
            let name = PathEscaping.name(of: entry)
            if name.hasPrefix(".") {
                continue
            }
            switch type {
            case Int(DT_REG):
                // Most of a tree is files that are not songs: they cost neither a `stat` nor a sort.
                if Self.hasSongSuffix(name) {
                    entries.append(Entry(name: name, type: .regular))
                }
            case Int(DT_DIR), Int(DT_LNK), Int(DT_UNKNOWN):
                entries.append(Entry(name: name, type: .unknown))
            default:
                // A device, FIFO or socket: one with a song's name is looked at, to be reported as skipped.
                if Self.hasSongSuffix(name) {
                    entries.append(Entry(name: name, type: .unknown))
                }
            }
        }
        // Byte order, not `String`'s Unicode order, so the result does not depend on normalization.
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return entries
    }

    private static func readFile(_ path: String) throws(QueueLoaderError) -> [UInt8] {
        let descriptor = open(PathEscaping.systemPath(path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw QueueLoaderError(path: path, reason: .lastError()) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 && Int(status.st_size) > QueueLoader.maximumPlaylistBytes {
            throw QueueLoaderError(path: path, reason: .playlistTooLarge)
        }
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
            if bytes.count > QueueLoader.maximumPlaylistBytes {
                throw QueueLoaderError(path: path, reason: .playlistTooLarge)
            }
        }
    }
}

/// The file systems the kernel makes up from its own state: /proc, /sys and their kind. They hold
/// no music, and their symlinks (`/proc/self/root`, the device links in /sys) make walks huge.
public enum KernelFileSystem {
    /// Their `statfs` types (linux/magic.h) and names.
    static let types: [Int64: String] = [
        0x9fa0: "proc",
        0x6265_6572: "sysfs",
        0x6462_6720: "debugfs",
        0x7472_6163: "tracefs",
        0x0027_e0eb: "cgroup",
        0x6367_7270: "cgroup2",
        0x7363_6673: "securityfs",
        0x6165_676C: "pstore",
        0xcafe_4a11: "bpf",
        0x1cd1: "devpts",
        0x6265_6570: "configfs",
        0x6573_5543: "fusectl",
        0x4249_4e4d: "binfmt_misc",
        0xf97c_ff8c: "selinuxfs",
        0xde5e_81e4: "efivarfs",
        0x1980_0202: "mqueue",
        0x6e73_6673: "nsfs",
    ]

    /// The name of the kernel file system of `statfs` type `type`, or nil for any other.
    public static func name(ofType type: Int64) -> String? {
        // `f_type` is signed on some ABIs: compare the low 32 bits, where every magic number lives.
        Self.types[type & 0xffff_ffff]
    }
}

/// Identifies a file across the different paths that lead to it.
struct FileID: Hashable {
    let device: UInt64
    let inode: UInt64
}

/// What `stat` (which follows symlinks) says about a path.
struct FileInfo {
    enum Kind {
        case directory
        case regular
        case other
    }

    let kind: Kind
    let id: FileID

    init(path: String) throws(QueueLoaderError.Reason) {
        var status = stat()
        guard stat(PathEscaping.systemPath(path), &status) == 0 else { throw .lastError() }
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
    static func lastError() -> Self {
        switch errno {
        case ENOENT, ENOTDIR: .fileNotFound
        case EACCES, EPERM: .permissionDenied
        case ELOOP: .symlinkLoop
        case let code: .system(String(cString: strerror(code)))
        }
    }
}
