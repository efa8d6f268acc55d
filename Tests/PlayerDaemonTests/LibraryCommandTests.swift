import Foundation
import Testing

/// The library through the protocol, against the real daemon: updates and what clients see of them,
/// browsing, searching, queueing from the database, and bad input that must get an ACK and nothing
/// worse.
@Suite("The library over the protocol")
struct LibraryCommandTests {
    /// A music tree of tagged fixtures in a temporary directory: Artist dirs, one loose song, an empty
    /// file and a text file.
    private func makeTree() throws -> String {
        let root = try Paths.makeTemporaryDirectory() + "/music"
        let files = [
            ("root.mp3", "stereo-44k-cbr.mp3"), ("Björk/Album/x.mp3", "tagged-id3v23.mp3"),
            ("Мумий Тролль/y.mp3", "tagged-id3v24.mp3"), ("Sigur Rós/Ágætis byrjun/z.mp3", "tagged-id3v1.mp3"),
            ("Sigur Rós/empty.mp3", "empty.mp3"),
        ]
        for (name, fixture) in files {
            let path = root + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixture(fixture), toPath: path)
        }
        try "notes".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        return root
    }

    /// Runs `body` against a daemon whose library holds the tree, after `prepare` added to the tree.
    private func withLibrary(
        prepare: (String) throws -> Void = { _ in }, _ body: (RunningPlayerd, LineClient, String) throws -> Void
    ) throws {
        let tree = try self.makeTree()
        try prepare(tree)
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", tree]
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            try self.waitForUpdates(client)
            try body(daemon, client, tree)
        }
    }

    /// Waits until no update job runs.
    private func waitForUpdates(_ client: LineClient) throws {
        let deadline = Date(timeIntervalSinceNow: 20)
        while try client.fields("status")["updating_db"] != nil {
            guard Date() < deadline else { throw HarnessError("the update never ended") }
            usleep(20_000)
        }
    }

    @Test("stats count what the scan found; the update's job id shows in status and idle says update")
    func updateAndStats() throws {
        try withLibrary { daemon, client, tree in
            let stats = try client.fields("stats")
            #expect(stats["songs"] == "4")
            #expect(stats["artists"] == "3")
            #expect(stats["albums"] == "3")
            #expect((Int(stats["db_update"] ?? "0") ?? 0) > 0)
            // A new file: `update` answers a job id, idle reports update then database.
            let watcher = try daemon.connect()
            try watcher.send(line: "idle database")
            try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: tree + "/new.mp3")
            let job = try client.command("update")
            #expect(job.first?.hasPrefix("updating_db: ") == true)
            #expect(try watcher.readAnswer(timeout: .seconds(20)) == ["changed: database", "OK"])
            try self.waitForUpdates(client)
            #expect(try client.fields("stats")["songs"] == "5")
            // The broken file is named in the log once.
            #expect(daemon.log.components(separatedBy: "empty.mp3: empty file").count - 1 == 1)
        }
    }

    @Test("lsinfo, listall and listallinfo show the tree as MPD does")
    func browsing() throws {
        try withLibrary { _, client, _ in
            let root = try client.command("lsinfo")
            #expect(root.first == "file: root.mp3")
            #expect(root.contains("directory: Björk"))
            #expect(root.last == "OK")
            let album = try client.command("lsinfo \"Sigur Rós/Ágætis byrjun\"")
            #expect(album.prefix(3) == ["file: Sigur Rós/Ágætis byrjun/z.mp3"] + [album[1]] + ["Format: 44100:16:2"])
            #expect(album.contains("Artist: Sigur Rós"))
            #expect(album.contains("Album: Ágætis byrjun"))
            #expect(try client.command("lsinfo nowhere") == ["ACK [50@0] {lsinfo} No such directory"])
            let all = try client.command("listall").filter { $0.hasPrefix("file: ") }
            #expect(all.count == 4)
            let info = try client.command("listallinfo Björk")
            #expect(
                info.prefix(3).filter { $0.hasPrefix("directory: ") } == ["directory: Björk", "directory: Björk/Album"])
            #expect(info.contains("Title: Café Noir — Ünïcødé ☃"))
        }
    }

    @Test("search folds case and accents, find is exact, list and count group")
    func searching() throws {
        try withLibrary { _, client, _ in
            let found = try client.command("search any \"sigur ros\"").filter { $0.hasPrefix("file: ") }
            #expect(found == ["file: Björk/Album/x.mp3", "file: Sigur Rós/Ágætis byrjun/z.mp3"])
            #expect(
                try client.command("find artist \"Sigur Rós\"").filter { $0.hasPrefix("file: ") }
                    == ["file: Sigur Rós/Ágætis byrjun/z.mp3"])
            #expect(try client.command("find artist \"sigur rós\"") == ["OK"])
            let expression = try client.command("find \"((Genre == 'Rock') AND (Date starts_with '19'))\"")
            #expect(expression.first == "file: Sigur Rós/Ágætis byrjun/z.mp3")
            #expect(
                try client.command("list artist")
                    == ["Artist: ", "Artist: Björk & Sigur Rós", "Artist: Sigur Rós", "Artist: Мумий Тролль", "OK"])
            let count = try client.command("count artist \"Sigur Rós\"")
            #expect(count.first == "songs: 1")
            let window = try client.command("search any \"\" sort -Title window 0:1")
            #expect(window.filter { $0.hasPrefix("file: ") }.count <= 1)
            #expect(try client.command("find bogus x") == ["ACK [2@0] {find} Unknown filter type"])
        }
    }

    @Test("add, findadd and searchadd queue from the database in listing order")
    func queueing() throws {
        try withLibrary { _, client, _ in
            #expect(try client.command("add \"Sigur Rós\"") == ["OK"])
            #expect(try client.command("findadd artist \"Мумий Тролль\"") == ["OK"])
            #expect(try client.command("searchadd title café") == ["OK"])
            let queue = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(
                queue == [
                    "file: Sigur Rós/Ágætis byrjun/z.mp3", "file: Мумий Тролль/y.mp3", "file: Björk/Album/x.mp3",
                ])
            // The queue's song blocks come from the library, with its fields.
            let block = try client.command("playlistinfo 0")
            #expect(block.contains { $0.hasPrefix("Last-Modified: ") })
            #expect(block.contains("Format: 44100:16:2"))
        }
    }

    @Test("a command list's adds mix the library, the disk and absolute paths, in order, up to the first failure")
    func commandListOfAdds() throws {
        try withLibrary { _, client, tree in
            // A song copied in after the scan: not in the library, found on the disk.
            try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: tree + "/late.mp3")
            let adds = [
                "add \"Sigur Rós\"", "add root.mp3", "add late.mp3", "add \"\(tree)/Björk/Album/x.mp3\"",
                "add \"Мумий Тролль/y.mp3\"", "add ../music/root.mp3", "add root.mp3",
            ]
            let answer = try client.command(
                (["command_list_ok_begin"] + adds + ["command_list_end"]).joined(separator: "\n"))
            #expect(Array(answer.dropLast()) == Array(repeating: "list_OK", count: 5), "\(answer)")
            #expect(answer.last?.hasPrefix("ACK [50@5] {add}") == true, "\(answer)")
            let queue = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(
                queue == [
                    "file: Sigur Rós/Ágætis byrjun/z.mp3", "file: root.mp3", "file: late.mp3",
                    "file: Björk/Album/x.mp3", "file: Мумий Тролль/y.mp3",
                ])
        }
    }
    @Test("a file and a directory named in Latin-1 are listed escaped, found, listed on disk, and play")
    func namesThatAreNotUTF8() throws {
        /// Copies a fixture to a path given as bytes, which a `String` cannot hold.
        func copy(_ fixture: String, to bytes: [UInt8]) throws {
            let contents = try Data(contentsOf: URL(fileURLWithPath: Paths.fixture(fixture)))
            let descriptor = open(bytes.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard descriptor >= 0 else { throw HarnessError("cannot create \(bytes)") }
            defer { close(descriptor) }
            let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == contents.count else { throw HarnessError("cannot write \(bytes)") }
        }
        try withLibrary { tree in
            // "café.mp3" (3 s) and "Été/x.mp3", with é and É as their Latin-1 bytes.
            let music = Array(tree.utf8)
            try copy("stereo-44k-cbr.mp3", to: music + Array("/caf".utf8) + [0xE9] + Array(".mp3".utf8))
            let ete = music + [0x2F, 0xC9, 0x74, 0xE9]
            guard mkdir(ete.map { CChar(bitPattern: $0) } + [0], 0o755) == 0 else { throw HarnessError("mkdir") }
            try copy("tagged-id3v23.mp3", to: ete + Array("/x.mp3".utf8))
        } _: { daemon, client, _ in
            #expect(try client.fields("stats")["songs"] == "6")
            // On the wire a backslash inside quotes is sent as two.
            let root = try client.command("lsinfo")
            #expect(root.contains("file: caf\\xE9.mp3"))
            #expect(root.contains("directory: \\xC9t\\xE9"))
            let inside = try client.command(#"lsinfo "\\xC9t\\xE9""#)
            #expect(inside.first == "file: \\xC9t\\xE9/x.mp3")
            #expect(inside.contains("Title: Café Noir — Ünïcødé ☃"))
            #expect(try client.command(#"find file "caf\\xE9.mp3""#).first == "file: caf\\xE9.mp3")
            #expect(try client.command(#"listfiles "\\xC9t\\xE9""#).first == "file: x.mp3")
            #expect(try client.command(#"add "\\xC9t\\xE9""#) == ["OK"])
            #expect(try client.command(#"add "caf\\xE9.mp3""#) == ["OK"])
            let queue = try client.command("playlistinfo").filter { $0.hasPrefix("file: ") }
            #expect(queue == ["file: \\xC9t\\xE9/x.mp3", "file: caf\\xE9.mp3"])
            // It plays, on the null output in real time: the position moves on within the song.
            #expect(try client.command("play 1") == ["OK"])
            let deadline = Date(timeIntervalSinceNow: 10)
            var status = try client.fields("status")
            while Double(status["elapsed"] ?? "0") ?? 0 < 0.5, Date() < deadline {
                usleep(50_000)
                status = try client.fields("status")
            }
            #expect(status["state"] == "play", "\(status)")
            #expect(status["song"] == "1")
            #expect((Double(status["elapsed"] ?? "0") ?? 0) >= 0.5, "\(status)")
            #expect(status["duration"] == "3.000")
            #expect(status["error"] == nil)
            #expect(!daemon.log.contains("UTF-8"))
        }
    }

    @Test("bad filters, bad paths and a full update queue get ACKs, and the daemon goes on")
    func badInput() throws {
        try withLibrary { _, client, _ in
            let deep = String(repeating: "(", count: 10_000) + "Artist == 'x'" + String(repeating: ")", count: 10_000)
            let nested = try client.command("find \"\(deep)\"")
            #expect(nested.count == 1 && nested[0].hasPrefix("ACK [2@0] {find}"))
            let huge = String(repeating: "x", count: 60_000)
            let long = try client.command("search any \"\(huge)\"")
            #expect(long == ["OK"])
            #expect(try client.command("find \"(Title =~ '(')\"").first?.hasPrefix("ACK [2@0] {find}") == true)
            #expect(try client.command("lsinfo ../..").first?.hasPrefix("ACK [50@0]") == true)
            #expect(try client.command("update ../etc").first?.hasPrefix("ACK [2@0] {update}") == true)
            // MPD queues 32 jobs, then refuses: one command list sends 40 at once.
            try client.send(line: "command_list_begin")
            for index in 0..<40 {
                try client.send(line: "update nosuch\(index)")
            }
            try client.send(line: "command_list_end")
            let answer = try client.readAnswer()
            #expect(answer.last?.hasPrefix("ACK [54@") == true, "\(answer)")
            #expect(answer.last?.hasSuffix("{update} Update queue is full") == true)
            try self.waitForUpdates(client)
            #expect(try client.fields("stats")["songs"] == "4")
        }
    }

    @Test("answers too long or too slow to be quick are whole; kept answers follow the database and tagtypes")
    func quickAndKeptAnswers() throws {
        try withLibrary { daemon, client, tree in
            // 300 songs in one directory: its lsinfo (about 40 KB) and listallinfo outgrow a quick answer
            // and are run again on the library's threads, whole.
            let many = tree + "/Many"
            try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: true)
            for index in 0..<300 {
                try FileManager.default.linkItem(
                    atPath: tree + "/Björk/Album/x.mp3", toPath: many + "/song \(1000 + index).mp3")
            }
            _ = try client.command("update")
            try self.waitForUpdates(client)
            for _ in 0..<2 {  // the second time from the kept answer, the same
                let listing = try client.command("lsinfo Many")
                #expect(listing.filter { $0.hasPrefix("file: ") }.count == 300)
                #expect(listing.first == "file: Many/song 1000.mp3")
                #expect(listing.last == "OK")
                let all = try client.command("listallinfo Many")
                #expect(all.filter { $0.hasPrefix("file: ") }.count == 300)
                // A filter SQLite must work long at (a regular expression over every title) still answers.
                let matched = try client.command("find \"(Title =~ '^Caf.*')\"")
                #expect(matched.filter { $0.hasPrefix("file: ") }.count == 301)
            }
            // A change shows at once, not the answer kept from before it.
            let before = try client.command("lsinfo Björk/Album")
            #expect(before.filter { $0.hasPrefix("file: ") } == ["file: Björk/Album/x.mp3"])
            try FileManager.default.copyItem(
                atPath: Paths.fixture("one-second.mp3"), toPath: tree + "/Björk/Album/y.mp3")
            _ = try client.command("update Björk")
            try self.waitForUpdates(client)
            // In MPD's order: y.mp3 has no album, so it comes first.
            #expect(
                try client.command("lsinfo Björk/Album").filter { $0.hasPrefix("file: ") }
                    == ["file: Björk/Album/y.mp3", "file: Björk/Album/x.mp3"])
            // Another client's tag types give it its own answer.
            let other = try daemon.connect()
            #expect(try other.command("tagtypes clear") == ["OK"])
            let bare = try other.command("lsinfo Björk/Album")
            #expect(!bare.contains { $0.hasPrefix("Artist: ") })
            #expect(try client.command("lsinfo Björk/Album").contains("Artist: Björk & Sigur Rós"))
        }
    }

    @Test("a scan killed half-way is finished by the next start, and nothing is lost")
    func killedMidScan() throws {
        let tree = try self.makeTree()
        // 3,000 more songs (hard links: the scan reads each as a file of its own).
        for album in 0..<30 {
            let directory = tree + "/Many/Album \(album)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for track in 0..<100 {
                link(Paths.fixture("tagged-id3v24.mp3"), directory + "/\(track).mp3")
            }
        }
        let database = try Paths.makeTemporaryDirectory() + "/library.db"
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", tree, "--library", database]
        let first = try RunningPlayerd(options)
        let client = try first.connect()
        _ = try client.fields("status")
        usleep(150_000)
        first.kill()
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            try self.waitForUpdates(client)
            let stats = try client.fields("stats")
            #expect(stats["songs"] == "3004", "\(stats) \(daemon.log)")
            #expect(try client.command("list album").contains("Album: Ça ira, mon cœur"))
            #expect(!daemon.log.contains("moved aside"))
        }
    }

    @Test("a corrupt library file is moved aside and rebuilt while playerd serves")
    func corruptDatabase() throws {
        let tree = try self.makeTree()
        let directory = try Paths.makeTemporaryDirectory()
        let database = directory + "/library.db"
        try Data(repeating: 0x5A, count: 65_536).write(to: URL(fileURLWithPath: database))
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", tree, "--library", database]
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            try self.waitForUpdates(client)
            #expect(try client.fields("stats")["songs"] == "4")
            #expect(daemon.log.contains("moved aside to \(database).broken-"))
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".broken-") }
            #expect(!kept.isEmpty)
        }
    }
}
