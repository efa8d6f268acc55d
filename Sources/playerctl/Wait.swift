import ArgumentParser
import PlayerClient

/// The states `wait` accepts, with the words people use for them.
struct WantedState: ExpressibleByArgument {
    let state: PlaybackState

    init?(argument: String) {
        switch argument {
        case "play", "playing": self.state = .play
        case "pause", "paused": self.state = .pause
        case "stop", "stopped": self.state = .stop
        default: return nil
        }
    }

    static var allValueStrings: [String] { ["play", "pause", "stop", "playing", "paused", "stopped"] }

    static var defaultCompletionKind: CompletionKind { .list(WantedState.allValueStrings) }
}

/// `wait STATE [--timeout DURATION]`.
struct Wait: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Wait until the player is playing, paused or stopped.",
        discussion: "Returns at once when it already is; exits 1 if --timeout passes first.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("play, pause or stop (also playing, paused, stopped).", valueName: "state"))
    var wanted: WantedState

    @Option(help: ArgumentHelp("Give up after this long.", valueName: "duration"), transform: durationOption)
    var timeout: Double?

    func run() throws {
        let connection = try self.global.connect()
        let limit = self.timeout.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
        let deadline = limit.map { ContinuousClock.now + $0 }
        while true {
            let state = try connection.status().state
            if state == self.wanted.state {
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
                printError(
                    "timed out after \(protocolSeconds(self.timeout ?? 0))s waiting for the player to be "
                        + "\(stateWord(self.wanted.state)); it is \(stateWord(state))")
                throw ExitCode(ExitStatus.failed)
            }
            _ = try connection.idle(["player"], timeout: left)
        }
    }
}
