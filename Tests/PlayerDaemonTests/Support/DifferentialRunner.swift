import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// The differential suite's machinery: the request sequences (Differential/*.txt), a daemon pair that
// runs them, the normalising of volatile values, and the deliberate differences MPD-DIFFERENCES.md
// lists for the suite.

// MARK: - Sequences

/// One sequence of a file in `Differential/`: requests sent in order from a known state, each on a
/// fresh connection (`[2] request` sends on a second one).
///
/// The format, one request per line and a blank line between sequences:
/// - `# text` is a comment; `!sleep MS` waits.
/// - `{id N}` stands for the song id at queue position N (ids differ between the daemons), `{v N}` for
///   the queue's version N changes after the sequence's start (versions go on from sequence to
///   sequence); `playlist:` in answers counts from that start too (`+N`).
/// - `command_list_begin` (or `_ok_begin`) ... `command_list_end` is sent whole: one answer.
/// - `idle ...` is sent and left waiting; its answer is read at the connection's next `noidle` (sent
///   only if nothing came within half a second) or before its next request (within 2 s, else
///   `noidle` is sent), or at the end of the sequence.
struct DifferentialSequence: Sendable {
    let area: String
    let file: String
    let line: Int
    let steps: [(line: Int, text: String)]

    var name: String { "\(self.file):\(self.line)" }

    /// Whether the sequence sends `kill`, which ends both daemons: such sequences run last, and their
    /// pair runs nothing after them.
    var kills: Bool { self.steps.contains { $0.text == "kill" || $0.text.hasPrefix("kill ") } }

    static var directory: String { Paths.testsDirectory + "/Differential" }

    /// Every sequence of every file, files in name order (`PLAYERD_DIFF_AREAS=a,b` keeps those areas).
    static func all() throws -> [DifferentialSequence] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".txt") }
            .sorted()
        let only = ProcessInfo.processInfo.environment["PLAYERD_DIFF_AREAS"]?.split(separator: ",").map(String.init)
        var sequences: [DifferentialSequence] = []
        for name in names {
            let area = String(name.dropLast(4))
            if let only, !only.contains(area) { continue }
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            var steps: [(line: Int, text: String)] = []
            var start = 0
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(raw)
                if line.trimmingCharacters(in: .whitespaces).isEmpty {
                    if !steps.isEmpty {
                        sequences.append(DifferentialSequence(area: area, file: name, line: start, steps: steps))
                    }
                    steps = []
                    continue
                }
                if line.hasPrefix("#") { continue }
                if steps.isEmpty { start = index + 1 }
                steps.append((index + 1, line))
            }
            if !steps.isEmpty {
                sequences.append(DifferentialSequence(area: area, file: name, line: start, steps: steps))
            }
        }
        return sequences.filter { !$0.kills } + sequences.filter(\.kills)
    }
}

/// What one daemon answered to one request of a sequence (a whole command list is one request).
struct DifferentialAnswer: Sendable {
    let line: Int
    let request: String
    let lines: [String]
}

// MARK: - One daemon

/// One daemon of the pair, as the runner drives it: its socket, its playlist directory, and the
/// connections of the sequence being run.
final class DifferentialDaemon {
    let name: String
    let socketPath: String
    let playlistDirectory: String
    private var connections: [Int: LineClient] = [:]
    private var pendingIdle: [Int: (line: Int, request: String)] = [:]
    /// A command list being gathered: its first line, the requests to send, and as written.
    private var commandList: [Int: (line: Int, requests: [String], written: [String])] = [:]
    private var answers: [DifferentialAnswer] = []
    /// The queue's version when the sequence started.
    private var baseVersion = 0

    init(name: String, socketPath: String, playlistDirectory: String) {
        self.name = name
        self.socketPath = socketPath
        self.playlistDirectory = playlistDirectory
    }

