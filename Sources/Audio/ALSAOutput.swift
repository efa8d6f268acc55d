import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// Plays through alsa-lib on a named PCM device, at the stream's own rate and channel count.
///
/// Every alsa-lib call goes through `check`, which turns a negative return into an `OutputError`
/// carrying the call's name and `snd_strerror`'s text; alsa-lib's own stderr messages are silenced.
/// Underruns (-EPIPE) and suspends (-ESTRPIPE) are recovered with `snd_pcm_recover`.
public final class ALSAOutput: AudioOutput {
    /// The PCM device name: `default`, `hw:0,0`, `plughw:1`, or a name defined in `configuration`.
    public let device: String
    /// ALSA configuration text to open the device from instead of the system's (`snd_pcm_open_lconf`).
    public let configuration: String?
    /// The buffer the device is asked for; ALSA picks the nearest it supports.
    public let bufferMicroseconds: UInt32
    public private(set) var format: AudioFormat?
    /// True when the device pauses in hardware; otherwise pause drops and resume re-prepares.
    public private(set) var canPause = false
    /// The buffer size ALSA granted, in frames, while open.
    public private(set) var bufferFrames = 0
    /// Underruns and suspends recovered from since the output was opened.
    public private(set) var recoveries = 0

    private var pcm: OpaquePointer?
    private var config: OpaquePointer?
    private var pausedByDrop = false
    /// How the device takes samples; when not the stream's own layout, `write` converts into `converted`.
    private(set) var deviceFormat: DeviceSampleFormat?
    /// Converted samples, reused from write to write (allocated by hand: `snd_pcm_writei` may be called on
    /// it several times, outside any closure).
    private var converted = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Device layouts treated as refused whatever the device says (tests: a card without 24-bit words).
    let refusedDeviceFormats: [DeviceSampleFormat]

    /// Creates a closed output for `device`; nothing is opened until `open(format:)`.
    public init(
        device: String = "default", configuration: String? = nil,
        bufferMicroseconds: UInt32 = UInt32(defaultDeviceBufferNanoseconds / 1000),
        refusedDeviceFormats: [DeviceSampleFormat] = []
    ) {
        self.refusedDeviceFormats = refusedDeviceFormats
        self.device = device
        self.configuration = configuration
        self.bufferMicroseconds = bufferMicroseconds
        Self.silenceOnce
    }

    deinit {
        self.close()
        self.converted.deallocate()
    }

    private static let silenceOnce: Void = playerd_alsa_silence_errors()

    /// Opens `device` for playback and closes it again, without waiting if it is busy: whether it can
    /// be played on at all (on a machine without a sound card, `default` cannot).
    /// - Throws: `OutputError.openFailed` with ALSA's reason.
    public static func checkDevice(_ device: String) throws(OutputError) {
        Self.silenceOnce
        var pcm: OpaquePointer?
        let status = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard status >= 0, let pcm else {
            throw .openFailed(
                output: "alsa:\(device)", call: "snd_pcm_open", code: status,
                reason: String(cString: snd_strerror(status)))
        }
        snd_pcm_close(pcm)
    }

    public var name: String { "alsa:\(self.device)" }

    public func open(format: AudioFormat) throws(OutputError) {
        if self.format == format { return }
        self.close()
        var pcm: OpaquePointer?
        if let configuration {
            let config = try self.loadConfiguration(configuration)
            self.config = config
            let status = snd_pcm_open_lconf(&pcm, self.device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK, config)
            try self.checkOpen("snd_pcm_open_lconf", status)
        } else {
            // Opened without blocking, so that a device another program holds fails at once with EBUSY
            // instead of holding the audio thread until it is free; writes block again below.
            try self.checkOpen(
                "snd_pcm_open", snd_pcm_open(&pcm, self.device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK))
        }
        guard let pcm else {
            throw .openFailed(output: self.name, call: "snd_pcm_open", code: -ENODEV, reason: "no handle returned")
        }
        self.pcm = pcm
        do {
            try self.check("snd_pcm_nonblock", snd_pcm_nonblock(pcm, 0))
        } catch {
            self.close()
            throw error
        }
        do {
            try self.configure(pcm, format)
        } catch {
            self.close()
            throw error
        }
        self.format = format
        self.pausedByDrop = false
        self.recoveries = 0
    }

