import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// Why the card's mixer could not be opened or set.
public enum HardwareMixerError: Error, Equatable, CustomStringConvertible {
    /// The ctl device would not open or load (no such card, no server for `pulse`).
    case open(device: String, reason: String)
    /// The control asked for is not there; `available` lists the card's playback-volume controls.
    case noSuchControl(device: String, control: String, available: [String])
    /// The card has no control with a playback volume at all.
    case noPlaybackVolume(device: String)
    /// alsa-lib refused to set or read the volume.
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
/// (`VolumeMapping`), with a thread that reports changes other programs make.
///
/// `@unchecked Sendable`: the alsa-lib handle and every mutable field are touched only while
/// `mutex` is held (the watcher thread and callers of `volume()`/`setVolume(_:)` take it); the
/// watcher's poll descriptors and stop pipe are written once before the thread starts.
public final class HardwareMixer: @unchecked Sendable {
    /// The ctl device the mixer was opened on (`hw:1`, `default`, `pulse`).
    public let device: String
    /// The control in use (`PCM`, `Master`, ...).
    public let control: String

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var handle: OpaquePointer?
    private let element: OpaquePointer
    /// The last percent set or reported, and the control's value (raw or dB × 100) right after it
    /// was set: a coarse control reads back the step, and the percent that made it is reported
    /// while the control stays on that step, so `setvol 37` reads back 37.
    private var lastPercent: Int?
    private var lastSetValue: Int?
    private var lastSetPercent = 0
    private var watcher: pthread_t?
    private var stopPipe: (read: Int32, write: Int32) = (-1, -1)
    private var onChange: (@Sendable (Int) -> Void)?
    private var closed = false

    /// The ctl device of an ALSA PCM name: `hw:1,0` and `plughw:1,0` → `hw:1`; others as they are.
    public static func ctlDevice(forPCM pcm: String) -> String {
        for prefix in ["hw:", "plughw:"] where pcm.hasPrefix(prefix) {
            let card = pcm.dropFirst(prefix.count).split(separator: ",", maxSplits: 1).first ?? ""
            return "hw:" + card
        }
        return pcm
    }

    /// Opens `device`'s mixer and finds `control`, or when it is nil `PCM`, then `Master`, then the
    /// first control with a playback volume.
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
        let chosen: (name: String, element: OpaquePointer)?
        if let control {
            chosen = controls.first { $0.name == control }
            if chosen == nil {
                snd_mixer_close(opened)
                throw .noSuchControl(device: device, control: control, available: controls.map(\.name))
            }
        } else {
            chosen =
                controls.first { $0.name == "PCM" } ?? controls.first { $0.name == "Master" } ?? controls.first
        }
        guard let chosen else {
            snd_mixer_close(opened)
            throw .noPlaybackVolume(device: device)
        }
        self.control = chosen.name
        self.element = chosen.element
        self.handle = opened
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        close()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func locked<T>(_ body: () throws(HardwareMixerError) -> T) throws(HardwareMixerError) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// The control's dB range (× 100), when it has a usable one.
    private func dBRange() -> (min: Int, max: Int)? {
        var low = 0
        var high = 0
        guard snd_mixer_selem_get_playback_dB_range(element, &low, &high) >= 0, low < high else { return nil }
        return (low, high)
    }

    private func rawRange() -> (min: Int, max: Int) {
        var low = 0
        var high = 0
        _ = snd_mixer_selem_get_playback_volume_range(element, &low, &high)
        return (low, high)
    }

    /// The control's value (dB × 100 when it has a dB range, else raw), averaged over its channels.
    private func currentValue(dB: Bool) -> Int? {
        var total = 0
        var count = 0
        for channel in 0...Int(SND_MIXER_SCHN_LAST.rawValue) {
            let id = snd_mixer_selem_channel_id_t(rawValue: Int32(channel))
            guard snd_mixer_selem_has_playback_channel(element, id) != 0 else { continue }
            var value = 0
            let result =
                dB
                ? snd_mixer_selem_get_playback_dB(element, id, &value)
                : snd_mixer_selem_get_playback_volume(element, id, &value)
            guard result >= 0 else { continue }
            total += value
            count += 1
        }
        return count == 0 ? nil : Int((Double(total) / Double(count)).rounded())
    }

