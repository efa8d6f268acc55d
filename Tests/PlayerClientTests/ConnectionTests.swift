import Foundation
import Testing

@testable import PlayerClient

/// The server's end of a socket pair: answers are written before the client asks, which a stream
/// socket keeps for it, so that no thread is needed.
private final class FakeServer {
    let clientDescriptor: Int32
    let serverDescriptor: Int32

    init(greeting: String? = "OK MPD 0.23.5\n") throws {
        var descriptors: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.clientDescriptor = descriptors[0]
        self.serverDescriptor = descriptors[1]
        if let greeting {
            self.send(greeting)
        }
    }

    deinit {
        close(self.serverDescriptor)
    }

    func connect(timeout: Duration = .seconds(2)) throws(ClientError) -> MPDConnection {
        try MPDConnection(descriptor: self.clientDescriptor, socketPath: "/fake", timeout: timeout)
    }

    func send(_ text: String) {
        self.send(bytes: Array(text.utf8))
    }

    func send(bytes: [UInt8]) {
        #expect(write(self.serverDescriptor, bytes, bytes.count) == bytes.count)
    }

    /// Everything the client has sent so far.
    func received() -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(self.serverDescriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else {
                break
            }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func hangUp() {
        shutdown(self.serverDescriptor, Int32(SHUT_RDWR))
    }
}

/// A fresh directory under /tmp, removed when the value goes away.
final class ScratchDirectory {
    let path: String

    init() throws {
        // Unix socket paths are limited to 107 bytes, so this stays short and in /tmp.
        var template = Array("/tmp/playerctl-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path)
    }

    func file(_ name: String) -> String {
        "\(self.path)/\(name)"
    }
}

@Suite("MPDConnection against a scripted server")
struct ConnectionTests {
    @Test("reads the greeting's version and sends commands with quoted arguments")
    func commandRoundTrip() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        #expect(connection.protocolVersion == "0.23.5")
        server.send("volume: 70\nrepeat: 0\nstate: play\nerror: a: b\nempty: \nOK\n")
        let answer = try connection.command("status")
        #expect(answer.map(\.key) == ["volume", "repeat", "state", "error", "empty"])
        #expect(answer.map(\.value) == ["70", "0", "play", "a: b", ""])
        server.send("OK\n")
        _ = try connection.command("add", ["/music/A \"B\" \\ C.mp3"])
        #expect(server.received() == "status\nadd \"/music/A \\\"B\\\" \\\\ C.mp3\"\n")
    }

