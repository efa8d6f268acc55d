/// One command as a client sent it: a name, then its arguments with quotes and escapes taken off.
public struct Request: Sendable, Hashable {
    /// MPD allows 63 arguments and refuses a 64th with `ACK [2@0] {} Too many arguments`.
    public static let maximumArguments = 63

    /// The command name, case-sensitive as MPD treats it: `status`, `play`.
    public var name: String
    /// The arguments, unquoted and unescaped.
    public var arguments: [String]

    /// Creates a request from its parts, say to send one.
    public init(name: String, arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// The line a client sends, `\n` included, every argument quoted so that spaces, quotes and
    /// backslashes survive: `add "a \"b\".mp3"\n`.
    public var line: String {
        var line = self.name
        for argument in self.arguments {
            line += " "
            line += quoted(argument)
        }
        line += "\n"
        return line
    }
}

/// Why a request line was refused, and what MPD does about it.
public enum RequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line is empty or does not start with a lowercase ASCII letter. MPD takes the peer for
    /// something that does not speak MPD (an HTTP request, say) and hangs up without a reply.
    case notMPD
    /// The command name holds a character that is not a letter, digit or `_`. MPD sends the ACK, then
    /// hangs up.
    case malformedName(Ack)
    /// The request cannot run (a malformed argument, a nested list ...). MPD sends the ACK and carries on.
    case rejected(Ack)

    /// The ACK line to send, if MPD sends one.
    public var reply: Ack? {
        switch self {
        case .notMPD: nil
        case .malformedName(let ack), .rejected(let ack): ack
        }
    }

    /// Whether MPD closes the connection after the reply (if any).
    public var endsConnection: Bool {
        switch self {
        case .notMPD, .malformedName: true
        case .rejected: false
        }
    }

    /// The same error for the command at `listIndex` in a command list.
    public func at(listIndex: Int) -> RequestError {
        switch self {
        case .notMPD: .notMPD
        case .malformedName(let ack): .malformedName(ack.at(listIndex: listIndex))
        case .rejected(let ack): .rejected(ack.at(listIndex: listIndex))
        }
    }

    /// The ACK line without its newline, or a note that MPD would hang up silently.
    public var description: String {
        self.reply?.description ?? "not an MPD request (the connection is closed without a reply)"
    }
}

/// Splits one request line the way MPD's tokenizer does.
///
/// The rules, from MPD's `Tokenizer.cxx` and `client/Process.cxx`: the line ends at a NUL byte, and
/// trailing bytes up to 0x20 (spaces, tabs, `\r`, other controls) are dropped. The name is a lowercase
/// ASCII letter then letters, digits or `_`. Every byte from 0x01 to 0x20 separates words, not just space
/// and tab. An unquoted argument is any run of bytes above 0x20 without `"` or `'` (a backslash there is
/// literal). A quoted argument runs to the next unescaped `"`, where a backslash makes the byte after it
/// literal, and must be followed by a separator or the end of the line.
public func tokenize(
    _ line: String, maximumArguments: Int = Request.maximumArguments
) throws(RequestError) -> Request {
    var line = line
    // withUTF8 hands over contiguous bytes (copying only a bridged string); typed throws cannot cross
    // its rethrows, so the outcome travels in a Result.
    let outcome = line.withUTF8 { bytes in
        Result { () throws(RequestError) -> Request in
            try tokenize(bytes: bytes, maximumArguments: maximumArguments)
        }
    }
    return try outcome.get()
}

/// An argument ready to send: in double quotes, with `"` and `\` escaped. The protocol cannot carry a
/// newline even inside quotes (the server splits lines first), so each `\n` becomes a space: one
/// argument must never turn into two requests.
public func quoted(_ argument: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(argument.utf8.count + 2)
    bytes.append(ASCII.quote)
    for byte in argument.utf8 {
        switch byte {
        case ASCII.quote, ASCII.backslash:
            bytes.append(ASCII.backslash)
            bytes.append(byte)
        case ASCII.newline:
            bytes.append(ASCII.space)
        default:
            bytes.append(byte)
        }
    }
    bytes.append(ASCII.quote)
    return String(decoding: bytes, as: UTF8.self)
}

