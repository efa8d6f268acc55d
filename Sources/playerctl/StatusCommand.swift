import ArgumentParser
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// `status`: three lines as mpc prints them, one JSON object, or a live line.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print what is playing and the player's options.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    @Flag(help: "Keep one line up to date until interrupted.")
    var follow = false

    func validate() throws {
        if self.json && self.follow {
            throw ValidationError("--json and --follow exclude each other")
        }
    }

    func run() throws {
        let connection = try self.global.connect()
        if self.follow {
            try LiveStatusLine(connection: connection).run()
        }
        let (status, song) = try statusAndSong(connection)
        if self.json {
            print(statusJSON(status, song))
        } else {
            print(statusText(status, song), terminator: "")
        }
    }
}

/// `metadata`: the current song's fields.
struct Metadata: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the current song's tags and file as key: value lines.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one JSON object (empty when there is no current song).")
    var json = false

    func run() throws {
        let fields = try self.global.connect().command("currentsong")
        if self.json {
            var object = JSONObject()
            if let song = try Song.list(from: fields).first {
                object.add("file", .string(song.file))
                object.add("title", song.title.map(JSONValue.string) ?? .null)
                object.add("artist", song.artist.map(JSONValue.string) ?? .null)
                object.add("album", song.album.map(JSONValue.string) ?? .null)
                object.add("track", song.track.map(JSONValue.string) ?? .null)
                object.add("date", song.date.map(JSONValue.string) ?? .null)
                object.add("genre", song.genre.map(JSONValue.string) ?? .null)
                object.add("duration", song.duration.map(JSONValue.seconds) ?? .null)
                object.add("position", song.position.map { .integer($0 + 1) } ?? .null)
                object.add("id", song.id.map(JSONValue.integer) ?? .null)
            }
            print(object.text)
            return
        }
        for (key, value) in fields {
            // Positions count from 1 everywhere in playerctl; MPD's `Pos` counts from 0.
            if key == "Pos", let position = Int(value) {
                print("Pos: \(position + 1)")
            } else {
                print("\(key): \(value)")
            }
        }
    }
}

/// `status` and `currentsong` in one round trip, as mpc asks for them.
func statusAndSong(_ connection: MPDConnection) throws(ClientError) -> (Status, Song?) {
    let answers = try connection.commandList([("status", []), ("currentsong", [])])
    return (try Status(fields: answers[0]), try Song.list(from: answers[1]).first)
}

/// What mpc prints for `mpc status`: the song and the progress while a song is current, then the
/// options, then the error if there is one.
func statusText(_ status: Status, _ song: Song?) -> String {
    var text = ""
    if status.state != .stop, let song {
        text += songTitle(song) + "\n"
        let position = status.song.map { "#\($0 + 1)/\(status.playlistLength)" } ?? "#?/\(status.playlistLength)"
        let elapsed = status.elapsed ?? 0
        let duration = status.duration ?? song.duration ?? 0
        text += "[\(stateWord(status.state))] \(position)   \(formatDuration(elapsed))/\(formatDuration(duration))"
        text += " (\(percent(elapsed, of: duration))%)\n"
    }
    // mpc pads the level to three characters: `volume: 70%`, `volume:100%`, `volume: n/a`.
    let level = status.volume.map { "\($0)%" } ?? "n/a"
    let volume = String(repeating: " ", count: max(0, 4 - level.count)) + level
    text += "volume:\(volume)   repeat: \(onOff(status.repeat))   random: \(onOff(status.random))   "
    text += "single: \(singleWord(status.single))   consume: \(onOff(status.consume))\n"
    if let timers = timerText(status) {
        text += timers + "\n"
    }
    if let error = status.error {
        text += "ERROR: \(error)\n"
    }
    return text
}

/// `resumes in 0:04`, `stops in 19:59`, `stops at the end of this song`, or both: what playerd's timers
/// will do; nil when none is set.
func timerText(_ status: Status) -> String? {
    var parts: [String] = []
    if let resumesIn = status.resumesIn {
        parts.append("resumes in \(formatDuration(resumesIn))")
    }
    switch status.sleepTimer {
    case .after(let seconds): parts.append("stops in \(formatDuration(seconds))")
    case .endOfSong: parts.append("stops at the end of this song")
    case nil: break
    }
    return parts.isEmpty ? nil : parts.joined(separator: ", ")
}

/// `status --json`: numbers as numbers, booleans as booleans, what is unknown as null. `song` is the
/// 1-based queue position, as everywhere in playerctl; `single` is true, false or "oneshot";
/// `resumes_in` and `stops_in` are the seconds left on a timed pause and a sleep timer, and
/// `stops_at_end` says the sleep timer stops at the end of the song.
func statusJSON(_ status: Status, _ song: Song?) -> String {
    var object = JSONObject()
    object.add("state", .string(stateWord(status.state)))
    object.add("file", song.map { .string($0.file) } ?? .null)
    object.add("title", song?.title.map(JSONValue.string) ?? .null)
    object.add("artist", song?.artist.map(JSONValue.string) ?? .null)
    object.add("album", song?.album.map(JSONValue.string) ?? .null)
    object.add("elapsed", status.elapsed.map(JSONValue.seconds) ?? .null)
    object.add("duration", (status.duration ?? song?.duration).map(JSONValue.seconds) ?? .null)
    object.add("volume", status.volume.map(JSONValue.integer) ?? .null)
    object.add("song", status.song.map { .integer($0 + 1) } ?? .null)
    object.add("queue_length", .integer(status.playlistLength))
    object.add("repeat", .bool(status.repeat))
    object.add("random", .bool(status.random))
    let single: JSONValue =
        switch status.single {
        case .off: .bool(false)
        case .on: .bool(true)
        case .oneshot: .string("oneshot")
        }
    object.add("single", single)
    object.add("consume", .bool(status.consume))
    object.add("error", status.error.map(JSONValue.string) ?? .null)
    object.add("resumes_in", status.resumesIn.map(JSONValue.seconds) ?? .null)
    let stopsIn: Double? = if case .after(let seconds) = status.sleepTimer { seconds } else { nil }
    object.add("stops_in", stopsIn.map(JSONValue.seconds) ?? .null)
    object.add("stops_at_end", .bool(status.sleepTimer == .endOfSong))
    return object.text
}

/// `Title - Artist`, the title alone, or the file when there is no title.
func songTitle(_ song: Song) -> String {
    guard let title = song.title else {
        return song.file
    }
    guard let artist = song.artist else {
        return title
    }
    return "\(title) - \(artist)"
}

/// `playing`, `paused`, `stopped`: mpc's words.
func stateWord(_ state: PlaybackState) -> String {
    switch state {
    case .play: "playing"
    case .pause: "paused"
    case .stop: "stopped"
    }
}

/// Whole percent of the song played, 0 when its length is unknown.
func percent(_ elapsed: Double, of duration: Double) -> Int {
    guard duration > 0, elapsed > 0 else {
        return 0
    }
    return Int(min(100, elapsed * 100 / duration))
}

private func onOff(_ value: Bool) -> String {
    value ? "on" : "off"
}

private func singleWord(_ single: Status.Single) -> String {
    switch single {
    case .off: "off"
    case .on: "on"
    case .oneshot: "oneshot"
    }
}
