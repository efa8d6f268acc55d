import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A library large enough that its long answers (`listallinfo`, a search matching every song, `list
/// title`) each pass MPD's 8 MiB output buffer and many of playerd's 64 KiB pieces (issue 27), made at
/// test time: `songCount` songs in directories of `songsPerDirectory`, each an ID3v2.4 tag (UTF-8
/// frames) in front of the same 0.2 s of MPEG audio, encoded once by sox and lame. Titles are long
/// (`titleLength` bytes), so that `list title` is as large as the rest with few files to scan.
///
/// Names are lowercase ASCII with fixed-width numbers, so that MPD's ICU collation and playerd's byte
/// order list them alike; each directory is one album, its songs in track order.
enum BigLibrary {
    static let songCount = 12_000
    static let songsPerDirectory = 200
    static let titleLength = 760
    /// MPD's default `max_output_buffer_size`: 8 MiB. Each long answer must be larger.
    static let mpdOutputLimit = 8 * 1024 * 1024

    static func number(_ value: Int, width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    static func directory(_ song: Int) -> String { "d" + number(song / songsPerDirectory, width: 3) }
    static func path(_ song: Int) -> String { directory(song) + "/t" + number(song, width: 5) + ".mp3" }
    static func album(_ song: Int) -> String { "album " + number(song / songsPerDirectory, width: 3) }
    static func artist(_ song: Int) -> String { "artist " + number(song % 7, width: 2) }
    static func track(_ song: Int) -> Int { song % songsPerDirectory + 1 }

    /// A title of exactly `titleLength` bytes, different for every song.
    static func title(_ song: Int) -> String {
        let head = "title " + number(song, width: 5) + " "
        let words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"]
        var text = head
        var index = song
        while text.utf8.count < titleLength {
            text += words[index % words.count] + " "
            index = (index * 31 + 7) % 1_000_003
        }
        return String(text.prefix(titleLength - 1)) + "z"
    }

    /// Every song's path, in listing order.
    static var paths: [String] { (0..<songCount).map(path) }

    /// The tree, made at its first use in this test run and removed when the run ends.
    static func root() throws -> String {
        try made.get()
    }

    private static let made: Result<String, HarnessError> = {
        do {
            let root = try makeDirectory(prefix: "/tmp/playerd-bigtree-")
            treeForCleanup.withLock { $0 = root }
            atexit {
                if let root = BigLibrary.treeForCleanup.withLock({ $0 }) {
                    try? FileManager.default.removeItem(atPath: root)
                }
            }
            try generate(in: root)
            return .success(root)
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("making the big music tree: \(error)"))
        }
    }()

    fileprivate static let treeForCleanup = Mutex<String?>(nil)

    private static func generate(in root: String) throws {
        let audio = try encodeAudio(in: root)
        for song in 0..<songCount {
            if song % songsPerDirectory == 0 {
                guard mkdir(root + "/" + directory(song), 0o755) == 0 else {
                    throw HarnessError.system("mkdir \(directory(song))", errno)
                }
            }
            let bytes = tag(song) + audio
            let file = open(root + "/" + path(song), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard file >= 0 else { throw HarnessError.system("open \(path(song))", errno) }
            defer { close(file) }
            let written = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw HarnessError.system("write \(path(song))", errno) }
        }
    }

