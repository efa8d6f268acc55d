// One hostile client of the soak: a thread that, until the deadline, opens connection after connection
// and misbehaves on each in one of a dozen ways, while checking what the daemon must still get right:
// every line that calls for an answer gets one, in order, within the time limit; a line that is not
// MPD ends its connection; nothing else does.

#if canImport(Glibc)
    import Glibc
#endif

/// One hostile client. All its choices come from its own random stream.
struct HostileClient {
    /// The ways a connection is misused, with how often each is chosen.
    enum Behavior: String {
        case chatter, pipeline, commandList, idleStorm, halfLine, dropMidAnswer, flood, crowd, hangUp, slow, garbage
    }

    static let behaviors: [(weight: Int, value: Behavior)] = [
        (20, .chatter), (10, .pipeline), (14, .commandList), (10, .idleStorm), (6, .halfLine), (8, .dropMidAnswer),
        (6, .flood), (1, .crowd), (5, .hangUp), (3, .slow), (4, .garbage),
    ]

    /// The longest the daemon may take to answer a hostile request it owes an answer before that counts
    /// as a stall: far above the observers' limit, so that only a wedged connection trips it.
    static let answerTimeoutSeconds = 10

    /// This client's number, in messages.
    let number: Int
    let socketPath: String
    /// When to stop starting new connections (monotonic nanoseconds).
    let deadline: Int64
    let tally: SoakTally
    let requests: SoakRequests
    var random: SoakRandom
    /// What the client is doing now, in messages.
    private var behavior = Behavior.chatter

    init(number: Int, socketPath: String, deadline: Int64, tally: SoakTally, requests: SoakRequests, seed: UInt64) {
        self.number = number
        self.socketPath = socketPath
        self.deadline = deadline
        self.tally = tally
        self.requests = requests
        self.random = SoakRandom(seed: seed, stream: number)
    }

    /// Misbehaves until the deadline.
    mutating func run() {
        while !self.isOver {
            self.behavior = self.random.weighted(Self.behaviors)
            switch self.behavior {
            case .chatter: self.chatter()
            case .pipeline: self.pipeline()
            case .commandList: self.commandList()
            case .idleStorm: self.idleStorm()
            case .halfLine: self.halfLine()
            case .dropMidAnswer: self.dropMidAnswer()
            case .flood: self.flood()
            case .crowd: self.crowd()
            case .hangUp: self.hangUp()
            case .slow: self.slow()
            case .garbage: self.garbage()
            }
            if self.random.chance(0.7) {
                self.pause(milliseconds: self.random.int(in: 0...50))
            }
        }
    }

    private var isOver: Bool {
        monotonicNanoseconds() >= self.deadline || self.tally.stopEarly.load(ordering: .relaxed)
    }

    // MARK: - Behaviors

    /// Single requests, one at a time, each answer read before the next: valid, mutated, and now and
    /// then a line the daemon hangs up on.
    private mutating func chatter() {
        guard let connection = self.connect() else { return }
        for _ in 0..<self.random.int(in: 1...80) where !self.isOver {
            let line =
                self.random.chance(0.02)
                ? self.requests.hangUp(using: &self.random) : self.requests.any(using: &self.random)
            guard self.send(line.bytes, on: connection) else { return }
            switch line.reply {
            case .answer:
                guard self.expectAnswer(to: line.bytes, on: connection) else { return }
            case .nothing:
                break
            case .hangUp:
                self.expectHangUp(after: line.bytes, on: connection)
                return
            }
            if self.random.chance(0.2) {
                self.pause(milliseconds: self.random.int(in: 0...50))
            }
        }
        guard self.expectInStep(connection) else { return }
        if self.random.chance(0.3) {
            _ = self.send(self.requests.line("close"), on: connection)
            self.expectHangUp(after: Array("close".utf8), on: connection)
        }
    }

    /// Many requests in one write, then their answers, in order.
    private mutating func pipeline() {
        guard let connection = self.connect() else { return }
        let count = self.random.int(in: 2...200)
        var lines: [[UInt8]] = []
        for _ in 0..<count {
            lines.append(self.requests.answered(using: &self.random))
        }
        guard self.send(lines.flatMap { $0 }, lines: count, on: connection) else { return }
        for line in lines {
            guard self.expectAnswer(to: line, on: connection) else { return }
        }
        self.expectInStep(connection)
    }

