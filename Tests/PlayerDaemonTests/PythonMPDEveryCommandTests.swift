import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The music of the every-command run: the library tree of the library tests (accents, CJK, a
/// compilation, a cover) without its file whose name is not UTF-8 (mpd leaves it out, playerd lists it
/// escaped: MPD-DIFFERENCES.md), and at its root four tagged songs of 20 s (`song1.mp3` ... `Title N`,
/// `Artist N % 2`, `Album`), long enough that none ends while the script plays and pauses them.
enum EveryCommandMusic {
    static func make() throws -> String {
        let parent = try Paths.makeTemporaryDirectory()
        let music = parent + "/music"
        do {
            try LibraryTree.copy(into: music)
            let latin1 = (Array(music.utf8) + [UInt8(ascii: "/")] + LibraryTree.latin1NameBytes + [0]).map {
                CChar(bitPattern: $0)
            }
            guard unlink(latin1) == 0 else {
                throw HarnessError.system("unlink the Latin-1 name", errno)
            }
            let encoders = try (1...PairedMusic.songCount).map { number in
                let command =
                    "/usr/bin/sox -q -n -r 44100 -c 2 -b 16 -t wav - synth 20 sine \(300 + 100 * number) vol 0.3"
                    + " | /usr/bin/lame --quiet -b 32 --resample 44.1 --tt 'Title \(number)'"
                    + " --ta 'Artist \(number % 2)' --tl Album --tn \(number) - '\(music)/song\(number).mp3'"
                return try BackgroundProgram("/bin/bash", ["-o", "pipefail", "-c", command])
            }
            for encoder in encoders {
                let result = try encoder.finish(within: .seconds(60))
                guard result.status == 0 else { throw HarnessError("making the test songs: \(result)") }
            }
            return music
        } catch {
            try? FileManager.default.removeItem(atPath: parent)
            throw error
        }
    }

    static func remove(_ music: String) {
        try? FileManager.default.removeItem(atPath: (music as NSString).deletingLastPathComponent)
    }
}

/// python-mpd2 (Debian's python3-mpd 3.0.5) calls every command it knows — the names its client
/// registers, found by introspection in `python/mpd2_every_command.py` — against mpd 0.23.12 and
/// playerd on the same library, in the same order from the same state; what python-mpd2 makes of each
/// answer (a value, or the exception with mpd's ACK code and text) must be the same, once the volatile
/// values (times, uptime, song ids, the queue's version counted from its first value) are left out.
/// A difference fails unless MPD-DIFFERENCES.md names the call in its python-mpd2 table.
/// `PLAYERD_MPD2_VERBOSE=1` prints a table per command.
@Suite(
    "python-mpd2: every command against mpd", .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: Paths.python)
            && FileManager.default.isExecutableFile(atPath: RunningMPD.executable),
        "needs /usr/bin/python3 with python3-mpd, and Debian's mpd"))
struct PythonMPDEveryCommandTests {
    /// One line of the script's output.
    struct Call {
        let step: Int
        let command: String
        let call: String
        /// One of the script's own steps (a command list, idle woken by another connection ...).
        let helper: Bool
        /// The result as the script printed it (canonical JSON: sorted keys).
        let result: String
    }

