// The MPRIS thread. It owns the sd-bus connection and the two connections to the MPD-protocol server,
// and does everything with them itself: it answers D-Bus calls (sd_bus_process runs the vtables'
// callbacks on this thread), waits in `idle` for the server's changes and turns them into
// PropertiesChanged and Seeked signals. Nothing here is shared with another thread except the wake-up
// pipe and the stop flag, so nothing needs a lock; it never touches the player itself, only the
// protocol.

import CSdBus
import Logging
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// The subsystems whose changes MPRIS shows: play state and song, volume, modes, the queue.
private let watchedSubsystems = ["player", "mixer", "options", "playlist"]

/// A D-Bus error to answer a call with.
private struct CallFailure: Error {
    var name: String
    var message: String

    static func failed(_ message: String) -> CallFailure { CallFailure(name: SD_BUS_ERROR_FAILED, message: message) }
}

/// Properties of the MPRIS object that never change (sd-bus marks them `const`).
private let constantProperties: [String: DBusValue] = [
    "CanQuit": .boolean(false),
    "CanRaise": .boolean(false),
    "HasTrackList": .boolean(false),
    "Identity": .string("playerd"),
    "SupportedUriSchemes": .strings(["file"]),
    // What playerd plays: MP3, FLAC (also in Ogg), Ogg Vorbis and Opus, and .m3u playlists of them.
    "SupportedMimeTypes": .strings([
        "audio/mpeg", "audio/flac", "audio/x-flac", "audio/ogg", "application/ogg", "audio/x-vorbis+ogg",
        "audio/vorbis", "audio/x-flac+ogg", "audio/opus", "audio/x-opus+ogg", "audio/x-mpegurl", "audio/mpegurl",
    ]),
    "Rate": .double(1.0),
    "MinimumRate": .double(1.0),
    "MaximumRate": .double(1.0),
    "CanControl": .boolean(true),
]

final class MPRISExporter {
    private let configuration: MPRISBridge.Configuration
    private let logger: Logger
    private let wakeUp: Int32
    private var bus: OpaquePointer?
    private var rootSlot: OpaquePointer?
    private var playerSlot: OpaquePointer?
    private var handlers: UnsafeMutablePointer<csdbus_handlers>?
    /// Waits in `idle`; never used for anything else.
    private var idleConnection: MPDConnection?
    /// Carries commands, `status` and `currentsong`.
    private var commandConnection: MPDConnection?
    private var musicDirectory: String?
    private var snapshot = PlayerSnapshot.disconnected
    private let covers: CoverFiles
    /// When to try connecting again, while disconnected.
    private var nextAttempt = ContinuousClock.now
    private var backoff = MPRISExporter.firstBackoff
    /// When the command connection was last used: MPD closes a client that is silent (and not in idle)
    /// for its `connection_timeout`, 60 s by default, so an unused one is pinged before that.
    private var lastCommand = ContinuousClock.now
    static let keepAlive: Duration = .seconds(30)
    /// Whether the failure to connect has been logged (once per outage).
    private var outageLogged = false
    private var everConnected = false

    static let firstBackoff: Duration = .milliseconds(100)
    static let longestBackoff: Duration = .seconds(2)

    init(configuration: MPRISBridge.Configuration, logger: Logger, wakeUp: Int32) {
        self.configuration = configuration
        self.logger = logger
        self.wakeUp = wakeUp
        self.covers = CoverFiles(runtimeDirectory: configuration.runtimeDirectory)
    }

    // MARK: - The bus