    /// 0.2 s of a quiet tone, mono, 32 kbit/s: the MPEG frames only.
    private static func encodeAudio(in root: String) throws -> [UInt8] {
        let wav = root + "/.tone.wav"
        let mp3 = root + "/.tone.mp3"
        defer {
            unlink(wav)
            unlink(mp3)
        }
        let result = try runProgram(
            "/bin/sh",
            [
                "-c",
                "sox -R -n -r 44100 -c 1 -b 16 \"$1\" synth 0.2 sine 440 vol 0.1"
                    + " && lame --quiet --noreplaygain -b 32 -m m --resample 44.1 \"$1\" \"$2\"",
                "sh", wav, mp3,
            ])
        guard result.status == 0 else {
            throw HarnessError("sox or lame failed (scripts/setup.sh test installs them): \(result)")
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mp3)))
        if bytes.count > 10, bytes.starts(with: "ID3".utf8) {
            let size = bytes[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            bytes.removeFirst(min(bytes.count, 10 + size))
        }
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else {
            throw HarnessError("lame's output does not start with an MPEG frame")
        }
        return bytes
    }

    private static func syncsafe(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }

    /// An ID3v2.4 tag of UTF-8 text frames.
    private static func tag(_ song: Int) -> [UInt8] {
        let frames: [(String, String)] = [
            ("TIT2", title(song)), ("TPE1", artist(song)), ("TALB", album(song)), ("TRCK", String(track(song))),
        ]
        var body: [UInt8] = []
        for (id, text) in frames {
            let data = [UInt8(3)] + Array(text.utf8)
            body += Array(id.utf8) + syncsafe(data.count) + [0, 0] + data
        }
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(body.count) + body
    }
}

/// A bare client for answers of many megabytes: it keeps the bytes as they come (no line splitting
/// while reading), may read them slowly, or not at all.
final class BulkClient {
    private let descriptor: Int32

    /// Connects to `socketPath` and reads the greeting line.
    init(_ socketPath: String) throws {
        self.descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard self.descriptor >= 0 else { throw HarnessError.system("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(self.descriptor)
            throw HarnessError.system("connect \(socketPath)", code)
        }
        let greeting = try self.answer(until: { $0.last == 0x0A }, timeout: .seconds(5))
        guard String(decoding: greeting, as: UTF8.self).hasPrefix("OK MPD ") else {
            throw HarnessError("no greeting: \(String(decoding: greeting, as: UTF8.self))")
        }
    }

    deinit { self.close() }

    private var closed = false

    /// Closes the connection at once.
    func close() {
        guard !self.closed else { return }
        self.closed = true
        Glibc.close(self.descriptor)
    }

    /// Sends one request line.
    func send(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(self.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw HarnessError.system("send", errno) }
    }

    /// Whether `bytes` hold a whole answer: they end with an `OK` or an `ACK ...` line.
    static func isWhole(_ bytes: [UInt8]) -> Bool {
        guard bytes.last == 0x0A else { return false }
        let lineStart = (bytes.dropLast().lastIndex(of: 0x0A).map { $0 + 1 }) ?? 0
        let line = bytes[lineStart...]
        return line.elementsEqual("OK\n".utf8) || line.starts(with: "ACK ".utf8)
    }

    /// Sends `line` and reads its whole answer, `OK` included; `pause` between reads of at most
    /// `piece` bytes makes a slow reader.
    func request(
        _ line: String, piece: Int = 1 << 20, pause: Duration = .zero, timeout: Duration = .seconds(30)
    ) throws -> [UInt8] {
        try self.send(line)
        return try self.answer(until: Self.isWhole, piece: piece, pause: pause, timeout: timeout)
    }

    private func answer(
        until done: ([UInt8]) -> Bool, piece: Int = 1 << 20, pause: Duration = .zero, timeout: Duration
    ) throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: piece)
        while !done(bytes) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw HarnessError("no whole answer within \(timeout): \(bytes.count) bytes read")
            }
            var poller = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(Swift.max(1, Swift.min(left.asSeconds * 1000, 1000)))) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw HarnessError("the connection ended after \(bytes.count) bytes of an answer")
            }
            bytes += buffer[..<count]
            if pause > .zero { Thread.sleep(forTimeInterval: pause.asSeconds) }
        }
        return bytes
    }
}

extension [UInt8] {
    /// The values of the lines `key: value`, in order.
    func values(of key: String) -> [String] {
        let prefix = Array((key + ": ").utf8)
        return self.split(separator: 0x0A).compactMap { line in
            line.starts(with: prefix) ? String(decoding: line.dropFirst(prefix.count), as: UTF8.self) : nil
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var asSeconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}