    /// Requests that bring the daemon back to where every sequence starts; their answers are not
    /// compared (a daemon may lack a command).
    static let resetRequests = [
        "stop", "clear", "clearerror", "repeat 0", "random 0", "single 0", "consume 0", "crossfade 0",
        "mixrampdb 0", "mixrampdelay nan", "replay_gain_mode off", "enableoutput 0", "setvol 100",
        "moveoutput null", "delpartition room2", "delpartition room3",
        "sticker delete song \"Long/01 Long One.mp3\"", "sticker delete song \"Long/02 Long Two.mp3\"",
        "sticker delete song \"ant.mp3\"", "sticker delete song \"Sigur Rós/Takk/01 Glósóli.mp3\"",
    ]

    /// Runs `sequence` from the known state and returns the answers.
    func run(_ sequence: DifferentialSequence) throws -> [DifferentialAnswer] {
        try self.reset()
        self.answers = []
        defer {
            self.connections = [:]
            self.pendingIdle = [:]
            self.commandList = [:]
        }
        for step in sequence.steps {
            try self.perform(step.text, line: step.line)
        }
        for connection in self.pendingIdle.keys.sorted() {
            try self.finishIdle(on: connection, sendingNoidleAfter: .seconds(2))
        }
        return self.answers
    }

    private func reset() throws {
        let admin = try self.connect()
        for request in Self.resetRequests {
            _ = try admin.command(request)
        }
        self.baseVersion = try admin.fields("status")["playlist"].flatMap { Int($0) } ?? 0
        try DifferentialLibrary.writePlaylists(into: self.playlistDirectory)
        admin.close()
    }

    private func connect() throws -> LineClient {
        let client = try LineClient(socketPath: self.socketPath)
        guard let greeting = try client.readLine(), greeting.hasPrefix("OK MPD ") else {
            throw HarnessError("\(self.name) did not greet")
        }
        return client
    }

    private func connection(_ index: Int) throws -> LineClient {
        if let client = self.connections[index] {
            return client
        }
        let client = try self.connect()
        self.connections[index] = client
        return client
    }

    private func perform(_ text: String, line: Int) throws {
        var request = text
        var index = 1
        if request.hasPrefix("["), let close = request.firstIndex(of: "]"),
            let number = Int(request[request.index(after: request.startIndex)..<close])
        {
            index = number
            request = String(request[request.index(after: close)...]).trimmingCharacters(in: .whitespaces)
        }
        if request.hasPrefix("!sleep ") {
            usleep(UInt32(Int(request.dropFirst(7)) ?? 0) * 1000)
            return
        }
        // Answers are labelled with the request as written (ids and versions differ from run to run).
        let written = request
        request = try self.substitutingIDs(in: request)
        if var list = self.commandList[index] {
            list.requests.append(request)
            list.written.append(written)
            self.commandList[index] = list
            if request == "command_list_end" {
                self.commandList[index] = nil
                let client = try self.connection(index)
                try client.send(bytes: Array(list.requests.map { $0 + "\n" }.joined().utf8))
                self.record(line: list.line, list.written.joined(separator: " ; "), try self.readAnswer(index))
            }
            return
        }
        if request.hasPrefix("command_list_begin") || request.hasPrefix("command_list_ok_begin") {
            if self.pendingIdle[index] != nil {
                try self.finishIdle(on: index, sendingNoidleAfter: .seconds(2))
            }
            self.commandList[index] = (line, [request], [written])
            return
        }
        if request == "noidle", self.pendingIdle[index] != nil {
            try self.finishIdle(on: index, sendingNoidleAfter: .milliseconds(500))
            return
        }
        if self.pendingIdle[index] != nil {
            try self.finishIdle(on: index, sendingNoidleAfter: .seconds(2))
        }
        let client = try self.connection(index)
        try client.send(line: request)
        if request == "idle" || request.hasPrefix("idle ") {
            self.pendingIdle[index] = (line, written)
            return
        }
        self.record(line: line, written, try self.readAnswer(index))
    }

