import Audio

/// MPD's `replay_gain_mode`: which stored gain songs play at.
public enum ReplayGainMode: String, Sendable, CaseIterable {
    /// No ReplayGain.
    case off
    /// Each song's track gain.
    case track
    /// Each song's album gain.
    case album
    /// As MPD 0.23 does: the album gain, unless random mode is on (then the track gain). "Plays an
    /// album in order" means exactly that here: the queue is walked in its own order.
    case auto
}

extension PlayerContext {
    /// The gain the next song opened is decoded with: the mode with `auto` resolved against random
    /// mode, plus the preamp, missing-gain preamp and limit settings. A mode change reaches the next
    /// song opened, as in MPD.
    public var resolvedReplayGain: ReplayGain {
        var gain = self.replayGainSettings
        gain.source =
            switch self.replayGainMode {
            case .off: .off
            case .track: .track
            case .album: .album
            case .auto: self.queue.random ? .track : .album
            }
        return gain
    }
}
