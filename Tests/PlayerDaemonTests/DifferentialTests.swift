import Foundation
import Testing

/// The differential suite of issue 23: the request sequences of `Differential/*.txt` (one file per
/// area) go to Debian's mpd and to playerd, both on one generated library (`DifferentialLibrary`),
/// each sequence from a known state on fresh connections; their answers are compared after masking
/// what is volatile (`DifferentialNormalizer`). Any other difference fails unless MPD-DIFFERENCES.md
/// lists it in its section for the suite. It prints its figures, overall and per area;
/// `PLAYERD_DIFF_VERBOSE=1` prints every differing answer side by side, `PLAYERD_DIFF_AREAS=a,b` runs
/// some areas only, `PLAYERD_DIFF_PAIRS` sets how many daemon pairs share the work (default 2).
@Suite("Differential suite against mpd")
struct DifferentialTests {
    static let pairCount = ProcessInfo.processInfo.environment["PLAYERD_DIFF_PAIRS"].flatMap { Int($0) } ?? 2
    static let verbose = ProcessInfo.processInfo.environment["PLAYERD_DIFF_VERBOSE"] != nil

    /// Every command of mpd 0.23's `commands` must appear at the start of some request in the files.
    @Test("the sequences cover every command mpd lists")
    func coverage() throws {
        let mpd = try RunningMPD(music: try DifferentialLibrary.path())
        let client = try mpd.connect()
        let commands = try client.command("commands").dropLast().map { String($0.dropFirst("command: ".count)) }
        #expect(commands.count > 90)
        let sequences = try DifferentialSequence.all()
        var used = Set<String>()
        for sequence in sequences {
            for step in sequence.steps {
                var text = step.text
                if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                    text = String(text[text.index(after: close)...]).trimmingCharacters(in: .whitespaces)
                }
                if let word = text.split(separator: " ").first {
                    used.insert(String(word))
                }
            }
        }
        let missing = commands.filter { !used.contains($0) }
        #expect(missing.isEmpty, "commands no sequence sends: \(missing)")
    }

    @Test("every answer is mpd's, or a listed deliberate difference")
    func differential() async throws {
        let deliberate = try DifferentialDeliberate.load()
        let music = try DifferentialLibrary.path()
        let sequences = try DifferentialSequence.all()
        #expect(!sequences.isEmpty)
        let queue = DifferentialQueue(sequences)
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: [SequenceResult].self) { group in
            for _ in 0..<max(1, Self.pairCount) {
                group.addTask {
                    try await onDifferentialThread { try Self.runSequences(from: queue, music: music) }
                }
            }
            var all: [SequenceResult] = []
            for try await some in group {
                all += some
            }
            return all
        }
        let took = ContinuousClock.now - started
        let ordered = results.sorted { ($0.sequence.file, $0.sequence.line) < ($1.sequence.file, $1.sequence.line) }

        var figures: [String: Figures] = [:]
        var failures: [String] = []
        var usedRows = Set<Int>()
        for result in ordered {
            var figure = figures[result.sequence.area] ?? Figures()
            figure.sequences += 1
            if let problem = result.problem {
                failures.append("\(result.sequence.name): the harness failed: \(problem)")
                figure.broken += 1
                figures[result.sequence.area] = figure
                continue
            }
            let count = max(result.mpd.count, result.playerd.count)
            for index in 0..<count {
                figure.answers += 1
                let mpdAnswer = index < result.mpd.count ? result.mpd[index] : nil
                let playerdAnswer = index < result.playerd.count ? result.playerd[index] : nil
                let request = mpdAnswer?.request ?? playerdAnswer?.request ?? "?"
                let line = mpdAnswer?.line ?? playerdAnswer?.line ?? 0
                let mpdLines = DifferentialNormalizer.normalize(mpdAnswer?.lines ?? ["<no request>"])
                let playerdLines = DifferentialNormalizer.normalize(playerdAnswer?.lines ?? ["<no request>"])
                if mpdLines == playerdLines {
                    figure.identical += 1
                    figure.agreeing += 1
                    continue
                }
                if playerdLines.last?.contains("} unknown command") == true
                    && mpdLines.last?.contains("} unknown command") != true
                {
                    figure.unknown += 1
                }
                let verdict = deliberate.agree(request, mpd: mpdLines, playerd: playerdLines)
                usedRows.formUnion(verdict.rows)
                let location = "\(result.sequence.file):\(line) \(request)"
                if verdict.agree {
                    figure.agreeing += 1
                    if Self.verbose {
                        print("LISTED \(location) (MPD-DIFFERENCES.md lines \(verdict.rows))")
                    }
                    continue
                }
                failures.append(location + "\n" + Self.sideBySide(mpdLines, playerdLines))
            }
            figures[result.sequence.area] = figure
        }

        let total = figures.values.reduce(Figures(), +)
        print(
            "Differential suite: \(total.sequences) sequences, \(total.answers) answers compared on "
                + "\(Self.pairCount) pairs in \(took): \(total.line)")
        for area in figures.keys.sorted() {
            print("  \(area): \(figures[area]!.line)")
        }
        if Self.verbose {
            for failure in failures {
                print("DIFFERS " + failure)
            }
        }
        for row in deliberate.rows where !usedRows.contains(row.line) {
            print("MPD-DIFFERENCES.md line \(row.line): a row of the differential suite no answer needed in this run")
        }
        for failure in failures.prefix(300) {
            Issue.record(Comment(rawValue: failure))
        }
    }

    private struct SequenceResult: Sendable {
        let sequence: DifferentialSequence
        var mpd: [DifferentialAnswer] = []
        var playerd: [DifferentialAnswer] = []
        var problem: String?
    }

    private struct Figures {
        var sequences = 0
        var answers = 0
        var identical = 0
        var agreeing = 0
        var unknown = 0
        var broken = 0

        static func + (left: Figures, right: Figures) -> Figures {
            Figures(
                sequences: left.sequences + right.sequences, answers: left.answers + right.answers,
                identical: left.identical + right.identical, agreeing: left.agreeing + right.agreeing,
                unknown: left.unknown + right.unknown, broken: left.broken + right.broken)
        }

        var line: String {
            func percent(_ part: Int) -> String {
                self.answers == 0 ? "-" : String(format: "%.1f %%", 100 * Double(part) / Double(self.answers))
            }
            var text =
                "\(self.sequences) sequences, \(self.answers) answers: \(self.identical) identical "
                + "(\(percent(self.identical))), \(self.agreeing) after deliberate differences "
                + "(\(percent(self.agreeing))), \(self.answers - self.agreeing) differ"
            if self.unknown > 0 { text += ", \(self.unknown) unknown to playerd" }
            if self.broken > 0 { text += ", \(self.broken) sequences broke the harness" }
            return text
        }
    }

    /// Runs sequences from `queue` on one pair; a sequence that breaks the harness gets a fresh pair.
    private static func runSequences(from queue: DifferentialQueue, music: String) throws -> [SequenceResult] {
        var pair = try DifferentialPair(music: music)
        var results: [SequenceResult] = []
        while let sequence = queue.next() {
            var result = SequenceResult(sequence: sequence)
            do {
                result.mpd = try pair.mpdSide.run(sequence)
                result.playerd = try pair.playerdSide.run(sequence)
            } catch {
                result.problem =
                    "\(error)\n--- mpd's log\n\(pair.mpd.logTail)\n--- playerd's log\n\(pair.playerd.logTail)"
                pair = try DifferentialPair(music: music)
            }
            results.append(result)
            if sequence.kills { break }
        }
        return results
    }

    /// The two answers in two columns, differing lines marked.
    private static func sideBySide(_ mpd: [String], _ playerd: [String]) -> String {
        let width = min(70, max(12, mpd.map(\.count).max() ?? 0))
        var text = "    " + "mpd".padding(toLength: width, withPad: " ", startingAt: 0) + " | playerd\n"
        for index in 0..<max(mpd.count, playerd.count) {
            let left = index < mpd.count ? mpd[index] : ""
            let right = index < playerd.count ? playerd[index] : ""
            let mark = left == right ? "    " : "  ≠ "
            text += mark + left.padding(toLength: width, withPad: " ", startingAt: 0) + " | " + right + "\n"
        }
        return text
    }
}
