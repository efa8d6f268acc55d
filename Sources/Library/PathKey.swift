#if canImport(Glibc)
    import Glibc
#endif

/// A file name or URI that compares and hashes by its bytes, as the file system does.
///
/// Swift's `String` takes canonically equivalent text as equal, so "é" composed and "é" decomposed —
/// two files — would be one key; and it normalizes non-ASCII text to hash it, which cost a no-op update
/// of 20,000 accented names a third of its time.
struct PathKey: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    func hash(into hasher: inout Hasher) {
        var string = self.string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    static func == (lhs: PathKey, rhs: PathKey) -> Bool {
        var left = lhs.string
        var right = rhs.string
        return left.withUTF8 { left in
            right.withUTF8 { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }
}
