import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The station audio of the radio tests, made once per test process (and removed when it exits): a
/// 30 s sweep (200 Hz to 2 kHz, so that any misplaced frame shows) at 48 kHz stereo, encoded by lame at
/// CBR 128 kbit/s without the bit reservoir (`--nores`): every frame is 384 bytes and decodes alone,
/// so that the PCM of a stream cut anywhere is the PCM of its whole frames.
enum RadioMusic {
    /// The directory holding `station.mp3`.
    static func directory() throws -> String {
        try made.get()
    }

    /// The MP3 the station loops.
    static func station() throws -> String {
        try directory() + "/station.mp3"
    }

    /// `--ogg`, `--opus` and `--flac` for the radio server: the same sweep's first 10 s encoded by
    /// oggenc, opusenc and flac (48 kHz stereo), made once.
    static func otherFormats() throws -> [String] {
        try formats.get()
    }

    private static let formats: Result<[String], any Error> = Result {
        let root = try directory()
        let script = """
            set -e -o pipefail
            cd '\(root)'
            /usr/bin/sox -q -n -r 48000 -c 2 -b 16 sweep.wav synth 10 sine 200-2000 vol 0.3
            /usr/bin/oggenc -Q sweep.wav -o station.ogg
            /usr/bin/opusenc --quiet sweep.wav station.opus
            /usr/bin/flac -s -f sweep.wav -o station.flac
            rm sweep.wav
            """
        let result = try runProgram("/bin/bash", ["-c", script], within: .seconds(60))
        guard result.status == 0 else {
            throw HarnessError("making the Ogg and FLAC station audio (vorbis-tools, opus-tools, flac): \(result)")
        }
        return ["--ogg", root + "/station.ogg", "--opus", root + "/station.opus", "--flac", root + "/station.flac"]
    }

    /// The bytes of one MP3 frame of the station audio.
    static let frameBytes = 384

    fileprivate static let cleanup = Mutex<String?>(nil)

    private static let made: Result<String, any Error> = Result {
        let root = try Paths.makeTemporaryDirectory()
        cleanup.withLock { $0 = root }
        atexit {
            if let root = RadioMusic.cleanup.withLock({ $0 }) {
                try? FileManager.default.removeItem(atPath: root)
            }
        }
        let command =
            "/usr/bin/sox -q -n -r 48000 -c 2 -b 16 -t wav - synth 30 sine 200-2000 vol 0.3"
            + " | /usr/bin/lame --quiet --nores --cbr -b 128 --resample 48 - '\(root)/station.mp3'"
        let result = try runProgram("/bin/bash", ["-o", "pipefail", "-c", command], within: .seconds(60))
        guard result.status == 0 else {
            throw HarnessError(
                "making the station audio with sox and lame (scripts/setup.sh test installs them): \(result)")
        }
        return root
    }
}

/// Tests/RadioServer/radio_server.py (its header documents every path) on a free loopback port, with
/// the station audio, its per-connection log and dumps in a temporary directory; killed when dropped.
final class RadioServer {
    static let script: String = URL(fileURLWithPath: Paths.testsDirectory).deletingLastPathComponent()
        .appendingPathComponent("RadioServer/radio_server.py").path

    let port: Int
    let directory: String
    private let program: BackgroundProgram

