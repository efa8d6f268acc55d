import Benchmark
import ControlProtocol

/// A read of 100 request lines as mpc, ncmpcpp and python-mpd2 send them, and the steps the daemon's
/// `ClientSession` takes on each line before a handler runs.
enum RequestMix {
    /// Twenty lines, one command list among them; the read repeats them five times.
    static let pattern: [String] = [
        "status",
        "currentsong",
        "idle player mixer playlist options",
        "noidle",
        "command_list_ok_begin",
        "status",
        "currentsong",
        "command_list_end",
        "add \"Albums/Nils Frahm/Spaces/01 - An Aborted Beginning.mp3\"",
        "add \"Albums/Stars of the Lid/And Their Refinement of the Decline/02 - Don't Bother Them.mp3\"",
        "seekcur +5",
        "seekcur -10",
        "seek 3 92.5",
        "setvol 70",
        "pause 1",
        "play 3",
        "playlistinfo",
        "plchanges 41",
        "random 0",
        "ping",
    ]

    /// The lines of one read.
    static let lineCount = 5 * RequestMix.pattern.count

    /// The requests that reach the table: every line but a command list's begin and end.
    static let commandCount = 5 * (RequestMix.pattern.count - 2)

    /// The read as it comes off the socket, `\n` after each line.
    static let bytes: [UInt8] = Array(
        repeatElement(RequestMix.pattern, count: 5).joined().map { $0 + "\n" }.joined().utf8)

    /// A table shaped like the daemon's: MPD's commands and playerd's own three. The daemon's handlers
    /// are internal to PlayerDaemon; a number stands in for each.
    static func commandTable() -> CommandTable<Int> {
        var table = CommandTable<Int>()
        for (index, spec) in CommandSpec.mpdStandard.enumerated() {
            table.register(spec, index)
        }
        table.register(CommandSpec("clearerror", arguments: 0, .control), -1)
        table.register(CommandSpec("pausefor", arguments: 1, .control), -2)
        table.register(CommandSpec("sleeptimer", arguments: 1, .control), -3)
        return table
    }

    /// Frames `bytes`, tokenizes each line through the command-list parser and looks up each request
    /// as `ClientSession.handle` and `run` do. Returns how many requests found their handler.
    static func dispatch(
        _ bytes: [UInt8],
        framer: inout LineFramer,
        lists: inout CommandListParser,
        frames: inout [LineFramer.Frame],
        table: CommandTable<Int>
    ) -> Int {
        frames.removeAll(keepingCapacity: true)
        bytes.withUnsafeBytes { framer.feed($0, into: &frames) }
        var accepted = 0
        for frame in frames {
            guard case .line(let line) = frame else {
                blackHole(framer.ack(for: frame))
                continue
            }
            switch lists.consume(line) {
            case .collect:
                break
            case .execute(let request):
                accepted += RequestMix.lookUp(request, listIndex: 0, in: table)
            case .executeList(let entries, _):
                for (index, entry) in entries.enumerated() {
                    guard case .success(let request) = entry else { break }
                    accepted += RequestMix.lookUp(request, listIndex: index, in: table)
                }
            case .reject(let error):
                blackHole(error)
            }
        }
        return accepted
    }

    private static func lookUp(_ request: Request, listIndex: Int, in table: CommandTable<Int>) -> Int {
        do {
            let entry = try table.lookup(request, listIndex: listIndex)
            blackHole(entry.handler)
            return 1
        } catch {
            blackHole(error)
            return 0
        }
    }
}
