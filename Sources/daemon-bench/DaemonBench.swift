// Measures an MPD-protocol daemon from the outside, the same way for playerd and for mpd:
//   daemon-bench start SOCKET -- COMMAND...           start COMMAND, time until SOCKET answers the
//                                                     greeting, then report its RSS once it has settled
//   daemon-bench roundtrip SOCKET N                   N sequential `status` requests on one connection
//   daemon-bench fill SOCKET COUNT URI [BATCH]        clear the queue, then add URI COUNT times in
//                                                     command lists of BATCH adds (default 1000)
//   daemon-bench clients SOCKET COUNT PID REQUESTS    the daemon's RSS growth with COUNT idle clients,
//                                                     and REQUESTS `status` round trips beside them
//   daemon-bench rss PID                              a process's resident memory, now
//   daemon-bench add-dir SOCKET URI EXPECTED          one `add` of a directory, timed alone, and
//                                                     again with another client's round trips during it
//   daemon-bench make-library DIR COUNT [mixed]       a tagged library of COUNT songs (LibraryTree.swift),
//                                                     MP3 or MP3, FLAC, Vorbis, Opus in turn
//   daemon-bench library-start|library-update|library-query|library-stream ...
//                                                     the library's figures (LibraryBench.swift)
//   daemon-bench playing SOCKET                       state, audio format and file being played
//   daemon-bench soak SOCKET PID MUSIC-DIR [...]      hostile clients against a running daemon for a
//                                                     while (scripts/soak.sh); PASS/FAIL lines
// Results are printed as `key value` lines on stdout for scripts (scripts/bench-daemon.sh) to collect;
// a failure is one `daemon-bench: ...` line on stderr and exit status 1.

#if canImport(Glibc)
    import Glibc
#endif

/// One mode of `daemon-bench`: its name on the command line, its usage line, and the measurement.
protocol BenchCommand {
    /// The first argument that selects this mode.
    static var name: String { get }
    /// The whole command line this mode takes, shown when the arguments do not fit.
    static var usage: String { get }
    /// Runs the measurement with the arguments after the mode's name, printing `key value` lines.
    static func run(_ arguments: [String]) throws(BenchFailure)
}

/// Why a measurement stopped; printed on stderr, and the exit status is 1.
enum BenchFailure: Error, CustomStringConvertible {
    /// The arguments do not fit the mode; the payload is the mode's usage line.
    case usage(String)
    /// A C call failed.
    case system(SystemCallError)
    /// The daemon refused, closed, timed out or answered something the measurement cannot use.
    case daemon(String)

    var description: String {
        switch self {
        case .usage(let line): "usage: \(line)"
        case .system(let error): error.description
        case .daemon(let message): message
        }
    }
}

@main
enum DaemonBench {
    /// Every mode, in the order the usage text lists them.
    static var commands: [any BenchCommand.Type] {
        [
            StartCommand.self, RoundTripCommand.self, FillCommand.self, ClientsCommand.self, RSSCommand.self,
            AddDirectoryCommand.self, MakeLibraryCommand.self, LibraryStartCommand.self, LibraryUpdateCommand.self,
            LibraryQueryCommand.self, LibraryQueryEachCommand.self, LibraryStreamCommand.self, PlayingCommand.self,
            SoakCommand.self,
        ]
    }

    static func main() {
        // A thousand client sockets do not fit the usual soft limit of 1024 descriptors.
        do throws(SystemCallError) {
            try raiseOpenFileLimit()
        } catch {
            warn("cannot raise the open-file limit: \(error)")
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let command = self.commands.first(where: { $0.name == name }) else {
            fail("usage:\n" + self.commands.map { "  \($0.usage)" }.joined(separator: "\n"))
        }
        do throws(BenchFailure) {
            try command.run(Array(arguments.dropFirst()))
        } catch {
            fail(error.description)
        }
    }
}

/// Prints `message` on stderr as daemon-bench's and exits with status 1.
func fail(_ message: String) -> Never {
    warn(message)
    exit(1)
}

/// Prints `message` on stderr as daemon-bench's; stdout stays for the figures.
func warn(_ message: String) {
    var line = "daemon-bench: \(message)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Reads a whole-number argument, or explains which one is wrong.
func integerArgument(_ text: String, named name: String, atLeast minimum: Int, usage: String) throws(BenchFailure)
    -> Int
{
    guard let value = Int(text), value >= minimum else {
        throw .usage("\(usage)\n  \(name) must be a whole number of at least \(minimum), not '\(text)'")
    }
    return value
}

/// Raises this process's soft limit on open files to its hard limit.
func raiseOpenFileLimit() throws(SystemCallError) {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    try check("getrlimit", getrlimit(resource, &limit))
    guard limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    try check("setrlimit", setrlimit(resource, &limit))
}
