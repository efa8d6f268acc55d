/// `file://` URIs for MPRIS: a song's `xesam:url`, a cover's `mpris:artUrl`, and the path behind
/// `OpenUri`'s argument.
enum FileURL {
    /// The song's URL: a URL as it is, an absolute path as a file URI, a relative one resolved in the
    /// music directory; when that is unknown (a server that will not say), the URI as the server gave it.
    static func forSong(_ uri: String, musicDirectory: String?) -> String {
        if uri.contains("://") {
            return uri
        }
        if uri.hasPrefix("/") {
            return Self.fileURL(path: uri)
        }
        guard let musicDirectory, musicDirectory.hasPrefix("/") else {
            return uri
        }
        let base = musicDirectory.hasSuffix("/") ? String(musicDirectory.dropLast()) : musicDirectory
        return Self.fileURL(path: base + "/" + uri)
    }

    /// `file://` and the path, percent-encoded. playerd names a file whose name is not UTF-8 with a
    /// `\xHH` escape for each stray byte; the URI carries the byte itself (`%E9`).
    static func fileURL(path: String) -> String {
        var text = "file://"
        for byte in Self.unescapedBytes(path) {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + Self.hex(byte)
            }
        }
        return text
    }

    /// The path a URI names, for `OpenUri`: `file:///a/b%20c.mp3` (or `file://localhost/...`) decoded,
    /// or an absolute path as it is; nil for anything else (another scheme, a relative path). Bytes
    /// that are not UTF-8 come back as playerd's `\xHH` escapes.
    static func path(fromURI uri: String) -> String? {
        if uri.hasPrefix("/") {
            return uri
        }
        var rest: Substring
        if uri.lowercased().hasPrefix("file://") {
            rest = uri.dropFirst(7)
        } else {
            return nil
        }
        if rest.lowercased().hasPrefix("localhost/") {
            rest = rest.dropFirst(9)
        }
        guard rest.hasPrefix("/") else { return nil }
        var bytes: [UInt8] = []
        var utf8 = Array(rest.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return Self.escapedPath(bytes)
    }

    /// A path's bytes as playerd names them: UTF-8 as it is, each stray byte as `\xHH`.
    static func escapedPath(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) {
            return text
        }
        var text = ""
        var index = 0
        while index < bytes.count {
            let length = Self.sequenceLength(bytes[index])
            if length > 0, index + length <= bytes.count,
                let character = String(validating: bytes[index..<(index + length)], as: UTF8.self)
            {
                text += character
                index += length
            } else {
                text += "\\x" + Self.hex(bytes[index])
                index += 1
            }
        }
        return text
    }

    /// The bytes of a path as playerd names it: each `\xHH` back to its byte.
    static func unescapedBytes(_ path: String) -> [UInt8] {
        let utf8 = Array(path.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count, utf8[index + 1] == UInt8(ascii: "x"),
                let value = UInt8(String(decoding: utf8[(index + 2)...(index + 3)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return bytes
    }

    // How many bytes a UTF-8 sequence starting with `byte` has; 0 when it cannot start one.
    private static func sequenceLength(_ byte: UInt8) -> Int {
        switch byte {
        case 0x00..<0x80: 1
        case 0xC2..<0xE0: 2
        case 0xE0..<0xF0: 3
        case 0xF0..<0xF5: 4
        default: 0
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