    /// Connects to the session bus, adds the two interfaces and takes the bus name (or the
    /// `.instancePID` one when another process has it). Returns the name.
    func openBus() throws(MPRISError) -> String {
        var bus: OpaquePointer?
        let opened = sd_bus_open_user(&bus)
        guard opened >= 0, let bus else {
            throw .noSessionBus(Self.whySessionBusFailed(-opened))
        }
        self.bus = bus
        _ = sd_bus_set_description(bus, "playerd-mpris")
        let handlers = UnsafeMutablePointer<csdbus_handlers>.allocate(capacity: 1)
        handlers.initialize(
            to: csdbus_handlers(
                method: methodCallback, get: getCallback, set: setCallback,
                context: Unmanaged.passUnretained(self).toOpaque()))
        self.handlers = handlers
        let added = csdbus_add_mpris_objects(bus, handlers, &self.rootSlot, &self.playerSlot)
        guard added >= 0 else {
            throw .bus(function: "sd_bus_add_object_vtable", errno: -added)
        }
        let name = self.configuration.busName
        var result = sd_bus_request_name(bus, name, 0)
        if result == -EEXIST {
            // The MPRIS convention for a second instance of one player.
            let instance = "\(name).instance\(getpid())"
            result = sd_bus_request_name(bus, instance, 0)
            guard result >= 0 else {
                throw .bus(function: "sd_bus_request_name(\(instance))", errno: -result)
            }
            return instance
        }
        guard result >= 0 else {
            throw .bus(function: "sd_bus_request_name(\(name))", errno: -result)
        }
        return name
    }

    // sd-bus's errno alone ("No medium found") does not say where it looked.
    private static func whySessionBusFailed(_ code: Int32) -> String {
        let reason = systemErrorText(code)
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty {
            return "DBUS_SESSION_BUS_ADDRESS=\(address): \(reason)"
        }
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty {
            return "\(runtime)/bus: \(reason)"
        }
        return "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
    }

    /// Releases everything: the server connections, the cover file, the bus (flushing what is queued).
    func close() {
        self.idleConnection = nil
        self.commandConnection = nil
        self.covers.removeCurrent()
        self.rootSlot = sd_bus_slot_unref(self.rootSlot)
        self.playerSlot = sd_bus_slot_unref(self.playerSlot)
        if let bus = self.bus {
            _ = sd_bus_flush(bus)
            self.bus = sd_bus_flush_close_unref(bus)
        }
        if let handlers = self.handlers {
            handlers.deallocate()
            self.handlers = nil
        }
    }

    // MARK: - The loop

