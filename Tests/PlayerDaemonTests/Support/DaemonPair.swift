import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Songs long enough to compare transitions on (DESIGN.md §11: mpd decodes about 1.3 s ahead of a null
/// output, so a short song ends before a state can be read), made at test time from sine tones of
/// distinct pitches: 44.1 kHz stereo, encoded by lame at a small constant bitrate.
enum PairedMusic {
    /// How many songs `make(in:)` writes, and how long each one lasts.
    static let songCount = 4
    static let songSeconds = 20

    /// The file name of the song at queue position `index` (0-based) once all are added in order.
    static func fileName(_ index: Int) -> String {
        "song\(index + 1).mp3"
    }

    /// Writes the songs into `directory` (sox's tone piped into lame, all at once).
    static func make(in directory: String) throws {
        let encoders = try (0..<songCount).map { index in
            let pitch = 330 + 110 * index
            let command =
                "/usr/bin/sox -q -n -r 44100 -c 2 -b 16 -t wav - synth \(songSeconds) sine \(pitch) vol 0.3"
                + " | /usr/bin/lame --quiet -b 32 --resample 44.1 - '\(directory)/\(fileName(index))'"
            return try BackgroundProgram("/bin/bash", ["-o", "pipefail", "-c", command])
        }
        for encoder in encoders {
            let result = try encoder.finish(within: .seconds(60))
            guard result.status == 0 else {
                throw HarnessError(
                    "making the test songs with sox and lame (scripts/setup.sh test installs them): \(result)")
            }
        }
    }
}

/// Debian's mpd (the oracle, DESIGN.md §11) on a socket in a fresh temporary directory, with its own
/// database, state, sticker and playlist files, the paced null output, and `music` as its music
/// directory. Its database is up to date when the initializer returns; it is killed when dropped.
final class RunningMPD {
    static let executable = "/usr/bin/mpd"

    let directory: String
    let socketPath: String
    private let program: BackgroundProgram

    /// Starts mpd and waits (up to `readiness`) until it greets and has read the music directory. It has
    /// one paced null output for each of `outputs`, by that name; `extraConfiguration` is appended to
    /// its configuration file as it is (`max_output_buffer_size "65536"`).
    init(
        music: String, outputs: [String] = ["null"], extraConfiguration: String = "",
        readiness: Duration = .seconds(20)
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("\(Self.executable) is missing: scripts/setup.sh test installs Debian's mpd")
        }
        self.directory = try Paths.makeTemporaryDirectory()
        self.socketPath = self.directory + "/socket"
        try FileManager.default.createDirectory(
            atPath: self.directory + "/playlists", withIntermediateDirectories: true)
        let configuration = """
            music_directory "\(music)"
            db_file "\(self.directory)/database"
            state_file "\(self.directory)/state"
            sticker_file "\(self.directory)/sticker.sql"
            playlist_directory "\(self.directory)/playlists"
            log_file "\(self.directory)/mpd.log"
            bind_to_address "\(self.socketPath)"
            auto_update "no"
            zeroconf_enabled "no"

            """
            + outputs.map {
                "audio_output {\n    type \"null\"\n    name \"\($0)\"\n    sync \"yes\"\n    mixer_type \"software\"\n}\n"
            }
            .joined() + extraConfiguration
        do {
            try configuration.write(toFile: self.directory + "/mpd.conf", atomically: true, encoding: .utf8)
            self.program = try BackgroundProgram(Self.executable, ["--no-daemon", self.directory + "/mpd.conf"])
        } catch {
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
        do {
            try self.waitUntilReady(within: readiness)
            try updateDatabase(self.connect(), within: readiness)
        } catch {
            throw HarnessError("mpd could not be started: \(error)\n--- mpd's log (last lines):\n\(self.logTail)")
        }
    }

    deinit {
        if self.program.isRunning {
            kill(self.program.process.processIdentifier, SIGKILL)
            self.program.process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    var isRunning: Bool { self.program.isRunning }

    /// A new connection whose greeting (`OK MPD 0.23.x`) has been read.
    func connect(timeout: Duration = LineClient.defaultTimeout) throws -> LineClient {
        let client = try LineClient(socketPath: self.socketPath)
        let greeting = try client.readLine(timeout: timeout)
        guard greeting?.hasPrefix("OK MPD 0.23.") == true else {
            throw HarnessError("mpd greeted with \(greeting.map { "\"\($0)\"" } ?? "EOF"), not OK MPD 0.23.x")
        }
        return client
    }

    /// The last lines of mpd's log and of what it printed, for failure messages.
    var logTail: String {
        let log = (try? String(contentsOfFile: self.directory + "/mpd.log", encoding: .utf8)) ?? ""
        let text = log + self.program.stdout + self.program.stderr
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
    }

    private func waitUntilReady(within limit: Duration) throws {
        let deadline = ContinuousClock.now + limit
        var problem = "nothing tried yet"
        while ContinuousClock.now < deadline {
            guard self.program.isRunning else {
                throw HarnessError(
                    "mpd exited with status \(self.program.process.terminationStatus) before it answered")
            }
            do {
                _ = try self.connect(timeout: .seconds(1))
                return
            } catch {
                problem = "\(error)"
            }
            usleep(20_000)
        }
        throw HarnessError("mpd did not answer within \(limit): \(problem)")
    }
}

/// Asks a daemon for an update of its database and waits (polling `status`, as `mpc update --wait`
/// does) until that job has ended.
func updateDatabase(_ client: LineClient, within limit: Duration = .seconds(20)) throws {
    let answer = try client.command("update")
    // An update already under way (playerd scans a new library at start) answers ACK 54: wait for it.
    let job: Int
    if answer.last == "OK", let number = answer.first?.split(separator: " ").last.flatMap({ Int($0) }) {
        job = number
    } else if answer.last?.hasPrefix("ACK [54@") == true {
        job = .max
    } else {
        throw HarnessError("update was refused: \(answer)")
    }
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        let running = try client.fields("status")["updating_db"].flatMap { Int($0) }
        if running == nil || (job != .max && running! > job) {
            return
        }
        usleep(20_000)
    }
    throw HarnessError("update job \(job) did not end within \(limit)")
}

/// mpd and playerd side by side on one music directory, both with the paced null output as their only
/// output, each with a connection open: the same requests go to both and their answers are compared.
final class DaemonPair {
    let mpd: RunningMPD
    let playerd: RunningPlayerd
    let mpdClient: LineClient
    let playerdClient: LineClient

    /// Starts both daemons on `music` (songs made by `PairedMusic`) and waits until both have read it.
    init(music: String) throws {
        self.mpd = try RunningMPD(music: music)
        var options = RunningPlayerd.Options()
        options.output = "null"
        // A library of its own (in the daemon's directory), and the shared music over the fixtures.
        options.library = true
        options.extraArguments = ["--music-dir", music]
        self.playerd = try RunningPlayerd(options, readiness: .seconds(20))
        self.mpdClient = try self.mpd.connect()
        self.playerdClient = try self.playerd.connect()
        do {
            try updateDatabase(self.playerdClient)
        } catch {
            throw HarnessError("\(error)\n--- playerd's log (last lines):\n\(self.playerd.logTail)")
        }
    }

    /// Both daemons' logs, for a failure message.
    var logTails: String {
        "--- mpd's log (last lines):\n\(self.mpd.logTail)\n--- playerd's log (last lines):\n\(self.playerd.logTail)"
    }

    /// Puts both daemons back to the same start: stopped, every mode off, the output on, no error, and
    /// a queue of the songs in order. Every request must be accepted.
    func reset() throws {
        var requests = [
            "stop", "clear", "clearerror", "repeat 0", "random 0", "single 0", "consume 0", "enableoutput 0",
        ]
        requests += (0..<PairedMusic.songCount).map { "add \(PairedMusic.fileName($0))" }
        for (name, client) in [("mpd", self.mpdClient), ("playerd", self.playerdClient)] {
            for request in requests {
                let answer = try client.command(request)
                guard answer.last == "OK" else {
                    throw HarnessError("\(name) refused \(request) while resetting: \(answer.last ?? "")")
                }
            }
        }
    }
}
