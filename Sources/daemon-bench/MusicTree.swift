// The soak's music directory as clients name it: the songs and folders `add` may use.

#if canImport(Glibc)
    import Glibc
#endif

/// The MP3 files and folders under a music directory, relative to it, sorted.
struct MusicTree {
    /// The MP3 files (`sub/a.mp3`).
    private(set) var songs: [String] = []
    /// The folders below the top (`sub`), and `""` for the whole tree.
    private(set) var folders: [String] = [""]

    /// Walks `root` (a few levels deep at most: the soak's tree is small).
    init(root: String) throws(BenchFailure) {
        try self.walk(root, relative: "", depth: 0)
        self.songs.sort()
        self.folders.sort()
        guard !self.songs.isEmpty else { throw .daemon("no .mp3 file in \(root)") }
    }

    private mutating func walk(_ directory: String, relative: String, depth: Int) throws(BenchFailure) {
        guard let handle = opendir(directory) else {
            throw .system(SystemCallError(function: "opendir(\(directory))", code: errno))
        }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let path = relative.isEmpty ? name : relative + "/" + name
            if entry.pointee.d_type == UInt8(DT_DIR) && depth < 4 {
                self.folders.append(path)
                try self.walk(directory + "/" + name, relative: path, depth: depth + 1)
            } else if name.lowercased().hasSuffix(".mp3") {
                self.songs.append(path)
            }
        }
    }
}
