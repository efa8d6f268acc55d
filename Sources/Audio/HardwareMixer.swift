import CALSA
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why the card's mixer could not be opened, read or set.
public enum HardwareMixerError: Error, Equatable, CustomStringConvertible {
    /// The ctl device would not open or load (no such card, no server for `pulse`).
    case open(device: String, reason: String)
    /// The control asked for is not there; `available` lists the card's playback-volume controls.
    case noSuchControl(device: String, control: String, available: [String])
    /// The card has no control with a playback volume at all.
    case noPlaybackVolume(device: String)
    /// alsa-lib refused to set or read the volume, or the mixer has gone (card unplugged, server gone).
    case failed(device: String, control: String, reason: String)

    public var description: String {
        switch self {
        case .open(let device, let reason):
            return "cannot open mixer \"\(device)\": \(reason)"
        case .noSuchControl(let device, let control, let available):
            let list = available.isEmpty ? "none" : available.map { "\"\($0)\"" }.joined(separator: ", ")
            return "mixer \"\(device)\" has no control \"\(control)\" (its playback volume controls: \(list))"
        case .noPlaybackVolume(let device):
            return "mixer \"\(device)\" has no control with a playback volume"
        case .failed(let device, let control, let reason):
            return "mixer \"\(device)\" control \"\(control)\": \(reason)"
        }
    }
}

/// A sound card's volume through alsa-lib's simple mixer API, in percent mapped as alsamixer maps it
/// (`VolumeMapping`), with a thread that reports the changes other programs make.
///
/// `@unchecked Sendable`: the alsa-lib handles are touched only while `state` is locked (by callers
/// and by the watcher thread); the stop pipe is made before the thread starts and closed after it ends.
public final class HardwareMixer: @unchecked Sendable {
    /// The ctl device the mixer was opened on (`hw:1`, `default`, `pulse`).
    public let device: String
    /// The control in use (`PCM`, `Master`, ...).
    public let control: String

    private struct State {
        var handle: OpaquePointer?
        /// The percent last set, and the control's value right after it was set: a coarse control
        /// reads back its step, and while it stays on that step the percent that put it there is
        /// what it reads, so `setvol 37` reads back 37.
        var lastSet: (percent: Int, value: Int)?
        /// The percent last reported to the watcher's callback.
        var lastReported: Int?
        var watcher: pthread_t?
        var stopPipe: (read: Int32, write: Int32) = (-1, -1)
    }

    private let element: OpaquePointer
    private let state: Mutex<State>

    /// The ctl device of an ALSA PCM name: `hw:1,0` and `plughw:1,0` → `hw:1`, and `hw:CARD=x,DEV=0`
    /// → `hw:CARD=x`; other names (`default`, `pulse`) as they are.
    public static func ctlDevice(forPCM pcm: String) -> String {
        for prefix in ["hw:", "plughw:"] where pcm.hasPrefix(prefix) {
            let card = pcm.dropFirst(prefix.count).split(separator: ",", maxSplits: 1).first ?? ""
            return "hw:" + card
        }
        return pcm
    }

    /// Opens `device`'s mixer and finds `control`, or when it is nil `PCM`, then `Master`, then the
    /// first control with a playback volume (cmus's order; MPD's fixed `PCM` fails where there is none).
    public init(device: String, control: String?) throws(HardwareMixerError) {
        playerd_alsa_silence_errors()
        self.device = device
        var opened: OpaquePointer?
        var result = snd_mixer_open(&opened, 0)
        guard result >= 0, let opened else {
            throw .open(device: device, reason: String(cString: snd_strerror(result)))
        }
        result = snd_mixer_attach(opened, device)
        if result >= 0 { result = snd_mixer_selem_register(opened, nil, nil) }
        if result >= 0 { result = snd_mixer_load(opened) }
        guard result >= 0 else {
            snd_mixer_close(opened)
            throw .open(device: device, reason: String(cString: snd_strerror(result)))
        }
        var controls: [(name: String, element: OpaquePointer)] = []
        var next = snd_mixer_first_elem(opened)
        while let current = next {
            if snd_mixer_selem_has_playback_volume(current) != 0, snd_mixer_selem_get_index(current) == 0 {
                controls.append((String(cString: snd_mixer_selem_get_name(current)), current))
            }
            next = snd_mixer_elem_next(current)
        }
        let chosen =
            if let control {
                controls.first { $0.name == control }
            } else {
                controls.first { $0.name == "PCM" } ?? controls.first { $0.name == "Master" } ?? controls.first
            }
        guard let chosen else {
            snd_mixer_close(opened)
            if let control {
                throw .noSuchControl(device: device, control: control, available: controls.map(\.name))
            }
            throw .noPlaybackVolume(device: device)
        }
        self.control = chosen.name
        self.element = chosen.element
        self.state = Mutex(State(handle: opened))
    }