    /// Command lists: short and long, past the limits, nested, never ended, ended without a begin.
    private mutating func commandList() {
        guard let connection = self.connect() else { return }
        let count = self.random.weighted([
            (50, 1...10), (35, 11...300), (10, 301...3000), (5, 60000...70000),
        ])
        let okMode = self.random.chance(0.5)
        switch self.random.int(in: 0...19) {
        case 0...13:
            let list = self.requests.commandList(
                count: self.random.int(in: count), okMode: okMode, closed: true, using: &self.random)
            let entries = list.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } - 2
            guard self.send(list, lines: entries + 2, on: connection) else { return }
            guard self.expectListAnswer(entries: entries, okMode: okMode, on: connection) else { return }
            self.expectInStep(connection)
        case 14, 15:
            // Begun, never ended: the client goes, with its list half sent or whole, at once or later.
            let list = self.requests.commandList(
                count: self.random.int(in: count), okMode: okMode, closed: false, using: &self.random)
            let cut = self.random.chance(0.5) ? list.count : self.random.int(in: 1...list.count)
            _ = self.send(Array(list.prefix(cut)), lines: count.lowerBound, on: connection)
            self.pause(milliseconds: self.random.int(in: 0...1500))
            if self.random.chance(0.5) { connection.resetOnClose() }
        case 16, 17:
            let line = self.requests.line("command_list_end")
            guard self.send(line, on: connection) else { return }
            guard self.expectAnswer(to: line, on: connection, ack: "ACK [5@0]") else { return }
            self.expectInStep(connection)
        default:
            // A begin inside the list fails at its own index, after what came before it has run.
            let list =
                self.requests.line("command_list_ok_begin") + self.requests.line("ping")
                + self.requests.line("command_list_begin") + self.requests.line("ping")
                + self.requests.line("command_list_end")
            guard self.send(list, lines: 5, on: connection) else { return }
            guard self.expectListAnswer(entries: 3, okMode: true, on: connection) else { return }
            self.expectInStep(connection)
        }
    }

    /// `idle` and `noidle` over and over, sometimes waiting for a real change, sometimes with bad
    /// subsystems, sometimes breaking the rules (another command while idling ends the connection).
    private mutating func idleStorm() {
        guard let connection = self.connect() else { return }
        for _ in 0..<self.random.int(in: 1...100) where !self.isOver {
            let idle = self.requests.line(
                self.random.pick(["idle", "idle", "idle player", "idle mixer playlist", "idle options player mixer"]))
            switch self.random.int(in: 0...19) {
            case 0...11:
                guard self.send(idle, on: connection) else { return }
                if self.random.chance(0.5) { self.pause(milliseconds: self.random.int(in: 0...5)) }
                guard self.send(self.requests.line("noidle"), on: connection) else { return }
                guard self.expectIdleAnswer(on: connection) else { return }
            case 12...14:
                // A real change: the observers set the volume every second, other clients play and seek.
                guard self.send(idle, on: connection) else { return }
                connection.setReceiveTimeout(milliseconds: 3000)
                let answer = connection.readAnswer(keepingLines: true)
                connection.setReceiveTimeout(milliseconds: Self.answerTimeoutSeconds * 1000)
                if case .broken = answer {
                    // Nothing changed in time (or the daemon is stuck): noidle must end it either way.
                    guard self.send(self.requests.line("noidle"), on: connection) else { return }
                    guard self.expectIdleAnswer(on: connection) else { return }
                } else {
                    guard self.checkIdleAnswer(answer) else { return }
                }
            case 15, 16:
                let line = self.requests.line(self.random.pick(["idle bogus", "idle player nothing", "idle \"\""]))
                guard self.send(line, on: connection) else { return }
                guard self.expectAnswer(to: line, on: connection, ack: "ACK [2@0]") else { return }
            case 17:
                guard self.send(self.requests.line("noidle"), on: connection) else { return }
                guard self.send(idle + self.requests.line("noidle") + self.requests.line("noidle"), on: connection)
                else { return }
                guard self.expectIdleAnswer(on: connection) else { return }
            case 18:
                // Anything but noidle while idling ends the connection, as in MPD; nothing wakes `idle database`.
                let line = self.requests.line("idle database") + self.requests.line("status")
                guard self.send(line, on: connection) else { return }
                self.expectHangUp(after: Array("idle database + status".utf8), on: connection)
                return
            default:
                _ = self.send(idle, on: connection)
                if self.random.chance(0.5) { connection.resetOnClose() }
                return
            }
        }
        self.expectInStep(connection)
    }

    /// Part of a line, then the client goes or half-closes its end.
    private mutating func halfLine() {
        guard let connection = self.connect() else { return }
        var bytes: [UInt8]
        switch self.random.int(in: 0...3) {
        case 0:
            let line = self.requests.line(self.requests.valid(using: &self.random))
            bytes = Array(line.prefix(self.random.int(in: 1...max(1, line.count - 1))))
        case 1:
            bytes = Array(repeating: UInt8(ascii: "a"), count: self.random.int(in: 1000...60000))
        case 2:
            bytes = Array(repeating: UInt8(ascii: "b"), count: self.random.int(in: 65537...300_000))
        default:
            // Whole requests, then the end of the input: the daemon answers them, then closes.
            bytes = self.requests.line("status") + self.requests.line("ping") + Array("stat".utf8)
        }
        guard self.send(bytes, on: connection) else { return }
        if self.random.chance(0.5) {
            connection.shutdownWrite()
            if !connection.waitForClose(milliseconds: Self.answerTimeoutSeconds * 1000) {
                self.problem("half-closed after \(bytes.count) bytes, but the daemon did not close within 10 s")
            }
        } else if self.random.chance(0.5) {
            connection.resetOnClose()
        }
    }

    /// Requests with long answers, and the client gone before they are read (or after a few bytes).
    private mutating func dropMidAnswer() {
        guard let connection = self.connect() else { return }
        var bytes: [UInt8] = []
        switch self.random.int(in: 0...4) {
        case 0: bytes = Array(String(repeating: "playlistinfo\n", count: self.random.int(in: 1...50)).utf8)
        // A walk of the whole file system whose client is gone before it ends: the walk must stop.
        case 4: bytes = Array("add \"/\"\n".utf8)
        case 1: bytes = Array(String(repeating: "commands\n", count: self.random.int(in: 1...200)).utf8)
        case 2:
            bytes = Array(
                ("command_list_ok_begin\n" + String(repeating: "playlistinfo\nstatus\n", count: 200)
                    + "command_list_end\n")
                    .utf8)
        default: bytes = Array(String(repeating: "status\n", count: self.random.int(in: 1...500)).utf8)
        }
        guard self.send(bytes, lines: bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }, on: connection) else { return }
        if self.random.chance(0.5) {
            connection.setReceiveTimeout(milliseconds: 500)
            _ = connection.discard(upTo: self.random.int(in: 1...100_000))
        }
        if self.random.chance(0.5) { connection.resetOnClose() }
    }

    /// Requests as fast as the daemon takes them, answers never read, until the daemon stops reading;
    /// then the client stays a while and goes.
    private mutating func flood() {
        guard let connection = self.connect() else { return }
        connection.setSendTimeout(milliseconds: 1000)
        let limit = self.random.int(in: 256 * 1024...4 * 1024 * 1024)
        var total = 0
        while total < limit && !self.isOver {
            var batch: [UInt8] = []
            let lines = 32
            for _ in 0..<lines {
                batch +=
                    self.random.chance(0.5)
                    ? self.requests.line(self.random.pick(["playlistinfo", "commands", "status", "currentsong"]))
                    : self.requests.answered(using: &self.random)
            }
            switch connection.write(batch) {
            case .sent:
                self.tally.sent(bytes: batch.count, lines: lines)
                total += batch.count
            case .blocked(let sent):
                self.tally.sent(bytes: sent, lines: lines)
                self.tally.pushBacks.add(1, ordering: .relaxed)
                total = limit
            case .failed(let error):
                self.problem("the daemon hung up on a client that sends and does not read: \(error)")
                return
            }
        }
        self.pause(milliseconds: self.random.int(in: 0...3000))
        if self.random.chance(0.5) { connection.resetOnClose() }
    }

    /// Many connections at once, past the daemon's limit: the ones over it must be refused cleanly.
    private mutating func crowd() {
        var connections: [Connection] = []
        for _ in 0..<self.random.int(in: 8...24) {
            if let connection = self.connect() { connections.append(connection) }
        }
        self.pause(milliseconds: self.random.int(in: 200...1000))
        for connection in connections where self.random.chance(0.5) {
            let line = self.requests.line("status")
            guard self.send(line, on: connection), self.expectAnswer(to: line, on: connection) else { continue }
        }
    }

    /// A few good requests, then a line that is not MPD: the answers, then the end of the connection.
    private mutating func hangUp() {
        guard let connection = self.connect() else { return }
        for _ in 0..<self.random.int(in: 0...3) {
            let line = self.requests.line(self.requests.valid(using: &self.random))
            guard self.send(line, on: connection), self.expectAnswer(to: line, on: connection) else { return }
        }
        let line = self.requests.hangUp(using: &self.random)
        guard self.send(line.bytes, on: connection) else { return }
        self.expectHangUp(after: line.bytes, on: connection)
    }

    /// One valid request a byte at a time.
    private mutating func slow() {
        guard let connection = self.connect() else { return }
        var line = self.requests.line(self.requests.valid(using: &self.random))
        if self.random.chance(0.3) { line.insert(0x0D, at: line.count - 1) }
        for (index, byte) in line.enumerated() {
            guard self.send([byte], lines: index == line.count - 1 ? 1 : 0, on: connection) else { return }
            self.pause(milliseconds: self.random.int(in: 1...30))
        }
        guard self.expectAnswer(to: line, on: connection) else { return }
        self.expectInStep(connection)
    }

    /// Random bytes, newlines and NULs among them; whatever the daemon makes of them, it must live on.
    private mutating func garbage() {
        guard let connection = self.connect() else { return }
        var bytes: [UInt8] = []
        for _ in 0..<self.random.int(in: 1...32768) {
            bytes.append(self.random.chance(0.02) ? 0x0A : UInt8(truncatingIfNeeded: self.random.next()))
        }
        _ = connection.write(bytes)
        self.tally.sent(bytes: bytes.count, lines: bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) })
        connection.setReceiveTimeout(milliseconds: 300)
        _ = connection.discard(upTo: 1 << 20)
    }

    // MARK: - Checks

    /// Opens a connection and reads the greeting. A daemon at its client limit must refuse with its ACK
    /// and close; either way, nil means no greeted connection.
    private func connect() -> Connection? {
        self.tally.connections.add(1, ordering: .relaxed)
        let connection: Connection
        do throws(SystemCallError) {
            connection = try Connection(path: self.socketPath, timeoutSeconds: Self.answerTimeoutSeconds)
        } catch {
            self.problem("cannot connect: \(error)")
            return nil
        }
        switch connection.readAnswer() {
        case .ok(_, let line) where line.hasPrefix("OK MPD "):
            return connection
        case .ack(let line) where line.contains("too many clients"):
            self.tally.refusals.add(1, ordering: .relaxed)
            if !connection.waitForClose(milliseconds: Self.answerTimeoutSeconds * 1000) {
                self.problem("refused (\(line)) but the connection stayed open")
            }
            // As a client would, wait a little before the next try.
            usleep(50_000)
        case .ok(_, let line), .ack(let line):
            self.problem("'\(line)' instead of the greeting")
        case .broken(let reason):
            self.problem("no greeting: \(reason)")
        }
        return nil
    }

    /// Sends `bytes`, `lines` request lines; notes a problem and returns false if the connection failed.
    @discardableResult
    private func send(_ bytes: [UInt8], lines: Int = 1, on connection: Connection) -> Bool {
        switch connection.write(bytes) {
        case .sent:
            self.tally.sent(bytes: bytes.count, lines: lines)
            return true
        case .blocked(let sent):
            self.tally.sent(bytes: sent, lines: lines)
            self.problem("the daemon took no bytes for 10 s (\(sent) of \(bytes.count) sent: \(Self.show(bytes)))")
            return false
        case .failed(let error):
            self.problem("sending \(Self.show(bytes)) failed: \(error)")
            return false
        }
    }

    /// Reads the answer `line` calls for; with `ack`, it must be an ACK line starting so.
    @discardableResult
    private func expectAnswer(to line: [UInt8], on connection: Connection, ack: String? = nil) -> Bool {
        let answer = connection.readAnswer(keepingLines: true)
        switch answer {
        case .ok(let lines, _) where ack == nil:
            // Every line of an answer is `key: value`.
            if let stray = lines.first(where: { !Self.isField($0) }) {
                self.problem("\(Self.show(line)) was answered with the line '\(stray)'")
                return false
            }
        case .ack(let text) where ack.map { text.hasPrefix($0) } ?? true:
            break
        case .ok(_, let text), .ack(let text):
            self.problem("\(Self.show(line)) was answered '\(text)', not '\(ack ?? "")...'")
            return false
        case .broken(let reason):
            self.problem("\(Self.show(line)) got no answer: \(reason)")
            return false
        }
        self.tally.answers.add(1, ordering: .relaxed)
        return true
    }

    /// Reads a command list's answer: in `okMode`, one `list_OK` per command that ran, so that an ACK
    /// at index N comes after exactly N of them and `OK` after all of them. A list refused as too
    /// long ran nothing.
    private func expectListAnswer(entries: Int, okMode: Bool, on connection: Connection) -> Bool {
        let answer = connection.readAnswer(keepingLines: true)
        let what = "a command list of \(entries) commands (\(okMode ? "ok" : "plain"))"
        switch answer {
        case .ok(let lines, _):
            let listOKs = lines.reduce(0) { $0 + ($1 == "list_OK" ? 1 : 0) }
            if entries > 65536 {
                self.problem("\(what) ran, past the 65,536-command limit")
                return false
            }
            if okMode && listOKs != entries {
                self.problem("\(what) ended in OK after \(listOKs) list_OK lines")
                return false
            }
        case .ack(let text):
            let listOKs = connection.linesBeforeAck.reduce(0) { $0 + ($1 == "list_OK" ? 1 : 0) }
            guard okMode, !text.contains("command list too long") else { break }
            let index = Self.ackIndex(text)
            if index != listOKs {
                self.problem("\(what) failed with '\(text)' after \(listOKs) list_OK lines")
                return false
            }
        case .broken(let reason):
            self.problem("\(what) got no answer: \(reason)")
            return false
        }
        self.tally.answers.add(1, ordering: .relaxed)
        return true
    }

    /// Reads the answer that ends an idle: `changed: SUBSYSTEM` lines, then `OK`.
    private func expectIdleAnswer(on connection: Connection) -> Bool {
        self.checkIdleAnswer(connection.readAnswer(keepingLines: true))
    }

    private func checkIdleAnswer(_ answer: Answer) -> Bool {
        switch answer {
        case .ok(let lines, _):
            if let stray = lines.first(where: { !$0.hasPrefix("changed: ") }) {
                self.problem("idle was answered with '\(stray)'")
                return false
            }
            self.tally.answers.add(1, ordering: .relaxed)
            return true
        case .ack(let text):
            self.problem("idle was answered '\(text)'")
            return false
        case .broken(let reason):
            self.problem("idle and noidle got no answer: \(reason)")
            return false
        }
    }

    /// The daemon must close the connection after `line` (an ACK may come first).
    private func expectHangUp(after line: [UInt8], on connection: Connection) {
        if !connection.waitForClose(milliseconds: Self.answerTimeoutSeconds * 1000) {
            self.problem("\(Self.show(line)) should end the connection, which is still open after 10 s")
        }
    }

    /// `ping` must be answered with a bare `OK`: nothing from an earlier request is left unread.
    @discardableResult
    private func expectInStep(_ connection: Connection) -> Bool {
        guard self.send(self.requests.line("ping"), on: connection) else { return false }
        switch connection.readAnswer(keepingLines: true) {
        case .ok(let lines, _) where lines.isEmpty:
            return true
        case .ok(let lines, let last):
            self.problem("ping was answered with \(lines.count) lines before \(last): '\(lines[0])' (out of step)")
        case .ack(let text):
            self.problem("ping was answered '\(text)' (out of step)")
        case .broken(let reason):
            self.problem("ping got no answer: \(reason)")
        }
        return false
    }

    // MARK: - Helpers

    private func problem(_ message: String) {
        self.tally.problem("client \(self.number), \(self.behavior.rawValue): \(message)")
    }

    private func pause(milliseconds: Int) {
        usleep(UInt32(milliseconds) * 1000)
    }

    /// Whether `line` reads `key: value`, with a key of letters, digits, `_` and `-`.
    static func isField(_ line: String) -> Bool {
        guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")), colon != line.utf8.startIndex else {
            return false
        }
        let key = line.utf8[..<colon]
        let rest = line.utf8[colon...].dropFirst()
        return rest.first == UInt8(ascii: " ")
            && key.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// The N of `ACK [CODE@N] ...`, or -1.
    static func ackIndex(_ line: String) -> Int {
        guard let at = line.firstIndex(of: "@"), let close = line.firstIndex(of: "]"), at < close else { return -1 }
        return Int(line[line.index(after: at)..<close]) ?? -1
    }

    /// The start of a request for messages: printable ASCII, the rest escaped, at most 60 bytes.
    static func show(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes.prefix(60) {
            if byte >= 0x20 && byte < 0x7F {
                text.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                text += byte == 0x0A ? "\\n" : "\\x" + String(byte, radix: 16)
            }
        }
        return bytes.count > 60 ? "'\(text)...' (\(bytes.count) bytes)" : "'\(text)'"
    }
}