    /// The script's lines, and the commands python-mpd2 knows that it did not call.
    static func parse(_ output: String) throws -> (calls: [Call], uncalled: [String]) {
        var calls: [Call] = []
        var uncalled: [String]?
        for line in output.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let fields = object as? [String: Any] else {
                throw HarnessError("not a JSON object: \(line)")
            }
            if let names = fields["uncalled"] as? [String] {
                uncalled = names
                continue
            }
            guard let step = fields["step"] as? Int, let command = fields["command"] as? String,
                let call = fields["call"] as? String, let result = fields["result"]
            else {
                throw HarnessError("a line without step, command, call and result: \(line)")
            }
            let canonical = try JSONSerialization.data(
                withJSONObject: ["r": result], options: [.sortedKeys, .fragmentsAllowed])
            calls.append(
                Call(
                    step: step, command: command, call: call, helper: fields["helper"] as? Bool ?? false,
                    result: String(decoding: canonical, as: UTF8.self)))
        }
        guard let uncalled else {
            throw HarnessError("the script did not finish (no \"uncalled\" line):\n\(output.suffix(2000))")
        }
        return (calls, uncalled)
    }

    /// The calls MPD-DIFFERENCES.md lists as deliberate differences: rows of its python-mpd2 table,
    /// `| `CALL` | playerd | mpd | reason |`, the call written as the script prints it.
    static func deliberateCalls() throws -> [String: Int] {
        let path = URL(fileURLWithPath: Paths.testsDirectory).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("MPD-DIFFERENCES.md").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var inTable = false
        var calls: [String: Int] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("## ") {
                inTable = line.contains("python-mpd2")
                continue
            }
            guard inTable, line.hasPrefix("| `") else { continue }
            let cell = line.split(separator: "|")[0].trimmingCharacters(in: .whitespaces)
            calls[String(cell.dropFirst().dropLast())] = index + 1
        }
        return calls
    }

    /// Differences found by this test and reported to their owners, not deliberate: each is recorded as
    /// a known issue (visible in every run) until it is fixed; one that no longer shows is named in the
    /// output, to be removed here. Keyed by the script's `step N call`, valued by the defect's note (a
    /// note starting with `versionDefect` covers status's `playlist:` alone). None now: the queue's
    /// version, the last one reported, moves as mpd's since.
    static let reportedDefects: [String: String] = [:]

    /// The one reported defect that covers a part of an answer only: `status`'s `playlist:`.
    static let versionDefect = "the queue's version"

    /// A result without status's `playlist:` (the queue's version), for `versionDefect`.
    static func withoutVersion(_ result: String) -> String {
        result.replacingOccurrences(of: #""playlist":"version\+[0-9]+""#, with: "", options: .regularExpression)
    }

    @Test("every command python-mpd2 knows answers as mpd's does", .timeLimit(.minutes(4)))
    func everyCommand() throws {
        let music = try EveryCommandMusic.make()
        defer { EveryCommandMusic.remove(music) }
        let pair = try DaemonPair(music: music)
        let script = Paths.testsDirectory + "/python/mpd2_every_command.py"
        let runs = try [pair.mpd.socketPath, pair.playerd.socketPath].map { socket in
            try BackgroundProgram(Paths.python, [script, socket])
        }
        let results = try runs.map { try $0.finish(within: .seconds(150)) }
        let mpd = try Self.parse(results[0].stdout)
        let playerd = try Self.parse(results[1].stdout)
        #expect(results[0].status == 0, "against mpd: \(results[0])")
        #expect(results[1].status == 0, "against playerd: \(results[1])")
        #expect(mpd.uncalled.isEmpty, "commands python-mpd2 knows that the script does not call: \(mpd.uncalled)")
        #expect(mpd.calls.map(\.call) == playerd.calls.map(\.call), "the two runs did not make the same calls")
        let commands = Set(mpd.calls.filter { !$0.helper }.map(\.command))
        // Every command python-mpd2 registers: 108 in 3.0.5.
        #expect(commands.count >= 108)

        let deliberate = try Self.deliberateCalls()
        var usedRows = Set<String>()
        var unlisted: [String] = []
        var reported: [String] = []
        var seenDefects = Set<String>()
        var table: [String: (calls: Int, same: Int, listed: Int, differ: Int)] = [:]
        for (ours, theirs) in zip(playerd.calls, mpd.calls) {
            var row = table[ours.command] ?? (0, 0, 0, 0)
            row.calls += 1
            let difference = "step \(ours.step) \(ours.call)\n  mpd:     \(theirs.result)\n  playerd: \(ours.result)"
            if ours.result == theirs.result {
                row.same += 1
            } else if deliberate[ours.call] != nil {
                row.listed += 1
                usedRows.insert(ours.call)
            } else if let note = Self.reportedDefects["\(ours.step) \(ours.call)"],
                !note.hasPrefix(Self.versionDefect)
                    || Self.withoutVersion(ours.result) == Self.withoutVersion(theirs.result)
            {
                row.differ += 1
                seenDefects.insert("\(ours.step) \(ours.call)")
                reported.append("\(note)\n\(difference)")
            } else {
                row.differ += 1
                unlisted.append(difference)
            }
            table[ours.command] = row
        }
        let total = table.values.reduce(into: (calls: 0, same: 0, listed: 0, differ: 0)) {
            $0.calls += $1.calls
            $0.same += $1.same
            $0.listed += $1.listed
            $0.differ += $1.differ
        }
        print(
            "python-mpd2, every command: \(commands.count) commands (and \(table.count - commands.count) steps of the "
                + "script's own) in \(total.calls) calls: \(total.same) identical, "
                + "\(total.listed) listed in MPD-DIFFERENCES.md, \(total.differ) differ "
                + "(\(reported.count) of them reported defects)")
        if ProcessInfo.processInfo.environment["PLAYERD_MPD2_VERBOSE"] != nil {
            print("command                        calls  same  listed  differ")
            for (command, row) in table.sorted(by: { $0.key < $1.key }) {
                let name = command.padding(toLength: 30, withPad: " ", startingAt: 0)
                print(
                    "\(name) \(row.calls, width: 5) \(row.same, width: 5) \(row.listed, width: 7) \(row.differ, width: 7)"
                )
            }
        }
        for difference in unlisted {
            Issue.record(Comment(rawValue: difference))
        }
        for difference in reported {
            withKnownIssue(Comment(rawValue: difference)) { Issue.record(Comment(rawValue: difference)) }
        }
        for step in Set(Self.reportedDefects.keys).subtracting(seenDefects).sorted() {
            print("reportedDefects lists `\(step)`, but playerd answered it as mpd did in this run: remove it")
        }
        for (call, line) in deliberate where !usedRows.contains(call) {
            print("MPD-DIFFERENCES.md line \(line) lists `\(call)`, but playerd answered it as mpd did in this run")
        }
        // kill ended playerd. (Both closed the connection: "ping after kill" compares that. mpd's own exit
        // once took more than 10 s here; the harness kills it in any case.)
        try expectEventually("playerd exits after kill", within: .seconds(10)) { !pair.playerd.isRunning }
        if !unlisted.isEmpty {
            Issue.record(Comment(rawValue: pair.logTails))
        }
    }
}

extension DefaultStringInterpolation {
    /// An integer right-aligned in `width` columns.
    fileprivate mutating func appendInterpolation(_ value: Int, width: Int) {
        let text = String(value)
        self.appendLiteral(String(repeating: " ", count: max(0, width - text.count)) + text)
    }
}
