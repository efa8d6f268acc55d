import Audio

/// Work the audio engine must do after a transition. The core only decides; the engine, on the audio
/// thread, opens and closes decoders and devices, in the order given.
public enum PlayerEffect: Sendable, Hashable {
    /// Open the entry's file and position it `startOffset` nanoseconds in; report back with
    /// `EngineEvent.songOpened` or `.songFailed`.
    case openDecoder(entry: QueueEntry, startOffset: Int64)
    /// Close the current decoder.
    case closeDecoder
    /// Have the output open in `format`: nothing if it already is; if it is open in another format,
    /// let it play out (drain) and reopen it.
    case openOutput(AudioFormat)
    /// Discard audio buffered in the output, so that a skip or seek is heard at once.
    case dropOutput
    /// Let buffered audio play out (the end of the queue).
    case drainOutput
    /// Stop the output at once, keeping its buffer.
    case pauseOutput
    /// Let a paused output go on.
    case resumeOutput
    /// Close the device, freeing it for other programs.
    case releaseOutput
    /// Reposition the open decoder at `offset` nanoseconds into the song.
    case seekDecoder(offset: Int64)
    /// Reposition the open decoder at the frame the listener last heard, before the device is
    /// released with its buffer (release-on-pause), so that nothing is skipped on resume.
    case rewindDecoderToHeard
}

/// What the engine reports back to the context about the effects it performed.
public enum EngineEvent: Sendable, Hashable {
    /// The decoder for `song.entry` is open.
    case songOpened(OpenSong)
    /// The entry's file could not be opened; `message` names the file and the reason.
    case songFailed(QueueEntry, message: String)
    /// The current song's decoder reached its end; `message` is set when it broke off with an error.
    case songEnded(QueueEntry, message: String?)
    /// The output failed (device gone, busy, unwritable): playback cannot go on.
    case outputFailed(message: String)
}
