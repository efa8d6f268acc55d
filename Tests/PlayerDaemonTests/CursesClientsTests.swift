import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// ncmpcpp and ncmpc in tmux, driven with keystrokes as a person would, against playerd and, with the
/// same keystrokes, against mpd 0.23.12 (each test runs on both: a check that fails on mpd is wrong,
/// not the daemon). What each client does is read back over the protocol, and its status line must
/// show the client's own message for the action, never a refusal.
@Suite("Curses clients: shuffle, outputs, crossfade, priority, chat", .serialized)
struct CursesClientsTests {
    static let ncmpcpp = "/usr/bin/ncmpcpp"
    static let ncmpc = "/usr/bin/ncmpc"
    static let servers: [InteropServer.Kind] = [.playerd, .mpd]

    /// A server on the library tree with its 13 songs whose names are UTF-8 queued (a shuffle that
    /// leaves them in order is a chance of one in 13!), stopped.
    private static func serverWithQueue(_ kind: InteropServer.Kind) throws -> (InteropServer, ProtocolClient) {
        let server = try InteropServer(kind)
        try server.updateAndWait()
        let client = try server.connect()
        for directory in ["Beyoncé", "Motörhead", "Sigur Rós", "Various Artists", "東京事変", "loose.mp3", "Misc/Deep"] {
            let answer = try client.command("add \"\(directory)\"")
            guard answer == ["OK"] else {
                throw HarnessError("add \(directory) was refused: \(answer)\n\(server.logTail)")
            }
        }
        return (server, client)
    }

    /// The queue's files in order.
    private static func files(_ client: ProtocolClient) throws -> [String] {
        try client.command("playlist").dropLast().map { line in
            guard let colon = line.range(of: ":file: ") else { return line }
            return String(line[colon.upperBound...])
        }
    }

    private static func field(_ client: ProtocolClient, _ request: String, _ key: String) throws -> String? {
        try client.command(request).first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
    }

