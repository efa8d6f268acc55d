import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// `status --follow`: one line, redrawn in place, until Ctrl-C. Into a pipe or a file, where `\r` and
/// erasing do not redraw anything, it writes one plain line per change instead.
///
/// One connection does everything: it reads `status` and `currentsong`, draws, then idles on the
/// subsystems that change the line. While playing on a terminal, the idle gives up after a quarter
/// second so that the clock moves; otherwise it waits for the next change however long that takes.
struct LiveStatusLine {
    let connection: MPDConnection

    private static let subsystems = ["player", "mixer", "options", "playlist"]
    private static let tick: Duration = .milliseconds(250)
    private static let barWidth = 20

    func run() throws(ClientError) -> Never {
        let terminal = isatty(STDOUT_FILENO) == 1
        if terminal {
            // The line has no newline of its own; Ctrl-C ends it with one so the shell prompt starts
            // clean. write and _exit are safe in a signal handler, stdio is not.
            signal(SIGINT) { _ in
                var newline: UInt8 = 0x0A
                _ = write(STDOUT_FILENO, &newline, 1)
                _exit(0)
            }
        } else {
            signal(SIGINT) { _ in _exit(0) }
        }
        // A parent may have started us with SIGINT blocked (Foundation's Process does); then Ctrl-C, or
        // its interrupt(), would never arrive.
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, nil)
        var written: String?
        do {
            while true {
                let (status, song) = try statusAndSong(self.connection)
                let line = LiveStatusLine.line(status, song)
                if terminal {
                    writeAll(STDOUT_FILENO, "\r" + LiveStatusLine.fitted(line) + "\u{1B}[K")
                } else if line != written {
                    writeAll(STDOUT_FILENO, line + "\n")
                    written = line
                }
                // A clock that moves (playing, or a timer counting down) redraws every tick on a terminal.
                let counting = status.state == .play || status.resumesIn != nil || status.sleepTimer != nil
                _ = try self.connection.idle(
                    LiveStatusLine.subsystems, timeout: terminal && counting ? LiveStatusLine.tick : nil)
            }
        } catch {
            if terminal {
                writeAll(STDOUT_FILENO, "\n")
            }
            throw error
        }
    }

    /// `[playing] Title - Artist  0:42/3:10 [####----------------] 22%`, then the timers if any:
    /// `(resumes in 0:04)`.
    static func line(_ status: Status, _ song: Song?) -> String {
        let timers = timerText(status).map { "  (\($0))" } ?? ""
        guard status.state != .stop, let song else {
            return "[\(stateWord(status.state))]" + timers
        }
        let elapsed = status.elapsed ?? 0
        let duration = status.duration ?? song.duration ?? 0
        let done = percent(elapsed, of: duration)
        let filled = done * LiveStatusLine.barWidth / 100
        let bar =
            String(repeating: "#", count: filled) + String(repeating: "-", count: LiveStatusLine.barWidth - filled)
        return "[\(stateWord(status.state))] \(songTitle(song))  \(formatDuration(elapsed))/\(formatDuration(duration))"
            + " [\(bar)] \(done)%" + timers
    }

    // A line wider than the terminal wraps, and `\r` then only goes back to the start of its last row.
    private static func fitted(_ line: String) -> String {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1 else {
            return line
        }
        let width = Int(size.ws_col) - 1
        return line.count <= width ? line : String(line.prefix(width))
    }
}
