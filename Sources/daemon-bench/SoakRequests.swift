// The lines hostile clients send: valid commands on the soak's small music tree, and mutations of them
// (bad numbers, huge arguments, odd and invalid text, unknown commands, lines that are not MPD at
// all). Lines are bytes, not strings, because some are not valid UTF-8 on purpose.
//
// `add` and `playnow` are the commands that reach the file system, and a directory expands
// recursively: the arguments this file writes for them are songs or folders of the soak's tree,
// relative names that start with a letter and do not exist, and (for `add`) the kernel's /proc and
// /sys, which playerd refuses at once. A walk of `/` is sent only by clients that hang up at once
// (HostileClient.dropMidAnswer), so that the queue does not fill with the machine's MP3s.

/// What the daemon must do with a line sent on its own, outside a command list.
enum SoakReply {
    /// Exactly one answer, ending in `OK` or `ACK ...`.
    case answer
    /// No answer at all (`noidle` when not idling).
    case nothing
    /// Close the connection, perhaps after one `ACK` (a line that is not MPD, a malformed name).
    case hangUp
}

/// One request line, `\n` included, and what the daemon must do with it.
struct SoakLine {
    /// The bytes to send.
    var bytes: [UInt8]
    /// The reply the line calls for.
    var reply: SoakReply
}

/// Makes request lines from a random stream.
struct SoakRequests {
    /// The soak tree's MP3 files, relative to the music directory.
    let songs: [String]
    /// The soak tree's folders, relative to the music directory (`""` is the whole tree).
    let folders: [String]

    /// The daemon's longest line (`--max-line-length`'s default), so that arguments can land on it.
    static let maximumLineLength = 65536

    // MARK: - Single lines

    /// Any line a hostile client might send on its own: mostly valid commands, the rest mutations;
    /// `huge` allows arguments of up to a megabyte.
    func any(huge: Bool = true, using random: inout SoakRandom) -> SoakLine {
        let kind = random.weighted([
            (50, 0), (12, 1), (huge ? 3 : 0, 2), (9, 3), (8, 4), (3, 5), (2, 6), (1, 7),
        ])
        switch kind {
        case 0: return SoakLine(bytes: self.line(self.valid(using: &random)), reply: .answer)
        case 1: return SoakLine(bytes: self.badNumber(using: &random), reply: .answer)
        case 2: return SoakLine(bytes: self.hugeArgument(using: &random), reply: .answer)
        case 3: return SoakLine(bytes: self.oddText(using: &random), reply: .answer)
        case 4: return SoakLine(bytes: self.unknownCommand(using: &random), reply: .answer)
        case 5: return SoakLine(bytes: self.wrongArity(using: &random), reply: .answer)
        case 6: return SoakLine(bytes: self.line("noidle"), reply: .nothing)
        default:
            return SoakLine(
                bytes: self.line(random.pick(["command_list_end", "command_list_begin x"])), reply: .answer)
        }
    }

    /// A line that must be answered, never one that ends the connection or opens a list: what a
    /// pipelining or flooding client sends. Not a bare `command_list_end` either, so that it can stand
    /// inside a list without ending it.
    func answered(huge: Bool = true, using random: inout SoakRandom) -> [UInt8] {
        var line = self.any(huge: huge, using: &random)
        while line.reply != .answer || line.bytes == self.line("command_list_end") {
            line = self.any(huge: huge, using: &random)
        }
        return line.bytes
    }