/// The bytes the grammar names.
enum ASCII {
    static let nul: UInt8 = 0x00
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let apostrophe: UInt8 = 0x27
    static let plus: UInt8 = 0x2B
    static let minus: UInt8 = 0x2D
    static let period: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let backslash: UInt8 = 0x5C
    static let underscore: UInt8 = 0x5F

    /// MPD's `IsWhitespaceOrNull`: every control byte and space ends a word.
    static func isSeparator(_ byte: UInt8) -> Bool { byte <= ASCII.space }

    static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= ASCII.zero && byte <= ASCII.nine }

    /// What MPD allows after the first letter of a command name.
    static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || ASCII.isDigit(byte)
            || byte == ASCII.underscore
    }

    /// C's `isspace` in the C locale, which `strtol` and `strtod` skip before a number.
    static func isCSpace(_ byte: UInt8) -> Bool { byte == ASCII.space || (byte >= ASCII.tab && byte <= 0x0D) }
}

func tokenize(bytes: UnsafeBufferPointer<UInt8>, maximumArguments: Int) throws(RequestError) -> Request {
    // MPD reads the line as a C string, so a NUL ends it.
    var end = bytes.firstIndex(of: ASCII.nul) ?? bytes.count
    while end > 0 && ASCII.isSeparator(bytes[end - 1]) {
        end -= 1
    }
    guard end > 0, ASCII.isLowercaseLetter(bytes[0]) else {
        throw .notMPD
    }

    var index = 1
    while index < end && !ASCII.isSeparator(bytes[index]) {
        guard ASCII.isWordByte(bytes[index]) else {
            throw .malformedName(Ack(.unknown, "Invalid word character"))
        }
        index += 1
    }
    let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<index]), as: UTF8.self)

    var arguments: [String] = []
    skipSeparators(bytes, &index, end)
    while index < end {
        guard arguments.count < maximumArguments else {
            throw .rejected(Ack(.argument, "Too many arguments"))
        }
        if bytes[index] == ASCII.quote {
            arguments.append(try quotedArgument(bytes, &index, end))
        } else {
            arguments.append(try unquotedArgument(bytes, &index, end))
        }
        skipSeparators(bytes, &index, end)
    }
    return Request(name: name, arguments: arguments)
}

private func skipSeparators(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ end: Int) {
    while index < end && ASCII.isSeparator(bytes[index]) {
        index += 1
    }
}

private func unquotedArgument(
    _ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ end: Int
) throws(RequestError) -> String {
    let start = index
    while index < end && !ASCII.isSeparator(bytes[index]) {
        // Quotes may only open an argument; a stray one means the client quoted wrongly, and guessing
        // what it meant could add the wrong file.
        if bytes[index] == ASCII.quote || bytes[index] == ASCII.apostrophe {
            throw .rejected(Ack(.unknown, "Invalid unquoted character"))
        }
        index += 1
    }
    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
}

private func quotedArgument(
    _ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ end: Int
) throws(RequestError) -> String {
    index += 1
    var runStart = index
    // Only an argument with escapes needs a copy; most are sliced straight out of the line.
    var unescaped: [UInt8] = []
    var sawEscape = false
    while true {
        guard index < end else {
            throw .rejected(Ack(.unknown, "Missing closing '\"'"))
        }
        let byte = bytes[index]
        if byte == ASCII.quote {
            break
        }
        if byte == ASCII.backslash {
            unescaped.append(contentsOf: bytes[runStart..<index])
            sawEscape = true
            index += 1
            guard index < end else {
                throw .rejected(Ack(.unknown, "Missing closing '\"'"))
            }
            // The escaped byte starts the next literal run.
            runStart = index
        }
        index += 1
    }
    let value: String
    if sawEscape {
        unescaped.append(contentsOf: bytes[runStart..<index])
        value = String(decoding: unescaped, as: UTF8.self)
    } else {
        value = String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
    }
    index += 1
    if index < end && !ASCII.isSeparator(bytes[index]) {
        throw .rejected(Ack(.unknown, "Space expected after closing '\"'"))
    }
    return value
}
