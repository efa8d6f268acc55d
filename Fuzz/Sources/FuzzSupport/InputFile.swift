#if canImport(Glibc)
    import Glibc
#endif

/// A file that holds the current input, so that the decoder opens it by path as the daemon opens songs.
/// It is unlinked at once and reached through `/proc/self/fd`, so nothing is left behind.
public final class InputFile: Sendable {
    /// The one input file of this process.
    public static let shared = InputFile()

    /// The descriptor the input is written through.
    public let descriptor: Int32
    /// A path that opens the file anew, with its own offset.
    public let path: String

    private init() {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/playerd-fuzz-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        require(descriptor >= 0, "cannot create the input file: \(String(cString: strerror(errno)))")
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        self.path = "/proc/self/fd/\(descriptor)"
    }

    /// Makes `bytes` the file's whole content.
    public func replace(with bytes: UnsafeRawBufferPointer) {
        require(ftruncate(self.descriptor, 0) == 0, "ftruncate: \(String(cString: strerror(errno)))")
        var offset = 0
        while offset < bytes.count {
            let written = pwrite(self.descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
            require(written > 0 || errno == EINTR, "pwrite: \(String(cString: strerror(errno)))")
            offset += max(written, 0)
        }
    }
}
