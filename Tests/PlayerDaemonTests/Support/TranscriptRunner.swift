// Transcripts: conversations with a real playerd, written down line by line.
//
// A transcript file (`Tests/PlayerDaemonTests/Transcripts/*.transcript`) is run against a fresh playerd
// (`--output null`, paced in real time, `--music-dir` = Fixtures) as one test. Each line starts with a
// marker:
//
//     # text                 a comment; blank lines are ignored too
//     > command              send this line (and a newline) as it is written, quotes and escapes included
//     < expected line        the next line received must be exactly this
//     ~ regex                the next line received must match this regular expression, whole
//     ...                    skip any lines until one matches the next `<` or `~` line; it never skips
//                            past the end of an answer (an `OK` or `ACK` line that does not match)
//     = wait 200ms           sleep (`ms` or `s`)
//     = wait-until LINE      send `status` on the current connection every 50 ms until its answer has a
//                            line equal to LINE (`= wait-until ~ REGEX`: a line matching REGEX); at most
//                            10 s, or `= wait-until 20s LINE` for another limit
//     = client 2             switch to connection 2, opening it if needed (connection 1 opens by itself);
//                            the runner checks a new connection's greeting, `OK MPD 0.23.5`
//     = client 2 raw         the same, but the greeting is left for the transcript to expect with `<`
//     = disconnect           close the current connection from our side (without `close`)
//     = closed               the daemon must close the current connection now (only the end of input
//                            may follow)
//     = playerd FLAGS        (before any other step) extra flags for this transcript's daemon
//
// `$FIXTURES` in a `>`, `<` or `~` line stands for the absolute path of the Fixtures folder. Each received
// line is waited for at most 5 s. The daemon keeps its state file in its own temporary directory, so
// every transcript starts from an empty queue, volume 100 and every mode off.
//
// `TranscriptTests` runs every file directly in `Transcripts/`; the files in `Transcripts/regressions/`
// pin down one fixed daemon bug each and are run one by one by `RegressionTests`.
//
// The runner is strict, so that a transcript says everything the daemon sent: an answer must be matched
// to its end (its `OK` or `ACK` line) before the same connection sends again (except while an `idle`
// waits: then `noidle`, or anything else, which ends the connection), nothing may arrive that the
// transcript did not expect, and at the end every connection must be quiet and fully read. Inside
// `command_list_begin` ... `command_list_end` lines are sent without waiting, as the daemon answers only
// at the end; `noidle` expects no answer of its own.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A parsed transcript: its steps with their line numbers.
struct Transcript: CustomStringConvertible {
    /// What a received line must be.
    enum Expectation: CustomStringConvertible {
        /// Exactly this text.
        case exact(String)
        /// A whole match of this regular expression.
        case pattern(String)

        func matches(_ line: String) throws -> Bool {
            switch self {
            case .exact(let text):
                return line == text
            case .pattern(let pattern):
                return try line.wholeMatch(of: Regex(pattern)) != nil
            }
        }

        var description: String {
            switch self {
            case .exact(let text): "\"\(text)\""
            case .pattern(let pattern): "a line matching /\(pattern)/"
            }
        }
    }

    /// One thing the runner does.
    enum Step {
        case send(String)
        case expect(Expectation)
        case skip
        case wait(Duration)
        case waitUntil(Expectation, limit: Duration)
        case client(Int, raw: Bool)
        case disconnect
        case closed
    }

    /// The file's name, for messages.
    let name: String
    /// Extra daemon flags from `= playerd` lines.
    let daemonArguments: [String]
    /// The steps, each with its line number in the file.
    let steps: [(line: Int, step: Step)]

    var description: String { self.name }