    @Test("an ACK throws refused with the server's code, command and message")
    func refused() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        server.send("ACK [55@0] {seekcur} Not playing\n")
        #expect(throws: ClientError.refused(code: 55, command: "seekcur", message: "Not playing")) {
            try connection.command("seekcur", ["10"])
        }
        // The connection goes on after a refusal, as the protocol does.
        server.send("state: stop\nOK\n")
        #expect(try connection.status().state == .stop)
    }

    @Test("a command list is sent at once and answered per command; a failure stops it")
    func commandList() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        server.send("state: play\nlist_OK\nfile: a.mp3\nTitle: A\nlist_OK\nOK\n")
        let answers = try connection.commandList([("status", []), ("currentsong", [])])
        #expect(answers.count == 2)
        #expect(answers[1].map(\.value) == ["a.mp3", "A"])
        #expect(server.received() == "command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\n")

        server.send("list_OK\nACK [50@1] {add} No such song\n")
        #expect(throws: ClientError.refused(code: 50, command: "add", message: "No such song")) {
            try connection.commandList([("clear", []), ("add", ["x"]), ("play", ["0"])])
        }
        #expect(try connection.commandList([]).isEmpty)
    }

    @Test("idle returns the changed subsystems")
    func idle() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        server.send("changed: player\nchanged: mixer\nOK\n")
        #expect(try connection.idle(["player", "mixer"]) == ["player", "mixer"])
        #expect(server.received() == "idle \"player\" \"mixer\"\n")
    }

    @Test("an idle that times out ends the wait with noidle")
    func idleTimeout() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        // The server answers noidle with OK, as MPD does; a thread plays that part.
        let descriptor = server.serverDescriptor
        let responder = Thread {
            var received: [UInt8] = []
            var byte: UInt8 = 0
            while !String(decoding: received, as: UTF8.self).hasSuffix("noidle\n"), read(descriptor, &byte, 1) == 1 {
                received.append(byte)
            }
            _ = write(descriptor, "OK\n", 3)
        }
        responder.start()
        let started = ContinuousClock.now
        #expect(try connection.idle(["player"], timeout: .milliseconds(100)) == [])
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test("beginIdle returns at once; finishIdle reads the answer when the socket is readable")
    func splitIdle() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        try connection.beginIdle(["player"])
        #expect(server.received() == "idle \"player\"\n")
        var request = pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&request, 1, 0) == 0)
        server.send("changed: player\nOK\n")
        #expect(poll(&request, 1, 1000) == 1)
        #expect(try connection.finishIdle() == ["player"])
        #expect(!connection.hasBufferedInput)
    }

    @Test("a line that is not UTF-8 reads with U+FFFD in place of the bad bytes, and the answer goes on")
    func repairedLine() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        server.send(bytes: Array("file: a.mp3\nTitle: Caf".utf8) + [0xE9] + Array("\nId: 3\nOK\n".utf8))
        let song = try connection.currentSong()
        #expect(song?.title == "Caf\u{FFFD}")
        #expect(song?.id == 3)
    }

    @Test("binary answers: the fields, the bytes (newlines and all), chunk by chunk into a picture")
    func binary() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        let bytes: [UInt8] = [0x89, 0x0A, 0x00, 0xFF, 0x0A]
        server.send(bytes: Array("size: 5\ntype: image/png\nbinary: 5\n".utf8) + bytes + Array("\nOK\n".utf8))
        let chunk = try #require(try connection.binaryCommand("readpicture", ["a.mp3", "0"]))
        #expect(chunk.data == bytes)
        #expect(chunk.totalSize == 5)
        #expect(chunk.type == "image/png")
        #expect(server.received() == "readpicture \"a.mp3\" \"0\"\n")

        // Two chunks make one picture; then no picture (an empty readpicture, albumart's ACK 50).
        server.send(bytes: Array("size: 5\nbinary: 3\n".utf8) + bytes[0..<3] + Array("\nOK\n".utf8))
        server.send(bytes: Array("size: 5\nbinary: 2\n".utf8) + bytes[3...] + Array("\nOK\n".utf8))
        let picture = try #require(try connection.picture("albumart", of: "a.mp3"))
        #expect(picture.data == bytes)
        #expect(picture.type == nil)
        #expect(server.received() == "albumart \"a.mp3\" \"0\"\nalbumart \"a.mp3\" \"3\"\n")
        server.send("OK\n")
        #expect(try connection.picture("readpicture", of: "b.mp3") == nil)
        server.send("ACK [50@0] {albumart} No file exists\n")
        #expect(try connection.picture("albumart", of: "b.mp3") == nil)
        // The connection is still in step.
        server.send("volume: 5\nOK\n")
        #expect(try connection.command("ping").first?.value == "5")
    }

    @Test("a greeting that is not MPD's is refused", arguments: ["HTTP/1.1 400 Bad Request\n", "OK\n", "hello\n"])
    func notMPD(greeting: String) throws {
        let server = try FakeServer(greeting: greeting)
        #expect(throws: ClientError.notMPD(String(greeting.dropLast()))) {
            try server.connect()
        }
    }

    @Test("a server that says nothing times out; one that hangs up is reported")
    func silentAndClosed() throws {
        let silent = try FakeServer(greeting: nil)
        let started = ContinuousClock.now
        #expect(throws: ClientError.timedOut) {
            try silent.connect(timeout: .milliseconds(200))
        }
        #expect(ContinuousClock.now - started < .seconds(2))

        let server = try FakeServer()
        let connection = try server.connect()
        server.send("volume: 5\n")
        server.hangUp()
        #expect(throws: ClientError.closed) {
            try connection.command("status")
        }
    }

    @Test("odd answers are malformed; bad command names are not sent")
    func malformed() throws {
        let server = try FakeServer()
        let connection = try server.connect()
        server.send("no colon here\n")
        #expect(throws: ClientError.malformed("no colon here")) {
            try connection.command("status")
        }
        for name in ["", "play 0", "Play", "status\nclear", "a\"b"] {
            #expect(throws: ClientError.self) {
                try connection.command(name)
            }
        }
        #expect(server.received() == "status\n")
    }

    @Test("no socket file: not running, at once")
    func missingSocket() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("socket")
        let started = ContinuousClock.now
        #expect(throws: ClientError.notRunning(path)) {
            try MPDConnection(socketPath: path)
        }
        #expect(throws: ClientError.notRunning("\(path)/below-a-file")) {
            try MPDConnection(socketPath: "\(path)/below-a-file")
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(
            ClientError.notRunning(path).description == "playerd is not running: no socket at \(path)")
    }

    @Test("a socket file nobody listens on (a daemon that died): not running, at once")
    func refusingSocket() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("socket")
        let descriptor = try boundSocket(path)
        defer { close(descriptor) }
        #expect(throws: ClientError.notRunning(path)) {
            try MPDConnection(socketPath: path)
        }
    }

    @Test("a daemon that accepts but never greets: timed out after the timeout")
    func stuckDaemon() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("socket")
        let descriptor = try boundSocket(path)
        defer { close(descriptor) }
        #expect(listen(descriptor, 4) == 0)
        let started = ContinuousClock.now
        #expect(throws: ClientError.timedOut) {
            try MPDConnection(socketPath: path, timeout: .milliseconds(300))
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(3))
    }

    @Test("a socket path too long for sun_path is a clear error")
    func longPath() {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        #expect(throws: ClientError.self) {
            try MPDConnection(socketPath: path)
        }
    }
}

/// A Unix socket bound to `path` but not listening.
private func boundSocket(_ path: String) throws -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: Array(path.utf8))
    }
    let result = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        close(descriptor)
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    return descriptor
}
