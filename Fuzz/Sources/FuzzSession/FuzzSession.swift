// Fuzzes whole requests as a client sends them, through the daemon's real parts: a `ClientSession`
// frames them and follows command lists and `idle`, the command table parses every argument, and the
// handlers act on a real player (an `AudioEngine` playing MP3s from Fixtures/ on a paced null output),
// the library of Fixtures/ and a stored-playlist directory. Each input is one connection of an
// in-process client (`ControlServer(inProcessOnly:)`, a socketpair: no socket file), which finds the
// player in the same state every time: a queue of three songs, the first one playing, every option off,
// a stored playlist `pl`. Song ids are never reused, so `#0`, `#1` and `#2` in an input stand for the
// ids the three songs have this time (`seekid #0 1.5`).
//
// Besides crashes (an overflow traps in this release build), hangs and leaks, it checks that the session
// answers the whole input and closes, that every line of the answer is a line of the protocol (an ACK
// with MPD's form), and that the player's published status stays consistent.

import Audio
import FuzzSupport
import Logging
import PlayerCore
import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: the bytes one client sends on one connection.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    Harness.shared.run(input)
    return 0
}

/// The daemon's parts, made once for the whole run, and the steps of one input.
final class Harness: Sendable {
    static let shared = Harness()

    /// The songs queued before each input: a CBR song with no tags, a one-second song, a tagged one.
    static let queued = ["stereo-44k-cbr.mp3", "one-second.mp3", "tagged-id3v24.mp3"]

    /// Puts the player back where every input starts, in one command list; the `addid`s answer the
    /// songs' ids.
    static let prelude =
        ([
            "command_list_begin", "stop", "clear", "repeat 0", "random 0", "single 0", "consume 0", "setvol 100",
            "enableoutput 0", "sleeptimer off", "clearerror", "replay_gain_mode off",
        ]
        + queued.map { "addid \($0)" } + ["play 0", "command_list_end"]).joined(separator: "\n") + "\n"

    /// What ends an input: a line it left unfinished is finished, and a pending `idle` answered
    /// (`noidle` is ignored by a client that is not idling). The client then closes its side.
    static let epilogue = Array("\nnoidle\n".utf8)

    /// Whether each input's answer is printed (`FUZZ_SESSION_PRINT=1`), to see what a replayed input did.
    static let printsAnswers = getenv("FUZZ_SESSION_PRINT") != nil

    let service: PlayerService
    let server: ControlServer
    let directory: String
    let playlistDirectory: String