    /// Parses a transcript's text; a malformed line throws with its number.
    init(parsing text: String, name: String, fixtures: String = Paths.fixtures) throws {
        self.name = name
        var steps: [(line: Int, step: Step)] = []
        var daemonArguments: [String] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = String(rawLine).replacingOccurrences(of: "$FIXTURES", with: fixtures)
            func fail(_ message: String) -> HarnessError {
                HarnessError("\(name):\(number): \(message): \(line)")
            }
            if line.allSatisfy(\.isWhitespace) || line.hasPrefix("#") {
                continue
            }
            if line == "..." {
                steps.append((number, .skip))
                continue
            }
            guard line.count >= 2, line.dropFirst().first == " " else {
                throw fail("a line must start with a marker and a space")
            }
            let body = String(line.dropFirst(2))
            switch line.first {
            case ">":
                steps.append((number, .send(body)))
            case "<":
                steps.append((number, .expect(.exact(body))))
            case "~":
                try Self.validate(pattern: body, fail)
                steps.append((number, .expect(.pattern(body))))
            case "=":
                let words = body.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                switch words.first {
                case "wait":
                    guard words.count == 2, let duration = Self.duration(words[1]) else {
                        throw fail("expected `= wait 200ms` or `= wait 1s`")
                    }
                    steps.append((number, .wait(duration)))
                case "wait-until":
                    var rest = String(body.dropFirst("wait-until".count)).drop { $0 == " " }
                    var limit: Duration = .seconds(10)
                    if let first = rest.split(separator: " ").first, let duration = Self.duration(String(first)) {
                        limit = duration
                        rest = rest.dropFirst(first.count).drop { $0 == " " }
                    }
                    guard !rest.isEmpty else {
                        throw fail("`= wait-until` needs the status line to wait for")
                    }
                    if rest.hasPrefix("~ ") {
                        let pattern = String(rest.dropFirst(2))
                        try Self.validate(pattern: pattern, fail)
                        steps.append((number, .waitUntil(.pattern(pattern), limit: limit)))
                    } else {
                        steps.append((number, .waitUntil(.exact(String(rest)), limit: limit)))
                    }
                case "client":
                    guard words.count == 2 || (words.count == 3 && words[2] == "raw"), let index = Int(words[1]),
                        index >= 1
                    else {
                        throw fail("expected `= client N` or `= client N raw`")
                    }
                    steps.append((number, .client(index, raw: words.count == 3)))
                case "disconnect" where words.count == 1:
                    steps.append((number, .disconnect))
                case "closed" where words.count == 1:
                    steps.append((number, .closed))
                case "playerd":
                    guard steps.isEmpty else {
                        throw fail("`= playerd` must come before every other step")
                    }
                    daemonArguments += words.dropFirst()
                default:
                    throw fail("unknown directive")
                }
            default:
                throw fail("unknown marker (use #, >, <, ~, ... or =)")
            }
        }
        self.steps = steps
        self.daemonArguments = daemonArguments
    }

    private static func validate(pattern: String, _ fail: (String) -> HarnessError) throws {
        do {
            _ = try Regex(pattern)
        } catch {
            throw fail("bad regular expression (\(error))")
        }
    }

    /// `200ms`, `1.5s`.
    static func duration(_ text: String) -> Duration? {
        if text.hasSuffix("ms"), let value = Double(text.dropLast(2)), value >= 0 {
            return .milliseconds(value)
        }
        if text.hasSuffix("s"), let value = Double(text.dropLast()), value >= 0 {
            return .milliseconds(value * 1000)
        }
        return nil
    }
}

/// A transcript file found in the Transcripts folder: the argument of the parameterized test.
struct TranscriptFile: CustomTestStringConvertible, Sendable {
    let path: String

    var name: String { URL(fileURLWithPath: self.path).lastPathComponent }
    var testDescription: String { self.name }

    /// Every `*.transcript` file directly in `directory`, by name.
    static func all(in directory: String = Paths.transcripts) -> [TranscriptFile] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".transcript") }.sorted().map { TranscriptFile(path: directory + "/" + $0) }
    }

    func load() throws -> Transcript {
        try Transcript(parsing: String(contentsOfFile: self.path, encoding: .utf8), name: self.name)
    }
}

/// Plays a transcript against a running daemon.
final class TranscriptRunner {
    /// One connection and where its conversation stands.
    private final class Connection {
        let client: LineClient
        /// A request was sent whose answer has not been read to its end.
        var awaitingAnswer = false
        /// Inside a command list: lines go out without an answer until `command_list_end`.
        var inList = false
        /// An `idle` waits for its answer: the client may still send (`noidle`, or anything else, which
        /// ends the connection).
        var idling = false

        init(client: LineClient) {
            self.client = client
        }
    }

    private let transcript: Transcript
    private let socketPath: String
    private var connections: [Int: Connection] = [:]
    /// Connections opened at some point (connection 1 opens by itself only the first time).
    private var opened: Set<Int> = []
    private var current = 1
    private var skipping = false
    /// The conversation so far, for failure messages.
    private var history: [String] = []
    private var lineNumber = 0

    init(_ transcript: Transcript, socketPath: String) {
        self.transcript = transcript
        self.socketPath = socketPath
    }

    /// Runs every step; the first mismatch throws with the transcript's line and the conversation.
    func run() throws {
        for (line, step) in self.transcript.steps {
            self.lineNumber = line
            try self.perform(step)
        }
        self.lineNumber = self.transcript.steps.last?.line ?? 0
        try self.finish()
    }