    /// Starts the server on `audio` (the station MP3 by default) and waits until it prints its port.
    init(audio: String? = nil, extraArguments: [String] = [], readiness: Duration = .seconds(20)) throws {
        self.directory = try Paths.makeTemporaryDirectory()
        let arguments =
            [
                Self.script, "--audio", try audio ?? RadioMusic.station(), "--log", self.directory + "/log",
                "--dump", self.directory + "/dump",
            ] + extraArguments
        do {
            self.program = try BackgroundProgram(Paths.python, arguments)
        } catch {
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
        let deadline = ContinuousClock.now + readiness
        var port: Int?
        while port == nil {
            if let line = self.program.stdout.split(separator: "\n").first, line.hasPrefix("PORT ") {
                port = Int(line.dropFirst(5))
            } else if !self.program.isRunning || ContinuousClock.now > deadline {
                let problem = self.program.isRunning ? "did not print its port within \(readiness)" : "exited"
                kill(self.program.process.processIdentifier, SIGKILL)
                throw HarnessError("the radio server \(problem): \(self.program.stderr)")
            } else {
                usleep(20_000)
            }
        }
        self.port = port!
    }

    deinit {
        if self.program.isRunning {
            kill(self.program.process.processIdentifier, SIGKILL)
            self.program.process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// The URL of `path` (with its query) on this server.
    func url(_ path: String) -> String {
        "http://127.0.0.1:\(self.port)\(path)"
    }

    /// One connection the server has finished with, as its log line tells it.
    struct Connection {
        var id: Int
        var target: String
        var status: Int
        var how: String
        var offsetStart: Int?
        var offsetEnd: Int?
        var audioBytes: Int?
        var requestHeaders: [String: String]
    }

    /// The connections ended so far, in the order they ended.
    func connections() -> [Connection] {
        let text = (try? String(contentsOfFile: self.directory + "/log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let id = object["id"] as? Int, let target = object["target"] as? String
            else { return nil }
            return Connection(
                id: id, target: target, status: object["status"] as? Int ?? 0, how: object["how"] as? String ?? "",
                offsetStart: object["offset_start"] as? Int, offsetEnd: object["offset_end"] as? Int,
                audioBytes: object["audio_bytes"] as? Int,
                requestHeaders: (object["request"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String })
        }
    }

    /// The connections to targets beginning with `prefix`.
    func connections(to prefix: String) -> [Connection] {
        self.connections().filter { $0.target.hasPrefix(prefix) }
    }

    /// The audio bytes (metadata taken out) the server sent on connection `id`.
    func dumped(_ id: Int) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: "\(self.directory)/dump/conn-\(id).bin"))
    }

    /// The server's stderr (its log lines), for failure messages.
    var logTail: String {
        self.program.stderr.split(separator: "\n").suffix(20).joined(separator: "\n")
    }
}

/// Polls `probe` every 50 ms until it returns a value, and returns it; throws, naming `what` and the
/// last error `probe` threw, when `limit` passes first.
func eventually<T>(_ what: String, within limit: Duration, _ probe: () throws -> T?) throws -> T {
    let deadline = ContinuousClock.now + limit
    var problem = ""
    while true {
        do {
            if let value = try probe() {
                return value
            }
        } catch {
            problem = " (last: \(error))"
        }
        if ContinuousClock.now > deadline {
            throw HarnessError("\(what): not within \(limit)\(problem)")
        }
        usleep(50_000)
    }
}

/// A daemon under a radio test: playerd, or Debian's mpd (the oracle), each with the paced null output
/// and the station audio's directory (`station.mp3`, a 30 s local song) as its music directory; with
/// `tcp`, also listening on 127.0.0.1 at `tcpPort`.
final class RadioDaemon {
    enum Kind: String, Sendable, CustomStringConvertible {
        case playerd
        case mpd

        var description: String { self.rawValue }
    }

    let kind: Kind
    let socketPath: String
    let tcpPort: Int?
    private let playerd: RunningPlayerd?
    private let mpd: BackgroundProgram?
    private let mpdDirectory: String?

    /// Starts the daemon (playerd with `extraArguments` added) and waits until its database is read.
    init(_ kind: Kind, tcp: Bool = false, extraArguments: [String] = []) throws {
        self.kind = kind
        let music = try RadioMusic.directory()
        self.tcpPort = tcp ? try freeLoopbackPort() : nil
        switch kind {
        case .playerd:
            var options = RunningPlayerd.Options()
            options.output = "null"
            options.library = true
            options.extraArguments = ["--music-dir", music] + extraArguments
            if let port = self.tcpPort {
                options.extraArguments += ["--listen", "127.0.0.1:\(port)"]
            }
            let daemon = try RunningPlayerd(options, readiness: .seconds(20))
            self.playerd = daemon
            self.socketPath = daemon.socketPath
            self.mpd = nil
            self.mpdDirectory = nil
            try updateDatabase(daemon.connect())
        case .mpd:
            // As RunningMPD (DaemonPair.swift), with a TCP listener when asked.
            let directory = try Paths.makeTemporaryDirectory()
            self.mpdDirectory = directory
            self.socketPath = directory + "/socket"
            self.playerd = nil
            var configuration = """
                music_directory "\(music)"
                db_file "\(directory)/database"
                state_file "\(directory)/state"
                playlist_directory "\(directory)"
                log_file "\(directory)/mpd.log"
                bind_to_address "\(self.socketPath)"
                auto_update "no"
                zeroconf_enabled "no"
                audio_output {
                    type "null"
                    name "null"
                    sync "yes"
                    mixer_type "software"
                }

                """
            if let port = self.tcpPort {
                configuration += "bind_to_address \"127.0.0.1\"\nport \"\(port)\"\n"
            }
            try configuration.write(toFile: directory + "/mpd.conf", atomically: true, encoding: .utf8)
            self.mpd = try BackgroundProgram(RunningMPD.executable, ["--no-daemon", directory + "/mpd.conf"])
            let client = try eventually("mpd answering", within: .seconds(20)) { () -> LineClient? in
                guard self.mpd!.isRunning else { throw HarnessError("mpd exited: \(self.mpd!.stderr)") }
                return try? self.connect()
            }
            try updateDatabase(client)
        }
    }

    deinit {
        if let mpd = self.mpd, mpd.isRunning {
            kill(mpd.process.processIdentifier, SIGKILL)
            mpd.process.waitUntilExit()
        }
        if let directory = self.mpdDirectory {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Stops the daemon: playerd with SIGTERM and a clean exit checked (its outputs closed); mpd killed.
    func stop() throws {
        if let playerd = self.playerd {
            _ = try playerd.stop()
        } else if let mpd = self.mpd, mpd.isRunning {
            kill(mpd.process.processIdentifier, SIGKILL)
            mpd.process.waitUntilExit()
        }
    }

    /// A new connection on the local socket, greeted.
    func connect() throws -> LineClient {
        try LineClient.greeted(self.socketPath)
    }

    /// A new connection over TCP (the daemon was started with `tcp`), greeted.
    func connectTCP() throws -> LineClient {
        guard let port = self.tcpPort else { throw HarnessError("\(self.kind) was started without TCP") }
        return try LineClient(host: "127.0.0.1", port: port).checkingGreeting()
    }

    /// Whether the daemon is still running (no input may crash it).
    var isRunning: Bool { self.playerd?.isRunning ?? self.mpd!.isRunning }

    /// The last lines of the daemon's log.
    var logTail: String {
        if let playerd = self.playerd {
            return playerd.logTail
        }
        let log = (try? String(contentsOfFile: self.mpdDirectory! + "/mpd.log", encoding: .utf8)) ?? ""
        return (log + self.mpd!.stderr).split(separator: "\n").suffix(40).joined(separator: "\n")
    }

    /// Everything playerd logged (mpd's log is not read by the tests).
    var log: String { self.playerd?.log ?? "" }
}

/// Runs `body` against a fresh daemon of `kind` and the radio server given (a fresh one by default),
/// then stops the daemon (playerd with SIGTERM, checked); a failure gets both logs.
func withRadio<Result>(
    _ kind: RadioDaemon.Kind, tcp: Bool = false, extraArguments: [String] = [], server: RadioServer? = nil,
    _ body: (RadioDaemon, RadioServer) throws -> Result
) throws -> Result {
    let server = try server ?? RadioServer()
    let daemon = try RadioDaemon(kind, tcp: tcp, extraArguments: extraArguments)
    do {
        let result = try body(daemon, server)
        guard daemon.isRunning else {
            throw HarnessError("\(kind) is no longer running at the end of the test")
        }
        try daemon.stop()
        return result
    } catch {
        throw HarnessError(
            "\(error)\n--- \(kind)'s log (last lines):\n\(daemon.logTail)\n--- the radio server's log:\n\(server.logTail)"
        )
    }
}

extension LineClient {
    /// The value of `key` in the answer to `request` (`currentsong`, `status`), nil when absent.
    func field(_ request: String, _ key: String) throws -> String? {
        try self.fields(request)[key]
    }
}