    /// Serves the bus and follows the server until `shouldStop` says so (checked whenever the wake-up
    /// pipe is written) or the bus connection fails; returns that failure, if any.
    func run(shouldStop: () -> Bool) -> MPRISError? {
        guard let bus = self.bus else { return nil }
        while !shouldStop() {
            if self.idleConnection == nil && ContinuousClock.now >= self.nextAttempt {
                self.connect()
            }
            if let commands = self.commandConnection, self.lastCommand.duration(to: .now) >= Self.keepAlive {
                do {
                    _ = try commands.command("ping")
                    self.lastCommand = .now
                } catch {
                    self.connectionLost(error)
                }
            }
            var processed: Int32
            repeat {
                processed = sd_bus_process(bus, nil)
            } while processed > 0
            if processed < 0 {
                self.logger.error("MPRIS: the session bus connection failed: \(systemErrorText(-processed))")
                return .bus(function: "sd_bus_process", errno: -processed)
            }
            if let idle = self.idleConnection, idle.hasBufferedInput {
                self.handleIdle()
                continue
            }
            let events = sd_bus_get_events(bus)
            guard events >= 0 else {
                self.logger.error("MPRIS: the session bus connection failed: \(systemErrorText(-events))")
                return .bus(function: "sd_bus_get_events", errno: -events)
            }
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: events), revents: 0),
                pollfd(fd: self.wakeUp, events: Int16(POLLIN), revents: 0),
            ]
            if let idle = self.idleConnection {
                descriptors.append(pollfd(fd: idle.descriptor, events: Int16(POLLIN), revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), self.pollTimeout(bus))
            if ready < 0 && errno != EINTR {
                self.logger.error("MPRIS: poll failed: \(systemErrorText(errno))")
                return .bus(function: "poll", errno: errno)
            }
            if descriptors[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                _ = read(self.wakeUp, &drain, drain.count)
            }
            if descriptors.count > 2 && descriptors[2].revents != 0 {
                self.handleIdle()
            }
        }
        return nil
    }

    // Milliseconds until sd-bus's next deadline or the next connection attempt; -1 for none.
    private func pollTimeout(_ bus: OpaquePointer) -> Int32 {
        var timeout: Int64 = -1
        var deadline: UInt64 = 0
        if sd_bus_get_timeout(bus, &deadline) >= 0 && deadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
            timeout = deadline > nowMicroseconds ? Int64((deadline - nowMicroseconds + 999) / 1000) : 0
        }
        let wakeAt: ContinuousClock.Instant? =
            self.idleConnection == nil
            ? self.nextAttempt : self.commandConnection.map { _ in self.lastCommand + Self.keepAlive }
        if let wakeAt {
            let left = ContinuousClock.now.duration(to: wakeAt)
            let milliseconds = max(
                0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            timeout = timeout < 0 ? milliseconds : min(timeout, milliseconds)
        }
        return Int32(clamping: timeout)
    }

    // MARK: - The server

    private func connect() {
        do {
            let idle = try self.configuration.connect()
            let commands = try self.configuration.connect()
            // For xesam:url; playerd tells local clients only, and another server may refuse.
            if let fields = try? commands.command("config") {
                self.musicDirectory = fields.first { $0.key == "music_directory" }?.value
            }
            // Covers come in fewer round trips; a server without the command keeps its default.
            _ = try? commands.command("binarylimit", ["1048576"])
            try idle.beginIdle(watchedSubsystems)
            self.idleConnection = idle
            self.commandConnection = commands
            self.backoff = Self.firstBackoff
            if self.outageLogged || self.everConnected {
                self.logger.notice("MPRIS: connected to \(self.configuration.serverName) again")
            }
            self.outageLogged = false
            self.everConnected = true
            try self.refresh()
        } catch {
            self.idleConnection = nil
            self.commandConnection = nil
            if !self.outageLogged {
                self.logger.warning(
                    "MPRIS: cannot reach \(self.configuration.serverName): \(error); trying again until it answers")
                self.outageLogged = true
            }
            self.nextAttempt = ContinuousClock.now + self.backoff
            self.backoff = min(self.backoff * 2, Self.longestBackoff)
        }
    }

    private func connectionLost(_ error: any Error) {
        guard self.idleConnection != nil else { return }
        self.idleConnection = nil
        self.commandConnection = nil
        if !self.outageLogged {
            self.logger.warning("MPRIS: lost \(self.configuration.serverName): \(error); reconnecting")
            self.outageLogged = true
        }
        self.apply(.disconnected, seeked: nil)
        self.nextAttempt = ContinuousClock.now + self.backoff
    }

    private func handleIdle() {
        guard let idle = self.idleConnection else { return }
        do {
            _ = try idle.finishIdle()
            try self.refresh()
            try idle.beginIdle(watchedSubsystems)
        } catch {
            self.connectionLost(error)
        }
    }

    /// Reads `status` and `currentsong` and shows them. After our own seek, `ownSeek` says so: the
    /// Seeked signal then goes out whatever the distance.
    private func refresh(ownSeek: Bool = false) throws(ClientError) {
        guard let commands = self.commandConnection else { return }
        self.lastCommand = .now
        let answers = try commands.commandList([("status", []), ("currentsong", [])])
        var next = PlayerSnapshot(
            status: try Status(fields: answers[0]), track: Track(fields: answers[1]), fetchedAt: .now)
        if let track = next.track {
            next.trackURL = FileURL.forSong(track.file, musicDirectory: self.musicDirectory)
            next.artURL = try self.covers.url(for: track, using: commands)
        }
        let seeked: Double?
        if ownSeek {
            let sameTrack = next.track?.id == self.snapshot.track?.id && next.status?.state != .stop
            seeked = sameTrack ? next.status?.elapsed : nil
        } else {
            seeked = PlayerSnapshot.seekedPosition(from: self.snapshot, to: next)
        }
        self.apply(next, seeked: seeked)
    }

    /// Shows `next`: one PropertiesChanged with every signalled property whose value changed (a new
    /// track's Metadata and PlaybackStatus together), then Seeked when the position jumped.
    private func apply(_ next: PlayerSnapshot, seeked: Double?) {
        let before = self.snapshot.changingProperties
        self.snapshot = next
        let after = next.changingProperties
        let names = PlayerSnapshot.changingNames.filter { before[$0] != after[$0] }
        guard let bus = self.bus else { return }
        if !names.isEmpty {
            let copies = names.map { strdup($0) }
            defer {
                for copy in copies { free(copy) }
            }
            let pointers = copies.map { UnsafePointer($0) }
            let result = pointers.withUnsafeBufferPointer { buffer in
                csdbus_emit_changed(bus, CSDBUS_PLAYER_INTERFACE, buffer.baseAddress, buffer.count)
            }
            if result < 0 {
                self.logger.warning(
                    "MPRIS: cannot signal \(names.joined(separator: ", ")): \(systemErrorText(-result))")
            }
        }
        if let seeked {
            let result = csdbus_emit_seeked(bus, microseconds(seeked))
            if result < 0 {
                self.logger.warning("MPRIS: cannot signal Seeked: \(systemErrorText(-result))")
            }
        }
    }

    // MARK: - Calls from D-Bus

    fileprivate func handleMethod(_ member: String, call: OpaquePointer) -> Result<Void, CallFailure> {
        switch member {
        case "Raise", "Quit":
            // CanRaise and CanQuit are false: the spec makes these do nothing.
            return .success(())
        case "Play":
            return self.perform([("play", [])])
        case "Pause":
            // Pausing what does not play changes nothing (MPRIS); playerd would refuse it.
            guard self.snapshot.status?.state == .play else { return self.perform([]) }
            return self.perform([("pause", ["1"])])
        case "PlayPause":
            guard let state = self.snapshot.status?.state, state != .stop else { return self.perform([("play", [])]) }
            // No argument: the server toggles, so a change since our last status is not undone.
            return self.perform([("pause", [])])
        case "Stop":
            return self.perform([("stop", [])])
        case "Next":
            return self.perform([("next", [])])
        case "Previous":
            return self.perform([("previous", [])])
        case "Seek":
            var offset: Int64 = 0
            let read = sd_bus_message_read_basic(call, typeCode("x"), &offset)
            guard read > 0 else { return .failure(invalidArguments("Seek takes an offset in microseconds")) }
            return self.seek(by: offset)
        case "SetPosition":
            var trackID: UnsafePointer<CChar>?
            var position: Int64 = 0
            guard sd_bus_message_read_basic(call, typeCode("o"), &trackID) > 0, let trackID,
                sd_bus_message_read_basic(call, typeCode("x"), &position) > 0
            else {
                return .failure(invalidArguments("SetPosition takes a track id and a position in microseconds"))
            }
            return self.setPosition(String(cString: trackID), position)
        case "OpenUri":
            var uri: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(call, typeCode("s"), &uri) > 0, let uri else {
                return .failure(invalidArguments("OpenUri takes a URI"))
            }
            return self.open(String(cString: uri))
        default:
            return .failure(CallFailure(name: SD_BUS_ERROR_UNKNOWN_METHOD, message: "no method \(member)"))
        }
    }

    fileprivate func value(of property: String) -> DBusValue? {
        if property == "Position" {
            return .int64(microseconds(self.position()))
        }
        return constantProperties[property] ?? self.snapshot.changingProperties[property]
    }

    fileprivate func set(_ property: String, from message: OpaquePointer) -> Result<Void, CallFailure> {
        switch property {
        case "LoopStatus":
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, typeCode("s"), &text) > 0, let text else {
                return .failure(invalidArguments("LoopStatus is a string"))
            }
            switch String(cString: text) {
            case "None": return self.perform([("repeat", ["0"]), ("single", ["0"])])
            case "Track": return self.perform([("repeat", ["1"]), ("single", ["1"])])
            case "Playlist": return self.perform([("repeat", ["1"]), ("single", ["0"])])
            case let other:
                return .failure(invalidArguments("LoopStatus is None, Track or Playlist, not \"\(other)\""))
            }
        case "Shuffle":
            var flag: Int32 = 0
            guard sd_bus_message_read_basic(message, typeCode("b"), &flag) > 0 else {
                return .failure(invalidArguments("Shuffle is a boolean"))
            }
            return self.perform([("random", [flag != 0 ? "1" : "0"])])
        case "Volume":
            var volume = 0.0
            guard sd_bus_message_read_basic(message, typeCode("d"), &volume) > 0, volume.isFinite else {
                return .failure(invalidArguments("Volume is a number from 0.0 to 1.0"))
            }
            // Below 0 is 0 (the spec); above 1 is as loud as MPD's volume goes.
            let level = Int((min(max(volume, 0), 1) * 100).rounded())
            return self.perform([("setvol", [String(level)])])
        case "Rate":
            var rate = 0.0
            guard sd_bus_message_read_basic(message, typeCode("d"), &rate) > 0 else {
                return .failure(invalidArguments("Rate is a number"))
            }
            guard rate == 1.0 else {
                return .failure(
                    CallFailure(name: SD_BUS_ERROR_NOT_SUPPORTED, message: "playerd plays at rate 1.0 only"))
            }
            return .success(())
        default:
            return .failure(
                CallFailure(name: SD_BUS_ERROR_PROPERTY_READ_ONLY, message: "\(property) cannot be set"))
        }
    }

    // MARK: - Commands

    /// Sends commands (one list when several) and shows the result at once, so that a client that
    /// reads a property right after its call sees the change. A refusal is the call's error, with the
    /// server's message.
    private func perform(_ commands: [(String, [String])], ownSeek: Bool = false) -> Result<Void, CallFailure> {
        guard let connection = self.commandConnection else {
            return .failure(.failed("\(self.configuration.serverName) is not reachable"))
        }
        do {
            if commands.count == 1 {
                _ = try connection.command(commands[0].0, commands[0].1)
            } else if commands.count > 1 {
                _ = try connection.commandList(commands)
            }
            try self.refresh(ownSeek: ownSeek)
            return .success(())
        } catch {
            if case .refused(_, _, let message) = error {
                // Shown anyway: the refused list may have done its first commands.
                try? self.refresh()
                return .failure(.failed(message))
            }
            return self.lost(error)
        }
    }

    /// A call's answer when the connection broke during it.
    private func lost(_ error: ClientError) -> Result<Void, CallFailure> {
        self.connectionLost(error)
        return .failure(.failed("\(self.configuration.serverName): \(error)"))
    }

    /// `Seek`: relative, in microseconds. Past the end is Next, before the start is the start (MPRIS).
    private func seek(by offset: Int64) -> Result<Void, CallFailure> {
        guard let connection = self.commandConnection else {
            return .failure(.failed("\(self.configuration.serverName) is not reachable"))
        }
        let status: Status
        do {
            status = try connection.status()
        } catch {
            return self.lost(error)
        }
        guard status.state != .stop, let elapsed = status.elapsed else {
            return .success(())
        }
        let seconds = Double(offset) / 1_000_000
        let target = elapsed + seconds
        if let duration = status.duration, target >= duration {
            return self.perform([("next", [])])
        }
        if target <= 0 {
            return self.perform([("seekcur", ["0"])], ownSeek: true)
        }
        let sign = seconds < 0 ? "-" : "+"
        return self.perform([("seekcur", [sign + protocolSeconds(abs(seconds))])], ownSeek: true)
    }

    /// `SetPosition`: absolute, only on the current track (a stale id is ignored, as is a position past
    /// the end).
    private func setPosition(_ trackID: String, _ position: Int64) -> Result<Void, CallFailure> {
        guard let track = self.snapshot.track, track.objectPath == trackID, position >= 0 else {
            return .success(())
        }
        let seconds = Double(position) / 1_000_000
        if let duration = track.duration, seconds > duration {
            return .success(())
        }
        return self.perform([("seekcur", [protocolSeconds(seconds)])], ownSeek: true)
    }

    /// `OpenUri`: a local file (a `file://` URI or a path) replaces the queue and plays, as `playerctl
    /// play FILE` does: with playerd's `playnow`, else clear, add and play.
    private func open(_ uri: String) -> Result<Void, CallFailure> {
        guard let path = FileURL.path(fromURI: uri) else {
            return .failure(
                CallFailure(
                    name: SD_BUS_ERROR_NOT_SUPPORTED, message: "playerd opens local files only (file:// URIs): \(uri)"))
        }
        guard let connection = self.commandConnection else {
            return .failure(.failed("\(self.configuration.serverName) is not reachable"))
        }
        do {
            _ = try connection.command("playnow", [path])
        } catch {
            switch error {
            case .refused(code: 5, _, _):
                // Another MPD server: no `playnow`.
                return self.perform([("clear", []), ("add", [path]), ("play", ["0"])])
            case .refused(_, _, let message):
                return .failure(.failed(message))
            default:
                return self.lost(error)
            }
        }
        return self.perform([])
    }

    /// The position now: asked of the server (exact after a seek), else extrapolated.
    private func position() -> Double {
        if let connection = self.commandConnection, let status = try? connection.status() {
            self.lastCommand = .now
            return status.state == .stop ? 0 : status.elapsed ?? 0
        }
        return self.snapshot.elapsed(at: .now)
    }

    // MARK: - The C callbacks' way in

    fileprivate static func from(_ context: UnsafeMutableRawPointer?) -> MPRISExporter {
        Unmanaged<MPRISExporter>.fromOpaque(context!).takeUnretainedValue()
    }
}

