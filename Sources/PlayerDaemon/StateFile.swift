import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// What survives a restart: the queue, the current song and position, the play state, volume and
/// modes. Stored as `key: value` lines (one `song:` line per queued file) between a header and an
/// `end` line, so that a file cut short by a crash is recognised as such.
public struct SavedState: Sendable, Equatable {
    /// The queued files, in order.
    public var paths: [String] = []
    /// The priorities above 0 (MPD's `prio`), by position in `paths`.
    public var priorities: [Int: UInt8] = [:]
    /// The current song's position in `paths`.
    public var current: Int?
    /// Seconds into the current song.
    public var elapsed: Double = 0
    /// The play state when saved.
    public var state: PlayerStateKind = .stop
    /// Volume, 0 to 100.
    public var volume = 100
    /// Mute.
    public var isMuted = false
    /// Repeat mode.
    public var repeatMode = false
    /// Random mode.
    public var random = false
    /// Single mode.
    public var single: SingleMode = .off
    /// Consume mode.
    public var consume = false
    /// The ReplayGain mode (MPD keeps it in its configuration; playerd keeps what clients set).
    public var replayGainMode: ReplayGainMode = .off
    /// Which outputs were switched on, by name, in the daemon's order (wherever they play).
    public var outputs: [SavedOutput] = []
    /// Crossfade and MixRamp (MPD's `crossfade:`, `mixrampdb:` and `mixrampdelay:` lines).
    public var crossfade = CrossfadeSettings()
    /// The ranges of the queued songs that play only a part (`rangeid`), by their index in `paths`:
    /// a `range: START-END` line in milliseconds after the song's (MPD's `Range:`).
    public var ranges: [Int: SongRange] = [:]
    /// The partitions other than `default`, in the order they were made. Written after the default
    /// partition's lines under keys of their own (`partition: NAME`, then `partition_...` lines), which
    /// a reader that does not know partitions skips, and so reads the default partition alone.
    public var partitions: [SavedPartition] = []
    /// Lines that were read past rather than costing the whole file: a damaged setting or position
    /// (a hand edit, a bad disk block) is skipped and reported here, its value left as it was, and the
    /// queue survives. Only a file that is not whole (no header, no `end`, a line that is not
    /// `key: value`) is corrupt.
    public var skippedLines: [String] = []

    /// An empty state: nothing queued, stopped, full volume.
    public init() {}

    static let header = "playerd-state 1"

    /// The largest position a state file may give, in seconds (about 31 years). The player counts
    /// positions in Int64 nanoseconds, which hold 292 years; a larger value read from a damaged file
    /// would trap where it is converted (`offset`, and `encoded()` when the state is saved again).
    static let maximumElapsed: Double = 1e9

    /// `elapsed` as the offset the player resumes at, in nanoseconds.
    public var offset: Int64 {
        Int64(self.elapsed * 1e9)
    }

