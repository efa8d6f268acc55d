// The audio thread. It alone owns the decoder, the output and the PlayerContext: it creates and
// destroys the C handles itself, decodes one period at a time, applies the volume and writes to the
// output, and takes commands from its mailbox between periods. It never touches a socket and never
// waits on anything but the device, its clock and its mailbox.
//
// While playing on an output that says how much room it has, it refills the device's buffer in bursts:
// periods back to back while a whole one fits, then one wait, on the mailbox, until half the buffer has
// drained (less after an underrun). A command ends that wait at once, so it takes effect within one
// period as before, but the thread wakes a few times a second instead of once per period inside a
// blocking write.

import Audio
import Dispatch
import MusicTags
import StreamInput

#if canImport(Glibc)
    import Glibc
#endif

/// The audio thread's state. Confined to that thread: not `Sendable`.
final class EngineCore {
    private(set) var context: PlayerContext
    private let configuration: EngineConfiguration
    /// The configuration's clock, held apart so that reading the time does not copy it out of the configuration.
    private let clock: any PacingClock
    private let shared: EngineShared
    private let output: OutputFanOut
    private var decoder: SongDecoder?
    private var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16)
    /// With crossfade on, the song that follows the current one when it ends by itself, opened ahead
    /// (MPD's queued song), and the fade into it once it has begun.
    private var upcoming: Upcoming?
    /// The next song's PCM during a fade, mixed into `buffer`.
    private var fadeBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16)
    /// True while the engine reports that the current song ended by itself: the song that was fading in
    /// goes on from where the fade left it.
    private var endingNaturally = false
    private var periodFrames = 0
    private var seekCount = 0
    private var mixerSwitches = 0
    /// When the last status sample was published (engine clock).
    private var publishedAt: Int64 = 0
    private var running = true
    /// The thread refills the output once its free room reaches `capacity >> refillShift`: half the
    /// buffer at first. Each underrun (the thread was held up longer than the queued half lasted) halves
    /// that, so it wakes earlier with more left queued; one period is the floor.
    private var refillShift = 1
    /// True while the thread waits for room on a device it left nearly full; finding it empty after the
    /// wait means the device ran dry meanwhile. Anything else the thread does clears it.
    private var waitedOnFullDevice = false
    /// The mailbox the thread reads, for work it hands to other threads to answer into.
    private var mailbox: Mailbox?
    /// Counts the decoders opened, so that an index scanned for one is not given to the next.
    private var decoderSerial = 0
    /// Audio handed to the outputs since the engine started (`PlayerStatus.playedNanoseconds`), and
    /// what a period's length in nanoseconds left over (in frame-nanoseconds), so that none is lost.
    private var playedNanoseconds: Int64 = 0
    private var playedRemainder: Int64 = 0
    /// A station being connected to for the song being prepared, until its decoder knows the format.
    private var pendingStream: PendingStream?
    /// Counts the stations opened, so that a station's late report is not taken for another's.
    private var streamSerial = 0
    /// True after a period found the stream playing starved: the next turn waits a little first.
    private var starved = false
    /// The stream tags' version last published (an Ogg station's new link brings new tags).
    private var publishedStreamTagsVersion = 0
    /// What the station playing announced when its tags last changed the queue.
    private var playedStreamTags: StreamStatus?

    init(configuration: EngineConfiguration, context: PlayerContext, shared: EngineShared) {
        self.configuration = configuration
        self.clock = configuration.clock
        self.context = context
        self.shared = shared
        self.output = OutputFanOut(
            definitions: configuration.outputs, clock: configuration.clock,
            retryNanoseconds: configuration.outputRetryNanoseconds)
    }

    deinit {
        self.buffer.deallocate()
        self.fadeBuffer.deallocate()
    }

    // MARK: - The loop

    func run(_ mailbox: Mailbox) {
        self.mailbox = mailbox
        defer { self.mailbox = nil }
        while self.running {
            self.shared.beats.add(1, ordering: .relaxed)
            let jobs = mailbox.takeAll()
            for job in jobs {
                job.run(self)
            }
            guard self.running else { break }
            let now = self.clock.now()
            if let retry = self.pendingStream?.retryAt, now >= retry {
                self.advancePendingStream()
            }
            let timed = self.context.tick(now: now)
            if !timed.isEmpty {
                self.perform(timed)
                self.publish()
            }
            if !jobs.isEmpty || !timed.isEmpty {
                // A command may have emptied the device on purpose (a seek drops what is queued).
                self.waitedOnFullDevice = false
            }
            if self.context.state.kind == .play, self.decoder != nil, self.output.format != nil {
                self.playTurn(mailbox)
            } else if mailbox.isEmpty {
                // Idle: sleep until a command comes or a timer is due (at most a second, so the heartbeat
                // keeps moving).
                let deadline = [self.context.nextDeadline, self.pendingStream?.retryAt].compactMap { $0 }.min()
                let wait = deadline.map { $0 - self.clock.now() } ?? 1_000_000_000
                mailbox.wait(nanoseconds: min(wait, 1_000_000_000))
            }
        }
        mailbox.close()
    }

    /// Applies a change to the context and performs its effects; publishes the result.
    func apply(_ change: (inout PlayerContext, Int64) throws(PlayerError) -> [PlayerEffect]) throws(PlayerError) {
        let effects: [PlayerEffect]
        do {
            effects = try change(&self.context, self.clock.now())
        } catch {
            if case .notSeekable = error {
                // MPD keeps a refused seek of a stream as the player's error (`error: Not seekable`).
                self.publish()
            }
            throw error
        }
        self.perform(effects)
        self.publish()
    }

    func shutDown() {
        if self.context.state.kind != .stop {
            try? self.apply { context, now throws(PlayerError) in try context.handle(.stop, now: now) }
        }
        self.decoder = nil
        self.cancelPendingStream()
        self.upcoming = nil
        self.output.shutDown()
        self.running = false
    }

    /// Switches output `id` on or off (`nil`: over); false when there is no such output. With
    /// `announcingMixer` (the outputs have a mixer), a switch tells `mixer` too, as MPD's do: `enable`
    /// and `disable` when they switch, `toggle` only when it switches the output off.
    func setOutput(_ id: Int, enabled: Bool?, announcingMixer: Bool = false) -> Bool {
        guard self.output.hasOutput(id) else { return false }
        let heard = self.heardFrames()
        let wasEnabled = self.output.isEnabled(id)
        let isEnabled = enabled ?? !wasEnabled
        self.output.setEnabled(id, isEnabled)
        if announcingMixer && isEnabled != wasEnabled && (enabled != nil || !isEnabled) {
            self.mixerSwitches += 1
        }
        if !self.output.hasEnabledOutput, let decoder = self.decoder {
            // The last output switched off took what it had not played with it: the song goes on (at
            // the next play) from where it was heard. While playing, the player pauses there, as MPD does.
            if decoder.position != heard {
                try? decoder.seek(toFrame: heard)
                self.upcoming = nil
            }
            if self.context.state.kind == .play {
                // MPD's words here: its player finds no output to reopen. (A `play` with every output
                // off says "All audio outputs are disabled", as MPD's does.)
                self.report(.outputFailed(message: "Failed to open audio output"))
            }
        }
        self.publish()
        return true
    }

    /// Nanoseconds into the current song that the listener hears now.
    func heardOffset() -> Int64 {
        switch self.context.state {
        case .prepare(let prepare): return prepare.startOffset
        case .stop: return 0
        case .play(let state): return state.song.format.nanoseconds(forFrames: self.heardFrames())
        case .pause(let state): return state.song.format.nanoseconds(forFrames: self.heardFrames())
        }
    }

    /// The current song's length in nanoseconds, when known.
    func songLengthOffset() -> Int64? {
        guard let song = self.context.state.song, let length = song.lengthFrames else { return nil }
        return song.format.nanoseconds(forFrames: length)
    }

    // MARK: - Playing

    /// One turn of playing: a period decoded and written when the output has room for all of it, or
    /// else a wait until the output has drained to the refill mark, cut short by a command or a timer.
    private func playTurn(_ mailbox: Mailbox) {
        if self.starved {
            // Nothing of the stream has arrived: no silence is made up; look again shortly (a command
            // or the station's report ends the wait sooner).
            self.starved = false
            mailbox.wait(nanoseconds: Self.starvedWaitNanoseconds)
            return
        }
        let room: Int?
        do {
            room = try self.output.writableFrames
        } catch {
            self.report(.outputFailed(message: error.description))
            return
        }
        // An output that cannot tell how full it is blocks in write for as long as it needs.
        guard let room, let capacity = self.output.capacityFrames, let format = self.output.format else {
            self.renderPeriod()
            return
        }
        let periodRoom = min(self.periodFrames, capacity)
        if self.waitedOnFullDevice && room >= capacity && capacity >> self.refillShift > periodRoom {
            self.refillShift += 1
        }
        self.waitedOnFullDevice = false
        if room >= periodRoom {
            self.renderPeriod()
            return
        }
        let now = self.clock.now()
        let refillMark = max(periodRoom, capacity >> self.refillShift)
        // One frame more than the shortfall, so that rounding to nanoseconds cannot wake the thread early.
        var deadline = now + format.nanoseconds(forFrames: refillMark - room + 1)
        if let timer = self.context.nextDeadline {
            deadline = min(deadline, timer)
        }
        self.waitedOnFullDevice = true
        self.output.wakeFollowers()
        if self.clock.isRealTime {
            mailbox.wait(until: deadline)
        } else {
            // A virtual clock moves only when someone sleeps on it; commands are looked at right after.
            self.clock.sleep(until: deadline)
        }
    }

    private func renderPeriod() {
        guard let decoder = self.decoder else { return }
        let bytesPerFrame = decoder.format.bytesPerFrame
        let fade = self.fadePlan(for: decoder)
        let startPosition = decoder.position
        var wanted = self.periodFrames
        if let fade, startPosition < fade.start {
            // The period before a fade ends where it begins, so that the fade starts on its frame.
            wanted = min(wanted, fade.start - startPosition)
        }
        let chunk = UnsafeMutableRawBufferPointer(rebasing: self.buffer[0..<wanted * bytesPerFrame])
        let frames: Int
        do {
            frames = try decoder.read(into: chunk)
        } catch {
            self.reportSongEnded(message: error.description)
            return
        }
        guard frames > 0 else {
            if decoder.isStarved {
                self.starved = true
                return
            }
            self.reportSongEnded(message: decoder.endMessage)
            return
        }
        if let stream = decoder.stream, stream.tagsVersion != self.publishedStreamTagsVersion {
            // A new link's tags (an ICY title reports itself, through the mailbox).
            self.publish()
        }
        let pcm = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<frames * bytesPerFrame])
        if let fade, startPosition >= fade.start, let incoming = self.upcoming?.decoder {
            self.mixFade(fade, from: incoming, into: pcm, frames: frames, step: startPosition - fade.start)
        }
        SoftwareVolume(
            level: self.configuration.scalesVolume ? self.context.volume ?? 100 : 100, isMuted: self.context.isMuted
        )
        .apply(to: pcm, format: decoder.format.sampleFormat)
        do {
            try self.output.write(UnsafeRawBufferPointer(pcm))
        } catch {
            // The period was never played: the position the player pauses at is before it. A fade begun
            // is planned again from there (the next song had moved on with this period).
            try? decoder.seek(toFrame: max(0, decoder.position - frames))
            self.upcoming = nil
            self.report(.outputFailed(message: error.description))
            return
        }
        let played = Int64(frames) * 1_000_000_000 + self.playedRemainder
        let rate = Int64(decoder.format.sampleRate)
        (self.playedNanoseconds, self.playedRemainder) = (self.playedNanoseconds + played / rate, played % rate)
        // While the song simply plays on, readers extrapolate the position from the last sample, so a
        // fresh one ten times a second is plenty; every change of state is published at once elsewhere.
        let now = self.clock.now()
        if now - self.publishedAt >= Self.playingPublishInterval {
            self.publishSample(at: now)
        }
    }

    /// The song playing has ended (with an error `message`, or none at its end).
    private func reportSongEnded(message: String?) {
        guard let entry = self.context.state.entry else { return }
        self.endingNaturally = message == nil
        defer { self.endingNaturally = false }
        self.report(.songEnded(entry, message: message))
    }

    // MARK: - Crossfade

    /// The next song, opened ahead while crossfade is on, and its fade once begun.
    private struct Upcoming {
        /// The entry it plays.
        var entry: QueueEntry
        /// Its decoder; nil when it could not be opened (it fails again, in turn, when its time comes).
        var decoder: SongDecoder?
        /// The fade into it, fixed once it has begun.
        var fade: Fade?
    }

    /// Where the end of the current song and the start of the next overlap.
    private struct Fade {
        /// The current song's frame where the fade begins.
        var start: Int
        /// How many frames it lasts.
        var length: Int
        /// MixRamp: the songs are added, not faded.
        var adding: Bool
    }

    /// The fade into the next song, when the current one ends in one; opens the next song ahead if
    /// need be (as MPD queues it) and drops one that is no longer next. Nil: the songs join gaplessly.
    /// Without crossfade it costs one comparison.
    private func fadePlan(for decoder: SongDecoder) -> Fade? {
        // A stream neither fades out (it has no known end) nor in (it is not opened ahead).
        guard self.context.crossfade.seconds > 0 || self.upcoming?.fade != nil, decoder.stream == nil else {
            self.upcoming = nil
            return nil
        }
        // No fade into a pause at the song's end (single mode, MPD's border pause) or a stop (sleep timer).
        guard case .play = self.context.state, self.context.sleepTimer != .endOfSong,
            let nextPosition = self.context.queue.positionAfterSongEnd(),
            let next = self.context.queue.entry(at: nextPosition)
        else {
            self.upcoming = nil
            return nil
        }
        // A new priority of the next song changes nothing here; a new range does.
        guard !StationStream.isStation(next.path) else {
            // A station is not opened ahead: the song before it ends as it is, and the station starts.
            self.upcoming = nil
            return nil
        }
        if !QueueEntry.sameSong(self.upcoming?.entry, next) {
            self.upcoming = Upcoming(
                entry: next,
                decoder: try? SongDecoder(
                    entry: next, sampleFormat: self.configuration.sampleFormat,
                    replayGain: self.context.resolvedReplayGain))
        }
        guard var upcoming = self.upcoming, let incoming = upcoming.decoder else { return nil }
        if let fade = upcoming.fade {
            return fade
        }
        let (frames, adding) = self.context.crossfade.overlap(
            currentLength: decoder.lengthFrames, nextLength: incoming.lengthFrames, format: decoder.format,
            nextFormat: incoming.format, mixRampStart: incoming.mixRamp.start,
            mixRampPreviousEnd: decoder.mixRamp.end, replayGainDB: incoming.appliedGainDB,
            previousReplayGainDB: decoder.appliedGainDB)
        guard frames > 0, let length = decoder.lengthFrames, incoming.position == 0 else { return nil }
        let start = max(0, length - frames)
        guard decoder.position >= start else {
            return Fade(start: start, length: frames, adding: adding)
        }
        // It begins now; after a seek into the last seconds, over what is left of the song (as MPD does).
        let fade = Fade(start: decoder.position, length: max(1, length - decoder.position), adding: adding)
        upcoming.fade = fade
        self.upcoming = upcoming
        return fade
    }

    /// Mixes the next `frames` of the incoming song into `pcm`, `step` frames into the fade. Whatever the
    /// incoming song cannot give (it ended, or broke off) counts as silence.
    private func mixFade(
        _ fade: Fade, from incoming: SongDecoder, into pcm: UnsafeMutableRawBufferPointer, frames: Int, step: Int
    ) {
        let bytesPerFrame = incoming.format.bytesPerFrame
        let bytes = frames * bytesPerFrame
        if self.fadeBuffer.count < bytes {
            self.fadeBuffer.deallocate()
            self.fadeBuffer = .allocate(byteCount: bytes, alignment: 16)
        }
        var got = 0
        while got < frames {
            let slice = UnsafeMutableRawBufferPointer(rebasing: self.fadeBuffer[got * bytesPerFrame..<bytes])
            guard let read = try? incoming.read(into: slice), read > 0 else { break }
            got += read
        }
        if got < frames {
            UnsafeMutableRawBufferPointer(rebasing: self.fadeBuffer[got * bytesPerFrame..<bytes]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
        CrossfadeMix.mix(
            UnsafeRawBufferPointer(rebasing: self.fadeBuffer[0..<bytes]), into: pcm, frames: frames,
            format: incoming.format, step: step, length: fade.length, adding: fade.adding)
    }

    /// The song opened ahead for `entry`, if it may play from `startOffset`: one the fade has begun only
    /// where the current song ended by itself (it goes on from where the fade is), else one not read yet
    /// and from its start. Any other is dropped.
    private func takeUpcoming(for entry: QueueEntry, startOffset: Int64) -> SongDecoder? {
        defer { self.upcoming = nil }
        guard let upcoming = self.upcoming, QueueEntry.sameSong(upcoming.entry, entry), let decoder = upcoming.decoder
        else {
            return nil
        }
        if upcoming.fade != nil {
            return self.endingNaturally ? decoder : nil
        }
        return decoder.position == 0 && startOffset == 0 ? decoder : nil
    }

    private func report(_ event: EngineEvent) {
        self.perform(self.context.handle(event))
        self.publish()
    }

    /// Performs effects in order. When one produces an event, the transition it causes supersedes
    /// whatever was left of the list.
    private func perform(_ effects: [PlayerEffect]) {
        for effect in effects {
            if let event = self.execute(effect) {
                self.perform(self.context.handle(event))
                return
            }
        }
    }

    private func execute(_ effect: PlayerEffect) -> EngineEvent? {
        switch effect {
        case .openDecoder(let entry, let startOffset):
            let ahead = self.takeUpcoming(for: entry, startOffset: startOffset)
            self.decoder = nil
            self.cancelPendingStream()
            if StationStream.isStation(entry.path) {
                // The station is connected to on the network's threads; the player stays in Prepare
                // until it has sent enough to play (`advancePendingStream`). A stream starts where it
                // is: a start offset (a restored position) means nothing to it.
                self.openStream(entry)
                return nil
            }
            do {
                let decoder: SongDecoder
                if let ahead {
                    decoder = ahead
                } else {
                    decoder = try SongDecoder(
                        entry: entry, sampleFormat: self.configuration.sampleFormat,
                        replayGain: self.context.resolvedReplayGain)
                }
                if startOffset > 0 {
                    let frame = decoder.format.frames(inNanoseconds: startOffset)
                    try decoder.seek(toFrame: decoder.lengthFrames.map { min($0, frame) } ?? frame)
                }
                self.decoder = decoder
                self.decoderSerial += 1
                self.scanIndexInBackground(of: decoder)
                self.reserveBuffer(for: decoder.format)
                return .songOpened(OpenSong(entry: entry, format: decoder.format, lengthFrames: decoder.lengthFrames))
            } catch {
                return .songFailed(entry, message: error.description)
            }
        case .closeDecoder:
            self.decoder = nil
            self.cancelPendingStream()
        case .openOutput(let format):
            if self.output.format == format { return nil }
            do {
                if self.output.format != nil {
                    // Another format: the previous song plays out before the device changes.
                    try self.output.drain()
                    self.output.close()
                }
                try self.output.open(format: format)
            } catch {
                return .outputFailed(message: error.description)
            }
        case .dropOutput:
            return self.onOpenOutput { (output) throws(OutputError) in try output.drop() }
        case .drainOutput:
            return self.onOpenOutput { (output) throws(OutputError) in try output.drain() }
        case .pauseOutput:
            return self.onOpenOutput { (output) throws(OutputError) in try output.pause() }
        case .resumeOutput:
            return self.onOpenOutput { (output) throws(OutputError) in try output.resume() }
        case .releaseOutput:
            self.output.close()
        case .seekDecoder(let offset):
            // A seek starts the song's end afresh: a fade begun is dropped (and planned again).
            self.upcoming = nil
            self.seekCount += 1
            return self.seekDecoder(toFrame: self.decoder.map { $0.format.frames(inNanoseconds: offset) })
        case .rewindDecoderToHeard:
            self.upcoming = nil
            return self.seekDecoder(toFrame: self.heardFrames())
        }
        return nil
    }

    private func onOpenOutput(_ call: (any AudioOutput) throws(OutputError) -> Void) -> EngineEvent? {
        guard self.output.format != nil else { return nil }
        do {
            try call(self.output)
            return nil
        } catch {
            return .outputFailed(message: error.description)
        }
    }

    private func seekDecoder(toFrame frame: Int?) -> EngineEvent? {
        guard let decoder = self.decoder, let frame, let entry = self.context.state.entry else { return nil }
        do {
            try decoder.seek(toFrame: decoder.lengthFrames.map { min($0, frame) } ?? frame)
            return nil
        } catch {
            return .songEnded(entry, message: error.description)
        }
    }

    /// Songs longer than this get their whole seek index scanned on another thread as they start.
    static let indexScanMinimumSeconds = 60

    /// Has a long song's frames indexed on a utility thread and installs the index once it is there
    /// (if the song is still the one playing), so that a seek far ahead jumps instead of reading every
    /// frame header on the way, on the audio thread, while the listener waits.
    private func scanIndexInBackground(of song: SongDecoder) {
        // Only MP3 needs it: the other formats' libraries seek by their own tables or by bisection.
        guard let decoder = song.file as? MP3Decoder, let mailbox = self.mailbox, let length = decoder.lengthFrames,
            length > decoder.format.sampleRate * Self.indexScanMinimumSeconds
        else { return }
        let serial = self.decoderSerial
        let path = decoder.path
        let sampleFormat = self.configuration.sampleFormat
        DispatchQueue.global(qos: .utility).async {
            guard let index = try? MP3Decoder.scanIndex(path: path, sampleFormat: sampleFormat) else { return }
            mailbox.post(
                Job(
                    run: { core in
                        if core.decoderSerial == serial { (core.decoder?.file as? MP3Decoder)?.install(index) }
                    }, cancel: {}))
        }
    }

    private func heardFrames() -> Int {
        guard let decoder = self.decoder else { return 0 }
        let delay = self.output.format == nil ? 0 : self.output.delayFrames
        return max(0, decoder.position - delay)
    }

    private func reserveBuffer(for format: AudioFormat) {
        self.periodFrames = max(64, format.frames(inNanoseconds: self.configuration.periodNanoseconds))
        let bytes = self.periodFrames * format.bytesPerFrame
        if self.buffer.count < bytes {
            self.buffer.deallocate()
            self.buffer = .allocate(byteCount: bytes, alignment: 16)
        }
    }

    // MARK: - Streams

    /// How long a turn waits when the stream playing had nothing to decode.
    static let starvedWaitNanoseconds: Int64 = 20_000_000
    /// How much of a station is read, at most, looking for its format (past an ID3v2 tag, an Ogg
    /// stream's headers): a server that sends something else as audio is refused after this.
    static let streamFormatSearchBytes = 128 * 1024
    /// How much of a station's first bytes tell what it sends (an HTML page, an Ogg stream ...).
    static let streamSniffBytes = 64
    /// How often a station that has sent bytes but not yet a whole header is looked at again.
    static let streamRetryNanoseconds: Int64 = 50_000_000

    /// A station being connected to for the song in Prepare.
    private struct PendingStream {
        var serial: Int
        var entry: QueueEntry
        var station: StationStream
        /// Its decoder, once the station has sent enough to choose one; its format may not be known yet.
        var decoder: (any StreamDecoder)?
        /// When to look at it again, while its decoder waits for more of the stream's headers.
        var retryAt: Int64?
        /// When the station must have given a format, or be given up.
        var deadline: Int64
        /// What the station had said of itself when the status was last published for it.
        var publishedInfo: StationInfo?
    }

    /// Starts connecting to the station `entry` names; its reports come back through the mailbox.
    private func openStream(_ entry: QueueEntry) {
        self.streamSerial &+= 1
        let serial = self.streamSerial
        let mailbox = self.mailbox
        let limits = self.configuration.streamLimits
        let station = StationStream(url: entry.path, limits: limits) {
            mailbox?.post(Job(run: { core in core.stationChanged(serial: serial) }, cancel: {}))
        }
        let allowed = Int64(max(1, limits.firstAudioSeconds + limits.connectSeconds) * 1e9)
        let now = self.clock.now()
        // Looked at shortly even if the station reports nothing: its first bytes may tell already.
        self.pendingStream = PendingStream(
            serial: serial, entry: entry, station: station, retryAt: now + Self.streamRetryNanoseconds,
            deadline: now + allowed)
        station.start()
    }

    private func cancelPendingStream() {
        self.pendingStream?.station.cancel()
        self.pendingStream = nil
    }

    /// A station reported a change: the one being prepared may be ready (or failed); the one playing
    /// has a new title or state, which is published.
    func stationChanged(serial: Int) {
        if let pending = self.pendingStream, pending.serial == serial {
            self.advancePendingStream()
        } else if self.decoder?.station != nil {
            self.publish()
        }
    }

    /// Opens the pending station's decoder once it has sent enough, and reports the song open (or
    /// failed) to the context.
    private func advancePendingStream() {
        guard var pending = self.pendingStream else { return }
        guard case .prepare(let prepare) = self.context.state, prepare.entry == pending.entry else {
            self.cancelPendingStream()
            return
        }
        pending.retryAt = nil
        self.pendingStream = pending
        let info = pending.station.info
        switch info.state {
        case .connecting, .reconnecting:
            // What has come so far may already show that it is not audio (an HTML page sent as MP3,
            // which ends before the prebuffer fills): refused now rather than after the retries.
            let sniffed = pending.station.peek(count: Self.streamSniffBytes).count
            if pending.decoder == nil, sniffed >= Self.streamSniffBytes {
                do throws(DecoderError) {
                    pending.decoder = try StreamDecoders.open(
                        source: pending.station, sampleFormat: self.configuration.sampleFormat,
                        replayGain: self.context.resolvedReplayGain)
                } catch {
                    self.cancelPendingStream()
                    self.report(.songFailed(pending.entry, message: error.description))
                    return
                }
            } else if pending.decoder == nil {
                // Not enough to tell yet; the station reports no bytes, so it is looked at again.
                pending.retryAt = self.clock.now() + Self.streamRetryNanoseconds
            }
            let changed = pending.publishedInfo != info
            pending.publishedInfo = info
            self.pendingStream = pending
            if changed {
                // What the station said of itself (its name, a reconnection), not each look at it.
                self.publish()
            }
            return
        case .failed(let message):
            self.cancelPendingStream()
            self.report(.songFailed(pending.entry, message: message))
            return
        case .playing, .ended:
            break
        }
        let now = self.clock.now()
        do throws(DecoderError) {
            let decoder: any StreamDecoder
            if let opened = pending.decoder {
                decoder = opened
            } else {
                decoder = try StreamDecoders.open(
                    source: pending.station, sampleFormat: self.configuration.sampleFormat,
                    replayGain: self.context.resolvedReplayGain)
            }
            pending.decoder = decoder
            guard try decoder.prepare(), let format = decoder.format else {
                let url = pending.entry.path
                if info.state == .ended {
                    throw .damaged(path: url, format: "radio", reason: "it ended before its audio began")
                } else if now >= pending.deadline {
                    throw .damaged(path: url, format: "radio", reason: "no audio arrived in time")
                } else if pending.station.bytesRead > Self.streamFormatSearchBytes {
                    let kibibytes = Self.streamFormatSearchBytes / 1024
                    throw .unsupported(path: url, reason: "no audio found in its first \(kibibytes) KiB")
                }
                pending.retryAt = now + Self.streamRetryNanoseconds
                self.pendingStream = pending
                return
            }
            self.pendingStream = nil
            let song = SongDecoder(entry: pending.entry, stream: decoder, format: format, station: pending.station)
            self.decoder = song
            self.decoderSerial += 1
            self.starved = false
            self.reserveBuffer(for: format)
            self.report(.songOpened(OpenSong(entry: pending.entry, format: format, lengthFrames: nil)))
        } catch {
            self.cancelPendingStream()
            self.report(.songFailed(pending.entry, message: error.description))
        }
    }

    // MARK: - Status

    /// How often a status sample is published while playing with nothing else changing.
    static let playingPublishInterval: Int64 = 100_000_000

    /// Publishes the status of the context as it is now, with the engine's own figures.
    private func publish() {
        if self.context.state.kind == .stop {
            self.upcoming = nil
        }
        let now = self.clock.now()
        self.publishedAt = now
        var stream: StreamStatus?
        if let station = self.decoder?.station ?? self.pendingStream?.station {
            stream = StreamStatus(url: station.url, info: station.info, tags: self.decoder?.stream?.tags ?? Tags())
            self.publishedStreamTagsVersion = self.decoder?.stream?.tagsVersion ?? 0
            if let entry = self.decoder?.entry, let stream, !stream.hasSameTags(as: self.playedStreamTags) {
                // MPD counts a station's new title as a change of its queue entry (idle `playlist`).
                self.context.streamTagsChanged(id: entry.id)
                self.playedStreamTags = stream
            }
        } else {
            self.playedStreamTags = nil
        }
        var status = Self.status(of: self.context, at: now)
        status.stream = stream
        status.seekCount = self.seekCount
        status.songsFollowed = self.context.songsFollowed
        status.mixerSwitches = self.mixerSwitches
        status.outputs = self.output.statuses()
        status.playedNanoseconds = self.playedNanoseconds
        if let decoder = self.decoder, status.format != nil {
            status.heardFrames = self.heardFrames()
            status.writtenFrames = decoder.position
            status.bitrate = decoder.bitrate
        }
        self.shared.publish(status)
    }

    /// Publishes a fresh sample of what changes by itself while the song plays on (positions, bitrate,
    /// the outputs' reports) into the status last published, in place: every change to the context
    /// is published with `publish()` as it happens, so the rest of it is still what it says.
    private func publishSample(at now: Int64) {
        self.publishedAt = now
        let position = self.decoder.map { StatusSample.Position(heardFrames: self.heardFrames(), decoder: $0) }
        self.shared.publish(
            StatusSample(
                sampledAt: now, playedNanoseconds: self.playedNanoseconds, position: position,
                outputs: self.output.statuses()))
    }

    /// The status a context stands for, before the engine adds what only it knows (positions).
    static func status(of context: PlayerContext, at now: Int64) -> PlayerStatus {
        let queue = context.queue
        var status = PlayerStatus()
        status.state = context.state.kind
        // The queue's copy when it still holds the song: its priority is the one clients are shown.
        status.entry = context.state.entry.map { queue.entry(withID: $0.id) ?? $0 } ?? queue.current
        status.position = status.entry.flatMap { queue.position(ofID: $0.id) }
        status.nextPosition = queue.nextPosition
        status.nextEntry = queue.nextPosition.flatMap { queue.entry(at: $0) }
        status.queueLength = queue.count
        status.queueVersion = queue.version
        status.repeatMode = queue.repeatMode
        status.random = queue.random
        status.single = queue.single
        status.consume = queue.consume
        status.volume = context.volume
        status.isMuted = context.isMuted
        status.error = context.lastError
        status.sleepTimer = context.sleepTimer
        status.crossfade = context.crossfade
        status.replayGainMode = context.replayGainMode
        status.sampledAt = now
        if let song = context.state.song {
            status.format = song.format
            status.lengthFrames = song.lengthFrames
        }
        if case .pause(let pause) = context.state {
            status.resumesAt = pause.resumesAt
        }
        return status
    }
}
