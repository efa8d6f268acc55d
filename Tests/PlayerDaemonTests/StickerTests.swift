import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A music directory for sticker tests: one short song under names that test `sticker find`'s prefixes
/// (`dir` beside `dirx.mp3`, `DIR_e.mp3` whose `_` is a LIKE wildcard, another case, accents).
enum StickerMusic {
    static let songs = [
        "a.mp3", "DIR_e.mp3", "dirx.mp3", "dir/b.mp3", "dir/sub/c.mp3", "Other/d.mp3", "Ágætis/é.mp3",
    ]

    /// A new temporary directory holding `songs`, each a copy of the one-second fixture.
    static func make() throws -> String {
        let music = try Paths.makeTemporaryDirectory()
        for song in Self.songs {
            let path = music + "/" + song
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixture("one-second.mp3"), toPath: path)
        }
        return music
    }
}

@Suite("Stickers", .serialized)
struct StickerTests {
    /// Sends `request` and, on `idler` (a connection sitting in `idle sticker`), reads whether it woke
    /// up: the answer and the idle lines, for comparison. The idler is put back in `idle` afterwards.
    private static func exchange(_ request: String, _ client: LineClient, idler: LineClient) throws -> [String] {
        let answer = try client.command(request)
        var idle: [String]
        if try idler.hasInput(within: .milliseconds(150)) {
            idle = try idler.readAnswer()
        } else {
            idle = try idler.command("noidle")
        }
        try idler.send(line: "idle sticker")
        idle = idle.map { "idle: " + $0 }
        return answer + idle
    }

