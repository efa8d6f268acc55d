/// Where decoded PCM goes: a sound card, nowhere, or a file. One small interface, as MPD's outputs
/// share: open with a format, write frames, pause, resume, drain, drop, ask the delay, close.
///
/// A paced output also says how much it can take without blocking (`writableFrames`) out of how much
/// it holds (`capacityFrames`), so that its writer can sleep somewhere it can be woken (a mailbox)
/// until the buffer has drained, instead of inside `write`.
///
/// An output belongs to one thread (the audio thread): it is not `Sendable`. Calls other than
/// `open(format:)` and `close()` need an open output and throw `OutputError.notOpen` otherwise.
/// How much audio a device buffers by default, for ALSA and for the paced null output that stands in
/// for it: half a second, MPD's `buffer_time`. The engine refills the buffer when half of it has
/// drained, so the larger the buffer, the fewer times a second the audio thread wakes and the warmer
/// the decoder's caches are when it does (measured: 200 ms cost 0.27 % of a core, 500 ms 0.23 %).
/// Commands are not delayed by it (play, pause, seek and stop drop what is queued); a volume change
/// is heard once the audio already queued has played, as with MPD's software mixer.
public let defaultDeviceBufferNanoseconds: Int64 = 500_000_000

public protocol AudioOutput: AnyObject {
    /// The output as its spec names it, e.g. `alsa:default`, `null`, `wav:/tmp/out.wav`.
    var name: String { get }
    /// The format it was opened with, or nil while closed.
    var format: AudioFormat? { get }
    /// Acquires the device (or file) for a stream of `format`. Opening an open output with another
    /// format closes it first; with the same format it does nothing.
    func open(format: AudioFormat) throws(OutputError)
    /// Plays whole interleaved frames in the open format, blocking while the device's buffer is full,
    /// as a sound card does. `frames.count` must be a multiple of the frame size.
    func write(_ frames: UnsafeRawBufferPointer) throws(OutputError)
    /// Stops playing at once, keeping what is buffered.
    func pause() throws(OutputError)
    /// Goes on playing from where `pause()` stopped.
    func resume() throws(OutputError)
    /// Blocks until everything written has been played.
    func drain() throws(OutputError)
    /// Discards everything written but not yet played.
    func drop() throws(OutputError)
    /// Frames written but not yet heard: playback position = frames written − delay.
    var delayFrames: Int { get }
    /// Frames `write` would take now without blocking; nil for an output whose writes never block (a
    /// file, the unpaced null output), that cannot tell, or that is closed. Asking may recover the
    /// device from an underrun or a suspend, as `write` does.
    var writableFrames: Int? { get throws(OutputError) }
    /// Frames the device's buffer holds when full; nil exactly when `writableFrames` is.
    var capacityFrames: Int? { get }
    /// Frames the output has thrown away since it was made because whatever reads from it did not
    /// keep up (a FIFO whose reader stalled): counted, never waited for.
    var droppedFrames: Int { get }
    /// A problem the output lives with while it goes on taking frames (a FIFO with no reader yet), or
    /// nil. An output that cannot go on throws instead.
    var problem: String? { get }
    /// Releases the device (or finishes the file). Safe to call when already closed.
    func close()
}

extension AudioOutput {
    /// An output that does not say is written to as before `writableFrames` existed: its `write`
    /// blocks for as long as it needs.
    public var writableFrames: Int? { nil }
    public var capacityFrames: Int? { nil }
    public var droppedFrames: Int { 0 }
    public var problem: String? { nil }
}

/// Why an output failed. Every case names the output; ALSA's come with snd_strerror's text.
public enum OutputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device or file could not be opened: missing, busy, or not permitted.
    case openFailed(output: String, call: String, code: Int32, reason: String)
    /// The device refused the stream's format (rate, channels or sample format).
    case formatRejected(output: String, format: AudioFormat, call: String, reason: String)
    /// A call on the open output failed: writing, pausing, draining, or the device vanished.
    case callFailed(output: String, call: String, code: Int32, reason: String)
    /// The call needs an open output.
    case notOpen(output: String)
    /// Every output the player has is disabled (MPD's words for it).
    case noOutputEnabled

    /// The output the error is about.
    public var output: String {
        switch self {
        case .openFailed(let output, _, _, _), .formatRejected(let output, _, _, _),
            .callFailed(let output, _, _, _), .notOpen(let output):
            output
        case .noOutputEnabled: "outputs"
        }
    }

    /// The negative errno the failing call returned, if any: `-EBUSY` for a busy device.
    public var code: Int32? {
        switch self {
        case .openFailed(_, _, let code, _), .callFailed(_, _, let code, _): code
        case .formatRejected, .notOpen, .noOutputEnabled: nil
        }
    }

    public var description: String {
        switch self {
        case .openFailed(let output, let call, _, let reason):
            "\(output): cannot open (\(call): \(reason))"
        case .formatRejected(let output, let format, let call, let reason):
            "\(output): format \(format.readableDescription) not supported (\(call): \(reason))"
        case .callFailed(let output, let call, _, let reason):
            "\(output): \(call) failed: \(reason)"
        case .notOpen(let output):
            "\(output): output is not open"
        case .noOutputEnabled:
            "All audio outputs are disabled"
        }
    }
}