    deinit {
        self.close()
    }

    /// How the control's values map to percent: its dB range when it has one, else its raw steps.
    private func mapping() -> VolumeMapping {
        var low = 0
        var high = 0
        let decibels: (minimum: Int, maximum: Int)? =
            snd_mixer_selem_get_playback_dB_range(self.element, &low, &high) >= 0 ? (low, high) : nil
        var rawLow = 0
        var rawHigh = 0
        _ = snd_mixer_selem_get_playback_volume_range(self.element, &rawLow, &rawHigh)
        return VolumeMapping.forControl(decibels: decibels, raw: (rawLow, rawHigh))
    }

    /// The control's value in `mapping`'s unit, averaged over its channels; nil when none reads.
    private func currentValue(_ mapping: VolumeMapping) -> Int? {
        var total = 0
        var count = 0
        for channel in 0...Int(SND_MIXER_SCHN_LAST.rawValue) {
            let id = snd_mixer_selem_channel_id_t(rawValue: Int32(channel))
            guard snd_mixer_selem_has_playback_channel(self.element, id) != 0 else { continue }
            var value = 0
            let result =
                if case .decibels = mapping {
                    snd_mixer_selem_get_playback_dB(self.element, id, &value)
                } else {
                    snd_mixer_selem_get_playback_volume(self.element, id, &value)
                }
            guard result >= 0 else { continue }
            total += value
            count += 1
        }
        return count == 0 ? nil : Int((Double(total) / Double(count)).rounded())
    }

    /// The percent the control reads as. Call with the lock held.
    private func readPercent(_ state: inout State) -> Int? {
        guard state.handle != nil else { return nil }
        let mapping = self.mapping()
        guard let value = self.currentValue(mapping) else { return nil }
        if let lastSet = state.lastSet, lastSet.value == value { return lastSet.percent }
        return mapping.percent(value)
    }

    /// The volume in percent, or nil when the mixer is closed or cannot be read.
    public func volume() -> Int? {
        self.state.withLock { self.readPercent(&$0) }
    }

    /// Sets every channel to `percent` (clamped to 0...100).
    public func setVolume(_ percent: Int) throws(HardwareMixerError) {
        let percent = min(max(percent, 0), 100)
        let failure: String? = self.state.withLock { state in
            guard state.handle != nil else { return "the mixer is closed" }
            let mapping = self.mapping()
            let value = mapping.value(percent: percent)
            let result =
                if case .decibels = mapping {
                    snd_mixer_selem_set_playback_dB_all(self.element, value, 0)
                } else {
                    snd_mixer_selem_set_playback_volume_all(self.element, value)
                }
            guard result >= 0 else { return String(cString: snd_strerror(result)) }
            state.lastSet = self.currentValue(mapping).map { (percent, $0) }
            state.lastReported = percent
            return nil
        }
        if let failure {
            throw .failed(device: self.device, control: self.control, reason: failure)
        }
    }