    /// The last line of a screen: the clients' status line, where they show what the server refused.
    private static func statusLine(_ screen: String) -> String {
        screen.split(separator: "\n", omittingEmptySubsequences: false).reversed()
            .first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init) ?? ""
    }

    /// No screen seen so far showed a refusal by the server: libmpdclient's clients print the ACK's
    /// text (`unknown command "shuffle"`, `No such ...`) in their status lines.
    private static func expectNoRefusals(
        _ session: TmuxSession, _ kind: InteropServer.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let refusals = [
            "unknown command", "MPD error", "error:", "No such", "not supported", "Bad ", "permission", "expected",
        ]
        var reported = Set<String>()
        for screen in session.seenScreens {
            let line = Self.statusLine(screen)
            for refusal in refusals where line.localizedCaseInsensitiveContains(refusal) && !reported.contains(line) {
                reported.insert(line)
                Issue.record("\(kind): the status line shows \"\(line)\"\n\(screen)", sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: - ncmpcpp

    @Test("ncmpcpp: Z shuffles the queue", .timeLimit(.minutes(2)), arguments: Self.servers)
    func ncmpcppShuffle(_ kind: InteropServer.Kind) throws {
        try requireTool(Self.ncmpcpp)
        let (server, client) = try Self.serverWithQueue(kind)
        let before = try Self.files(client)
        #expect(before.count == 13, "\(before)")
        let session = try TmuxSession([Self.ncmpcpp, "-h", server.socketPath])
        defer { Self.expectNoRefusals(session, kind) }
        try session.waitFor(all: ["Playlist (13 items"])
        try session.send("Z")
        try session.waitFor(all: ["Do you really want to shuffle"])
        try session.send("y")
        try session.waitFor("the status line says Range shuffled") { Self.statusLine($0).contains("Range shuffled") }
        let after = try Self.files(client)
        #expect(after != before, "\(kind): the queue is in the same order after Z")
        #expect(after.sorted() == before.sorted(), "\(kind): the queue holds other songs after Z")
        try server.stop()
    }

    @Test(
        "ncmpcpp: the outputs screen (7) switches the output off and on", .timeLimit(.minutes(2)),
        arguments: Self.servers)
    func ncmpcppOutputs(_ kind: InteropServer.Kind) throws {
        try requireTool(Self.ncmpcpp)
        let (server, client) = try Self.serverWithQueue(kind)
        let session = try TmuxSession([Self.ncmpcpp, "-h", server.socketPath])
        defer { Self.expectNoRefusals(session, kind) }
        try session.waitFor(all: ["Playlist (13 items"])
        try session.send("7")
        try session.waitFor(all: ["Outputs", "null"])
        try session.send("Enter")
        try session.waitFor("Output \"null\" disabled") { Self.statusLine($0).contains("Output \"null\" disabled") }
        #expect(try Self.field(client, "outputs", "outputenabled") == "0")
        try session.send("Enter")
        try session.waitFor("Output \"null\" enabled") { Self.statusLine($0).contains("Output \"null\" enabled") }
        #expect(try Self.field(client, "outputs", "outputenabled") == "1")
        try server.stop()
    }

    @Test(
        "ncmpcpp: x and X set crossfade; status and ncmpcpp's [x] flag show it", .timeLimit(.minutes(2)),
        arguments: Self.servers)
    func ncmpcppCrossfade(_ kind: InteropServer.Kind) throws {
        try requireTool(Self.ncmpcpp)
        let (server, client) = try Self.serverWithQueue(kind)
        let session = try TmuxSession([Self.ncmpcpp, "-h", server.socketPath])
        defer { Self.expectNoRefusals(session, kind) }
        try session.waitFor(all: ["Playlist (13 items"])
        // x switches crossfade between off and ncmpcpp's crossfade_time (5 s by default).
        try session.send("x")
        try session.waitFor("Crossfade set to 5 seconds") { Self.statusLine($0).contains("Crossfade set to 5 seconds") }
        #expect(try Self.field(client, "status", "xfade") == "5")
        // The mode flags next to the header's rule show x while crossfade is on.
        try session.waitFor("the [x] flag") { $0.contains("[x]─") }
        // X asks for the number of seconds.
        try session.send("X")
        try session.waitFor("the prompt") { Self.statusLine($0).contains("Set crossfade to:") }
        try session.type("7")
        try session.send("Enter")
        try expectEventually("xfade: 7 in status") { try Self.field(client, "status", "xfade") == "7" }
        try session.send("x")
        try session.waitFor("Crossfade set to 0 seconds") { Self.statusLine($0).contains("Crossfade set to 0 seconds") }
        #expect(try Self.field(client, "status", "xfade") == nil)
        try session.waitFor("no [x] flag") { !$0.contains("[x]─") }
        try server.stop()
    }

    @Test("ncmpcpp: ctrl-p sets the highlighted song's priority", .timeLimit(.minutes(2)), arguments: Self.servers)
    func ncmpcppPriority(_ kind: InteropServer.Kind) throws {
        try requireTool(Self.ncmpcpp)
        let (server, client) = try Self.serverWithQueue(kind)
        let session = try TmuxSession([Self.ncmpcpp, "-h", server.socketPath])
        defer { Self.expectNoRefusals(session, kind) }
        try session.waitFor(all: ["Playlist (13 items"])
        try session.send("Down")
        try session.send("C-p")
        try session.waitFor("the prompt") { Self.statusLine($0).contains("Set priority [0-255]:") }
        try session.type("42")
        try session.send("Enter")
        try session.waitFor("Priority set") { Self.statusLine($0).contains("Priority set") }
        let lines = try client.command("playlistinfo").filter { $0.hasPrefix("Pos: ") || $0.hasPrefix("Prio: ") }
        #expect(lines.filter { $0.hasPrefix("Prio: ") } == ["Prio: 42"], "\(kind): \(lines)")
        #expect(lines.firstIndex(of: "Prio: 42") == lines.firstIndex(of: "Pos: 1").map { $0 + 1 }, "\(kind): \(lines)")
        try server.stop()
    }

    // MARK: - ncmpc

    /// ncmpc in tmux on `server`, showing its queue.
    private static func ncmpcSession(_ server: InteropServer) throws -> TmuxSession {
        try requireTool(Self.ncmpc)
        let session = try TmuxSession([Self.ncmpc, "-h", server.socketPath])
        try session.waitFor(all: ["1:Help", "2:Queue"])
        return session
    }

    @Test("ncmpc: Z shuffles the queue, x sets crossfade", .timeLimit(.minutes(2)), arguments: Self.servers)
    func ncmpcShuffleAndCrossfade(_ kind: InteropServer.Kind) throws {
        let (server, client) = try Self.serverWithQueue(kind)
        let before = try Self.files(client)
        let session = try Self.ncmpcSession(server)
        defer { Self.expectNoRefusals(session, kind) }
        try session.send("2")
        try session.send("Z")
        try session.waitFor("Shuffled queue") { Self.statusLine($0).contains("Shuffled queue") }
        let after = try Self.files(client)
        #expect(after != before, "\(kind): the queue is in the same order after Z")
        #expect(after.sorted() == before.sorted(), "\(kind): the queue holds other songs after Z")
        // x: crossfade on at ncmpc's crossfade time (10 s by default), shown as [x], then off.
        try session.send("x")
        try session.waitFor("Crossfade 10 seconds") { Self.statusLine($0).contains("Crossfade 10 seconds") }
        #expect(try Self.field(client, "status", "xfade") == "10")
        try session.waitFor("the [x] flag") { $0.contains("[x]─") }
        try session.send("x")
        try session.waitFor("Crossfade 0 seconds") { Self.statusLine($0).contains("Crossfade 0 seconds") }
        #expect(try Self.field(client, "status", "xfade") == nil)
        try server.stop()
    }

    /// The outputs screen's rows (ncmpc lists the outputs, then the partitions).
    private static func outputsScreen(_ screen: String) -> [String] {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        // Between the rule under the tab bar and the rule above the status line.
        guard let top = lines.firstIndex(where: { $0.hasPrefix("──") }),
            let bottom = lines.lastIndex(where: { $0.hasPrefix("──") }), top < bottom
        else { return [] }
        return lines[(top + 1)..<bottom].filter { !$0.isEmpty }
    }

    @Test(
        "ncmpc: the outputs screen (8) lists outputs and partitions without an error, and switches the output",
        .timeLimit(.minutes(2)), arguments: Self.servers)
    func ncmpcOutputs(_ kind: InteropServer.Kind) throws {
        try Self.ncmpcOutputsScreen(kind)
    }

    private static func ncmpcOutputsScreen(_ kind: InteropServer.Kind) throws {
        let (server, client) = try Self.serverWithQueue(kind)
        let session = try Self.ncmpcSession(server)
        defer { Self.expectNoRefusals(session, kind) }
        // ncmpc sends listpartitions on every visit: twice here.
        for _ in 0..<2 {
            try session.send("8")
            let screen = try session.waitFor(all: ["[X] null", "Partition: default"])
            #expect(
                Self.outputsScreen(screen) == ["[X] null", "Partition: default", "[Create new partition]"],
                "\(kind):\n\(screen)")
            try session.send("2")
            try session.waitFor(all: ["2:Queue"])
        }
        try session.send("8")
        try session.waitFor(all: ["[X] null"])
        try session.send("Enter")
        try session.waitFor(all: ["[ ] null", "Output 'null' disabled"])
        #expect(try Self.field(client, "outputs", "outputenabled") == "0")
        try session.send("Enter")
        try session.waitFor(all: ["[X] null", "Output 'null' enabled"])
        #expect(try Self.field(client, "outputs", "outputenabled") == "1")
        try server.stop()
    }

    @Test(
        "ncmpc: the chat screen (9) sends a message a subscribed client receives, and shows one sent to it",
        .timeLimit(.minutes(2)), arguments: Self.servers)
    func ncmpcChat(_ kind: InteropServer.Kind) throws {
        let server = try InteropServer(kind)
        let listener = try server.connect()
        #expect(try listener.command("subscribe chat") == ["OK"])
        let session = try Self.ncmpcSession(server)
        defer { Self.expectNoRefusals(session, kind) }
        try session.send("9")
        try session.waitFor(all: ["9:Chat"])
        // The chat screen subscribes ncmpc to "chat" itself.
        try expectEventually("ncmpc subscribes to chat") {
            try listener.command("channels") == ["channel: chat", "OK"]
        }
        try session.send("Enter")
        try session.waitFor("the prompt") { Self.statusLine($0).contains("Your message:") }
        try session.type("hello from ncmpc")
        try session.send("Enter")
        // ncmpc shows its own message, received as every subscriber receives it.
        try session.waitFor(all: ["<nobody> hello from ncmpc"])
        #expect(
            try listener.command("readmessages") == ["channel: chat", "message: <nobody> hello from ncmpc", "OK"])
        // Another client's message shows on ncmpc's screen.
        #expect(try listener.command("sendmessage chat \"<other> hi ncmpc\"") == ["OK"])
        try session.waitFor(all: ["<other> hi ncmpc"])
        try server.stop()
    }
}
