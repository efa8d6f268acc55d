import Foundation

/// A scripted conversation of one or more clients with a daemon, recorded line by line: the same
/// script run against mpd and against playerd gives two records that must be equal (DESIGN.md §11).
final class Conversation {
    private(set) var lines: [String] = []
    private let connector: () throws -> LineClient

    init(connect: @escaping () throws -> LineClient) {
        self.connector = connect
    }

    /// A new client, named `name` in the record.
    func connect(_ name: String) throws -> Party {
        Party(name: name, client: try self.connector(), transcript: self)
    }

    /// Adds a line of the test's own to the record (what comes next, a figure counted).
    func note(_ text: String) {
        self.lines.append("# " + text)
    }

    fileprivate func record(_ line: String) {
        self.lines.append(line)
    }

    /// The records' first difference, for a failure message; nil when they are equal.
    static func difference(_ expected: [String], _ actual: [String], names: (String, String) = ("mpd", "playerd"))
        -> String?
    {
        guard expected != actual else { return nil }
        let common = min(expected.count, actual.count)
        let index = (0..<common).first { expected[$0] != actual[$0] } ?? common
        let context = expected[max(0, index - 3)..<index].map { "  " + $0 }.joined(separator: "\n")
        let theirs = index < expected.count ? expected[index] : "(end)"
        let ours = index < actual.count ? actual[index] : "(end)"
        return "records differ at line \(index + 1), after:\n\(context)\n\(names.0): \(theirs)\n\(names.1): \(ours)"
    }

    /// One client of a transcript.
    final class Party {
        let name: String
        let client: LineClient
        private unowned let transcript: Conversation

        fileprivate init(name: String, client: LineClient, transcript: Conversation) {
            self.name = name
            self.client = client
            self.transcript = transcript
        }

        /// Sends `line`, records it and the answer, and returns the answer.
        @discardableResult
        func ask(_ line: String, timeout: Duration = LineClient.defaultTimeout) throws -> [String] {
            self.transcript.record("\(self.name)> \(line)")
            let answer = try self.client.command(line, timeout: timeout)
            for answered in answer {
                self.transcript.record("\(self.name): \(answered)")
            }
            return answer
        }

        /// Sends `line` without waiting for an answer (`idle`), and records it.
        func send(_ line: String) throws {
            self.transcript.record("\(self.name)> \(line)")
            try self.client.send(line: line)
        }

        /// Reads and records the answer to what was sent.
        @discardableResult
        func answer(timeout: Duration = LineClient.defaultTimeout) throws -> [String] {
            let answer = try self.client.readAnswer(timeout: timeout)
            for answered in answer {
                self.transcript.record("\(self.name): \(answered)")
            }
            return answer
        }

        /// Records whether anything arrives within `wait` (an idle that must not answer yet).
        func recordSilence(within wait: Duration = .milliseconds(300)) throws {
            let heard = try self.client.hasInput(within: wait)
            self.transcript.record("\(self.name) \(heard ? "hears something" : "hears nothing")")
        }

        /// Closes the connection (the client vanishes), and records it.
        func leave() {
            self.transcript.record("\(self.name) leaves")
            self.client.close()
        }
    }
}