    /// Reads the answer of a waiting `idle`: what comes within `wait`, else what `noidle` brings.
    private func finishIdle(on index: Int, sendingNoidleAfter wait: Duration) throws {
        guard let idle = self.pendingIdle.removeValue(forKey: index), let client = self.connections[index] else {
            return
        }
        if try !client.hasInput(within: wait) {
            try client.send(line: "noidle")
        }
        self.record(line: idle.line, idle.request, try self.readAnswer(index))
    }

    private func record(line: Int, _ request: String, _ lines: [String]) {
        // The start is the default partition's queue version; another partition's queue counts from its
        // own creation (1 in both daemons), so its version is compared as it is.
        let inOtherPartition = lines.contains { $0.hasPrefix("partition: ") && $0 != "partition: default" }
        let relative = lines.map { line in
            guard !inOtherPartition, line.hasPrefix("playlist: "), let version = Int(line.dropFirst(10)) else {
                return line
            }
            return "playlist: +\(version - self.baseVersion)"
        }
        self.answers.append(DifferentialAnswer(line: line, request: request, lines: relative))
    }

    /// The answer's lines up to `OK` or `ACK`; a binary chunk as one line naming its size and bytes'
    /// checksum; `<closed>` when the daemon hangs up, `<no answer>` when it says nothing for 5 s (the
    /// connection is then dropped).
    private func readAnswer(_ index: Int) throws -> [String] {
        guard let client = self.connections[index] else { return ["<not connected>"] }
        var lines: [String] = []
        do {
            while true {
                guard let line = try client.readLine() else {
                    self.connections[index] = nil
                    return lines + ["<closed>"]
                }
                if line.hasPrefix("binary: "), let count = Int(line.dropFirst(8)) {
                    let bytes = try client.readBytes(count + 1)
                    let sum = bytes.dropLast().reduce(UInt32(0)) { ($0 &* 31) &+ UInt32($1) }
                    lines.append("\(line) <checksum \(sum)>")
                    continue
                }
                lines.append(line)
                if line == "OK" || line.hasPrefix("ACK ") {
                    return lines
                }
            }
        } catch {
            self.connections[index] = nil
            return lines + ["<no answer>"]
        }
    }

    /// `{v N}` replaced by the version N after the start, `{id N}` by the id of the song at position N
    /// (a fresh connection asks), or by 99999 when there is none.
    private func substitutingIDs(in request: String) throws -> String {
        var text = request
        while let open = text.range(of: "{v "), let close = text[open.upperBound...].firstIndex(of: "}") {
            let offset = Int(text[open.upperBound..<close]) ?? 0
            text.replaceSubrange(open.lowerBound...close, with: String(self.baseVersion + offset))
        }
        while let open = text.range(of: "{id "), let close = text[open.upperBound...].firstIndex(of: "}") {
            let position = String(text[open.upperBound..<close])
            let client = try self.connect()
            let id = try client.fields("playlistinfo \(position)")["Id"] ?? "99999"
            client.close()
            text.replaceSubrange(open.lowerBound...close, with: id)
        }
        return text
    }
}

// MARK: - Normalising and comparing

/// What the suite does to both answers before comparing them: volatile values are masked.
enum DifferentialNormalizer {
    /// Keys whose values change from run to run or between the daemons by their nature: times,
    /// uptime, update jobs, bitrate, and song ids (playerd numbers them from 1, mpd from 0: listed in
    /// MPD-DIFFERENCES.md).
    static let volatileKeys: Set<String> = [
        "time", "elapsed", "uptime", "playtime", "db_update", "updating_db", "bitrate", "Id", "songid",
        "nextsongid", "cpos",
    ]

    static func key(_ line: String) -> String? {
        line.range(of: ": ").map { String(line[..<$0.lowerBound]) }
    }

    static func normalize(_ lines: [String]) -> [String] {
        lines.map { line in
            guard let key = Self.key(line), Self.volatileKeys.contains(key) else { return line }
            return key + ": <volatile>"
        }
    }
}

