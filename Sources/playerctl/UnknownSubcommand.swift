import ArgumentParser

/// A word where a subcommand belongs that names none (`playerctl plya`, `playerctl queue frobnicate`).
/// ArgumentParser takes it for an unexpected argument of the command itself, or of its default
/// subcommand, and shows that usage (`queue list`'s); playerctl says the subcommand is unknown, suggests
/// the nearest one as ArgumentParser does for a mistyped option, and lists the command's subcommands.
enum UnknownSubcommand {
    /// The usage error for `arguments` (without the program name) when a word where a subcommand
    /// belongs names none; nil when there is no such word, and the parser judges the line.
    static func message(for arguments: [String]) -> String? {
        var command: any ParsableCommand.Type = PlayerCtl.self
        var path = ["playerctl"]
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word == "--socket" {
                index += 1
                continue
            }
            if word.hasPrefix("-") {
                guard word != "--" else { return nil }
                continue
            }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !(path.count == 1 && word == "help") else {
                return nil
            }
            guard let next = subcommands.first(where: { Self.names(of: $0).contains(word) }) else {
                return Self.text(word: word, path: path, command: command)
            }
            command = next
            path.append(word)
        }
        return nil
    }

    private static func names(of command: any ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    private static func text(word: String, path: [String], command: any ParsableCommand.Type) -> String {
        let subcommands = command.configuration.subcommands
        let nearest = Self.nearest(to: word, among: subcommands.flatMap(Self.names(of:)))
        let name = path.joined(separator: " ")
        var text = "Error: Unknown subcommand '\(word)'"
        text += path.count > 1 ? " of '\(name)'" : ""
        text += nearest.map { ". Did you mean '\($0)'?" } ?? "."
        let defaultName = command.configuration.defaultSubcommand?._commandName
        let listed = subcommands.map { subcommand in
            let name = subcommand._commandName
            return name == defaultName ? "\(name) (the default)" : name
        }
        text += "\n" + Self.wrapped("Subcommands: " + listed.joined(separator: ", "), width: 80)
        text += "\nUsage: \(name) <subcommand>\n  See '\(name) --help' for more information.\n"
        return text
    }

    /// The name closest to `word` (a letter typed wrong, left out, added, or two swapped count one
    /// each), if one is close enough to be what was meant: one edit for short words, two for longer.
    static func nearest(to word: String, among names: [String]) -> String? {
        let limit = word.count < 4 ? 1 : 2
        let scored = names.map { (name: $0, distance: Self.editDistance(word, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= limit else {
            return nil
        }
        return best.name
    }

    /// Damerau-Levenshtein distance (optimal string alignment): insertions, deletions, substitutions
    /// and swaps of neighbours.
    static func editDistance(_ first: String, _ second: String) -> Int {
        let a = Array(first)
        let b = Array(second)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// `text` broken at spaces into lines of at most `width` characters, continued lines indented.
    private static func wrapped(_ text: String, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = "  "
            }
            line += (line.isEmpty || line == "  " ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