    /// The file's text.
    public func encoded() -> String {
        var lines = [Self.header]
        lines.append("volume: \(self.volume)")
        lines.append("muted: \(self.isMuted ? 1 : 0)")
        lines.append("repeat: \(self.repeatMode ? 1 : 0)")
        lines.append("random: \(self.random ? 1 : 0)")
        lines.append("single: \(self.single.rawValue)")
        lines.append("consume: \(self.consume ? 1 : 0)")
        lines.append("state: \(self.state.rawValue)")
        lines.append("replay_gain_mode: \(self.replayGainMode.rawValue)")
        // MPD's own lines and formats (`%i`, `%f`, `%f`).
        lines.append("crossfade: \(self.crossfade.seconds)")
        lines.append("mixrampdb: \(Self.cFixed(Double(self.crossfade.mixRampDB)))")
        lines.append("mixrampdelay: \(Self.cFixed(self.crossfade.mixRampDelay))")
        for output in self.outputs {
            lines.append("output: \(output.isEnabled ? 1 : 0):\(output.name)")
        }
        if let current = self.current {
            lines.append("current: \(current)")
            lines.append("elapsed: \(ResponseSeconds.format(self.elapsed))")
        }
        lines.reserveCapacity(lines.count + self.paths.count + 1)
        for (position, path) in self.paths.enumerated() {
            // A priority comes just before its song, as in MPD's state file.
            if let priority = self.priorities[position], priority != 0 {
                lines.append("prio: \(priority)")
            }
            lines.append("song: \(path)")
            if let range = self.ranges[position] {
                lines.append("range: \(range.start)-" + (range.end.map { "\($0)" } ?? ""))
            }
        }
        for partition in self.partitions {
            partition.encode(into: &lines)
        }
        lines.append("end")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a state file's text.
    /// - Throws: `StateFileError.corrupt` with the line at fault when the text is not a whole state file;
    ///   a damaged value is read past (`skippedLines`).
    public init(decoding text: String) throws(StateFileError) {
        self.init()
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        guard lines.first == Substring(Self.header) else {
            throw .corrupt(reason: "it does not start with \"\(Self.header)\"")
        }
        guard lines.last == "end" else {
            throw .corrupt(reason: "it is cut short (no \"end\" line)")
        }
        var pendingPriority: UInt8?
        for (index, line) in lines.enumerated().dropFirst().dropLast() {
            guard let colon = line.firstIndex(of: ":"), line[line.index(after: colon)...].first == " " else {
                throw .corrupt(reason: "line \(index + 1) is not \"key: value\"")
            }
            let key = line[..<colon]
            let value = String(line[line.index(colon, offsetBy: 2)...])
            /// Reads past this line, with what was wrong with it, keeping the value the state had.
            func skip(_ rule: String) {
                self.skippedLines.append("line \(index + 1): \(key) must be \(rule), not \"\(value)\"")
            }
            func flag() -> Bool? {
                switch value {
                case "0": return false
                case "1": return true
                default:
                    skip("0 or 1")
                    return nil
                }
            }
            if key == "partition" || key.hasPrefix("partition_") {
                if key == "partition" {
                    guard PartitionRegistry.isValidName(value), value != PartitionRegistry.defaultName,
                        !self.partitions.contains(where: { $0.name == value })
                    else {
                        skip("a partition's name, not default's nor one given before")
                        // Its lines are skipped with it.
                        self.partitions.append(SavedPartition(name: ""))
                        continue
                    }
                    self.partitions.append(SavedPartition(name: value))
                } else if self.partitions.isEmpty {
                    skip("after a partition: line")
                } else if let problem = self.partitions[self.partitions.count - 1].read(
                    key.dropFirst("partition_".count), value)
                {
                    skip(problem)
                }
                continue
            }
            switch key {
            case "song":
                if let priority = pendingPriority {
                    self.priorities[self.paths.count] = priority
                    pendingPriority = nil
                }
                self.paths.append(value)
            case "prio":
                guard let priority = UInt8(value), priority > 0 else {
                    skip("a priority from 1 to 255")
                    continue
                }
                pendingPriority = priority
            case "range":
                guard !self.paths.isEmpty, let range = Self.range(value) else {
                    skip("milliseconds START-END (END may be left out) after a song")
                    continue
                }
                self.ranges[self.paths.count - 1] = range
            case "crossfade":
                guard let seconds = Int(value), seconds >= 0 else {
                    skip("whole seconds")
                    continue
                }
                self.crossfade.seconds = min(seconds, Int(UInt32.max))
            case "mixrampdb":
                // Held at what the line saves as again (six decimals), so that a state reads back the same.
                guard let decibels = Float(value), !decibels.isNaN, let saved = Float(Self.cFixed(Double(decibels)))
                else {
                    skip("decibels")
                    continue
                }
                self.crossfade.mixRampDB = saved
            case "mixrampdelay":
                // As MPD, only a value starting with a digit is read (a negative one is "off" anyway); one
                // too large to save as digits again is read past too.
                guard Self.startsWithDigit(value), let delay = Double(value),
                    case let text = Self.cFixed(delay), Self.startsWithDigit(text), let saved = Double(text)
                else {
                    continue
                }
                self.crossfade.mixRampDelay = saved
            case "output":
                guard let colon = value.firstIndex(of: ":"), let flag = Int(value[..<colon]), (0...1).contains(flag)
                else {
                    skip("0 or 1, a colon and the output's name")
                    continue
                }
                self.outputs.append(
                    SavedOutput(name: String(value[value.index(after: colon)...]), isEnabled: flag == 1))
            case "volume":
                guard let volume = Int(value), (0...100).contains(volume) else {
                    skip("0 to 100")
                    continue
                }
                self.volume = volume
            case "muted": self.isMuted = flag() ?? self.isMuted
            case "repeat": self.repeatMode = flag() ?? self.repeatMode
            case "random": self.random = flag() ?? self.random
            case "consume": self.consume = flag() ?? self.consume
            case "single":
                guard let single = SingleMode(rawValue: value) else {
                    skip("0, 1 or oneshot")
                    continue
                }
                self.single = single
            case "replay_gain_mode":
                guard let mode = ReplayGainMode(rawValue: value) else {
                    skip("off, track, album or auto")
                    continue
                }
                self.replayGainMode = mode
            case "state":
                guard let state = PlayerStateKind(rawValue: value) else {
                    skip("a player state (play, pause or stop)")
                    continue
                }
                self.state = state
            case "current":
                guard let current = Int(value), current >= 0 else {
                    skip("a position in the queue")
                    continue
                }
                self.current = current
            case "elapsed":
                guard let elapsed = Double(value), elapsed >= 0, elapsed <= Self.maximumElapsed else {
                    skip("seconds, at most \(Int(Self.maximumElapsed))")
                    continue
                }
                self.elapsed = elapsed
            default:
                // A newer playerd may add keys; an older one skips them.
                continue
            }
        }
        if let current = self.current, current >= self.paths.count {
            // The queue stands; only where playback was is lost.
            self.skippedLines.append("the current position \(current) is past the \(self.paths.count) songs")
            self.current = nil
            self.elapsed = 0
            self.state = .stop
        }
        self.partitions.removeAll { $0.name.isEmpty }
        for index in self.partitions.indices {
            let partition = self.partitions[index]
            if let current = partition.current, current >= partition.paths.count {
                self.skippedLines.append(
                    "partition \(partition.name): the current position \(current) is past the \(partition.paths.count) songs"
                )
                self.partitions[index].current = nil
                self.partitions[index].elapsed = 0
                self.partitions[index].state = .stop
            }
        }
    }
}

/// A partition other than `default`, as the state file keeps it: its queue, position, modes and volume,
/// and the outputs that play in it (by name, with their switches, in its order).
public struct SavedPartition: Sendable, Equatable {
    /// The partition's name.
    public var name: String
    /// The queued files, in order.
    public var paths: [String] = []
    /// The priorities above 0 (MPD's `prio`), by position in `paths`.
    public var priorities: [Int: UInt8] = [:]
    /// The ranges of the songs that play only a part (`rangeid`), by position in `paths`.
    public var ranges: [Int: SongRange] = [:]
    /// Crossfade and MixRamp.
    public var crossfade = CrossfadeSettings()
    /// The current song's position in `paths`.
    public var current: Int?
    /// Seconds into the current song.
    public var elapsed: Double = 0
    /// The play state when saved.
    public var state: PlayerStateKind = .stop
    /// Volume, 0 to 100; nil when the partition had no mixer (no outputs).
    public var volume: Int?
    /// Mute.
    public var isMuted = false
    /// Repeat mode.
    public var repeatMode = false
    /// Random mode.
    public var random = false
    /// Single mode.
    public var single: SingleMode = .off
    /// Consume mode.
    public var consume = false
    /// The ReplayGain mode.
    public var replayGainMode: ReplayGainMode = .off
    /// The outputs that play in it, in its order.
    public var outputs: [SavedOutput] = []

