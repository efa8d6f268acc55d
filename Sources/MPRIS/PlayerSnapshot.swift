import PlayerClient

/// What the MPRIS object shows: the server's last `status` and `currentsong`, when they were read,
/// and the URLs made from them. A value: the exporter swaps in a new one and signals the properties
/// whose values differ.
struct PlayerSnapshot {
    /// nil while the server cannot be reached.
    var status: Status?
    var track: Track?
    /// When `status` was read, for extrapolating the position while playing.
    var fetchedAt: ContinuousClock.Instant
    /// The track's `xesam:url`.
    var trackURL = ""
    /// The track's `mpris:artUrl`, when it has art.
    var artURL: String?

    /// Shown while the server cannot be reached: stopped, no track, nothing to control.
    static var disconnected: PlayerSnapshot { PlayerSnapshot(status: nil, track: nil, fetchedAt: .now) }

    /// The Player properties that change and are signalled (`EmitsChangedSignal=true`); Position is not
    /// among them, by the spec.
    static let changingNames = [
        "PlaybackStatus", "LoopStatus", "Shuffle", "Metadata", "Volume", "CanGoNext", "CanGoPrevious", "CanPlay",
        "CanPause", "CanSeek",
    ]

    /// The value of each of `changingNames`.
    var changingProperties: [String: DBusValue] {
        let hasQueue = (self.status?.playlistLength ?? 0) > 0
        return [
            "PlaybackStatus": .string(self.playbackStatus),
            "LoopStatus": .string(self.loopStatus),
            "Shuffle": .boolean(self.status?.random ?? false),
            "Metadata": self.metadata,
            "Volume": .double(self.volume),
            // Each needs something in the queue to act on; the desktop's playerctl skips a player whose
            // CanPlay is false for play, pause, stop and metadata, and GNOME hides it.
            "CanGoNext": .boolean(hasQueue),
            "CanGoPrevious": .boolean(hasQueue),
            "CanPlay": .boolean(hasQueue),
            "CanPause": .boolean(hasQueue),
            "CanSeek": .boolean(self.track?.duration != nil && self.status?.state != .stop),
        ]
    }

    /// `Playing`, `Paused` or `Stopped` (also while disconnected).
    var playbackStatus: String {
        switch self.status?.state {
        case .play: "Playing"
        case .pause: "Paused"
        case .stop, nil: "Stopped"
        }
    }

    /// `Track` for repeat with single (the song repeats), `Playlist` for repeat, else `None` (single
    /// alone stops after the song, which MPRIS has no name for).
    var loopStatus: String {
        guard let status, status.repeat else { return "None" }
        return status.single == .off ? "Playlist" : "Track"
    }

    /// 0.0 to 1.0 from MPD's 0 to 100. A server without a mixer (MPD's `volume: -1`; playerd always
    /// has its software volume) plays at full volume as far as anyone can tell: 1.0.
    var volume: Double {
        guard let volume = self.status?.volume else { return 1.0 }
        return Double(min(max(volume, 0), 100)) / 100
    }

    /// The `Metadata` map: empty while disconnected, only `mpris:trackid` NoTrack without a song.
    var metadata: DBusValue {
        guard self.status != nil else { return .dictionary([]) }
        guard let track else { return .dictionary([("mpris:trackid", .objectPath(Track.noTrack))]) }
        return track.metadata(url: self.trackURL, artURL: self.artURL)
    }

    /// Seconds into the track at `now`: the elapsed time read, plus the time since while playing,
    /// never past the track's end.
    func elapsed(at now: ContinuousClock.Instant) -> Double {
        guard let status, let elapsed = status.elapsed else { return 0 }
        guard status.state == .play else { return elapsed }
        let since = self.fetchedAt.duration(to: now)
        let seconds = Double(since.components.seconds) + Double(since.components.attoseconds) / 1e18
        let extrapolated = elapsed + max(seconds, 0)
        if let duration = self.track?.duration ?? status.duration {
            return min(extrapolated, duration)
        }
        return extrapolated
    }

    /// How far the position may stray from the extrapolation before it counts as a seek: well above
    /// the milliseconds an idle round trip takes, well below any seek a person makes.
    static let seekTolerance = 0.5

    /// The new position when the position jumped between `old` and `new` (a seek by any client, as
    /// mpDris2 detects it), nil when it moved as time did. A new track is a Metadata change, not a
    /// seek, unless it starts away from its beginning (`seek POS TIME` to another song).
    static func seekedPosition(from old: PlayerSnapshot, to new: PlayerSnapshot) -> Double? {
        guard let newStatus = new.status, newStatus.state != .stop, let newElapsed = newStatus.elapsed else {
            return nil
        }
        guard let oldStatus = old.status, oldStatus.state != .stop, oldStatus.songID == newStatus.songID,
            old.track?.file == new.track?.file
        else {
            return newElapsed > Self.seekTolerance ? newElapsed : nil
        }
        let expected = old.elapsed(at: new.fetchedAt)
        return abs(newElapsed - expected) > Self.seekTolerance ? newElapsed : nil
    }
}