    @Test("sticker answers as mpd 0.23.12 answers, idle events included, on the same library")
    func sameAsMPD() throws {
        let music = try StickerMusic.make()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let pair = try DaemonPair(music: music)
        let idlers = try [pair.mpd.connect(), pair.playerd.connect()]
        for idler in idlers {
            try idler.send(line: "idle sticker")
        }
        var requests = [
            // Errors: unknown songs, types, subcommands and counts, bad operators, MPD's order of checks.
            "sticker get song a.mp3 x", "sticker get song nope.mp3 x", "sticker set song nope.mp3 x 1",
            "sticker list song nope.mp3", "sticker delete song nope.mp3", "sticker delete song nope.mp3 x",
            "sticker find song nope x", "sticker get album a.mp3 x", "sticker get album nope.mp3",
            "sticker bogus song a.mp3", "sticker get song a.mp3", "sticker get song a.mp3 x y",
            "sticker list song a.mp3", "sticker delete song a.mp3", "sticker delete song a.mp3 x",
            "sticker get song dir x", "sticker get song \"\" x", "sticker get song /a.mp3 x",
            "sticker set song dir/ x 1", "sticker", "sticker x", "sticker find song", "sticker find song \"\"",
            "sticker set song a.mp3 r 1 2", "sticker find song \"\" n ~ 2", "sticker find song \"\" n = 1 2",
            "sticker find song \"\" n <",
            // Empty names and values.
            "sticker set song a.mp3 \"\" v", "sticker get song a.mp3 \"\"", "sticker set song a.mp3 r \"\"",
            "sticker get song a.mp3 r", "sticker list song a.mp3", "sticker find song \"\" r",
            "sticker find song a.mp3 r",
            // Values, names with `=` and spaces, replacing, listing in name order.
            "sticker set song a.mp3 \"a=b\" \"c d\"", "sticker set song a.mp3 Zeta z",
            "sticker set song a.mp3 rating 3",
            "sticker set song a.mp3 rating 4", "sticker get song a.mp3 rating", "sticker list song a.mp3",
            "sticker set song \"Ágætis/é.mp3\" rating \"très bien\"", "sticker list song \"Ágætis/é.mp3\"",
        ]
        // find: every song, in no order, then below directories and with comparisons.
        let values = [
            ("dir/sub/c.mp3", "10"), ("a.mp3", "9"), ("Other/d.mp3", "2"), ("dir/b.mp3", "100"), ("DIR_e.mp3", "abc"),
            ("dirx.mp3", "-5"), ("Ágætis/é.mp3", "7"),
        ]
        requests += values.map { "sticker set song \"\($0.0)\" n \($0.1)" }
        requests += [
            "sticker find song \"\" n", "sticker find song \"\" n < 5", "sticker find song \"\" n > 5",
            "sticker find song \"\" n = 10", "sticker find song \"\" n = 11", "sticker find song dir n",
            "sticker find song DIR n", "sticker find song dir_ n", "sticker find song dir/ n", "sticker find song / n",
            "sticker find song di n", "sticker find song dir/sub n", "sticker find song dir/sub/c.mp3 n",
            "sticker find song Ágætis n", "sticker find song \"\" rating", "sticker find song Other n < 10",
            // Deleting: one, a missing one, all of a song's; then what is left.
            "sticker delete song a.mp3 Zeta", "sticker delete song a.mp3 Zeta", "sticker get song a.mp3 Zeta",
            "sticker delete song Other/d.mp3", "sticker delete song Other/d.mp3", "sticker list song Other/d.mp3",
            "sticker find song \"\" n",
        ]
        var compared = 0
        var wakeUps = 0
        var differences: [String] = []
        for request in requests {
            let answers = try zip([pair.mpdClient, pair.playerdClient], idlers).map { client, idler in
                try Self.exchange(request, client, idler: idler)
            }
            compared += 1
            wakeUps += answers[0].contains("idle: changed: sticker") ? 1 : 0
            if answers[0] != answers[1] {
                differences.append("\(request)\n  mpd:     \(answers[0])\n  playerd: \(answers[1])")
            }
        }
        // In a command list the failing command's index is named.
        let list = [
            "command_list_begin", "sticker set song a.mp3 q 1", "sticker get song a.mp3 q",
            "sticker get song nope.mp3 q", "command_list_end",
        ]
        let listAnswers = try [pair.mpdClient, pair.playerdClient].map { client in
            for line in list { try client.send(line: line) }
            return try client.readAnswer()
        }
        compared += 1
        if listAnswers[0] != listAnswers[1] {
            differences.append("command list\n  mpd:     \(listAnswers[0])\n  playerd: \(listAnswers[1])")
        }
        #expect(listAnswers[1] == ["sticker: q=1", "ACK [50@2] {sticker} No such song"])
        // Both offer `sticker` to a client with every permission.
        for client in [pair.mpdClient, pair.playerdClient] {
            #expect(try client.command("commands").contains("command: sticker"))
        }
        #expect(compared == requests.count + 1)
        // mpd woke its idle client for each set of a named sticker (13) and each delete that deleted (2).
        #expect(wakeUps == 15)
        #expect(
            differences.isEmpty, "\(differences.count) of \(compared) differ:\n\(differences.joined(separator: "\n"))")
        if !differences.isEmpty { Issue.record("\(pair.logTails)") }
    }

    @Test(
        "python-mpd2's sticker calls: what it makes of mpd's answers, it makes of playerd's",
        .enabled(if: FileManager.default.isExecutableFile(atPath: Paths.python), "needs /usr/bin/python3"))
    func pythonMPD2() throws {
        let music = try StickerMusic.make()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let pair = try DaemonPair(music: music)
        let script = Paths.testsDirectory + "/python/mpd2_stickers.py"
        let results = try [pair.mpd.socketPath, pair.playerd.socketPath].map { socket in
            try runProgram(Paths.python, [script, socket], within: .seconds(60))
        }
        for result in results {
            #expect(result.status == 0, "\(result)")
        }
        let lines = results.map { $0.stdout.split(separator: "\n").map(String.init) }
        #expect(lines[0].count == 18, "\(results[0])")
        #expect(lines[1] == lines[0], "mpd:\n\(results[0].stdout)playerd:\n\(results[1].stdout)")
        #expect(lines[1].contains("sticker_get ('song', 'a.mp3', 'rating') -> '5'"), "\(results[1].stdout)")
        #expect(lines[1].contains("sticker_list ('song', 'dir/b.mp3') -> {'note': 'x=y z', 'rating': '3'}"))
    }

    @Test("MPD 0.24's inc, dec, find ... sort and window, beyond 0.23")
    func beyondMPD023() throws {
        let music = try StickerMusic.make()
        defer { try? FileManager.default.removeItem(atPath: music) }
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", music]
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        try updateDatabase(client)
        #expect(try client.command("sticker inc song a.mp3 count 5") == ["OK"])
        #expect(try client.command("sticker inc song a.mp3 count 2") == ["OK"])
        #expect(try client.command("sticker dec song a.mp3 count 10") == ["OK"])
        #expect(try client.command("sticker get song a.mp3 count") == ["sticker: count=-3", "OK"])
        #expect(try client.command("sticker inc song a.mp3 \"\" 1") == ["ACK [2@0] {sticker} empty sticker name"])
        #expect(try client.command("sticker inc song nope.mp3 x 1") == ["ACK [50@0] {sticker} No such song"])
        #expect(try client.command("sticker inc song a.mp3 x") == ["ACK [2@0] {sticker} bad request"])
        let values = [("dir/sub/c.mp3", "10"), ("a.mp3", "9"), ("Other/d.mp3", "2"), ("dir/b.mp3", "100")]
        for (uri, value) in values {
            #expect(try client.command("sticker set song \(uri) n \(value)") == ["OK"])
        }
        func files(_ request: String) throws -> [String] {
            let answer = try client.command(request)
            #expect(answer.last == "OK", "\(request): \(answer)")
            return answer.filter { $0.hasPrefix("file: ") }.map { String($0.dropFirst(6)) }
        }
        #expect(
            try files("sticker find song \"\" n sort value_int") == [
                "Other/d.mp3", "a.mp3", "dir/sub/c.mp3", "dir/b.mp3",
            ])
        #expect(
            try files("sticker find song \"\" n sort -value") == ["a.mp3", "Other/d.mp3", "dir/b.mp3", "dir/sub/c.mp3"])
        #expect(
            try files("sticker find song \"\" n sort -uri") == ["dir/sub/c.mp3", "dir/b.mp3", "a.mp3", "Other/d.mp3"])
        #expect(try files("sticker find song \"\" n sort value_int window 1:3") == ["a.mp3", "dir/sub/c.mp3"])
        #expect(try files("sticker find song \"\" n window 2:") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try files("sticker find song \"\" n window 9:10") == [])
        #expect(try files("sticker find song \"\" n gt 9 sort -value_int") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try files("sticker find song \"\" n lt 9") == ["Other/d.mp3"])
        #expect(try files("sticker find song \"\" n eq 9") == ["a.mp3"])
        #expect(try files("sticker find song \"\" n contains 0") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(try files("sticker find song \"\" n starts_with 1") == ["dir/b.mp3", "dir/sub/c.mp3"])
        #expect(
            try client.command("sticker find song \"\" n sort rating")
                == ["ACK [2@0] {sticker} Unknown sort tag \"rating\""])
        #expect(
            try client.command("sticker find song \"\" n window x") == [
                "ACK [2@0] {sticker} Integer or range expected: x"
            ])
        #expect(
            try client.command("sticker find song \"\" n = 1 sort uri window 0:1 x") == [
                "ACK [2@0] {sticker} bad request"
            ])
    }

    @Test("without a sticker file, sticker is not offered and answers as mpd without one")
    func disabled() throws {
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--sticker-file", "none"]
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        // mpd 0.23.12 without `sticker_file`, checked by hand: the same ACK, and no `sticker` in `commands`.
        #expect(
            try client.command("sticker get song one-second.mp3 x") == [
                "ACK [5@0] {sticker} sticker database is disabled"
            ])
        #expect(try client.command("sticker get bogus x y") == ["ACK [5@0] {sticker} sticker database is disabled"])
        let commands = try client.command("commands")
        #expect(commands.last == "OK")
        #expect(!commands.contains("command: sticker"))
        #expect(commands.contains("command: status"))
    }

    @Test("a sticker file that is not a sticker database: logged, stickers refused, the file and the rest untouched")
    func corruptFile() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/stickers.db"
        let garbage = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        try garbage.write(to: URL(fileURLWithPath: path))
        var options = RunningPlayerd.Options()
        options.library = true
        options.playStatistics = true
        options.extraArguments = ["--sticker-file", path]
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        try updateDatabase(client)
        #expect(
            try client.command("sticker get song one-second.mp3 x") == [
                "ACK [5@0] {sticker} sticker database is disabled: the sticker file could not be used (see playerd's log)"
            ])
        #expect(try !client.command("commands").contains("command: sticker"))
        #expect(playerd.log.contains("sticker database: \(path) is not an SQLite database"), "\(playerd.logTail)")
        // The daemon plays on, its library answers, and the file stays as it was.
        #expect(try client.command("add one-second.mp3") == ["OK"])
        #expect(try client.command("play") == ["OK"])
        #expect(try client.fields("status")["state"] == "play")
        #expect(try client.command("lsinfo one-second.mp3").last == "OK")
        try expectEventually("the song ends") { try client.fields("status")["state"] == "stop" }
        #expect(FileManager.default.contents(atPath: path) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["stickers.db"])
        _ = try playerd.stop()
    }

    @Test("stickers survive a restart and a rescan; a vanished song's are hidden, and back when it is")
    func restartAndRescan() throws {
        let music = try StickerMusic.make()
        let directory = try Paths.makeTemporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: music)
            try? FileManager.default.removeItem(atPath: directory)
        }
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", music, "--sticker-file", directory + "/stickers.db"]
        do {
            let playerd = try RunningPlayerd(options, readiness: .seconds(20))
            let client = try playerd.connect()
            try updateDatabase(client)
            #expect(try client.command("sticker set song dir/b.mp3 rating 8") == ["OK"])
            #expect(try client.command("sticker set song a.mp3 rating 2") == ["OK"])
            _ = try playerd.stop()
        }
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        try updateDatabase(client)
        #expect(try client.command("sticker get song dir/b.mp3 rating") == ["sticker: rating=8", "OK"])
        #expect(try client.command("rescan").last == "OK")
        try updateDatabase(client)
        #expect(
            try client.command("sticker find song \"\" rating") == [
                "file: a.mp3", "sticker: rating=2", "file: dir/b.mp3", "sticker: rating=8", "OK",
            ])
        // The song leaves the library: mpd's answers for a song it does not have.
        try FileManager.default.moveItem(atPath: music + "/dir/b.mp3", toPath: directory + "/b.mp3")
        try updateDatabase(client)
        try expectEventually("the library drops dir/b.mp3") {
            try client.command("lsinfo dir/b.mp3").last?.hasPrefix("ACK") == true
        }
        #expect(try client.command("sticker get song dir/b.mp3 rating") == ["ACK [50@0] {sticker} No such song"])
        #expect(try client.command("sticker find song \"\" rating") == ["file: a.mp3", "sticker: rating=2", "OK"])
        // mpd deletes the stickers of a song that leaves; playerd keeps them (MPD-DIFFERENCES.md).
        try FileManager.default.moveItem(atPath: directory + "/b.mp3", toPath: music + "/dir/b.mp3")
        try updateDatabase(client)
        try expectEventually("the library has dir/b.mp3 again") {
            try client.command("lsinfo dir/b.mp3").last == "OK"
        }
        #expect(try client.command("sticker get song dir/b.mp3 rating") == ["sticker: rating=8", "OK"])
        _ = try playerd.stop()
    }

    /// The `key=value` stickers of a song, as `sticker list` gives them.
    private static func stickers(_ client: LineClient, _ uri: String) throws -> [String: String] {
        let answer = try client.command("sticker list song \(uri)")
        #expect(answer.last == "OK", "\(answer)")
        var stickers: [String: String] = [:]
        for line in answer.dropLast() where line.hasPrefix("sticker: ") {
            let pair = line.dropFirst("sticker: ".count)
            guard let equals = pair.firstIndex(of: "=") else { continue }
            stickers[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        return stickers
    }

    private static func waitUntilStopped(_ client: LineClient) throws {
        try expectEventually("the player stops", within: .seconds(15)) {
            try client.fields("status")["state"] == "stop"
        }
    }

    @Test("play statistics: played past half, skipped before it, as myMPD's stickers, with idle sticker")
    func playStatistics() throws {
        var options = RunningPlayerd.Options()
        options.library = true
        options.playStatistics = true
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        try updateDatabase(client)
        let idler = try playerd.connect()
        try idler.send(line: "idle sticker")
        let start = Int(time(nil))
        // Two songs played to their ends (1 s and 1.3 s): each counts as played.
        for request in ["add one-second.mp3", "add gapless-a.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try Self.waitUntilStopped(client)
        #expect(try idler.readAnswer(timeout: .seconds(5)) == ["changed: sticker", "OK"])
        for song in ["one-second.mp3", "gapless-a.mp3"] {
            let stickers = try Self.stickers(client, song)
            #expect(stickers["playCount"] == "1", "\(song): \(stickers)")
            let lastPlayed = try #require(stickers["lastPlayed"].flatMap { Int($0) })
            #expect(lastPlayed >= start && lastPlayed <= Int(time(nil)))
            #expect(stickers["skipCount"] == nil && stickers["lastSkipped"] == nil, "\(song): \(stickers)")
        }
        // A 3 s song left after a fraction of a second is skipped; the next one, played out, counts.
        for request in ["clear", "add vbr-no-xing.mp3", "add one-second.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try expectEventually("vbr-no-xing.mp3 plays") {
            try (client.fields("status")["elapsed"].flatMap { Double($0) } ?? 0) >= 0.3
        }
        let skippedAt = Int(time(nil))
        #expect(try client.command("next") == ["OK"])
        try Self.waitUntilStopped(client)
        var stickers = try Self.stickers(client, "vbr-no-xing.mp3")
        #expect(stickers["skipCount"] == "1", "\(stickers)")
        #expect(stickers["playCount"] == nil, "\(stickers)")
        let lastSkipped = try #require(stickers["lastSkipped"].flatMap { Int($0) })
        #expect(lastSkipped >= skippedAt && lastSkipped <= Int(time(nil)))
        #expect(try Self.stickers(client, "one-second.mp3")["playCount"] == "2")
        // Past half before `next`: played, not skipped.
        for request in ["clear", "add vbr-no-xing.mp3", "add one-second.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try expectEventually("vbr-no-xing.mp3 is past its middle") {
            try (client.fields("status")["elapsed"].flatMap { Double($0) } ?? 0) >= 1.8
        }
        #expect(try client.command("next") == ["OK"])
        try Self.waitUntilStopped(client)
        stickers = try Self.stickers(client, "vbr-no-xing.mp3")
        #expect(stickers["playCount"] == "1" && stickers["skipCount"] == "1", "\(stickers)")
        #expect(try Self.stickers(client, "one-second.mp3")["playCount"] == "3")
        // Stopping a song is no skip: playing another one after it leaves it as it was.
        for request in ["clear", "add vbr-no-xing.mp3", "add gapless-b.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try expectEventually("vbr-no-xing.mp3 plays") {
            try (client.fields("status")["elapsed"].flatMap { Double($0) } ?? 0) >= 0.3
        }
        #expect(try client.command("stop") == ["OK"])
        #expect(try client.command("play 1") == ["OK"])
        try Self.waitUntilStopped(client)
        stickers = try Self.stickers(client, "vbr-no-xing.mp3")
        #expect(stickers["playCount"] == "1" && stickers["skipCount"] == "1", "\(stickers)")
        #expect(try Self.stickers(client, "gapless-b.mp3")["playCount"] == "1")
        // Playing another song while one plays skips it.
        for request in ["clear", "add vbr-no-xing.mp3", "add gapless-b.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try expectEventually("vbr-no-xing.mp3 plays") {
            try (client.fields("status")["elapsed"].flatMap { Double($0) } ?? 0) >= 0.3
        }
        #expect(try client.command("play 1") == ["OK"])
        try Self.waitUntilStopped(client)
        stickers = try Self.stickers(client, "vbr-no-xing.mp3")
        #expect(stickers["playCount"] == "1" && stickers["skipCount"] == "2", "\(stickers)")
        #expect(try Self.stickers(client, "gapless-b.mp3")["playCount"] == "2")
        _ = try playerd.stop()
    }

    @Test("--no-play-statistics records nothing")
    func noPlayStatistics() throws {
        var options = RunningPlayerd.Options()
        options.library = true
        let playerd = try RunningPlayerd(options, readiness: .seconds(20))
        let client = try playerd.connect()
        try updateDatabase(client)
        for request in ["add one-second.mp3", "play"] {
            #expect(try client.command(request) == ["OK"])
        }
        try Self.waitUntilStopped(client)
        usleep(300_000)
        #expect(try Self.stickers(client, "one-second.mp3").isEmpty)
        _ = try playerd.stop()
    }
}