    /// The priority of the next `partition_song:` line.
    var pendingPriority: UInt8?

    /// An empty partition named `name`.
    public init(name: String) {
        self.name = name
    }

    public static func == (left: Self, right: Self) -> Bool {
        left.name == right.name && left.paths == right.paths && left.priorities == right.priorities
            && left.ranges == right.ranges && left.crossfade == right.crossfade
            && left.current == right.current && left.elapsed == right.elapsed && left.state == right.state
            && left.volume == right.volume && left.isMuted == right.isMuted && left.repeatMode == right.repeatMode
            && left.random == right.random && left.single == right.single && left.consume == right.consume
            && left.replayGainMode == right.replayGainMode && left.outputs == right.outputs
    }

    func encode(into lines: inout [String]) {
        lines.append("partition: \(self.name)")
        if let volume = self.volume {
            lines.append("partition_volume: \(volume)")
        }
        lines.append("partition_muted: \(self.isMuted ? 1 : 0)")
        lines.append("partition_repeat: \(self.repeatMode ? 1 : 0)")
        lines.append("partition_random: \(self.random ? 1 : 0)")
        lines.append("partition_single: \(self.single.rawValue)")
        lines.append("partition_consume: \(self.consume ? 1 : 0)")
        lines.append("partition_state: \(self.state.rawValue)")
        lines.append("partition_replay_gain_mode: \(self.replayGainMode.rawValue)")
        lines.append("partition_crossfade: \(self.crossfade.seconds)")
        lines.append("partition_mixrampdb: \(SavedState.cFixed(Double(self.crossfade.mixRampDB)))")
        lines.append("partition_mixrampdelay: \(SavedState.cFixed(self.crossfade.mixRampDelay))")
        for output in self.outputs {
            lines.append("partition_output: \(output.isEnabled ? 1 : 0):\(output.name)")
        }
        if let current = self.current {
            lines.append("partition_current: \(current)")
            lines.append("partition_elapsed: \(ResponseSeconds.format(self.elapsed))")
        }
        for (position, path) in self.paths.enumerated() {
            // A priority comes just before its song, as in the default partition's lines.
            if let priority = self.priorities[position], priority != 0 {
                lines.append("partition_prio: \(priority)")
            }
            lines.append("partition_song: \(path)")
            if let range = self.ranges[position] {
                lines.append("partition_range: \(range.start)-" + (range.end.map { "\($0)" } ?? ""))
            }
        }
    }

