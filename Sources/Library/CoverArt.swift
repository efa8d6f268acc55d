import Audio
import ControlProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Cover files next to songs, as MPD 0.23's `albumart` finds and hands them out: the first of
/// `cover.png`, `cover.jpg`, `cover.webp` in the song's directory, read a chunk at a time.
public enum CoverArt {
    /// The names MPD 0.23 tries, in its order (`find_stream_art` in src/command/FileCommands.cxx). The
    /// match is exact: `Cover.jpg` and `folder.jpg` are not covers to MPD.
    public static let names = ["cover.png", "cover.jpg", "cover.webp"]

    /// The cover file in `directory`, or nil when there is none. Only files that exist and open count.
    /// Paths are escaped (`PathEscaping`), as URIs are.
    public static func file(inDirectory directory: String) -> String? {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        for name in Self.names {
            let path = base + name
            var info = stat()
            let systemPath = PathEscaping.systemPath(path)
            guard stat(systemPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let descriptor = open(systemPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            close(descriptor)
            return path
        }
        return nil
    }

    /// The MIME type of an image file by its suffix, or nil when the suffix is not an image's.
    public static func mimeType(ofFile path: String) -> String? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        case "bmp": return "image/bmp"
        case "tif", "tiff": return "image/tiff"
        default: return nil
        }
    }

    /// Up to `limit` bytes of the file at `path` from `offset`, and the file's whole size: what one
    /// `albumart` answer carries. Only the chunk is read (pread). An offset at the end gives an empty
    /// chunk; one past it is ACK 2 `Offset too large`, as in MPD. A file that cannot be opened is ACK 50
    /// `No file exists`.
    public static func chunk(ofFile path: String, offset: Int, limit: Int) throws(Ack) -> (
        totalSize: Int, bytes: [UInt8]
    ) {
        let descriptor = open(PathEscaping.systemPath(path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Ack(.noExist, "No file exists")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Ack(.noExist, "Cannot get size for stream")
        }
        let size = Int(info.st_size)
        guard offset >= 0, offset <= size else {
            throw Ack(.argument, "Offset too large")
        }
        let wanted = min(size - offset, max(0, limit))
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, wanted - done, off_t(offset + done))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Ack(.system, "Failed to read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }  // The file shrank meanwhile: hand out what there is.
            done += count
        }
        bytes.removeSubrange(done...)
        return (size, bytes)
    }
}
