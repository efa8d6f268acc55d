import ArgumentParser
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// What `wait` waits for: the daemon answering, or the player in a state, with the words people use.
struct WantedState: ExpressibleByArgument {
    /// The two kinds of thing to wait for.
    enum Target: Equatable {
        /// The daemon answers on its socket.
        case ready
        /// The player is in this state.
        case state(PlaybackState)
    }

    let target: Target

    init?(argument: String) {
        switch argument {
        case "ready": self.target = .ready
        case "play", "playing": self.target = .state(.play)
        case "pause", "paused": self.target = .state(.pause)
        case "stop", "stopped": self.target = .state(.stop)
        default: return nil
        }
    }

    static var allValueStrings: [String] { ["ready", "play", "pause", "stop", "playing", "paused", "stopped"] }

    static var defaultCompletionKind: CompletionKind { .list(WantedState.allValueStrings) }
}

/// `wait ready|STATE [--timeout DURATION]`.
struct Wait: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Wait until playerd answers, or until the player is playing, paused or stopped.",
        discussion: """
            `wait ready` returns as soon as the daemon answers on its socket, waiting for it to start if \
            need be. A state returns at once when the player is in it already. Exits 4 if --timeout \
            passes first.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp(
            "ready, or play, pause or stop (also playing, paused, stopped).", valueName: "target"))
    var wanted: WantedState

    @Option(help: ArgumentHelp("Give up after this long.", valueName: "duration"), transform: durationOption)
    var timeout: Double?

    /// How often `wait ready` tries the socket while nothing answers.
    static let retryInterval: Duration = .milliseconds(20)

    func run() throws {
        let limit = self.timeout.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
        let deadline = limit.map { ContinuousClock.now + $0 }
        switch self.wanted.target {
        case .ready: try self.waitUntilReady(deadline: deadline)
        case .state(let state): try self.wait(for: state, deadline: deadline)
        }
    }

    /// Connects until the daemon greets: a missing socket or a refused connection is a daemon still
    /// starting, tried again every `retryInterval`.
    private func waitUntilReady(deadline: ContinuousClock.Instant?) throws {
        let path = self.global.socketPath
        while true {
            let left = deadline.map { ContinuousClock.now.duration(to: $0) }
            do throws(ClientError) {
                _ = try MPDConnection(
                    socketPath: path, timeout: min(left ?? MPDConnection.defaultTimeout, MPDConnection.defaultTimeout))
                return
            } catch {
                switch error {
                case .notRunning, .timedOut, .closed: break
                default: throw error
                }
            }
            if let left, left <= Self.retryInterval {
                throw self.timedOut("playerd to answer on \(path)")
            }
            usleep(UInt32(Self.retryInterval.components.attoseconds / 1_000_000_000_000))
        }
    }

    private func wait(for wanted: PlaybackState, deadline: ContinuousClock.Instant?) throws {
        let connection = try self.global.connect()
        while true {
            let state = try connection.status().state
            if state == wanted {
                return
            }
            // Every change of state is a `player` event, so nothing is missed between status and idle:
            // an event since the last idle makes the next one return at once.
            guard let deadline else {
                _ = try connection.idle(["player"])
                continue
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                throw self.timedOut("the player to be \(stateWord(wanted)); it is \(stateWord(state))")
            }
            _ = try connection.idle(["player"], timeout: left)
        }
    }

    /// Says what was waited for, and returns the exit status for a wait that timed out.
    private func timedOut(_ what: String) -> ExitCode {
        printError("timed out after \(protocolSeconds(self.timeout ?? 0))s waiting for \(what)")
        return ExitCode(ExitStatus.timedOut)
    }
}