    /// Reads one `partition_KEY: value` line (`key` without its prefix); what was wrong, if it is
    /// skipped. An unknown key is read past, as the file's own are.
    mutating func read(_ key: Substring, _ value: String) -> String? {
        func flag(_ set: (inout Self, Bool) -> Void) -> String? {
            switch value {
            case "0": set(&self, false)
            case "1": set(&self, true)
            default: return "0 or 1"
            }
            return nil
        }
        switch key {
        case "song":
            if let priority = self.pendingPriority {
                self.priorities[self.paths.count] = priority
                self.pendingPriority = nil
            }
            self.paths.append(value)
        case "prio":
            guard let priority = UInt8(value), priority > 0 else { return "a priority from 1 to 255" }
            self.pendingPriority = priority
        case "range":
            guard !self.paths.isEmpty, let range = SavedState.range(value) else {
                return "milliseconds START-END (END may be left out) after a song"
            }
            self.ranges[self.paths.count - 1] = range
        case "crossfade":
            guard let seconds = Int(value), seconds >= 0 else { return "whole seconds" }
            self.crossfade.seconds = min(seconds, Int(UInt32.max))
        case "mixrampdb":
            guard let decibels = Float(value), !decibels.isNaN,
                let saved = Float(SavedState.cFixed(Double(decibels)))
            else { return "decibels" }
            self.crossfade.mixRampDB = saved
        case "mixrampdelay":
            // As the default partition's line: a value that does not start with a digit is read past.
            guard SavedState.startsWithDigit(value), let delay = Double(value),
                case let text = SavedState.cFixed(delay), SavedState.startsWithDigit(text), let saved = Double(text)
            else { break }
            self.crossfade.mixRampDelay = saved
        case "output":
            guard let colon = value.firstIndex(of: ":"), let flag = Int(value[..<colon]), (0...1).contains(flag) else {
                return "0 or 1, a colon and the output's name"
            }
            self.outputs.append(SavedOutput(name: String(value[value.index(after: colon)...]), isEnabled: flag == 1))
        case "volume":
            guard let volume = Int(value), (0...100).contains(volume) else { return "0 to 100" }
            self.volume = volume
        case "muted": return flag { $0.isMuted = $1 }
        case "repeat": return flag { $0.repeatMode = $1 }
        case "random": return flag { $0.random = $1 }
        case "consume": return flag { $0.consume = $1 }
        case "single":
            guard let single = SingleMode(rawValue: value) else { return "0, 1 or oneshot" }
            self.single = single
        case "replay_gain_mode":
            guard let mode = ReplayGainMode(rawValue: value) else { return "off, track, album or auto" }
            self.replayGainMode = mode
        case "state":
            guard let state = PlayerStateKind(rawValue: value) else { return "a player state (play, pause or stop)" }
            self.state = state
        case "current":
            guard let current = Int(value), current >= 0 else { return "a position in the queue" }
            self.current = current
        case "elapsed":
            guard let elapsed = Double(value), elapsed >= 0, elapsed <= SavedState.maximumElapsed else {
                return "seconds, at most \(Int(SavedState.maximumElapsed))"
            }
            self.elapsed = elapsed
        default:
            break
        }
        return nil
    }
}

extension SavedState {
    /// C's `%f`: six decimals (`-17.500000`, `nan`, `inf`).
    static func cFixed(_ value: Double) -> String {
        var bytes = [CChar](repeating: 0, count: 400)
        _ = withVaList([value]) { arguments in vsnprintf(&bytes, bytes.count, "%f", arguments) }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func startsWithDigit(_ text: String) -> Bool {
        text.utf8.first.map { $0 >= 0x30 && $0 <= 0x39 } ?? false
    }

    /// A `range:` line's value: `START-END` or `START-`, milliseconds.
    static func range(_ value: String) -> SongRange? {
        let parts = value.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]), start >= 0, start <= Int(UInt32.max) else { return nil }
        if parts[1].isEmpty {
            return start > 0 ? SongRange(start: start, end: nil) : nil
        }
        guard let end = Int(parts[1]), end > start, end <= Int(UInt32.max) else { return nil }
        return SongRange(start: start, end: end)
    }
}

