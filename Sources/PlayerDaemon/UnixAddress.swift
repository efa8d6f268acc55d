#if canImport(Glibc)
    import Glibc
#endif

/// Calls `body` with the `sockaddr_un` for `path` and its exact length; nil when the path does not
/// fit in `sun_path`. A path starting with a NUL byte names an abstract socket, whose length must be
/// exact, which is why the length counts the path's bytes rather than the whole structure.
func withUnixAddress<Result>(
    _ path: String,
    _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) -> Result? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
}
