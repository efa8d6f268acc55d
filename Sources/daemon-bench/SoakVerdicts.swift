// The soak's checks: each a sentence that held or did not, printed as PASS or FAIL lines and counted
// on the last line of the report.

/// The soak's verdicts, in the order they were reached.
struct SoakVerdicts {
    private var entries: [(passed: Bool, text: String, details: [String])] = []

    /// Records one check; `details` are printed under a failed one.
    mutating func check(_ passed: Bool, _ text: String, details: [String] = []) {
        self.entries.append((passed, text, details))
    }

    /// How many checks held.
    var passed: Int { self.entries.filter(\.passed).count }

    /// How many checks failed.
    var failed: Int { self.entries.count - self.passed }

    /// Prints every check, then `N passed, N failed` as the last line.
    func printReport() {
        for entry in self.entries {
            print("\(entry.passed ? "PASS" : "FAIL") \(entry.text)")
            if !entry.passed {
                for detail in entry.details { print("     \(detail)") }
            }
        }
        print("\(self.passed) passed, \(self.failed) failed")
    }
}

/// MPD's status keys every answer has (DESIGN.md §5), and the ones a playing player adds.
enum StatusShape {
    static let alwaysThere = ["volume", "repeat", "random", "single", "consume", "playlist", "playlistlength", "state"]
    static let whilePlaying = ["song", "songid", "time", "elapsed", "duration", "bitrate", "audio"]

    /// What is wrong with a `status` answer's fields, for a player that should be playing a queue of
    /// `length` songs at volume `volume` with repeat on: nothing when the list is empty.
    static func problems(_ fields: [String: String], length: Int, volume: Int) -> [String] {
        var problems: [String] = []
        for key in self.alwaysThere where fields[key] == nil {
            problems.append("no \(key):")
        }
        for key in ["repeat", "random", "consume"] {
            if let value = fields[key], value != "0" && value != "1" { problems.append("\(key): \(value)") }
        }
        if let value = fields["single"], !["0", "1", "oneshot"].contains(value) { problems.append("single: \(value)") }
        if let value = fields["playlist"], Int(value) == nil { problems.append("playlist: \(value)") }
        if let state = fields["state"], !["play", "pause", "stop"].contains(state) {
            problems.append("state: \(state)")
        }
        if fields["state"] != "play" { problems.append("state: \(fields["state"] ?? "-"), not play") }
        if fields["playlistlength"] != String(length) {
            problems.append("playlistlength: \(fields["playlistlength"] ?? "-"), not \(length)")
        }
        if fields["volume"] != String(volume) { problems.append("volume: \(fields["volume"] ?? "-"), not \(volume)") }
        if fields["repeat"] != "1" { problems.append("repeat: \(fields["repeat"] ?? "-"), not 1") }
        if fields["state"] == "play" {
            for key in self.whilePlaying where fields[key] == nil {
                problems.append("no \(key): while playing")
            }
            if let elapsed = fields["elapsed"], Double(elapsed) == nil { problems.append("elapsed: \(elapsed)") }
            if let song = fields["song"].flatMap({ Int($0) }), song < 0 || song >= length {
                problems.append("song: \(song) outside a queue of \(length)")
            }
        }
        if let error = fields["error"] { problems.append("error: \(error)") }
        return problems
    }

    /// The `key: value` lines of an answer as a dictionary (the first of a repeated key wins).
    static func fields(_ lines: [String]) -> [String: String] {
        var fields: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[1].hasPrefix(" ") else { continue }
            let key = String(parts[0])
            if fields[key] == nil { fields[key] = String(parts[1].dropFirst()) }
        }
        return fields
    }
}
