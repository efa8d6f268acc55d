import ControlProtocol
import PlayerCore

/// MPD's ReplayGain commands, answered as MPD 0.23 answers them.
extension Commands {
    /// `replay_gain_status`: `replay_gain_mode: off|track|album|auto`.
    static func replayGainStatus(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        call.response.field("replay_gain_mode", service.engine.status.replayGainMode.rawValue)
    }

    /// `replay_gain_mode MODE`: from the next song opened on, as in MPD; idle `options` follows (the
    /// status differs). An unknown mode is MPD's `std::invalid_argument`, ACK 2.
    static func setReplayGainMode(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        guard let mode = ReplayGainMode(rawValue: call.argument(0)) else {
            throw Ack(.argument, "Unrecognized replay gain mode", command: call.name)
        }
        do {
            try await service.engine.withContext { context throws(PlayerError) in
                context.replayGainMode = mode
                return ((), [])
            }
        } catch {
            throw Ack(error, command: call.name)
        }
        return call
    }
}
