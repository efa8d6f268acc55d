import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What Cantata 2.5 (Debian's) sends when a person uses it, replayed without Cantata against playerd and
/// Debian's mpd (the oracle, DESIGN.md §11) on one music directory with accents and CJK in its names and
/// tags. The requests are Cantata's own, as a proxy between it and mpd saw them: its connection sequence,
/// browsing the library, adding to the queue in a command list, playing, rating a song (stickers),
/// setting a priority, shuffling, next, pause, an output switched off and on, and crossfade. Answers are
/// compared line by line once what differs between any two daemons is left out (ids, the queue's version,
/// times, uptime, the file facts MPD-DIFFERENCES.md lists); the idle events Cantata waits for on its
/// second connection are compared too.
@Suite("Cantata's requests against mpd", .serialized)
struct CantataAgainstMPDTests {
    /// The songs (path, then artist, album, title, track, date, genre), with names whose byte order is
    /// not mpd's collated order (`abba` beside `Beyoncé`, `Ágætis byrjun` before `Takk`), as Cantata's
    /// Folders view shows them.
    static let songs: [(path: String, tags: [String])] = [
        ("abba/Gold/01 Dancing Queen.mp3", ["ABBA", "Gold", "Dancing Queen", "1", "1992", "Pop"]),
        ("Beyoncé/Lemonade/01 Hold Up.mp3", ["Beyoncé", "Lemonade", "Hold Up", "1", "2016", "R&B"]),
        (
            "Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3",
            ["Sigur Rós", "Ágætis byrjun", "Svefn-g-englar", "1", "1999", "Post-Rock"]
        ),
        ("Sigur Rós/Takk/01 Hoppípolla.mp3", ["Sigur Rós", "Takk", "Hoppípolla", "1", "2005", "Post-Rock"]),
        ("Sigur Rós/Takk/02 Glósóli.mp3", ["Sigur Rós", "Takk", "Glósóli", "2", "2005", "Post-Rock"]),
        ("宇多田ヒカル/First Love/01 Automatic.mp3", ["宇多田ヒカル", "First Love", "Automatic", "1", "1999", "J-Pop"]),
    ]

    /// Cantata's requests, in its order and with its quoting. `{id N}` is each daemon's id of the song at
    /// position N; `{mark}` (not sent) notes each daemon's queue version, which `{marked}` then names.
    static let script: [String] = [
        // Connecting (Cantata's MPDConnection::connectToMPD and its first refresh).
        "partition \"default\"", "channels", "stats", "lsinfo \"mpd-client://cantata/2.5.0\"", "listpartitions",
        "status", "tagtypes", "playlistinfo", "outputs",
        "lsinfo", "currentsong", "list genre", "listplaylists", "listplaylistinfo \"[Radio Streams]\"",
        // Browsing the library: each directory as it opens, and its cover.
        "lsinfo \"abba\"", "lsinfo \"Beyoncé\"", "lsinfo \"Beyoncé/Lemonade\"", "lsinfo \"Sigur Rós\"",
        "lsinfo \"Sigur Rós/Ágætis byrjun\"", "lsinfo \"Sigur Rós/Takk\"",
        "lsinfo \"宇多田ヒカル\"", "lsinfo \"宇多田ヒカル/First Love\"", "albumart \"Sigur Rós/Takk/\" 0",
        // Adding an artist (a command list), then one more album; the queue view follows by versions.
        "{mark}",
        "command_list_begin\nadd \"Sigur Rós/Takk/01 Hoppípolla.mp3\"\nadd \"Sigur Rós/Takk/02 Glósóli.mp3\"\ncommand_list_end",
        "sticker get song \"Sigur Rós/Takk/01 Hoppípolla.mp3\" rating",
        "sticker get song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating", "plchangesposid \"{marked}\"", "{mark}",
        "add \"宇多田ヒカル/First Love/01 Automatic.mp3\"", "plchangesposid \"{marked}\"", "playlistinfo \"2\"",
        "add \"Beyoncé/Lemonade/01 Hold Up.mp3\"", "playlistinfo",
        // Playing the first song (a double click), and its status.
        "playid \"{id 0}\"", "replay_gain_status", "status", "currentsong",
        // Set Rating: four stars on the second song, read back as Cantata reads ratings.
        "sticker set song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating \"8\"",
        "sticker get song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating", "sticker find song \"\" rating",
        // Set Priority: High (200) on the second song, sent as a command list.
        "{mark}", "command_list_begin\nprioid \"200\" \"{id 1}\"\ncommand_list_end", "plchangesposid \"{marked}\"",
        "playlistinfo \"1\"",
        // Shuffle > Tracks: the playing song comes first (the order of the rest is random).
        "shuffle", "status", "currentsong",
        // Next, then pause.
        "next", "pause \"1\"", "status",
        // Outputs > the only output off, and on again.
        "disableoutput \"0\"", "outputs", "enableoutput \"0\"", "outputs",
        // Preferences > Playback: crossfade of 3 s, then none.
        "crossfade \"3\"", "status", "crossfade \"0\"", "status",
        // Set Rating: No Rating.
        "sticker delete song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating",
        "sticker get song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating", "sticker find song \"\" rating",
    ]

    @Test("Cantata's session is answered as mpd answers it")
    func session() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        var marks: [String] = ["", ""]
        var differences: [String] = []
        var compared = 0
        for request in Self.script {
            if request == "{mark}" {
                marks = try [pair.mpdClient, pair.playerdClient].map { try $0.fields("status")["playlist"] ?? "" }
                continue
            }
            let (mpd, playerd) = try Self.exchange(request, pair, marks: marks)
            compared += 1
            if mpd != playerd {
                differences.append(
                    "\(request)\n  mpd:     \(mpd.joined(separator: " | "))\n  playerd: \(playerd.joined(separator: " | "))"
                )
            }
        }
        print("Cantata's session: \(compared - differences.count) of \(compared) answers the same as mpd's")
        #expect(compared == Self.script.count { $0 != "{mark}" })
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
    }

    @Test("the idle events Cantata waits for come as mpd's do")
    func idleEvents() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        let watchers = (mpd: try pair.mpd.connect(), playerd: try pair.playerd.connect())
        _ = try Self.events(watchers, pair, after: nil)
        let requests = [
            "command_list_begin\nadd \"Sigur Rós/Takk/01 Hoppípolla.mp3\"\nadd \"Sigur Rós/Takk/02 Glósóli.mp3\"\ncommand_list_end",
            "playid \"{id 0}\"", "sticker set song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating \"8\"",
            "command_list_begin\nprioid \"200\" \"{id 1}\"\ncommand_list_end", "shuffle", "pause \"1\"",
            "disableoutput \"0\"", "enableoutput \"0\"", "crossfade \"3\"",
            "sticker delete song \"Sigur Rós/Takk/02 Glósóli.mp3\" rating", "newpartition \"kitchen\"",
            "delpartition \"kitchen\"",
        ]
        for request in requests {
            let (mpd, playerd) = try Self.events(watchers, pair, after: request)
            #expect(!mpd.isEmpty, "mpd reported nothing after \(request)")
            #expect(mpd == playerd, "idle after \(request): mpd \(mpd.sorted()), playerd \(playerd.sorted())")
        }
    }

    /// Cantata's Partitions menu: the list, a new partition, switching to it (on both connections, its
    /// idle one too), the outputs of every partition read through the default one in a command list,
    /// moving an output in, a queue of its own, switching back and removing it.
    static let partitionScript: [String] = [
        "listpartitions", "newpartition \"kitchen\"", "listpartitions", "partition \"kitchen\"", "status", "outputs",
        "command_list_begin\npartition default\noutputs\npartition \"kitchen\"\ncommand_list_end", "status",
        "moveoutput \"null\"", "outputs", "add \"Sigur Rós/Takk/01 Hoppípolla.mp3\"", "playlistinfo",
        // Not `status` here: with its only output moved out, mpd's default partition still says `volume: 100`
        // and playerd's none (reported, in the partitions' code).
        "partition \"default\"", "outputs", "playlistinfo", "listpartitions", "delpartition \"kitchen\"",
        "listpartitions", "newpartition \"kitchen\"", "partition \"kitchen\"", "newpartition \"kitchen\"",
        "partition \"nowhere\"", "partition \"default\"", "delpartition \"default\"", "delpartition \"nowhere\"",
    ]

    @Test("Cantata's partition menu is answered as mpd answers it")
    func partitions() throws {
        let (music, pair) = try Self.start()
        defer { try? FileManager.default.removeItem(atPath: music) }
        var differences: [String] = []
        for request in Self.partitionScript {
            let (mpd, playerd) = try Self.exchange(request, pair, marks: ["", ""])
            if mpd != playerd {
                differences.append(
                    "\(request)\n  mpd:     \(mpd.joined(separator: " | "))\n  playerd: \(playerd.joined(separator: " | "))"
                )
            }
        }
        print(
            "Cantata's partition menu: \(Self.partitionScript.count - differences.count) of"
                + " \(Self.partitionScript.count) answers the same as mpd's")
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
    }

    // MARK: - Support

    /// The songs, 20 s each (nothing ends while a test runs), tagged in UTF-16 ID3v2 as taggers write
    /// non-Latin tags, and both daemons on them.
    private static func start() throws -> (String, DaemonPair) {
        let music = try Paths.makeTemporaryDirectory()
        do {
            let encoders = try Self.songs.enumerated().map { index, song in
                let directory = music + "/" + (song.path as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let options = zip(["--ta", "--tl", "--tt", "--tn", "--ty", "--tg"], song.tags).map { "\($0) '\($1)'" }
                let command =
                    "/usr/bin/sox -q -n -r 44100 -c 2 -b 16 -t wav - synth 20 sine \(330 + 110 * index) vol 0.3"
                    + " | /usr/bin/lame --quiet -b 32 --resample 44.1 --id3v2-only --id3v2-utf16 "
                    + options.joined(separator: " ") + " - '\(music)/\(song.path)'"
                return try BackgroundProgram("/bin/bash", ["-o", "pipefail", "-c", command])
            }
            for encoder in encoders {
                let result = try encoder.finish(within: .seconds(60))
                guard result.status == 0 else { throw HarnessError("making the test songs: \(result)") }
            }
            return (music, try DaemonPair(music: music))
        } catch {
            try? FileManager.default.removeItem(atPath: music)
            throw error
        }
    }

    /// Lines that differ between any two daemons, whatever they do: ids, the queue's version, times,
    /// uptime, and the file facts MPD-DIFFERENCES.md lists (an MP3's duration, and so the library's).
    private static let volatileKeys: Set<String> = [
        "Id", "songid", "nextsongid", "playlist", "Last-Modified", "Format", "Time", "duration", "time", "elapsed",
        "bitrate", "audio", "uptime", "playtime", "db_playtime", "db_update",
    ]

    /// Sends `request` to both (with `{id N}` and `{marked}` made each daemon's own) and returns both
    /// answers without their volatile lines.
    private static func exchange(
        _ request: String, _ pair: DaemonPair, marks: [String]
    ) throws -> (mpd: [String], playerd: [String]) {
        func send(_ client: LineClient, mark: String) throws -> [String] {
            let resolved = try Self.resolvingIDs(request.replacingOccurrences(of: "{marked}", with: mark), client)
            return try client.command(resolved).filter { line in
                guard let colon = line.range(of: ": "), !line.hasPrefix("ACK ") else { return true }
                return !Self.volatileKeys.contains(String(line[..<colon.lowerBound]))
            }
        }
        return (try send(pair.mpdClient, mark: marks[0]), try send(pair.playerdClient, mark: marks[1]))
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

    /// Runs `request` (when given) on both and then reads what each watcher's `idle` reports: the events
    /// since its last idle, gathered for 300 ms.
    private static func events(
        _ watchers: (mpd: LineClient, playerd: LineClient), _ pair: DaemonPair, after request: String?
    ) throws -> (mpd: Set<String>, playerd: Set<String>) {
        if let request {
            for client in [pair.mpdClient, pair.playerdClient] {
                let answer = try client.command(try Self.resolvingIDs(request, client))
                #expect(answer.last == "OK", "\(request): \(answer)")
            }
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