    /// Call with the lock held.
    private func readPercent() -> Int? {
        guard handle != nil else { return nil }
        if let range = dBRange(), let value = currentValue(dB: true) {
            if value == lastSetValue { return lastSetPercent }
            return VolumeMapping.percent(dB: value, min: range.min, max: range.max)
        }
        let range = rawRange()
        guard let value = currentValue(dB: false) else { return nil }
        if value == lastSetValue { return lastSetPercent }
        return VolumeMapping.percent(raw: value, min: range.min, max: range.max)
    }

    /// The volume in percent, or nil when the mixer has been closed or cannot be read.
    public func volume() -> Int? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return readPercent()
    }

    /// Sets every channel to `percent` (0...100).
    public func setVolume(_ percent: Int) throws(HardwareMixerError) {
        let percent = min(max(percent, 0), 100)
        try locked { () throws(HardwareMixerError) in
            guard handle != nil else {
                throw .failed(device: device, control: control, reason: "mixer closed")
            }
            let result: Int32
            let usesDB: Bool
            if let range = dBRange() {
                let value = VolumeMapping.dB(percent: percent, min: range.min, max: range.max)
                // round towards the requested value: down when lowering, up when raising
                result = snd_mixer_selem_set_playback_dB_all(element, value, percent >= 50 ? 1 : -1)
                usesDB = true
            } else {
                let range = rawRange()
                result = snd_mixer_selem_set_playback_volume_all(
                    element, VolumeMapping.raw(percent: percent, min: range.min, max: range.max))
                usesDB = false
            }
            guard result >= 0 else {
                throw .failed(device: device, control: control, reason: String(cString: snd_strerror(result)))
            }
            lastSetValue = currentValue(dB: usesDB)
            lastSetPercent = percent
            lastPercent = percent
        }
    }

    /// Starts a thread that calls `onChange` with the new percent when another program changes the
    /// control (the echoes of `setVolume` are not reported). Once only.
    public func startWatching(onChange: @escaping @Sendable (Int) -> Void) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard watcher == nil, let handle else { return }
        self.onChange = onChange
        lastPercent = readPercent()
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        stopPipe = (fds[0], fds[1])
        _ = handle
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let mixer = Unmanaged<HardwareMixer>.fromOpaque(context!).takeRetainedValue()
                mixer.watch()
                return nil
            }, context)
        if created == 0 {
            watcher = thread
        } else {
            Unmanaged<HardwareMixer>.fromOpaque(context).release()
        }
    }

    private func pollDescriptors() -> [pollfd] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let handle else { return [] }
        let count = snd_mixer_poll_descriptors_count(handle)
        guard count > 0 else { return [] }
        var fds = [pollfd](repeating: pollfd(), count: Int(count))
        let filled = snd_mixer_poll_descriptors(handle, &fds, UInt32(count))
        return Array(fds.prefix(Int(max(filled, 0))))
    }

    private func watch() {
        let mixerFDs = pollDescriptors()
        while true {
            var fds = mixerFDs
            fds.append(pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0))
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[fds.count - 1].revents != 0 { return }
            var report: (@Sendable (Int) -> Void, Int)?
            pthread_mutex_lock(mutex)
            if let handle {
                var revents: UInt16 = 0
                _ = snd_mixer_poll_descriptors_revents(handle, &fds, UInt32(mixerFDs.count), &revents)
                _ = snd_mixer_handle_events(handle)
                if let percent = readPercent(), percent != lastPercent {
                    lastPercent = percent
                    if let onChange { report = (onChange, percent) }
                }
            }
            pthread_mutex_unlock(mutex)
            if let (onChange, percent) = report { onChange(percent) }
        }
    }

    /// Stops the watcher and closes the mixer. Calls to `volume()` then answer nil.
    public func close() {
        pthread_mutex_lock(mutex)
        if closed {
            pthread_mutex_unlock(mutex)
            return
        }
        closed = true
        let thread = watcher
        watcher = nil
        pthread_mutex_unlock(mutex)
        if let thread {
            var byte: UInt8 = 1
            _ = write(stopPipe.write, &byte, 1)
            if pthread_equal(thread, pthread_self()) == 0 { pthread_join(thread, nil) }
        }
        pthread_mutex_lock(mutex)
        if let handle { snd_mixer_close(handle) }
        handle = nil
        onChange = nil
        pthread_mutex_unlock(mutex)
        if stopPipe.read >= 0 {
            Glibc.close(stopPipe.read)
            Glibc.close(stopPipe.write)
            stopPipe = (-1, -1)
        }
    }
}