private func invalidArguments(_ message: String) -> CallFailure {
    CallFailure(name: SD_BUS_ERROR_INVALID_ARGS, message: message)
}

/// Seconds as the protocol takes them: `12.345`.
private func protocolSeconds(_ seconds: Double) -> String {
    let milliseconds = Int64((seconds * 1000).rounded())
    let fraction = String(milliseconds % 1000)
    return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}

func systemErrorText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// Sets `error` (sd-bus copies the texts) and returns the negative errno sd-bus expects.
private func fail(_ failure: CallFailure, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    sd_bus_error_set(error, failure.name, failure.message)
}

private let methodCallback: csdbus_method_handler = { context, member, call, error in
    guard let member, let call else { return -EINVAL }
    switch MPRISExporter.from(context).handleMethod(String(cString: member), call: call) {
    case .success: return csdbus_reply_empty(call)
    case .failure(let failure): return fail(failure, error)
    }
}

private let getCallback: csdbus_property_getter = { context, property, reply, error in
    guard let property, let reply else { return -EINVAL }
    let name = String(cString: property)
    guard let value = MPRISExporter.from(context).value(of: name) else {
        return fail(CallFailure(name: SD_BUS_ERROR_UNKNOWN_PROPERTY, message: "no property \(name)"), error)
    }
    return value.append(to: reply)
}

private let setCallback: csdbus_property_setter = { context, property, value, error in
    guard let property, let value else { return -EINVAL }
    switch MPRISExporter.from(context).set(String(cString: property), from: value) {
    case .success: return 0
    case .failure(let failure): return fail(failure, error)
    }
}
