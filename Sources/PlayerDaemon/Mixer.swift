import Audio
import Logging
import PlayerCore
import Synchronization

/// What sets the loudness (`--mixer`), as MPD's `mixer_type`.
public enum MixerChoice: Sendable, Equatable, CustomStringConvertible {
    /// playerd scales the samples: the default, bit-exact at 100.
    case software
    /// A sound card's mixer. `control` nil picks `PCM`, then `Master`, then the first control with a
    /// playback volume; `device` nil takes the ctl device of the first ALSA output (`default` without one).
    case hardware(control: String?, device: String?)
    /// Nothing: the samples pass at full level, and `setvol` answers "No mixer".
    case none

    /// `software`, `none`, `hardware` or `hardware:CONTROL`.
    public init(parsing text: String) throws(MixerChoiceError) {
        switch text {
        case "software": self = .software
        case "none": self = .none
        case "hardware": self = .hardware(control: nil, device: nil)
        case let text where text.hasPrefix("hardware:"):
            let control = String(text.dropFirst("hardware:".count))
            guard !control.isEmpty else { throw MixerChoiceError(text: text, reason: "the control's name is empty") }
            self = .hardware(control: control, device: nil)
        default:
            throw MixerChoiceError(text: text, reason: "expected software, hardware, hardware:CONTROL or none")
        }
    }

    public var description: String {
        switch self {
        case .software: "software"
        case .none: "none"
        case .hardware(let control, let device):
            "hardware" + (control.map { ":" + $0 } ?? "") + (device.map { " on " + $0 } ?? "")
        }
    }

    /// The ctl device a hardware mixer opens: the one given, else the card of the first ALSA output.
    public static func ctlDevice(given: String?, outputs: [ConfiguredOutput]) -> String {
        if let given { return given }
        for output in outputs {
            if case .alsa(let device) = output.spec { return HardwareMixer.ctlDevice(forPCM: device) }
        }
        return "default"
    }
}

/// A `--mixer` value that is not one.
public struct MixerChoiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value given.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "invalid --mixer \"\(self.text)\": \(self.reason)" }
}

/// The sound card's mixer as the daemon keeps it: opened at start, watched for other programs'
/// changes, and, when it cannot be opened or goes away (a USB card unplugged, the sound server
/// restarted), tried again every 10 seconds while playback goes on at whatever level the card has.
/// Once attached to the engine, every reading it learns (nil while there is none) is mirrored into
/// the player's status: clients see it in `status`, idle `mixer` and MPRIS.
final class CardMixer: Sendable {
    let device: String
    let control: String?
    private let logger: Logger
    private let retryInterval: Duration

    private struct State {
        var engine: AudioEngine?
        var mixer: HardwareMixer?
        /// Why the mixer is not open, once it has failed (logged when it changes).
        var problem: HardwareMixerError?
        var retrying: Task<Void, Never>?
        var stopped = false
    }
    private let state = Mutex(State())

    init(device: String, control: String?, logger: Logger, retryInterval: Duration = .seconds(10)) {
        self.device = device
        self.control = control
        self.logger = logger
        self.retryInterval = retryInterval
    }

    /// From now on, the engine's volume follows the card's.
    func attach(to engine: AudioEngine) {
        self.state.withLock { $0.engine = engine }
        self.changed()
    }

    /// Mirrors the card's reading into the engine. The reading is taken when the mirror runs, not
    /// when the change was seen, so two changes mirrored out of order still end at the latest; and the
    /// engine too, so that a mirror late for a partition the mixer has left goes to the one it is in.
    private func changed() {
        guard self.state.withLock({ $0.engine }) != nil else { return }
        Task {
            guard let engine = self.state.withLock({ $0.engine }) else { return }
            // Checked again on the engine's queue: a hand-over to another partition between here
            // and there has already set this engine's volume to none, and must stay.
            await engine.mirrorVolume(
                if: { self.state.withLock { $0.engine } === engine }, reading: { self.volume() })
        }
    }

    /// Opens the mixer now (its reading is then `volume()`), or logs why not and starts retrying.
    func start() {
        if !self.open() { self.retryLater() }
    }

    /// The card's volume, or nil while its mixer is not open.
    func volume() -> Int? {
        self.state.withLock { $0.mixer }?.volume()
    }

    /// Sets the card's volume.
    /// - Throws: the reason, when the mixer is not open or alsa-lib refuses.
    func setVolume(_ percent: Int) throws(HardwareMixerError) {
        let (mixer, problem) = self.state.withLock { ($0.mixer, $0.problem) }
        guard let mixer else {
            throw problem ?? .open(device: self.device, reason: "not open yet")
        }
        try mixer.setVolume(percent)
    }

    /// Stops watching and retrying, and closes the mixer.
    func stop() {
        let (mixer, retrying) = self.state.withLock { state in
            state.stopped = true
            defer {
                state.mixer = nil
                state.retrying = nil
            }
            return (state.mixer, state.retrying)
        }
        retrying?.cancel()
        mixer?.close()
    }

    /// Tries to open and watch the mixer; true when it is open.
    private func open() -> Bool {
        let mixer: HardwareMixer
        do {
            mixer = try HardwareMixer(device: self.device, control: self.control)
        } catch {
            self.failed(error)
            return false
        }
        let opened = self.state.withLock { state in
            guard !state.stopped else { return false }
            state.mixer = mixer
            state.problem = nil
            return true
        }
        guard opened else {
            mixer.close()
            return false
        }
        mixer.startWatching(
            onChange: { [weak self] _ in self?.changed() },
            onLost: { [weak self] reason in self?.lost(mixer, reason: reason) })
        self.logger.info(
            "volume: mixer \"\(self.device)\" control \"\(mixer.control)\", at \(mixer.volume().map { "\($0)%" } ?? "an unknown level")"
        )
        self.changed()
        return true
    }

    /// Notes a failure to open, logged once per reason.
    private func failed(_ error: HardwareMixerError) {
        let isNew = self.state.withLock { state in
            defer { state.problem = error }
            return state.problem != error
        }
        if isNew {
            self.logger.error(
                "\(error); the volume cannot be set, and opening the mixer is tried again every 10 seconds")
        }
    }

    private func lost(_ mixer: HardwareMixer, reason: String) {
        let isCurrent = self.state.withLock { state in
            guard state.mixer === mixer else { return false }
            state.mixer = nil
            state.problem = .failed(device: self.device, control: mixer.control, reason: "it went away (\(reason))")
            return true
        }
        guard isCurrent else { return }
        mixer.close()
        self.logger.warning("mixer \"\(self.device)\" went away (\(reason)); it is tried again every 10 seconds")
        self.changed()
        self.retryLater()
    }

    private func retryLater() {
        let interval = self.retryInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                if self.open() { return }
            }
        }
        let keep = self.state.withLock { state in
            guard !state.stopped else { return false }
            state.retrying?.cancel()
            state.retrying = task
            return true
        }
        if !keep { task.cancel() }
    }
}
