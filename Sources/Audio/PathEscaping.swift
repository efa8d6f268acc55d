#if canImport(Glibc)
    import Glibc
#endif

/// How playerd writes file names that are not UTF-8, which the protocol (UTF-8 text) cannot carry.
///
/// Every path a `String` holds in playerd — library URIs, queued paths, the paths clients send and are
/// shown — is in this escaped form; `systemPath(_:)` turns one back into the bytes the kernel knows, and
/// every system call on such a path goes through it. The form:
///
/// - a byte that is not part of well-formed UTF-8 is written `\xHH`, two uppercase hex digits: the
///   escape `ls -b`, Python and a person at a terminal all read, in plain ASCII a client can send back;
/// - a backslash that would read as such an escape (one followed by `x` and two uppercase hex digits) is
///   itself written `\x5C`, so that no genuine name is ever taken for an escaped one;
/// - everything else, backslashes included, is left as it is: a name that is UTF-8 and does not hold
///   that pattern (all but invented ones) is shown and stored unchanged.
///
/// Reading back is lenient: `\x00` and a backslash not starting an escape stand for themselves.
public enum PathEscaping {
    /// The escaped form of a file name or path given as bytes (without a terminating NUL).
    public static func escaped(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { Self.escaped($0) }
    }

    /// The escaped form of a file name or path given as bytes (without a terminating NUL): what a walk
    /// calls for every directory entry, so not generic.
    public static func escaped(_ bytes: UnsafeRawBufferPointer) -> String {
        if let text = String(validating: bytes, as: UTF8.self), !Self.holdsEscapePattern(text.utf8) {
            return text
        }
        let bytes = Array(bytes)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.backslash {
                result += Self.startsEscape(bytes, at: index) ? Self.escape(byte) : [byte]
                index += 1
            } else if let length = Self.sequenceLength(bytes, at: index) {
                result += bytes[index..<(index + length)]
                index += length
            } else {
                result += Self.escape(byte)
                index += 1
            }
        }
        // Only ASCII escapes and well-formed sequences went in.
        return String(decoding: result, as: UTF8.self)
    }

    /// The bytes an escaped name or path stands for.
    public static func bytes(of escaped: String) -> [UInt8] {
        let text = Array(escaped.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            if text[index] == Self.backslash, Self.startsEscape(text, at: index) {
                let value = Self.hexValue(text[index + 2])! << 4 | Self.hexValue(text[index + 3])!
                if value != 0 {
                    result.append(value)
                    index += 4
                    continue
                }
            }
            result.append(text[index])
            index += 1
        }
        return result
    }

    /// The NUL-terminated path to hand a system call for an escaped path.
    public static func systemPath(_ escaped: String) -> [CChar] {
        if !escaped.utf8.contains(Self.backslash) {
            return Array(escaped.utf8CString)
        }
        return Self.bytes(of: escaped).map { CChar(bitPattern: $0) } + [0]
    }

    /// The escaped name of a directory entry `readdir` gave.
    public static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: &entry.pointee.d_name) { raw in
            Self.escaped(UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)]))
        }
    }

    /// `fstatat` (following symlinks) of a directory entry in the open directory `directory`, by the
    /// entry's own bytes: true when it succeeded, else `errno` says why.
    public static func statEntry(_ entry: UnsafeMutablePointer<dirent>, in directory: Int32, _ info: inout stat)
        -> Bool
    {
        withUnsafePointer(to: &entry.pointee.d_name) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: pointer.pointee)) {
                fstatat(directory, $0, &info, 0) == 0
            }
        }
    }

    /// `\`.
    private static let backslash = UInt8(ascii: "\\")

    private static func escape(_ byte: UInt8) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return [Self.backslash, UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
    }

    /// Whether the backslash at `index` is followed by `x` and two uppercase hex digits.
    private static func startsEscape(_ bytes: [UInt8], at index: Int) -> Bool {
        index + 3 < bytes.count && bytes[index + 1] == UInt8(ascii: "x") && Self.hexValue(bytes[index + 2]) != nil
            && Self.hexValue(bytes[index + 3]) != nil
    }

    private static func holdsEscapePattern(_ utf8: String.UTF8View) -> Bool {
        guard utf8.contains(Self.backslash) else { return false }
        let bytes = Array(utf8)
        return bytes.indices.contains { bytes[$0] == Self.backslash && Self.startsEscape(bytes, at: $0) }
    }

    /// The value of an uppercase hex digit.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (Unicode's table 3-7), or nil when the
    /// byte there does not start one.
    private static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int? {
        let first = bytes[index]
        let (length, secondRange): (Int, ClosedRange<UInt8>) =
            switch first {
            case 0x00...0x7F: (1, 0x80...0xBF)
            case 0xC2...0xDF: (2, 0x80...0xBF)
            case 0xE0: (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80...0xBF)
            case 0xED: (3, 0x80...0x9F)
            case 0xF0: (4, 0x90...0xBF)
            case 0xF1...0xF3: (4, 0x80...0xBF)
            case 0xF4: (4, 0x80...0x8F)
            default: (0, 0x80...0xBF)
            }
        guard length > 0, index + length <= bytes.count else { return nil }
        guard length > 1 else { return 1 }
        guard secondRange.contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            return nil
        }
        return length
    }
}