/// Whether an output was switched on, remembered by its name (MPD's `audio_device_state`).
public struct SavedOutput: Sendable, Equatable {
    /// The output's name.
    public var name: String
    /// Whether it was on.
    public var isEnabled: Bool

    /// An output's remembered switch.
    public init(name: String, isEnabled: Bool) {
        self.name = name
        self.isEnabled = isEnabled
    }
}

/// Seconds with three decimals, as the state file and the protocol write them.
enum ResponseSeconds {
    static func format(_ seconds: Double) -> String {
        let milliseconds = Int((seconds * 1000).rounded())
        let fraction = milliseconds % 1000
        return "\(milliseconds / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0)
            + "\(fraction)"
    }
}

/// Why the state file could not be used.
public enum StateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not a whole, valid state file.
    case corrupt(reason: String)
    /// The file or its directory could not be read or written.
    case io(path: String, call: String, reason: String)

    public var description: String {
        switch self {
        case .corrupt(let reason): "the state file is corrupt: \(reason)"
        case .io(let path, let call, let reason): "\(path): \(call) failed: \(reason)"
        }
    }
}

/// The state file on disk: written atomically (temporary file, fsync, rename, fsync of the directory)
/// so that a crash or power cut leaves either the old file or the new one, never a mix.
public struct StateFile: Sendable {
    /// The file's path.
    public let path: String

    /// A state file at `path`.
    public init(path: String) {
        self.path = path
    }

    var directory: String {
        guard let slash = self.path.lastIndex(of: "/") else { return "." }
        return slash == self.path.startIndex ? "/" : String(self.path[..<slash])
    }

    /// Creates the directory if needed and proves it writable, so that a daemon that could never save
    /// says so at start rather than losing the queue later.
    public func checkWritable() throws(StateFileError) {
        let directory = self.directory
        var info = stat()
        if stat(directory, &info) != 0 {
            try Self.makeDirectories(directory)
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw .io(path: directory, call: "stat", reason: "not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw .io(path: directory, call: "access", reason: String(cString: strerror(errno)))
        }
    }

    private static func makeDirectories(_ path: String) throws(StateFileError) {
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o755) != 0 && errno != EEXIST {
                throw .io(path: built, call: "mkdir", reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Reads the file: nil when there is none.
    public func read() throws(StateFileError) -> String? {
        let descriptor = open(self.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: self.path, call: "open", reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(path: self.path, call: "read", reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces the file with `text`, atomically and durably.
    public func write(_ text: String) throws(StateFileError) {
        let temporary = "\(self.path).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .io(path: temporary, call: "open", reason: String(cString: strerror(errno)))
        }
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw .io(path: temporary, call: "write", reason: reason)
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(temporary)
            throw .io(path: temporary, call: "fsync", reason: reason)
        }
        close(descriptor)
        guard rename(temporary, self.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .io(path: self.path, call: "rename", reason: reason)
        }
        let directoryDescriptor = open(self.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Moves a corrupt file aside (never deletes it) and returns where it went.
    public func keepAside() throws(StateFileError) -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let aside = "\(self.path).corrupt-\(time.tv_sec)"
        guard rename(self.path, aside) == 0 else {
            throw .io(path: self.path, call: "rename", reason: String(cString: strerror(errno)))
        }
        return aside
    }
}