    public func write(_ frames: UnsafeRawBufferPointer) throws(OutputError) {
        guard let pcm = self.pcm, let format = self.format else { throw .notOpen(output: self.name) }
        guard let base = frames.baseAddress else { return }
        if self.pausedByDrop {
            try self.resume()
        }
        var offset = 0
        var remaining = frames.count / format.bytesPerFrame
        var start = UnsafeRawPointer(base)
        var bytesPerFrame = format.bytesPerFrame
        if let device = self.deviceFormat, device != DeviceSampleFormat.native(format.sampleFormat) {
            bytesPerFrame = device.bytesPerSample * format.channels
            if self.converted.count < remaining * bytesPerFrame {
                self.converted.deallocate()
                self.converted = .allocate(byteCount: remaining * bytesPerFrame, alignment: 4)
            }
            device.convert(
                frames, from: format.sampleFormat, samples: remaining * format.channels, into: self.converted)
            start = UnsafeRawPointer(self.converted.baseAddress!)
        }
        while remaining > 0 {
            let written = snd_pcm_writei(pcm, start + offset * bytesPerFrame, snd_pcm_uframes_t(remaining))
            if written >= 0 {
                offset += written
                remaining -= written
                continue
            }
            let code = Int32(written)
            if code == -EAGAIN || code == -EINTR {
                continue
            }
            // -EPIPE (underrun) and -ESTRPIPE (suspend) are recoverable; anything else (-ENODEV: the
            // device is gone) is not.
            try self.check("snd_pcm_writei", snd_pcm_recover(pcm, code, 1), reportingCode: code)
            self.recoveries += 1
        }
    }

    public func pause() throws(OutputError) {
        guard let pcm = self.pcm else { throw .notOpen(output: self.name) }
        if self.pausedByDrop { return }
        let state = snd_pcm_state(pcm)
        if state == SND_PCM_STATE_PAUSED { return }
        if self.canPause && state == SND_PCM_STATE_RUNNING {
            try self.check("snd_pcm_pause", snd_pcm_pause(pcm, 1))
        } else {
            try self.check("snd_pcm_drop", snd_pcm_drop(pcm))
            self.pausedByDrop = true
        }
    }

    public func resume() throws(OutputError) {
        guard let pcm = self.pcm else { throw .notOpen(output: self.name) }
        if self.pausedByDrop {
            try self.check("snd_pcm_prepare", snd_pcm_prepare(pcm))
            self.pausedByDrop = false
        } else if snd_pcm_state(pcm) == SND_PCM_STATE_PAUSED {
            let status = snd_pcm_pause(pcm, 0)
            if status < 0 {
                try self.check("snd_pcm_pause", snd_pcm_recover(pcm, status, 1), reportingCode: status)
            }
        }
    }

    public func drain() throws(OutputError) {
        guard let pcm = self.pcm else { throw .notOpen(output: self.name) }
        if self.pausedByDrop { return }
        if snd_pcm_state(pcm) == SND_PCM_STATE_PAUSED {
            try self.resume()
        }
        let status = snd_pcm_drain(pcm)
        if status < 0 && status != -EPIPE {
            try self.check("snd_pcm_drain", status)
        }
        // A drained PCM is in SETUP; prepare it so that the next write plays.
        try self.check("snd_pcm_prepare", snd_pcm_prepare(pcm))
    }

    public func drop() throws(OutputError) {
        guard let pcm = self.pcm else { throw .notOpen(output: self.name) }
        try self.check("snd_pcm_drop", snd_pcm_drop(pcm))
        try self.check("snd_pcm_prepare", snd_pcm_prepare(pcm))
        self.pausedByDrop = false
    }

    public var delayFrames: Int {
        guard let pcm = self.pcm, !self.pausedByDrop else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        // An xrun makes the call fail; nothing is then queued.
        guard snd_pcm_delay(pcm, &delay) == 0 else { return 0 }
        return max(0, delay)
    }

    /// From `snd_pcm_avail`, which syncs the hardware pointer first, so that the figure is exact
    /// between period interrupts. An underrun or a suspend is recovered from here as in `write`.
    public var writableFrames: Int? {
        get throws(OutputError) {
            guard let pcm = self.pcm else { return nil }
            // A device paused by dropping is re-prepared, empty, by the next write.
            if self.pausedByDrop { return self.bufferFrames }
            var available = snd_pcm_avail(pcm)
            if available == -snd_pcm_sframes_t(EPIPE) || available == -snd_pcm_sframes_t(ESTRPIPE) {
                let code = Int32(available)
                try self.check("snd_pcm_avail", snd_pcm_recover(pcm, code, 1), reportingCode: code)
                self.recoveries += 1
                available = snd_pcm_avail(pcm)
            }
            if available < 0 {
                try self.check("snd_pcm_avail", Int32(available))
            }
            // After an xrun the hardware pointer can run past the application's: never more than a buffer.
            return min(Int(available), self.bufferFrames)
        }
    }

    public var capacityFrames: Int? { self.pcm == nil ? nil : self.bufferFrames }

    public func close() {
        if let pcm = self.pcm {
            snd_pcm_close(pcm)
            self.pcm = nil
        }
        if let config = self.config {
            snd_config_delete(config)
            self.config = nil
        }
        self.format = nil
        self.pausedByDrop = false
    }

