// Two programs are called playerctl: this one (playerd's) and the desktop's (altdesktop's, Debian's
// `playerctl`, which controls any MPRIS player). Installing playerd must not break a desktop user's
// `playerctl -p spotify play-pause` or `playerctl metadata --format '{{ title }}'`, so a command line
// that only the desktop's understands is handed to it, unchanged.

#if canImport(Glibc)
    import Glibc
#endif

/// Recognises the desktop playerctl's command lines and runs that program in our place.
enum DesktopPlayerctl {
    /// The desktop's options that take a value: `-p NAME`, `--player=NAME` ...
    static let optionsWithValue = ["-p", "--player", "-i", "--ignore-player", "-f", "--format"]
    /// The desktop's flags. `--follow` is also ours, on `status`.
    static let flags = [
        "-a", "--all-players", "-l", "--list-all", "-F", "--follow", "-s", "--no-messages", "-v", "--version",
    ]
    /// Verbs only the desktop's has.
    static let verbs: Set = ["loop", "shuffle", "open", "daemon"]

    /// Whether `arguments` (without the program's name) are the desktop playerctl's: one of its options
    /// (other than `status --follow`, which is ours), one of its own verbs, or one of the verbs both
    /// have with an argument in the desktop's form (`metadata title`, `position 30`, `volume 0.5`).
    static func owns(_ arguments: [String]) -> Bool {
        var verb: String?
        var verbArguments: [String] = []
        var sawFollow = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                break
            }
            if argument == "--socket" {
                index += 1  // ours, with its value
                continue
            }
            if argument == "--follow" {
                sawFollow = true
                continue
            }
            if Self.flags.contains(argument) || Self.optionsWithValue.contains(argument)
                || Self.optionsWithValue.contains(where: { $0.hasPrefix("--") && argument.hasPrefix($0 + "=") })
                || Self.isAttachedShortOption(argument)
            {
                return true
            }
            if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                continue  // one of ours (--json, --seconds ...), or a mistake ours will name
            }
            if verb == nil {
                verb = argument
            } else {
                verbArguments.append(argument)
            }
        }
        guard let verb else { return sawFollow }
        if sawFollow && verb != "status" {
            return true
        }
        switch verb {
        case _ where Self.verbs.contains(verb):
            return true
        case "metadata", "position":
            // Ours takes no argument: a key (`title`, `mpris:length`) or a position is the desktop's.
            return !verbArguments.isEmpty
        case "volume":
            // Ours reads 70, +5, -5; the desktop's 0.5, 0.1+, 0.1-.
            return verbArguments.contains {
                $0.contains(".") || $0.hasSuffix("+") || ($0.hasSuffix("-") && $0.count > 1)
            }
        default:
            return false
        }
    }

    /// `-pspotify`, `-fFORMAT`, `-ivlc`: GLib's short options with their value attached.
    private static func isAttachedShortOption(_ argument: String) -> Bool {
        guard argument.count > 2, !argument.hasPrefix("--") else { return false }
        return ["-p", "-i", "-f"].contains { argument.hasPrefix($0) }
    }

    /// Replaces this process with the desktop's playerctl, same arguments; returns only when there is
    /// none (or it cannot be run), with the reason to print.
    static func exec(_ arguments: [String]) -> String {
        guard let program = Self.find() else {
            return "this command line is for the desktop's playerctl, which controls MPRIS players (-p, -l, -a, "
                + "-F, --format, metadata KEY, loop, shuffle, open ...), and it is not installed: install it "
                + "(Debian and Ubuntu: apt install playerctl). playerd's own verbs: playerctl --help"
        }
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(program, argv)
        let reason = String(cString: strerror(errno))
        return "cannot run the desktop's playerctl \(program): \(reason)"
    }

    /// The first `playerctl` on PATH that is not this program (compared by device and inode, so that a
    /// symlink to us does not count).
    static func find() -> String? {
        var ourself = stat()
        guard stat("/proc/self/exe", &ourself) == 0 else { return nil }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = String(directory) + "/playerctl"
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 else {
                continue
            }
            if info.st_dev == ourself.st_dev && info.st_ino == ourself.st_ino {
                continue
            }
            return candidate
        }
        return nil
    }
}
