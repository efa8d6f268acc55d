import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The queue commands of issue 23 (`shuffle`, `swap`, `swapid`, `prio`, `prioid`, `playlist`,
/// `playlistfind`, `playlistsearch`, `addtagid`, `cleartagid`, insert positions, URI schemes, error
/// texts) sent to playerd and to Debian's mpd (the oracle, DESIGN.md §11) on one music directory, the
/// answers compared line by line once what differs between any two daemons is left out: ids (mpd counts
/// from 0, playerd from 1: see MPD-DIFFERENCES.md), the queue's version, times, and the file facts
/// MPD-DIFFERENCES.md lists (`duration`, `Format`).
@Suite("Queue commands against mpd", .serialized)
struct QueueCommandsAgainstMPDTests {
    /// Requests whose answers must be the same, from the reset queue (stopped, four songs, no current
    /// song); `{id N}` is the id of the song at position N in each daemon. Refusals come first, then
    /// edits, each followed by a listing that shows what it did.
    static let script: [String] = [
        // shuffle
        "shuffle 5:10", "shuffle abc", "shuffle 2:1", "shuffle 4:", "shuffle 5", "shuffle 1 2", "shuffle 3:",
        // swap, swapid
        "swap 0 9", "swap a 1", "swap -1 0", "swap 0", "swapid 99 {id 0}", "swapid a 1", "swapid -1 1",
        "swapid {id 0} 99",
        // prio, prioid
        "prio 256 0", "prio -1 0", "prio a 0", "prio 10 5", "prio 10", "prio 10 a", "prio 10 2:1", "prio 10 4:9",
        "prio 10 5:9", "prioid 10 99", "prioid 256 {id 0}", "prioid 10 a", "prioid 10", "prioid 10 -1",
        // Listings of the queue.
        "playlist", "playlistfind artist \"Artist 1\"", "playlistfind \"(Artist == 'Artist 0')\"",
        "playlistfind artist", "playlistfind bogus x", "playlistsearch title \"title 3\"", "playlistsearch any TITLE",
        "playlistfind file song1.mp3", "playlistfind artist \"Artist 1\" sort title", "playlistfind", "playlistinfo",
        "playlistsearch \"(title contains 'e 2')\"",
        // Tags of remote songs only.
        "addtagid 99 artist x", "addtagid {id 0} bogus x", "addtagid a artist x", "addtagid {id 0} artist x",
        "addtagid {id 0} file x", "addtagid 99 bogus x", "cleartagid {id 0}", "cleartagid {id 0} artist",
        "cleartagid 99", "cleartagid {id 0} bogus", "addtagid {id 0} artist",
        // Insert positions and schemes, with no current song.
        "addid song1.mp3 +0", "addid song1.mp3 -0", "add song1.mp3 +0", "add song1.mp3 9", "addid song1.mp3 9",
        "add bogus://x", "addid bogus://x", "add Bogus+1.x://y", "addid sub", "addid sub/", "playlistinfo 4:",
        "playlistinfo 5:", "playlistinfo 4",
        "playlistinfo 5", "findadd artist \"Artist 0\" position +0",
        "findadd artist \"Artist 0\" position 99", "findadd artist \"Artist 0\" position",
        // Error texts of the other queue and playback commands.
        "delete 9", "deleteid 99", "move 0 9", "moveid 99 0", "play 9", "playid 99", "seek 9 1", "seekid 99 1",
        "next", "previous", "seekcur 5", "playlistinfo 9", "playlistid 99",
        // Edits, each shown by a listing.
        "prio 10 0:2 7", "playlistinfo", "prioid 3 {id 2} {id 3} 99", "playlistinfo", "prio 0 0:", "playlistinfo",
        "swap 0 3", "playlist", "swapid {id 0} {id 1}", "playlist", "swap 2 2", "playlist",
        "findadd artist \"Artist 0\" position 1", "playlist", "searchadd artist \"artist 1\" position 0",
        "playlist", "add song2.mp3 2", "playlist",
        // With a current song: relative positions.
        "play 1", "addid song4.mp3 +0", "add song3.mp3 -1", "add song1.mp3 +99", "add song1.mp3 -9",
        "findadd title \"Title 1\" position +1", "playlist", "status", "currentsong", "prioid 9 {id 1}",
        "currentsong", "swap 1 0", "status", "stop", "status",
    ]

    @Test("refusals, listings and edits answer as mpd's do")
    func script() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        try pair.reset()
        var differences: [String] = []
        for request in Self.script {
            let (mpd, playerd) = try Self.exchange(request, pair)
            if mpd != playerd {
                differences.append(
                    "\(request)\n  mpd:     \(mpd.joined(separator: " | "))\n  playerd: \(playerd.joined(separator: " | "))"
                )
            }
        }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
    }

    @Test("random mode plays higher priorities first, as mpd does")
    func prioritiesInRandomMode() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        try pair.reset()
        // Positions 2, then 3, then the rest; played as mpd plays them.
        for request in ["prio 10 2", "prio 5 3", "random 1", "play"] {
            _ = try Self.exchange(request, pair)
        }
        try Self.expectSameSong(pair, position: 2)
        _ = try Self.exchange("next", pair)
        try Self.expectSameSong(pair, position: 3)
        // A song played already comes back once its priority is above the current one's (5).
        _ = try Self.exchange("prioid 7 {id 2}", pair)
        _ = try Self.exchange("next", pair)
        try Self.expectSameSong(pair, position: 2)
        // A song that starts playing loses its priority (MPD's playlist::SongStarted).
        let (mpd, playerd) = try Self.exchange("currentsong", pair)
        #expect(mpd == playerd)
        #expect(playerd.contains("Pos: 2") && !playerd.contains { $0.hasPrefix("Prio:") })
        // A song raised while playing comes next.
        _ = try Self.exchange("prio 200 0", pair)
        _ = try Self.exchange("next", pair)
        try Self.expectSameSong(pair, position: 0)
    }

    @Test("shuffle keeps the song playing first and forgets the current one when stopped, as mpd")
    func shuffle() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        try pair.reset()
        _ = try Self.exchange("play 2", pair)
        for _ in 0..<3 {
            _ = try Self.exchange("shuffle", pair)
            for client in [pair.mpdClient, pair.playerdClient] {
                let status = try client.fields("status")
                #expect(status["song"] == "0")
                #expect(status["state"] == "play")
                #expect(try client.fields("currentsong")["file"] == "song3.mp3")
                let files = try client.command("playlist").dropLast().map { $0.split(separator: " ").last ?? "" }
                #expect(files.sorted() == ["song1.mp3", "song2.mp3", "song3.mp3", "song4.mp3"])
            }
        }
        _ = try Self.exchange("shuffle 1:3", pair)
        for client in [pair.mpdClient, pair.playerdClient] {
            #expect(try client.fields("currentsong")["file"] == "song3.mp3")
        }
        _ = try Self.exchange("stop", pair)
        _ = try Self.exchange("shuffle", pair)
        let (mpd, playerd) = try Self.exchange("status", pair)
        #expect(mpd == playerd)
        #expect(!playerd.contains { $0.hasPrefix("song:") })
    }

    @Test("idle after swap, shuffle, prio and switching outputs names what mpd's does")
    func idleEvents() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let watchers = (mpd: try pair.mpd.connect(), playerd: try pair.playerd.connect())
        try pair.reset()
        _ = try Self.events(watchers, pair, after: nil)
        let requests = [
            "swap 0 1", "swap 2 2", "swapid {id 0} {id 3}", "shuffle", "shuffle 0:1", "prio 3 0:2", "prio 3 0",
            "prioid 4 {id 1}", "prio 1 4:", "disableoutput 0", "disableoutput 0", "enableoutput 0", "toggleoutput 0",
            "toggleoutput 0", "play 1", "swap 1 3", "shuffle",
        ]
        for request in requests {
            let (mpd, playerd) = try Self.events(watchers, pair, after: request)
            #expect(mpd == playerd, "idle after \(request): mpd \(mpd), playerd \(playerd)")
        }
    }

    @Test("plchangesposid after swap, shuffle and prio lists the positions mpd lists, and the version moves as mpd's")
    func changes() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        try pair.reset()
        _ = try Self.exchange("play 1", pair)
        let requests = [
            "swap 0 2", "swap 3 3", "swapid {id 1} {id 3}", "shuffle 1:3", "prio 4 1:3", "prio 4 1", "prio 0 4:",
            "prioid 2 {id 0}", "shuffle 3:", "shuffle", "stop", "shuffle 0:2",
        ]
        for request in requests {
            var versions: [Int] = []
            var changed: [[String]] = []
            for client in [pair.mpdClient, pair.playerdClient] {
                let before = try #require(Int(try client.fields("status")["playlist"] ?? ""))
                let answer = try client.command(try Self.resolvingIDs(request, client))
                #expect(answer.last == "OK", "\(request): \(answer)")
                let after = try #require(Int(try client.fields("status")["playlist"] ?? ""))
                versions.append(after - before)
                changed.append(try client.command("plchangesposid \(before)").filter { $0.hasPrefix("cpos:") })
            }
            #expect(versions[0] == versions[1], "\(request): the version moved by \(versions) (mpd, playerd)")
            // A shuffle's new order is random: the positions it touched are what must agree.
            #expect(changed[0] == changed[1], "\(request): mpd \(changed[0]), playerd \(changed[1])")
        }
    }

    @Test("decoders lists playerd's decoders as mpd lists its mpg123, vorbis, oggflac, flac and opus plugins")
    func decoders() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        /// Each plugin's block (its `plugin:` line and what follows), in the answer's order.
        func blocks(_ answer: [String]) -> [[String]] {
            var blocks: [[String]] = []
            for line in answer where line != "OK" {
                if line.hasPrefix("plugin: ") { blocks.append([]) }
                if !blocks.isEmpty { blocks[blocks.count - 1].append(line) }
            }
            return blocks
        }
        let mpd = blocks(try pair.mpdClient.command("decoders"))
        let playerd = try pair.playerdClient.command("decoders")
        #expect(playerd.last == "OK")
        let names = ["mpg123", "vorbis", "oggflac", "flac", "opus"]
        #expect(blocks(playerd).map { $0[0] } == names.map { "plugin: " + $0 })
        // Each block exactly mpd's, in mpd's order.
        #expect(blocks(playerd) == mpd.filter { names.contains(String($0[0].dropFirst("plugin: ".count))) })
        #expect(
            try pair.playerdClient.command("urlhandlers") == [
                "handler: file://", "handler: http://", "handler: https://", "OK",
            ])
    }

    // MARK: - Support

    /// Tagged songs (Title N, Artist N % 2, Album, Track N) of 20 s, so that nothing ends while a test
    /// runs, a copy of the first in `sub/`, and both daemons on them.
    private static func start() throws -> (String, DaemonPair) {
        let music = try Paths.makeTemporaryDirectory()
        do {
            let encoders = try (0..<PairedMusic.songCount).map { index in
                let number = index + 1
                let command =
                    "/usr/bin/sox -q -n -r 44100 -c 2 -b 16 -t wav - synth 20 sine \(300 + 100 * number) vol 0.3"
                    + " | /usr/bin/lame --quiet -b 32 --resample 44.1 --tt 'Title \(number)'"
                    + " --ta 'Artist \(number % 2)' --tl Album --tn \(number) - '\(music)/\(PairedMusic.fileName(index))'"
                return try BackgroundProgram("/bin/bash", ["-o", "pipefail", "-c", command])
            }
            for encoder in encoders {
                let result = try encoder.finish(within: .seconds(60))
                guard result.status == 0 else { throw HarnessError("making the test songs: \(result)") }
            }
            // A directory, which `addid` refuses as no song.
            try FileManager.default.createDirectory(atPath: music + "/sub", withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: music + "/song1.mp3", toPath: music + "/sub/other.mp3")
            return (music, try DaemonPair(music: music))
        } catch {
            try? FileManager.default.removeItem(atPath: music)
            throw error
        }
    }

    /// Lines that differ between any two daemons, whatever they do: ids, the queue's version, times, and
    /// the file facts MPD-DIFFERENCES.md lists.
    private static let volatileKeys: Set<String> = [
        "Id", "songid", "nextsongid", "playlist", "Last-Modified", "Format", "Time", "duration", "time", "elapsed",
        "bitrate", "audio",
    ]

    /// Sends `request` to both (with `{id N}` made each daemon's id of position N) and returns both
    /// answers without their volatile lines.
    private static func exchange(_ request: String, _ pair: DaemonPair) throws -> (mpd: [String], playerd: [String]) {
        func send(_ client: LineClient) throws -> [String] {
            let answer = try client.command(try Self.resolvingIDs(request, client))
            let kept = answer.filter { line in
                guard let colon = line.range(of: ": "), !line.hasPrefix("ACK ") else { return true }
                return !Self.volatileKeys.contains(String(line[..<colon.lowerBound]))
            }
            return Self.sortingTags(kept)
        }
        return (try send(pair.mpdClient), try send(pair.playerdClient))
    }

    /// The tag lines of each song block in name order: mpd lists a file's tags in the order its
    /// decoder met them, playerd in its own; the queue commands do not decide that order.
    private static func sortingTags(_ lines: [String]) -> [String] {
        let tags: Set<String> = ["Artist", "Title", "Album", "Track"]
        var result: [String] = []
        var run: [String] = []
        for line in lines {
            if let colon = line.range(of: ": "), tags.contains(String(line[..<colon.lowerBound])) {
                run.append(line)
            } else {
                result += run.sorted()
                run = []
                result.append(line)
            }
        }
        return result + run.sorted()
    }

    private static func resolvingIDs(_ request: String, _ client: LineClient) throws -> String {
        guard request.contains("{id ") else { return request }
        var ids: [Int: String] = [:]
        var position = -1
        for line in try client.command("playlistinfo") {
            if line.hasPrefix("Pos: ") { position = Int(line.dropFirst(5)) ?? -1 }
            if line.hasPrefix("Id: ") { ids[position] = String(line.dropFirst(4)) }
        }
        var result = request
        while let open = result.range(of: "{id "), let close = result[open.upperBound...].firstIndex(of: "}") {
            let position = Int(result[open.upperBound..<close]) ?? -1
            result.replaceSubrange(open.lowerBound...close, with: ids[position] ?? "999")
        }
        return result
    }

    private static func expectSameSong(
        _ pair: DaemonPair, position: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let mpd = try pair.mpdClient.fields("status")
        let playerd = try pair.playerdClient.fields("status")
        #expect(mpd["song"] == "\(position)", "mpd: \(mpd)", sourceLocation: sourceLocation)
        #expect(playerd["song"] == "\(position)", "playerd: \(playerd)", sourceLocation: sourceLocation)
    }

    /// Runs `request` (when given) and then reads what each watcher's `idle` reports: the events since
    /// its last idle, gathered for 300 ms.
    private static func events(
        _ watchers: (mpd: LineClient, playerd: LineClient), _ pair: DaemonPair, after request: String?
    ) throws -> (mpd: Set<String>, playerd: Set<String>) {
        if let request {
            _ = try Self.exchange(request, pair)
        }
        usleep(300_000)
        func read(_ watcher: LineClient) throws -> Set<String> {
            try watcher.send(line: "idle")
            guard try watcher.hasInput(within: .milliseconds(300)) else {
                _ = try watcher.command("noidle")
                return []
            }
            return Set(try watcher.readAnswer().filter { $0.hasPrefix("changed: ") })
        }
        return (try read(watchers.mpd), try read(watchers.playerd))
    }
}

@Suite("Queue priorities across a restart")
struct QueuePriorityStateTests {
    @Test("priorities are saved in the state file and come back, as mpd keeps them")
    func prioritiesSurviveARestart() throws {
        let directory = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = RunningPlayerd.Options()
        options.stateFile = directory + "/state"
        let songs = ["one-second.mp3", "stereo-44k-cbr.mp3", "mono-48k-vbr.mp3"].map { Paths.fixtures + "/" + $0 }
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            for song in songs {
                #expect(try client.command("add \"\(song)\"").last == "OK")
            }
            #expect(try client.command("prio 200 1").last == "OK")
            #expect(try client.command("prio 7 2").last == "OK")
        }
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            let priorities = try client.command("playlistinfo").filter { $0.hasPrefix("Pos:") || $0.hasPrefix("Prio:") }
            #expect(priorities == ["Pos: 0", "Pos: 1", "Prio: 200", "Pos: 2", "Prio: 7"])
        }
    }
}