    // MARK: - Setup

    private func configure(_ pcm: OpaquePointer, _ format: AudioFormat) throws(OutputError) {
        var params: OpaquePointer?
        try self.check("snd_pcm_hw_params_malloc", snd_pcm_hw_params_malloc(&params))
        guard let params else { throw .notOpen(output: self.name) }
        defer { snd_pcm_hw_params_free(params) }

        // The stream's own layout if the device takes it, else the conversion that loses least.
        try self.check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, params))
        _ = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        let candidates = DeviceSampleFormat.candidates(for: format.sampleFormat)
        let device =
            candidates.first { candidate in
                !self.refusedDeviceFormats.contains(candidate)
                    && snd_pcm_hw_params_test_format(pcm, params, candidate.alsa) == 0
            } ?? candidates[0]
        let sampleFormat = device.alsa
        // Ask for the stream's own rate without resampling; only a device that cannot play that
        // rate at all gets alsa-lib's resampler.
        var rateCall = "snd_pcm_hw_params_set_rate"
        var rateStatus: Int32 = 0
        for resample: UInt32 in [0, 1] {
            try self.check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, params))
            try self.checkFormat(
                format, "snd_pcm_hw_params_set_access",
                snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED))
            try self.checkFormat(
                format, "snd_pcm_hw_params_set_format", snd_pcm_hw_params_set_format(pcm, params, sampleFormat))
            try self.checkFormat(
                format, "snd_pcm_hw_params_set_channels",
                snd_pcm_hw_params_set_channels(pcm, params, UInt32(format.channels)))
            rateCall = resample == 0 ? "snd_pcm_hw_params_set_rate" : "snd_pcm_hw_params_set_rate (resampling)"
            _ = snd_pcm_hw_params_set_rate_resample(pcm, params, resample)
            rateStatus = snd_pcm_hw_params_set_rate(pcm, params, UInt32(format.sampleRate), 0)
            if rateStatus == 0 { break }
        }
        try self.checkFormat(format, rateCall, rateStatus)

        var bufferTime = self.bufferMicroseconds
        var periodTime = self.bufferMicroseconds / 4
        var direction: Int32 = 0
        try self.check(
            "snd_pcm_hw_params_set_buffer_time_near",
            snd_pcm_hw_params_set_buffer_time_near(pcm, params, &bufferTime, &direction))
        try self.check(
            "snd_pcm_hw_params_set_period_time_near",
            snd_pcm_hw_params_set_period_time_near(pcm, params, &periodTime, &direction))
        try self.checkFormat(format, "snd_pcm_hw_params", snd_pcm_hw_params(pcm, params))

        self.deviceFormat = device
        self.canPause = snd_pcm_hw_params_can_pause(params) == 1
        var bufferSize: snd_pcm_uframes_t = 0
        if snd_pcm_hw_params_get_buffer_size(params, &bufferSize) == 0 {
            self.bufferFrames = Int(bufferSize)
        }
    }

    private func loadConfiguration(_ text: String) throws(OutputError) -> OpaquePointer {
        var config: OpaquePointer?
        try self.checkOpen("snd_config_top", snd_config_top(&config))
        guard let config else {
            throw .openFailed(output: self.name, call: "snd_config_top", code: -ENOMEM, reason: "no configuration")
        }
        var input: OpaquePointer?
        var bytes = Array(text.utf8)
        let status = bytes.withUnsafeMutableBytes { raw -> Int32 in
            let opened = snd_input_buffer_open(&input, raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count)
            guard opened == 0, let input else { return opened }
            defer { snd_input_close(input) }
            return snd_config_load(config, input)
        }
        guard status == 0 else {
            snd_config_delete(config)
            throw .openFailed(
                output: self.name, call: "snd_config_load", code: status, reason: String(cString: snd_strerror(status)))
        }
        return config
    }

    private func checkOpen(_ call: String, _ status: Int32) throws(OutputError) {
        guard status >= 0 else {
            throw .openFailed(
                output: self.name, call: call, code: status, reason: String(cString: snd_strerror(status)))
        }
    }

    private func checkFormat(_ format: AudioFormat, _ call: String, _ status: Int32) throws(OutputError) {
        guard status >= 0 else {
            throw .formatRejected(
                output: self.name, format: format, call: call, reason: String(cString: snd_strerror(status)))
        }
    }

    private func check(_ call: String, _ status: Int32, reportingCode code: Int32? = nil) throws(OutputError) {
        guard status >= 0 else {
            let reported = code ?? status
            throw .callFailed(
                output: self.name, call: call, code: reported, reason: String(cString: snd_strerror(reported)))
        }
    }
}