/// The suite's rows of MPD-DIFFERENCES.md (its section "The differential suite"): each names the
/// requests it covers (patterns with `*`), and what may differ there: `key NAME` (that key's values),
/// `extra LINE` (a line only playerd's answer has), `order` (the entries' order: compared as a set),
/// `escape` (a byte that is not UTF-8), or `answer` (anything).
struct DifferentialDeliberate: Sendable {
    enum Allowance: Sendable, Hashable {
        case key(String)
        /// A line only playerd's answer has.
        case extra(String)
        case order
        case escape
        case answer
    }

    struct Row: Sendable {
        let line: Int
        let patterns: [String]
        let allowances: [Allowance]

        func covers(_ request: String) -> Bool {
            self.patterns.contains { wildcardMatch($0, request) }
        }
    }

    let rows: [Row]

    static let heading = "## The differential suite"

    static func load() throws -> DifferentialDeliberate {
        let path = Paths.testsDirectory + "/../../MPD-DIFFERENCES.md"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var rows: [Row] = []
        var inSection = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("## ") {
                inSection = line == Self.heading
                continue
            }
            guard inSection, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4 else {
                throw HarnessError("MPD-DIFFERENCES.md line \(index + 1): a row of the differential suite needs cells")
            }
            let patterns = Self.codeSpans(cells[1])
            var allowances: [Allowance] = []
            for span in Self.codeSpans(cells[2]) {
                if span == "order" {
                    allowances.append(.order)
                } else if span == "escape" {
                    allowances.append(.escape)
                } else if span == "answer" {
                    allowances.append(.answer)
                } else if span.hasPrefix("key ") {
                    allowances.append(.key(String(span.dropFirst(4))))
                } else if span.hasPrefix("extra ") {
                    allowances.append(.extra(String(span.dropFirst(6))))
                } else {
                    throw HarnessError("MPD-DIFFERENCES.md line \(index + 1): unknown allowance `\(span)`")
                }
            }
            guard !patterns.isEmpty, !allowances.isEmpty else {
                throw HarnessError("MPD-DIFFERENCES.md line \(index + 1): no requests or no allowances")
            }
            rows.append(Row(line: index + 1, patterns: patterns, allowances: allowances))
        }
        guard !rows.isEmpty else {
            throw HarnessError("MPD-DIFFERENCES.md has no section \"\(Self.heading)\" with rows")
        }
        return DifferentialDeliberate(rows: rows)
    }

    /// The texts between backticks in `cell`.
    private static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    /// Whether the two (normalised) answers agree once the rows covering `request` are applied, and
    /// which rows it took.
    func agree(_ request: String, mpd: [String], playerd: [String]) -> (agree: Bool, rows: [Int]) {
        let covering = self.rows.filter { $0.covers(request) }
        var mpd = mpd
        var playerd = playerd
        var used: [Int] = []
        for row in covering {
            var applied = false
            for allowance in row.allowances {
                switch allowance {
                case .answer:
                    if mpd != playerd { applied = true }
                    mpd = []
                    playerd = []
                case .key(let name):
                    let masked = { (lines: [String]) in
                        lines.map { DifferentialNormalizer.key($0) == name ? name + ": <deliberate>" : $0 }
                    }
                    if masked(mpd) != mpd || masked(playerd) != playerd {
                        let before = mpd == playerd
                        mpd = masked(mpd)
                        playerd = masked(playerd)
                        if !before && mpd == playerd { applied = true }
                    }
                case .extra(let line):
                    if playerd.contains(line) && !mpd.contains(line) {
                        let before = mpd == playerd
                        playerd.removeAll { $0 == line }
                        if !before && mpd == playerd { applied = true }
                    }
                case .escape:
                    let unescaped = playerd.map(Self.unescaped)
                    if unescaped != playerd {
                        let before = mpd == playerd
                        playerd = unescaped
                        if !before && mpd == playerd { applied = true }
                    }
                case .order:
                    let sortedMPD = Self.entries(mpd).sorted { $0.joined(separator: "\n") < $1.joined(separator: "\n") }
                    let sortedPlayerd = Self.entries(playerd).sorted {
                        $0.joined(separator: "\n") < $1.joined(separator: "\n")
                    }
                    if mpd != playerd, sortedMPD == sortedPlayerd { applied = true }
                    mpd = sortedMPD.flatMap { $0 }
                    playerd = sortedPlayerd.flatMap { $0 }
                }
            }
            if applied { used.append(row.line) }
        }
        return (mpd == playerd, used)
    }

    /// `line` with each `\\xHH` escape as the replacement character mpd's raw byte decodes to here.
    private static func unescaped(_ line: String) -> String {
        guard line.contains("\\x") else { return line }
        var result = ""
        var rest = Substring(line)
        while let range = rest.range(of: "\\x") {
            let hex = rest[range.upperBound...].prefix(2)
            result += rest[..<range.lowerBound]
            if hex.count == 2, UInt8(hex, radix: 16) != nil {
                result += "\u{FFFD}"
                rest = rest[hex.endIndex...]
            } else {
                result += "\\x"
                rest = rest[range.upperBound...]
            }
        }
        return result + rest
    }

    /// An answer cut into entries: a new one starts at every `file`, `directory`, `playlist`, or at
    /// the first key of the answer seen again.
    private static func entries(_ lines: [String]) -> [[String]] {
        var entries: [[String]] = []
        var first: String?
        for line in lines {
            let key = DifferentialNormalizer.key(line)
            let starts = ["file", "directory", "playlist"].contains(key ?? "") || (key != nil && key == first)
            if entries.isEmpty || starts || key == nil {
                entries.append([line])
                if first == nil { first = key }
            } else {
                entries[entries.count - 1].append(line)
            }
        }
        return entries
    }
}