    /// A valid command on the soak tree, with arguments that are mostly in range.
    func valid(using random: inout SoakRandom) -> String {
        let position = random.int(in: 0...12)
        let other = random.int(in: 0...12)
        let seconds = random.int(in: 0...4)
        return random.weighted([
            (12, "status"),
            (3, "currentsong"),
            (1, "stats"),
            (4, "playlistinfo"),
            (2, "playlistinfo \(position)"),
            (2, "playlistinfo \(position):\(position + other)"),
            (1, "playlistid"),
            (1, "playlistid \(position)"),
            (1, "plchanges \(position)"),
            (1, "plchangesposid 0"),
            (3, "play"),
            (3, "play \(position)"),
            (1, "playid \(position)"),
            (3, "pause \(random.int(in: 0...1))"),
            (1, "pause"),
            (1, "stop"),
            (2, "next"),
            (2, "previous"),
            (3, "seek \(position) \(seconds).\(random.int(in: 0...999))"),
            (1, "seekid \(position) \(seconds)"),
            (3, "seekcur \(random.pick(["", "+", "-"]))\(seconds)"),
            (4, "setvol \(random.int(in: 0...100))"),
            (2, "volume \(random.pick(["+", "-"]))\(random.int(in: 0...10))"),
            (1, "getvol"),
            (3, "add \(quoted(random.pick(self.songs)))"),
            (1, "add \(quoted(random.pick(self.folders)))"),
            (1, "playnow \(quoted(random.pick(self.songs)))"),
            (1, "playnow \(quoted(random.pick(self.folders))) \(quoted(random.pick(self.songs)))"),
            (1, "playnow \(quoted("soak-missing-\(position).mp3"))"),
            (1, "add \(quoted(random.pick(self.songs))) \(position)"),
            (1, "addid \(quoted(random.pick(self.songs)))"),
            (1, "add \(quoted("soak-missing-\(position).mp3"))"),
            (1, "add \(quoted("../\(random.pick(self.songs))"))"),
            (1, "add \(quoted(random.pick(["/proc", "/proc/self", "/sys", "file:///sys/class"])))"),
            (3, "delete \(position)"),
            (1, "delete \(position):\(position + other)"),
            (1, "deleteid \(position)"),
            (2, "move \(position) \(other)"),
            (1, "moveid \(position) \(other)"),
            (1, "clear"),
            (1, "repeat \(random.int(in: 0...1))"),
            (1, "random \(random.int(in: 0...1))"),
            (1, "single \(random.pick(["0", "1", "oneshot"]))"),
            (1, "consume \(random.int(in: 0...1))"),
            (1, "outputs"),
            (1, "tagtypes"),
            (1, "tagtypes \(random.pick(["clear", "all", "enable Artist Title", "disable Album"]))"),
            (1, "config"),
            (1, "commands"),
            (1, "notcommands"),
            (1, "urlhandlers"),
            (1, "decoders"),
            (3, "ping"),
            (1, "replay_gain_status"),
            (1, "listplaylists"),
            (1, "clearerror"),
            (1, "pausefor \(seconds)"),
            (1, "sleeptimer \(random.pick(["off", "end", "30"]))"),
            (1, "password secret"),
        ])
    }

    // MARK: - Mutations

    /// Numbers clients should never send: negative, huge, not finite, not decimal, empty.
    static let badNumbers: [String] = [
        "-1", "-2", "-2147483649", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999999999",
        "1e999", "-1e999", "1e308", "1e-999", "1e18", "NaN", "nan", "-nan", "inf", "-inf", "Infinity", "0x10",
        "0X1F", "0b101", "0o7", "", " ", "+5", "1.5", "-0", "-0.0", "1,5", "1_000", "007", "1 2", "5:", ":5",
        "5:3", "-5:", "::", "1:2:3", "0.0000001", "2.5e9", "\u{0663}", "\u{FF11}\u{FF12}", "\u{2212}1", "\t3",
        "3\u{0}", "12abc", "abc", "true", "on",
    ]

    /// Commands that take numbers, with the count of their arguments.
    private static let numericCommands: [(name: String, arguments: Int)] = [
        ("play", 1), ("playid", 1), ("seek", 2), ("seekid", 2), ("seekcur", 1), ("setvol", 1), ("volume", 1),
        ("delete", 1), ("deleteid", 1), ("move", 2), ("moveid", 2), ("playlistinfo", 1), ("playlistid", 1),
        ("plchanges", 1), ("plchangesposid", 1), ("repeat", 1), ("random", 1), ("single", 1), ("consume", 1),
        ("pause", 1), ("pausefor", 1), ("sleeptimer", 1), ("enableoutput", 1), ("disableoutput", 1),
        ("toggleoutput", 1), ("crossfade", 1), ("mixrampdb", 1),
    ]

    /// A command whose numbers are bad (one of them, or all), quoted or not.
    func badNumber(using random: inout SoakRandom) -> [UInt8] {
        if random.chance(0.1) {
            // `add SONG POSITION`: the path is a real song, the position is bad.
            let position = self.argument(Array(random.pick(Self.badNumbers).utf8), using: &random)
            return Array("add \(quoted(random.pick(self.songs))) ".utf8) + position + [0x0A]
        }
        let command = random.pick(Self.numericCommands)
        var bytes = Array(command.name.utf8)
        let bad = random.int(in: 0...command.arguments - 1)
        for index in 0..<command.arguments {
            let text = index == bad || random.chance(0.3) ? random.pick(Self.badNumbers) : "\(random.int(in: 0...5))"
            bytes.append(0x20)
            bytes += self.argument(Array(text.utf8), using: &random)
        }
        return bytes + [0x0A]
    }

    /// A command with one argument of 1 KiB to 1 MiB: under, on and over the daemon's line limit.
    func hugeArgument(using random: inout SoakRandom) -> [UInt8] {
        let name = random.pick([
            "add", "playnow", "status", "play", "setvol", "seekcur", "tagtypes", "password", "idle", "xyzzy",
        ])
        var prefix = Array("\(name) \"".utf8)
        if name == "add" || name == "playnow" {
            prefix += Array("soak-missing-".utf8)
        }
        // The line's length, `\n` not counted: the limit itself is the edge most worth probing.
        let limit = Self.maximumLineLength
        let length = random.weighted([
            (3, 1024), (3, 8192), (2, 32768), (3, limit - 1), (3, limit), (3, limit + 1), (2, limit + 100),
            (1, 262_144), (1, 1_048_576),
        ])
        let filling = max(0, length - prefix.count - 1)
        let pattern = self.printable(count: 251, using: &random)
        var bytes = prefix
        bytes.reserveCapacity(length + 1)
        while bytes.count < prefix.count + filling {
            bytes += pattern.prefix(prefix.count + filling - bytes.count)
        }
        return bytes + Array("\"\n".utf8)
    }

    /// Text clients do not usually send: combining marks, emoji, right-to-left overrides, zero widths,
    /// NUL and control bytes, and byte sequences that are not UTF-8 at all.
    static let oddPieces: [[UInt8]] = [
        Array("\u{E9}".utf8), Array("\u{65E5}\u{672C}\u{8A9E}".utf8), Array("\u{1F3B5}".utf8),
        Array("\u{202E}".utf8), Array("\u{200B}".utf8), Array("\u{FEFF}".utf8), Array("e\u{301}\u{301}".utf8),
        Array("\u{1F44D}\u{1F3FB}".utf8), Array("\u{10FFFF}".utf8), Array("\u{FFFD}".utf8),
        [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xFF], [0xFE, 0xFF], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        [0xF0, 0x9F], [0x00], [0x01], [0x1B], [0x7F], [0x0D], [0x09], [0x0B], [0x5C], [0x22], [0x27], [0x20],
    ]

    /// A command whose arguments hold odd text.
    func oddText(using random: inout SoakRandom) -> [UInt8] {
        // Not `idle`: odd text can tokenize to no argument at all (a NUL ends the line), and a bare `idle`
        // waits instead of answering.
        let name = random.pick([
            "add", "playnow", "play", "setvol", "tagtypes", "status", "seekcur", "single", "password", "playlistinfo",
            "xyzzy",
        ])
        var bytes = Array(name.utf8)
        for _ in 0..<random.int(in: 1...3) {
            var text: [UInt8] = name == "add" || name == "playnow" ? Array("soak-missing-".utf8) : []
            for _ in 0..<random.int(in: 1...12) {
                text += random.chance(0.6) ? random.pick(Self.oddPieces) : Array("ab1".utf8)
            }
            bytes.append(0x20)
            bytes += self.argument(text, using: &random)
        }
        return bytes + [0x0A]
    }

    /// A command playerd does not have: other MPD commands, made-up and very long names.
    func unknownCommand(using random: inout SoakRandom) -> [UInt8] {
        let name: String
        switch random.int(in: 0...9) {
        case 0...4:
            name = random.pick([
                "lsinfo", "find", "search", "list", "update", "listall", "listallinfo", "sticker", "playlistadd",
                "save", "load", "rm", "rename", "shutdown", "albumart", "readpicture", "binarylimit", "protocol",
                "mount", "prio", "rangeid", "addtagid", "channels", "subscribe", "sendmessage", "statuss", "a",
                "z9", "status_", "play_", "noidlee", "idle_", "command_list", "command_list_ok",
            ])
        case 5...8:
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789_".utf8)
            var bytes: [UInt8] = [random.pick(Array(letters.prefix(26)))]
            for _ in 0..<random.int(in: 0...40) { bytes.append(random.pick(letters)) }
            name = String(decoding: bytes, as: UTF8.self)
        default:
            name = "s" + String(repeating: "tatus", count: random.int(in: 10...14000))
        }
        var bytes = Array(name.utf8)
        for _ in 0..<random.int(in: 0...3) {
            bytes += Array(" \(random.int(in: 0...99))".utf8)
        }
        return bytes + [0x0A]
    }

    /// A known command with too many or too few arguments (up to past MPD's 63).
    func wrongArity(using random: inout SoakRandom) -> [UInt8] {
        let name = random.pick(["status", "play", "seek", "setvol", "move", "ping", "clear", "tagtypes", "add"])
        var line = name
        let count = random.pick([0, 1, 3, 5, 62, 63, 64, 100])
        for index in 0..<count {
            line += name == "add" && index == 0 ? " soak-missing" : " \(index)"
        }
        return self.line(line)
    }

    /// A line that is not MPD, or has a malformed command name: the daemon hangs up on it.
    func hangUp(using random: inout SoakRandom) -> SoakLine {
        let text = random.pick([
            "", " ", "GET / HTTP/1.1", "STATUS", "Status", " status", "1status", "_status", "\u{FEFF}status",
            "\"status\"",
            "stat-us", "play!", "st\u{E4}tus", "\u{0}status",
        ])
        return SoakLine(bytes: self.line(text), reply: .hangUp)
    }

    // MARK: - Command lists

    /// A command list of `count` entries, opened with `command_list_ok_begin` when `okMode`, with nested
    /// begins among the entries now and then, closed with `command_list_end` when `closed`. Entries are
    /// answered lines (never one that ends the connection), each tokenized only when its turn comes.
    /// Lists of more than 300 entries have no huge arguments: they are long enough as they are, and the
    /// soak keeps its own memory in bounds.
    func commandList(count: Int, okMode: Bool, closed: Bool, using random: inout SoakRandom) -> [UInt8] {
        var bytes = Array((okMode ? "command_list_ok_begin\n" : "command_list_begin\n").utf8)
        let cheap = ["ping", "status", "getvol", "currentsong", "setvol 5x", "play -5", "xyzzy", "tagtypes"]
        for _ in 0..<count {
            if random.chance(0.01) {
                bytes += self.line(
                    random.pick(["command_list_begin", "command_list_ok_begin", "idle", "noidle", "close"]))
            } else if count > 5000 {
                // Long lists are mostly cheap lines, so that making them costs the soak little.
                bytes +=
                    random.chance(0.95) ? self.line(random.pick(cheap)) : self.answered(huge: false, using: &random)
            } else {
                bytes += self.answered(huge: count <= 300, using: &random)
            }
        }
        if closed {
            bytes += self.line("command_list_end")
        }
        return bytes
    }

    // MARK: - Pieces

    /// `text` and a newline, as bytes.
    func line(_ text: String) -> [UInt8] {
        Array(text.utf8) + [0x0A]
    }

    /// `text` as one argument: mostly quoted with escapes, sometimes bare (which may split it or be
    /// refused), sometimes with its closing quote missing.
    func argument(_ text: [UInt8], using random: inout SoakRandom) -> [UInt8] {
        let clean = text.map { $0 == 0x0A ? 0x20 : $0 }
        switch random.int(in: 0...9) {
        case 0...6:
            var bytes: [UInt8] = [0x22]
            for byte in clean {
                if byte == 0x22 || byte == 0x5C { bytes.append(0x5C) }
                bytes.append(byte)
            }
            return bytes + [0x22]
        case 7, 8:
            return clean.isEmpty ? [0x22, 0x22] : clean
        default:
            return [0x22] + clean
        }
    }

    /// `count` random printable ASCII bytes and multi-byte characters, whole characters only.
    private func printable(count: Int, using random: inout SoakRandom) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            if random.chance(0.1) {
                bytes += Array("\u{E9}".utf8)
            } else {
                bytes.append(UInt8(random.int(in: 0x23...0x5B)))  // neither `"` nor `\`
            }
        }
        return bytes
    }
}
