import Foundation
import Synchronization
import Testing

@testable import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Client-to-client channels (`subscribe`, `unsubscribe`, `channels`, `sendmessage`, `readmessages`,
/// idle `subscription` and `message`): the same conversations with mpd 0.23.12 and with playerd must
/// be recorded the same, line for line; then what mpd cannot be asked (its lines end at 8 KiB) and
/// what hostile clients do, on playerd alone.
@Suite("Channels")
struct ChannelTests {
    /// Three clients talking, every limit and refusal of MPD's on the way.
    static func conversation(_ talk: Conversation) throws {
        let a = try talk.connect("A")
        let b = try talk.connect("B")
        let c = try talk.connect("C")
        try a.ask("channels")
        // Names: letters, digits, _ - . : only, at least one.
        for name in ["chat", "Chat_2.0:x-y", "\"\"", "é", "a/b", "\"a b\"", "chat"] {
            try a.ask("subscribe \(name)")
        }
        try a.ask("unsubscribe nothing")
        try b.ask("sendmessage \"\" hello")
        try b.ask("sendmessage bad/name hello")
        try b.ask("sendmessage nobody hello")
        // A subscription is told to every client, the subscriber too.
        try c.send("idle subscription")
        try b.ask("subscribe chat")
        try c.answer()
        try a.ask("idle subscription")
        try b.ask("channels")
        // A message wakes the subscriber idling for it; the sender is told nothing.
        try a.send("idle message")
        try b.ask("sendmessage chat \"hello, \\\"world\\\"\"")
        try a.answer()
        try b.ask("readmessages")
        try a.ask("readmessages")
        try a.ask("readmessages")
        // Subscribers of other channels get nothing; a message to oneself arrives.
        try b.ask("sendmessage Chat_2.0:x-y \"\"")
        try a.ask("readmessages")
        try b.ask("readmessages")
        // Unread messages: the second one wakes no idle, reading does not either; the next one does.
        try b.ask("sendmessage chat one")
        try a.ask("idle message")
        try b.ask("sendmessage chat two")
        try a.send("idle message")
        try a.recordSilence()
        try a.send("noidle")
        try a.answer()
        try a.ask("readmessages")
        try b.ask("sendmessage chat three")
        try a.ask("idle message")
        try a.ask("readmessages")
        // An idle that answers forgets the changes it was not asked for: C's subscription below is not
        // told to A's next idle, which waits.
        try c.ask("subscribe other")
        try b.ask("sendmessage chat four")
        try a.ask("idle message")
        try a.send("idle subscription")
        try a.recordSilence()
        try a.send("noidle")
        try a.answer()
        try a.ask("readmessages")
        // 64 unread messages at most: the next ones are dropped, and with no other subscriber the sender
        // hears that nobody took them.
        var answers: [String: Int] = [:]
        for number in 1...70 {
            let answer = try b.client.command("sendmessage chat m\(number)")
            answers[answer.joined(separator: " | "), default: 0] += 1
        }
        for (answer, count) in answers.sorted(by: { $0.key < $1.key }) {
            talk.note("\(count) × \(answer)")
        }
        // With another subscriber that has room, the sender hears OK; the full one still misses it.
        try c.ask("subscribe chat")
        try b.ask("sendmessage chat m71")
        try c.ask("readmessages")
        let unread = try a.ask("readmessages")
        talk.note("A read \(unread.count / 2) messages")
        // Sixteen subscriptions at most; the check comes before the check for a repeat.
        let sixteen = (1...16).map { "channel\($0)" }
        for name in sixteen {
            try c.client.command("subscribe \(name)")
        }
        try c.ask("subscribe channel1")
        try c.ask("subscribe channel17")
        try c.ask("unsubscribe channel1")
        try c.ask("subscribe channel17")
        try a.ask("channels")
        // A client that goes takes its subscriptions with it, and nobody is told (no idle).
        try a.send("idle subscription")
        c.leave()
        usleep(300_000)
        try a.recordSilence()
        try a.send("noidle")
        try a.answer()
        try a.ask("channels")
        try b.ask("sendmessage channel17 gone")
        try a.ask("unsubscribe chat")
        try b.ask("sendmessage chat \"to B only\"")
        try b.ask("readmessages")
        // A's messages stay for it when their sender goes.
        try b.ask("subscribe Chat_2.0:x-y")
        try b.ask("sendmessage Chat_2.0:x-y kept")
        b.leave()
        usleep(300_000)
        try a.ask("readmessages")
        try a.ask("channels")
    }

    @Test("the same conversation of three clients is answered by playerd as by mpd, line for line")
    func conversationAsMPD() throws {
        let music = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let pair = try DaemonPair(music: music)
        let mpd = Conversation { try pair.mpd.connect() }
        try Self.conversation(mpd)
        let playerd = Conversation { try pair.playerd.connect() }
        try Self.conversation(playerd)
        #expect(mpd.lines.count > 150)
        let same = zip(mpd.lines, playerd.lines).filter { $0 == $1 }.count
        print("Channels against mpd: \(same) of \(mpd.lines.count) recorded lines the same")
        if let difference = Conversation.difference(mpd.lines, playerd.lines) {
            Issue.record(Comment(rawValue: difference + "\n" + pair.logTails))
        }
    }

    @Test("ncmpc's chat screen: what it sends arrives, and what others send appears on it")
    func ncmpcChat() throws {
        let ncmpc = "/usr/bin/ncmpc"
        try requireTool(ncmpc)
        try withPlayerd { daemon in
            let listener = try daemon.connect()
            #expect(try listener.command("subscribe chat") == ["OK"])
            let session = try TmuxSession([ncmpc, "--host=\(daemon.socketPath)"])
            try session.waitFor(all: ["9:Chat"])
            // 9: the chat screen; Enter opens the line to write on.
            try session.send("9")
            try session.send("Enter")
            try session.type("hello from ncmpc")
            try session.send("Enter")
            try expectEventually("ncmpc's message to arrive") {
                try listener.command("readmessages").contains { $0.hasSuffix("hello from ncmpc") }
            }
            // It subscribed to `chat` to show the conversation: a message from elsewhere shows up.
            #expect(try listener.command("sendmessage chat \"bob: hi ncmpc\"") == ["OK"])
            try session.waitFor(all: ["hello from ncmpc", "bob: hi ncmpc"])
        }
    }

    @Test("sendmessage needs the control permission, the others read, as in MPD")
    func permissions() throws {
        let file = try Paths.makeTemporaryDirectory() + "/passwords"
        try "reader@read\n".write(toFile: file, atomically: false, encoding: .utf8)
        #expect(chmod(file, 0o600) == 0)
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--password-file", file]
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            #expect(try client.command("password reader") == ["OK"])
            #expect(try client.command("subscribe chat") == ["OK"])
            #expect(try client.command("channels") == ["channel: chat", "OK"])
            #expect(
                try client.command("sendmessage chat hi")
                    == ["ACK [4@0] {sendmessage} you don't have permission for \"sendmessage\""])
            #expect(try client.command("readmessages") == ["OK"])
            #expect(try client.command("unsubscribe chat") == ["OK"])
        }
    }

    @Test("names and messages longer than mpd reads: a 30,000-byte name and text go through whole")
    func longNamesAndMessages() throws {
        try withPlayerd { daemon in
            let reader = try daemon.connect()
            let sender = try daemon.connect()
            // 30,000 bytes each, so that `sendmessage NAME TEXT` fits in playerd's 64 KiB line.
            let name = String(repeating: "n", count: 30_000)
            let text = String(repeating: "é", count: 15_000)
            #expect(try reader.command("subscribe \(name)") == ["OK"])
            #expect(try sender.command("channels") == ["channel: \(name)", "OK"])
            #expect(try sender.command("sendmessage \(name) \(text)") == ["OK"])
            #expect(try reader.command("readmessages") == ["channel: \(name)", "message: \(text)", "OK"])
            // A name past the longest line is refused with the line, and the connection goes on.
            let tooLong = String(repeating: "n", count: 65_536)
            let refused = try sender.command("subscribe \(tooLong)")
            #expect(refused.count == 1 && refused[0].hasPrefix("ACK [2@0]") && refused[0].contains("line too long"))
            #expect(try sender.command("channels") == ["channel: \(name)", "OK"])
        }
    }

    @Test("a reader that never reads holds 64 messages and at most 1 MiB; the sender is told when it drops them")
    func unreadMessagesAreBounded() throws {
        try withPlayerd { daemon in
            let reader = try daemon.connect()
            let sender = try daemon.connect()
            #expect(try reader.command("subscribe big") == ["OK"])
            // 60,000-byte texts: the 17th fits in 1 MiB with the 16 before it, the 18th does not.
            let text = String(repeating: "x", count: 60_000)
            var accepted = 0
            for _ in 1...20 where try sender.command("sendmessage big \(text)") == ["OK"] {
                accepted += 1
            }
            #expect(accepted == ChannelRegistry.maximumQueuedBytes / (60_000 + 3))
            #expect(accepted == 17)
            // Reading makes room again.
            let read = try reader.command("readmessages", timeout: .seconds(10))
            #expect(read.count == 2 * accepted + 1)
            #expect(try sender.command("sendmessage big \(text)") == ["OK"])
        }
    }

    @Test("1,000 messages to a client that never reads: 64 kept, the rest refused, and nobody waits")
    func floodHoldsUpNoOne() throws {
        try withPlayerd { daemon in
            let sleeper = try daemon.connect()
            let flooder = try daemon.connect()
            let bystander = try daemon.connect()
            #expect(try sleeper.command("subscribe flood") == ["OK"])
            try sleeper.send(line: "idle player")
            // All 1,000 at once, then their answers.
            let lines = (1...1000).map { "sendmessage flood \"message \($0)\"\n" }.joined()
            try flooder.send(bytes: Array(lines.utf8))
            let started = ContinuousClock.now
            #expect(try bystander.command("ping") == ["OK"])
            #expect(ContinuousClock.now - started < .seconds(1))
            var accepted = 0
            var refused = 0
            for _ in 1...1000 {
                let answer = try flooder.readAnswer()
                if answer == ["OK"] {
                    accepted += 1
                } else if answer == ["ACK [50@0] {sendmessage} nobody is subscribed to this channel"] {
                    refused += 1
                }
            }
            #expect(accepted == 64)
            #expect(refused == 936)
            // The sleeper's idle was for `player`: the messages did not end it.
            #expect(try !sleeper.hasInput(within: .milliseconds(200)))
            try sleeper.send(line: "noidle")
            #expect(try sleeper.readAnswer() == ["OK"])
            let read = try sleeper.command("readmessages")
            #expect(read.count == 129)
            #expect(read.first == "channel: flood")
            #expect(read[1] == "message: message 1")
            #expect(read[127] == "message: message 64")
        }
    }

    @Test("readmessages and channels after subscribers vanish mid-conversation; their places are freed")
    func vanishedClients() throws {
        try withPlayerd { daemon in
            let stayer = try daemon.connect()
            for round in 1...20 {
                let goner = try daemon.connect()
                #expect(try goner.command("subscribe gone\(round)") == ["OK"])
                #expect(try stayer.command("sendmessage gone\(round) bye") == ["OK"])
                goner.close()
            }
            try expectEventually("the vanished clients' channels are gone") {
                try stayer.command("channels") == ["OK"]
            }
            #expect(
                try stayer.command("sendmessage gone1 anyone")
                    == ["ACK [50@0] {sendmessage} nobody is subscribed to this channel"])
            #expect(try stayer.command("readmessages") == ["OK"])
        }
    }

    @Test("the registry: MPD's limits, one wake-up per empty queue, and a client that leaves is forgotten")
    func registry() {
        let registry = ChannelRegistry()
        let wakes = Mutex(0)
        let reader = registry.join { wakes.withLock { $0 += 1 } }
        let other = registry.join {}
        #expect(registry.clientCount == 2)
        #expect(registry.subscribe(reader, to: "") == .invalidName)
        #expect(registry.subscribe(reader, to: "tab\there") == .invalidName)
        #expect(registry.subscribe(reader, to: "news") == .subscribed)
        #expect(registry.subscribe(reader, to: "news") == .alreadySubscribed)
        for number in 2...ChannelRegistry.maximumSubscriptions {
            #expect(registry.subscribe(reader, to: "c\(number)") == .subscribed)
        }
        #expect(registry.subscribe(reader, to: "news") == .full)
        #expect(registry.subscribe(other, to: "news") == .subscribed)
        #expect(registry.channels(seenBy: other).first == "c10")
        #expect(registry.send("1", to: "news", from: other))
        #expect(registry.send("2", to: "news", from: other))
        #expect(wakes.withLock { $0 } == 1)
        #expect(registry.takeMessages(reader).map(\.text) == ["1", "2"])
        #expect(registry.takeMessages(reader).isEmpty)
        #expect(registry.send("3", to: "news", from: reader))
        #expect(wakes.withLock { $0 } == 2)
        registry.leave(other)
        for number in 2...ChannelRegistry.maximumMessages {
            #expect(registry.send("\(number)", to: "news", from: reader))
        }
        #expect(!registry.send("one too many", to: "news", from: reader))
        registry.leave(reader)
        #expect(registry.clientCount == 0)
        #expect(registry.channels(seenBy: reader).isEmpty)
        #expect(!registry.send("after", to: "news", from: reader))
        #expect(registry.takeMessages(reader).isEmpty)
    }

    @Test("the registry: a client hears only the clients of its partition, as in MPD")
    func partitions() {
        let registry = ChannelRegistry()
        let kitchen = registry.join {}
        let lounge = registry.join {}
        #expect(registry.subscribe(kitchen, to: "food") == .subscribed)
        #expect(registry.subscribe(lounge, to: "music") == .subscribed)
        registry.move(lounge, toPartition: "lounge")
        #expect(registry.channels(seenBy: kitchen) == ["food"])
        #expect(registry.channels(seenBy: lounge) == ["music"])
        #expect(!registry.send("hello", to: "music", from: kitchen))
        #expect(registry.send("hello", to: "music", from: lounge))
        // Back in `default`, with its subscription and its unread message.
        registry.move(lounge, toPartition: "default")
        #expect(registry.channels(seenBy: kitchen) == ["food", "music"])
        #expect(registry.send("again", to: "music", from: kitchen))
        #expect(registry.takeMessages(lounge).map(\.text) == ["hello", "again"])
    }
}
