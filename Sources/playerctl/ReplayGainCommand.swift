import ArgumentParser
import PlayerClient

/// MPD's ReplayGain modes.
enum ReplayGainChoice: String, ExpressibleByArgument, CaseIterable {
    /// No ReplayGain.
    case off
    /// Each song's track gain.
    case track
    /// Each song's album gain.
    case album
    /// The album gain, unless random is on (then the track gain).
    case auto
}

/// `replaygain [off|track|album|auto]`: sets the mode (from the next song on) and prints it.
struct ReplayGainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replaygain",
        abstract: "Print or set the ReplayGain mode: off, track, album, or auto (album unless random is on).")

    @OptionGroup var global: GlobalOptions

    @Argument var mode: ReplayGainChoice?

    func run() throws {
        let connection = try self.global.connect()
        if let mode = self.mode {
            _ = try connection.command("replay_gain_mode", [mode.rawValue])
        }
        let answer = try connection.command("replay_gain_status")
        print(answer.first { $0.key == "replay_gain_mode" }?.value ?? "off")
    }
}