/// `pattern` matches all of `text`, `*` standing for any run of characters.
func wildcardMatch(_ pattern: String, _ text: String) -> Bool {
    let parts = pattern.components(separatedBy: "*")
    guard parts.count > 1 else { return pattern == text }
    guard text.hasPrefix(parts[0]), text.hasSuffix(parts[parts.count - 1]),
        text.count >= parts[0].count + parts[parts.count - 1].count
    else { return false }
    var rest = Substring(text.dropFirst(parts[0].count).dropLast(parts[parts.count - 1].count))
    for part in parts.dropFirst().dropLast() where !part.isEmpty {
        guard let found = rest.range(of: part) else { return false }
        rest = rest[found.upperBound...]
    }
    return true
}

// MARK: - The pair

/// mpd and playerd on the differential library, each with its own playlist directory.
final class DifferentialPair {
    let mpd: RunningMPD
    let playerd: RunningPlayerd
    let mpdSide: DifferentialDaemon
    let playerdSide: DifferentialDaemon

    init(music: String) throws {
        self.mpd = try RunningMPD(music: music)
        var options = RunningPlayerd.Options()
        options.output = "null"
        options.library = true
        options.extraArguments = ["--music-dir", music]
        self.playerd = try RunningPlayerd(options, readiness: .seconds(20))
        try updateDatabase(try self.playerd.connect())
        self.mpdSide = DifferentialDaemon(
            name: "mpd", socketPath: self.mpd.socketPath, playlistDirectory: self.mpd.directory + "/playlists")
        self.playerdSide = DifferentialDaemon(
            name: "playerd", socketPath: self.playerd.socketPath,
            playlistDirectory: self.playerd.directory + "/playlists")
    }
}

/// The sequences still to run, shared by the pairs.
final class DifferentialQueue: Sendable {
    private let remaining: Mutex<[DifferentialSequence]>

    init(_ sequences: [DifferentialSequence]) {
        self.remaining = Mutex(Array(sequences.reversed()))
    }

    func next() -> DifferentialSequence? {
        self.remaining.withLock { $0.popLast() }
    }
}

/// Runs `body` on a thread of its own: sequences block in reads and waits.
func onDifferentialThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
