/// The hooks every state struct has: what must happen as the player leaves it and as it enters it.
/// They only return effects; the engine performs them.
protocol PlayerStateHooks {
    /// Effects of leaving this state for `next`.
    func willExit(to next: PlayerState) -> [PlayerEffect]
    /// Effects of entering this state from `previous`.
    func didEnter(from previous: PlayerState) -> [PlayerEffect]
}

extension StopState: PlayerStateHooks {
    func willExit(to next: PlayerState) -> [PlayerEffect] { [] }

    func didEnter(from previous: PlayerState) -> [PlayerEffect] { [] }
}

extension PrepareState: PlayerStateHooks {
    func willExit(to next: PlayerState) -> [PlayerEffect] {
        switch next {
        case .prepare: [.closeDecoder]
        case .stop: [.dropOutput, .closeDecoder, .releaseOutput]
        case .play, .pause: []
        }
    }

    func didEnter(from previous: PlayerState) -> [PlayerEffect] {
        [.openDecoder(entry: self.entry, startOffset: self.startOffset)]
    }
}

extension PlayState: PlayerStateHooks {
    func willExit(to next: PlayerState) -> [PlayerEffect] {
        switch next {
        case .pause(let pause):
            // Released: the buffer goes with the device, so the decoder steps back to what was heard.
            pause.releasedOutput ? [.rewindDecoderToHeard, .releaseOutput] : [.pauseOutput]
        case .prepare(let prepare):
            // At a song boundary the tail still buffered is the end of this song: it must be heard.
            prepare.reason == .songBoundary ? [.closeDecoder] : [.dropOutput, .closeDecoder]
        case .stop: [.dropOutput, .closeDecoder, .releaseOutput]
        case .play: []
        }
    }

    func didEnter(from previous: PlayerState) -> [PlayerEffect] {
        switch previous {
        case .pause(let pause) where !pause.releasedOutput: [.resumeOutput]
        default: [.openOutput(self.song.format)]
        }
    }
}

extension PauseState: PlayerStateHooks {
    func willExit(to next: PlayerState) -> [PlayerEffect] {
        switch next {
        // The held device was paused: what it holds belongs to this song, and it must run again for
        // the next one (which plays, or lands paused holding nothing).
        case .prepare: self.releasedOutput ? [.closeDecoder] : [.dropOutput, .resumeOutput, .closeDecoder]
        case .stop: [.dropOutput, .closeDecoder, .releaseOutput]
        case .play, .pause: []
        }
    }

    func didEnter(from previous: PlayerState) -> [PlayerEffect] { [] }
}

extension PlayerState {
    var hooks: any PlayerStateHooks {
        switch self {
        case .stop(let state): state
        case .prepare(let state): state
        case .play(let state): state
        case .pause(let state): state
        }
    }
}