    private init() {
        // Fixtures/ from this file's place: Fuzz/Sources/FuzzSession/FuzzSession.swift.
        let fixtures =
            String(
                #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(4)
                    .joined(separator: "/")) + "/Fixtures"
        Self.sweepLeftovers()
        var template = Array((Self.directoryPrefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            fatalError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        self.directory = String(cString: made)
        let owner = open(self.directory + "/owner", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        _ = "\(getpid())".utf8CString.withUnsafeBufferPointer { write(owner, $0.baseAddress, $0.count - 1) }
        close(owner)
        self.playlistDirectory = self.directory + "/playlists"
        mkdir(self.playlistDirectory, 0o700)
        var configuration = DaemonConfiguration(socketPath: self.directory + "/socket")
        configuration.outputs = [ConfiguredOutput(spec: .null(paced: true))]
        configuration.musicDirectory = fixtures
        configuration.libraryPath = self.directory + "/library.db"
        configuration.playlistDirectory = self.playlistDirectory
        // The queue's limit kept small, so that inputs adding the music directory again and again reach it.
        configuration.maximumQueueLength = 512
        let quiet = Logger(label: "fuzz-session") { _ in SwiftLogNoOpLogHandler() }
        self.service = PlayerService(configuration: configuration, logger: quiet)
        self.service.startLibrary()
        self.server = ControlServer(inProcessOnly: self.service, logger: quiet)
        atexit { Harness.removeTree(Harness.shared.directory) }
        // The first scan of Fixtures/ ends before the first input, so that inputs find the same library.
        for _ in 0..<500 {
            let answer = String(decoding: self.exchange(Array("status\n".utf8)), as: UTF8.self)
            if !answer.contains("updating_db:") { break }
            usleep(10_000)
        }
    }

    /// Runs one input on a new connection, from the prelude's state, and checks what came back.
    func run(_ input: [UInt8]) {
        self.resetPlaylists()
        let prelude = String(decoding: self.exchange(Array(Self.prelude.utf8)), as: UTF8.self)
        let ids = prelude.split(separator: "\n").filter { $0.hasPrefix("Id: ") }.map { Array($0.dropFirst(4).utf8) }
        require(prelude.hasSuffix("OK\n") && ids.count == Self.queued.count, "the prelude failed: \(prelude)")
        let answer = self.exchange(Self.substitutingIDs(ids, in: input) + Self.epilogue)
        if Self.printsAnswers {
            print(String(decoding: answer, as: UTF8.self), terminator: "")
        }
        Self.checkLines(answer)
        Self.checkStatus(self.service.engine.status)
    }

    /// The input with `#0`, `#1`, `#2` replaced by the queued songs' ids.
    static func substitutingIDs(_ ids: [[UInt8]], in input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "#"), index + 1 < input.count, input[index + 1] >= UInt8(ascii: "0"),
                case let which = Int(input[index + 1] - UInt8(ascii: "0")), which < ids.count
            {
                output += ids[which]
                index += 2
            } else {
                output.append(input[index])
                index += 1
            }
        }
        return output
    }

    /// Empties the stored-playlist directory but for one playlist `pl` of two entries.
    private func resetPlaylists() {
        if let listing = opendir(self.playlistDirectory) {
            while let entry = readdir(listing) {
                let name = Self.name(of: entry)
                if name != "." && name != ".." {
                    unlink(self.playlistDirectory + "/" + name)
                }
            }
            closedir(listing)
        }
        let text = Self.queued.prefix(2).joined(separator: "\n") + "\n"
        let descriptor = open(self.playlistDirectory + "/pl.m3u", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        require(descriptor >= 0, "cannot write the playlist: \(String(cString: strerror(errno)))")
        _ = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
    }

    /// Connects, sends `bytes` and closes the sending side, and returns everything the daemon answered
    /// until it closed the connection (after the greeting). Sending and reading go on together, so that
    /// a long answer never waits for the rest of the input to be sent.
    func exchange(_ bytes: [UInt8]) -> [UInt8] {
        let descriptor: Int32
        do {
            descriptor = try self.server.connectInternalClient()
        } catch {
            fatalError("cannot connect: \(error)")
        }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var received: [UInt8] = []
        var sent = 0
        var sending = true
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var events = Int16(POLLIN)
            if sending { events |= Int16(POLLOUT) }
            var poller = pollfd(fd: descriptor, events: events, revents: 0)
            guard poll(&poller, 1, -1) >= 0 || errno == EINTR else {
                fatalError("poll failed: \(String(cString: strerror(errno)))")
            }
            if sending && poller.revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0 {
                let count = bytes[sent...].withUnsafeBytes {
                    send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if count > 0 {
                    sent += count
                }
                // The daemon may close first (`close`, a line after `idle`): the rest is not for it.
                if sent == bytes.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                    sending = false
                    shutdown(descriptor, Int32(SHUT_WR))
                }
            }
            if poller.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                    break
                }
                if count > 0 {
                    received += buffer[0..<count]
                }
            }
        }
        let greeting = Array("OK MPD 0.23.".utf8)
        require(received.starts(with: greeting), "no greeting: \(String(decoding: received.prefix(80), as: UTF8.self))")
        let end = received.firstIndex(of: 0x0A).map { $0 + 1 } ?? received.count
        return Array(received[end...])
    }

    /// Every line is `OK`, `list_OK`, `key: value`, or an ACK in MPD's form; a `binary: N` line is followed
    /// by N bytes and a newline.
    static func checkLines(_ answer: [UInt8]) {
        var index = 0
        while index < answer.count {
            guard let newline = answer[index...].firstIndex(of: 0x0A) else {
                fatalError(
                    "an answer ends in the middle of a line: \(String(decoding: answer[index...], as: UTF8.self))")
            }
            let line = String(decoding: answer[index..<newline], as: UTF8.self)
            index = newline + 1
            if line == "OK" || line == "list_OK" {
                continue
            }
            if line.hasPrefix("ACK ") {
                require(isAck(line), "an ACK not in MPD's form: \(line)")
                continue
            }
            // MPD's deprecated `playlist` answers `POS:file: URI`.
            if let colon = line.firstIndex(of: ":"), !line[..<colon].isEmpty,
                line[..<colon].allSatisfy({ $0.isASCII && $0.isNumber }), line[colon...].hasPrefix(":file: ")
            {
                continue
            }
            guard let colon = line.firstIndex(of: ":"), line[colon...].hasPrefix(": ") || line[colon...] == ":"
            else {
                fatalError("a line that is no answer: \(line)")
            }
            if line.hasPrefix("binary: "), let count = Int(line.dropFirst("binary: ".count)) {
                require(
                    count >= 0 && index + count < answer.count && answer[index + count] == 0x0A,
                    "binary: \(count) without its bytes")
                index += count + 1
            }
        }
    }

    /// `ACK [CODE@INDEX] {COMMAND} MESSAGE`, with a code of MPD's.
    static func isAck(_ line: String) -> Bool {
        let codes: Set = [1, 2, 3, 4, 5, 50, 51, 52, 53, 54, 55, 56]
        let rest = line.dropFirst("ACK [".count)
        guard let at = rest.firstIndex(of: "@"), let code = Int(rest[..<at]), codes.contains(code),
            let close = rest.firstIndex(of: "]"), at < close, Int(rest[rest.index(after: at)..<close]) != nil
        else { return false }
        let afterIndex = rest[rest.index(after: close)...]
        guard afterIndex.hasPrefix(" {"), let brace = afterIndex.firstIndex(of: "}") else { return false }
        return afterIndex[brace...].hasPrefix("} ")
    }

    /// What the player publishes is consistent: a current song inside the queue, one when playing or
    /// paused, a volume from 0 to 100.
    static func checkStatus(_ status: PlayerStatus) {
        if let position = status.position {
            require((0..<status.queueLength).contains(position), "position \(position) of \(status.queueLength)")
        }
        require(status.state == .stop || status.entry != nil, "\(status.state) with no song")
        if let volume = status.volume {
            require((0...100).contains(volume), "volume \(volume)")
        }
        require(status.queueLength <= 512, "\(status.queueLength) songs queued, past the limit of 512")
    }

    /// Where each run keeps its library and playlists: a directory of this prefix, with the run's pid in
    /// its `owner` file.
    static let directoryPrefix = "/tmp/playerd-fuzz-session-"

    /// Removes the directories of runs that have ended: libFuzzer leaves with `_exit` after a crash or
    /// at `-max_total_time`, so that the run's own removal at exit does not happen then.
    private static func sweepLeftovers() {
        guard let listing = opendir("/tmp") else { return }
        defer { closedir(listing) }
        let prefix = String(Self.directoryPrefix.dropFirst("/tmp/".count))
        while let entry = readdir(listing) {
            let name = Self.name(of: entry)
            guard name.hasPrefix(prefix) else { continue }
            let directory = "/tmp/" + name
            let text = Self.contents(of: directory + "/owner") ?? ""
            guard let owner = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int32($0) }),
                kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            Self.removeTree(directory)
        }
    }

    /// A file's text, or nil when it cannot be read.
    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(descriptor, &bytes, bytes.count)
        return count > 0 ? String(decoding: bytes[0..<count], as: UTF8.self) : nil
    }

    /// A directory entry's name, read where it lies: `readdir`'s entry is only as long as its name, so
    /// copying the whole `d_name` array would read past it.
    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }

    /// Removes `path` and everything under it (a run's directory holds files and one directory of them).
    static func removeTree(_ path: String) {
        if let listing = opendir(path) {
            while let entry = readdir(listing) {
                let name = Self.name(of: entry)
                guard name != "." && name != ".." else { continue }
                if entry.pointee.d_type == DT_DIR {
                    Self.removeTree(path + "/" + name)
                } else {
                    unlink(path + "/" + name)
                }
            }
            closedir(listing)
        }
        rmdir(path)
    }
}