    private func perform(_ step: Transcript.Step) throws {
        if self.skipping {
            guard case .expect = step else {
                throw self.failure("`...` must be followed by a `<` or `~` line")
            }
        }
        switch step {
        case .send(let line):
            let connection = try self.connection()
            if connection.awaitingAnswer && !connection.idling {
                throw self.failure("sending \"\(line)\" before the previous answer was read to its end")
            }
            if try connection.client.hasInput(within: .zero) {
                let extra = try connection.client.readLine(timeout: .seconds(1)) ?? "the end of the connection"
                throw self.failure("unexpected before sending \"\(line)\": \(extra)")
            }
            self.note("> \(line)")
            try connection.client.send(line: line)
            if line == "command_list_begin" || line == "command_list_ok_begin" {
                connection.inList = true
            } else if line == "noidle" && !connection.inList {
                // It ends a waiting idle, whose answer is still due; without one it is not answered.
            } else if line == "command_list_end" || !connection.inList {
                connection.idling = !connection.inList && (line == "idle" || line.hasPrefix("idle "))
                connection.inList = false
                connection.awaitingAnswer = true
            }
        case .expect(let expectation):
            let connection = try self.connection()
            while true {
                guard let received = try connection.client.readLine() else {
                    throw self.failure("expected \(expectation), but the daemon closed the connection")
                }
                self.note("< \(received)")
                let ends = received == "OK" || received.hasPrefix("ACK ")
                if try expectation.matches(received) {
                    if ends {
                        connection.awaitingAnswer = false
                        connection.idling = false
                    }
                    break
                }
                if !self.skipping || ends {
                    throw self.failure("expected \(expectation), received \"\(received)\"")
                }
            }
            self.skipping = false
        case .skip:
            self.skipping = true
        case .wait(let duration):
            self.note("= wait \(duration)")
            usleep(
                UInt32(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000))
        case .waitUntil(let expectation, let limit):
            try self.waitUntil(expectation, limit: limit)
        case .client(let index, let raw):
            self.current = index
            if self.connections[index] == nil {
                let client = raw ? try LineClient(socketPath: self.socketPath) : try LineClient.greeted(self.socketPath)
                self.connections[index] = Connection(client: client)
                self.opened.insert(index)
            }
            self.note("= client \(index)")
        case .disconnect:
            let connection = try self.connection()
            connection.client.close()
            self.connections[self.current] = nil
            self.note("= disconnect")
        case .closed:
            let connection = try self.connection()
            if let line = try connection.client.readLine() {
                throw self.failure("expected the daemon to close the connection, received \"\(line)\"")
            }
            self.connections[self.current] = nil
            self.note("= closed")
        }
    }

    private func waitUntil(_ expectation: Transcript.Expectation, limit: Duration) throws {
        let connection = try self.connection()
        guard !connection.awaitingAnswer && !connection.inList else {
            throw self.failure("`= wait-until` before the previous answer was read to its end")
        }
        let deadline = ContinuousClock.now + limit
        var last: [String] = []
        while ContinuousClock.now < deadline {
            last = try connection.client.command("status")
            if try last.contains(where: { try expectation.matches($0) }) {
                self.note("= wait-until \(expectation): seen")
                return
            }
            usleep(50_000)
        }
        throw self.failure(
            "waited \(limit) for \(expectation) in status; the last status was:\n  "
                + last.joined(separator: "\n  "))
    }

    private func finish() throws {
        if self.skipping {
            throw self.failure("the transcript ends with `...`")
        }
        for (index, connection) in self.connections.sorted(by: { $0.key < $1.key }) {
            self.current = index
            if connection.awaitingAnswer || connection.inList {
                throw self.failure("connection \(index): the transcript ends before its last answer was read")
            }
            if try connection.client.hasInput(within: .milliseconds(100)) {
                let extra = try connection.client.readLine(timeout: .seconds(1)) ?? "the end of the connection"
                throw self.failure("connection \(index): unexpected at the end: \(extra)")
            }
        }
    }

    private func connection() throws -> Connection {
        if let connection = self.connections[self.current] {
            return connection
        }
        guard self.current == 1 && !self.opened.contains(1) else {
            throw self.failure("connection \(self.current) is closed: open it with `= client N`")
        }
        let connection = Connection(client: try LineClient.greeted(self.socketPath))
        self.connections[1] = connection
        self.opened.insert(1)
        return connection
    }

    private func note(_ entry: String) {
        self.history.append(self.connections.count > 1 ? "[\(self.current)] \(entry)" : entry)
    }

    private func failure(_ message: String) -> HarnessError {
        let recent = self.history.suffix(30).map { "    \($0)" }.joined(separator: "\n")
        return HarnessError(
            "\(self.transcript.name):\(self.lineNumber): \(message)\n  the conversation's last lines:\n\(recent)")
    }
}

/// Runs a transcript against a fresh playerd, which must still be running at the end and then stop
/// cleanly.
func runTranscript(_ transcript: Transcript) throws {
    var options = RunningPlayerd.Options()
    var arguments = transcript.daemonArguments[...]
    while let flag = arguments.popFirst() {
        if flag == "--output", let output = arguments.popFirst() {
            options.output = output
        } else {
            options.extraArguments.append(flag)
        }
    }
    try withPlayerd(options) { daemon in
        try TranscriptRunner(transcript, socketPath: daemon.socketPath).run()
    }
}