    /// Starts a thread that calls `onChange` with the new percent when another program changes the
    /// control (the echoes of `setVolume` are not reported), and `onLost` once, from that thread,
    /// when the mixer stops answering (the card unplugged, the sound server gone); the mixer is
    /// useless then and should be closed. Once only; false when the mixer has nothing to poll (or is
    /// watched already).
    @discardableResult
    public func startWatching(
        onChange: @escaping @Sendable (Int) -> Void, onLost: @escaping @Sendable (String) -> Void
    ) -> Bool {
        let descriptors: [pollfd]? = self.state.withLock { state in
            guard state.watcher == nil, let handle = state.handle else { return nil }
            let count = snd_mixer_poll_descriptors_count(handle)
            guard count > 0 else { return nil }
            var descriptors = [pollfd](repeating: pollfd(), count: Int(count))
            let filled = snd_mixer_poll_descriptors(handle, &descriptors, UInt32(count))
            guard filled > 0 else { return nil }
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            state.stopPipe = (ends[0], ends[1])
            state.lastReported = self.readPercent(&state)
            return Array(descriptors.prefix(Int(filled)))
        }
        guard let descriptors else { return false }
        let watch = Watch(mixer: self, descriptors: descriptors, onChange: onChange, onLost: onLost)
        let thread = startThread { watch.run() }
        self.state.withLock { $0.watcher = thread }
        return true
    }

    /// What the watcher thread holds: the mixer (kept alive until `close()` ends the thread) and the
    /// callbacks.
    private final class Watch: @unchecked Sendable {
        let mixer: HardwareMixer
        let descriptors: [pollfd]
        let onChange: @Sendable (Int) -> Void
        let onLost: @Sendable (String) -> Void

        init(
            mixer: HardwareMixer, descriptors: [pollfd], onChange: @escaping @Sendable (Int) -> Void,
            onLost: @escaping @Sendable (String) -> Void
        ) {
            self.mixer = mixer
            self.descriptors = descriptors
            self.onChange = onChange
            self.onLost = onLost
        }

        func run() {
            let stop = self.mixer.state.withLock { $0.stopPipe.read }
            while true {
                var polled = self.descriptors
                polled.append(pollfd(fd: stop, events: Int16(POLLIN), revents: 0))
                let ready = poll(&polled, nfds_t(polled.count), -1)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 || polled[polled.count - 1].revents != 0 { return }
                switch self.mixer.handleEvents(&polled, count: self.descriptors.count) {
                case .quiet: continue
                case .changed(let percent): self.onChange(percent)
                case .lost(let reason):
                    self.onLost(reason)
                    return
                }
            }
        }
    }

    private enum Event {
        case quiet
        case changed(Int)
        case lost(String)
    }

    /// Reads what the mixer's descriptors announced. Called by the watcher thread.
    private func handleEvents(_ polled: inout [pollfd], count: Int) -> Event {
        self.state.withLock { state in
            guard let handle = state.handle else { return .quiet }
            var events: UInt16 = 0
            let result = snd_mixer_poll_descriptors_revents(handle, &polled, UInt32(count), &events)
            if result < 0 { return .lost(String(cString: snd_strerror(result))) }
            if Int32(events) & (POLLERR | POLLHUP | POLLNVAL) != 0 { return .lost("the mixer device went away") }
            let handled = snd_mixer_handle_events(handle)
            if handled < 0 { return .lost(String(cString: snd_strerror(handled))) }
            guard let percent = self.readPercent(&state) else { return .lost("its volume cannot be read") }
            guard percent != state.lastReported else { return .quiet }
            state.lastReported = percent
            return .changed(percent)
        }
    }

    /// Stops the watcher and closes the mixer; `volume()` then answers nil. A mixer being watched
    /// lives until it is closed. From `onLost` or `onChange`, the watcher thread is left to end by itself.
    public func close() {
        let (thread, stopPipe) = self.state.withLock { state in
            defer { state.watcher = nil }
            return (state.watcher, state.stopPipe)
        }
        if let thread {
            var byte: UInt8 = 1
            _ = write(stopPipe.write, &byte, 1)
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
        self.state.withLock { state in
            if let handle = state.handle { snd_mixer_close(handle) }
            state.handle = nil
            if state.stopPipe.read >= 0 {
                Glibc.close(state.stopPipe.read)
                Glibc.close(state.stopPipe.write)
                state.stopPipe = (-1, -1)
            }
        }
    }
}
