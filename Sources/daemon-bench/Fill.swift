// The `fill` mode: how long a daemon takes to queue many songs, sent the way a client adds a whole
// library, in command lists, so that the figure is the daemon's work and not the round trips.

#if canImport(Glibc)
    import Glibc
#endif

/// `daemon-bench fill SOCKET COUNT URI [BATCH]`: prints `fill_ms` and `playlistlength`.
enum FillCommand: BenchCommand {
    static let name = "fill"
    static let usage = "daemon-bench fill SOCKET COUNT URI [BATCH]"
    /// Adds per command list when BATCH is not given: 27 kB for a short URI, well under mpd's 2 MiB limit.
    static let defaultBatch = 1000

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 3 || arguments.count == 4 else { throw .usage(self.usage) }
        let count = try integerArgument(arguments[1], named: "COUNT", atLeast: 0, usage: self.usage)
        let uri = arguments[2]
        let batch =
            arguments.count == 4
            ? try integerArgument(arguments[3], named: "BATCH", atLeast: 1, usage: self.usage) : self.defaultBatch
        let connection = try openSession(arguments[0])
        if let failure = connection.request("clear\n").failure(of: "clear") { throw .daemon(failure) }

        let add = "add \(quoted(uri))\n"
        let fullList = self.commandList(add, count: min(batch, count))
        var added = 0
        let started = monotonicNanoseconds()
        while added < count {
            let size = min(batch, count - added)
            let list = size == batch ? fullList : self.commandList(add, count: size)
            let what = "the command list adding entries \(added + 1)-\(added + size) of \(count)"
            if let failure = connection.request(list).failure(of: what) { throw .daemon(failure) }
            added += size
        }
        let elapsed = monotonicNanoseconds() - started

        guard case .ok(let lines, _) = connection.request("status\n", keepingLines: true) else {
            throw .daemon("status failed after the adds")
        }
        let lengthLine = lines.first { $0.hasPrefix("playlistlength: ") }
        guard let lengthLine, let length = Int(lengthLine.dropFirst("playlistlength: ".count)) else {
            throw .daemon("status has no playlistlength line")
        }
        print("fill_ms \(Double(elapsed) / 1e6)")
        print("playlistlength \(length)")
        guard length == count else { throw .daemon("playlistlength is \(length) after adding \(count) entries") }
    }

    /// `command_list_begin`, `count` times `add`, `command_list_end`, as one piece of text.
    private static func commandList(_ add: String, count: Int) -> String {
        "command_list_begin\n" + String(repeating: add, count: count) + "command_list_end\n"
    }
}
