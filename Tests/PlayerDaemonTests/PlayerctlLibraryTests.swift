import Foundation
import PlayerClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// playerctl's library commands against the real daemon on a tiny music tree: update, search, list,
/// and playing or queueing what they find.
@Suite("playerctl and the library")
struct PlayerctlLibraryTests {
    /// (directory, file name, title, artist, album, track, year, genre). The file names put Nina
    /// Simone's songs in the opposite order of their track numbers, and the numbers 2, 9, 10 sort
    /// differently as text.
    private static let songs = [
        ("Beyoncé/Lemonade", "01 Pray You Catch Me", "Pray You Catch Me", "Beyoncé", "Lemonade", "1", "2016", "Pop"),
        ("Beyoncé/Lemonade", "02 Hold Up", "Hold Up", "Beyoncé", "Lemonade", "2", "2016", "Pop"),
        ("Nina Simone/Pastel Blues", "01 Sinnerman", "Sinnerman", "Nina Simone", "Pastel Blues", "10", "1965", "Jazz"),
        (
            "Nina Simone/Pastel Blues", "02 Be My Husband", "Be My Husband", "Nina Simone", "Pastel Blues", "9", "1965",
            "Jazz"
        ),
        (
            "Nina Simone/Pastel Blues", "03 Trouble in Mind", "Trouble in Mind", "Nina Simone", "Pastel Blues", "2",
            "1965", "Jazz"
        ),
        (
            "The O'Jays/Ship Ahoy", "01 For the Love", "For the Love of Money", "The O'Jays", "Ship Ahoy", "1", "1973",
            "Soul"
        ),
    ]

    /// The tree, made once with sox and lame: 0.3 s of silence, tagged.
    private static let template: Result<String, HarnessError> = {
        do {
            let root = try Paths.makeTemporaryDirectory()
            let wav = root + "/silence.wav"
            try run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", wav, "trim", "0", "0.3"])
            for (directory, name, title, artist, album, track, year, genre) in songs {
                try FileManager.default.createDirectory(
                    atPath: root + "/music/" + directory, withIntermediateDirectories: true)
                try run(
                    "/usr/bin/lame",
                    [
                        "--quiet", "-b", "32", "--tt", title, "--ta", artist, "--tl", album, "--tn", track, "--ty",
                        year, "--tg", genre, wav, root + "/music/\(directory)/\(name).mp3",
                    ])
            }
            return .success(root + "/music")
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("\(error)"))
        }
    }()

    private static func run(_ program: String, _ arguments: [String]) throws {
        let result = try runProgram(program, arguments)
        guard result.status == 0 else {
            throw HarnessError("\(program) \(arguments): \(result)")
        }
    }

    /// A copy of the tree of this test's own.
    private func makeTree() throws -> String {
        let template = try Self.template.get()
        let tree = try Paths.makeTemporaryDirectory() + "/music"
        try FileManager.default.copyItem(atPath: template, toPath: tree)
        return tree
    }

    private func playerctl(_ socket: String, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(Paths.playerctl, ["--socket", socket] + arguments)
    }

    /// A daemon with a library of a fresh copy of the tree, its first scan over.
    private func withLibrary(_ body: (RunningPlayerd, String) throws -> Void) throws {
        let tree = try self.makeTree()
        defer { try? FileManager.default.removeItem(atPath: (tree as NSString).deletingLastPathComponent) }
        var options = RunningPlayerd.Options()
        options.library = true
        options.extraArguments = ["--music-dir", tree]
        try withPlayerd(options) { daemon in
            let connection = try MPDConnection(socketPath: daemon.socketPath)
            let deadline = ContinuousClock.now + .seconds(20)
            while try connection.command("status").contains(where: { $0.key == "updating_db" }) {
                guard ContinuousClock.now < deadline else { throw HarnessError("the first scan never ended") }
                usleep(20_000)
            }
            try body(daemon, tree)
        }
    }

    private func queue(_ daemon: RunningPlayerd) throws -> [String] {
        try MPDConnection(socketPath: daemon.socketPath).playlistInfo().map(\.file)
    }

    @Test("update --wait waits for the job and sums up what changed and what the library holds")
    func updateWait() throws {
        try withLibrary { daemon, tree in
            try FileManager.default.copyItem(
                atPath: tree + "/Beyoncé/Lemonade/02 Hold Up.mp3", toPath: tree + "/Beyoncé/Lemonade/03 Sorry.mp3")
            let result = try self.playerctl(daemon.socketPath, ["update", "--wait"])
            #expect(result.status == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 2, "\(result)")
            #expect(lines.first?.hasPrefix("updating the library (job ") == true, "\(result)")
            #expect(lines.last == "added 1 song; the library holds 7 songs by 3 artists on 3 albums", "\(result)")
            // Not a terminal: no progress line drawn over itself.
            #expect(!result.stdout.contains("\r"))

            try FileManager.default.removeItem(atPath: tree + "/Nina Simone/Pastel Blues/01 Sinnerman.mp3")
            let removed = try self.playerctl(daemon.socketPath, ["update", "Nina Simone", "--wait"])
            #expect(removed.status == 0, "\(removed)")
            #expect(removed.stdout.hasSuffix("removed 1 song; the library holds 6 songs by 3 artists on 3 albums\n"))

            let again = try self.playerctl(daemon.socketPath, ["update", "--rescan", "--wait"])
            #expect(
                again.stdout.hasSuffix(
                    "no songs added or removed; the library holds 6 songs by 3 artists on 3 albums\n"))

            // Without --wait: the job line alone, at once.
            let started = try self.playerctl(daemon.socketPath, ["update"])
            #expect(started.status == 0)
            #expect(started.stdout.hasPrefix("updating the library (job ") && started.stdout.hasSuffix(")\n"))
        }
    }

    @Test("search folds case and accents, needs every word, escapes quotes, and prints JSON")
    func search() throws {
        try withLibrary { daemon, _ in
            let socket = daemon.socketPath
            let beyonce = try self.playerctl(socket, ["search", "beyonce"])
            #expect(beyonce.status == 0, "\(beyonce)")
            #expect(
                beyonce.stdout == """
                    Beyoncé — Pray You Catch Me (Lemonade, 0:00)  Beyoncé/Lemonade/01 Pray You Catch Me.mp3
                    Beyoncé — Hold Up (Lemonade, 0:00)  Beyoncé/Lemonade/02 Hold Up.mp3

                    """)
            let words = try self.playerctl(socket, ["search", "NINA", "husband"])
            #expect(words.stdout.split(separator: "\n").count == 1, "\(words)")
            #expect(words.stdout.contains("Nina Simone — Be My Husband (Pastel Blues, 0:00)"))
            #expect(
                try self.playerctl(socket, ["search", "o'jays"]).stdout.contains("The O'Jays — For the Love of Money"))
            #expect(try self.playerctl(socket, ["search", "--title", "sinner"]).stdout.contains("Sinnerman"))
            // "Simone" is the artist's, not the album's.
            #expect(try self.playerctl(socket, ["search", "--album", "simone"]).status == 1)
            #expect(
                try self.playerctl(socket, ["search", "--limit", "2", "pastel"]).stdout.split(separator: "\n").count
                    == 2)

            let json = try self.playerctl(socket, ["search", "--json", "trouble"])
            let songs = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(songs.count == 1)
            #expect(songs.first?["file"] as? String == "Nina Simone/Pastel Blues/03 Trouble in Mind.mp3")
            #expect(songs.first?["artist"] as? String == "Nina Simone")
            #expect(songs.first?["album"] as? String == "Pastel Blues")
            #expect(songs.first?["title"] as? String == "Trouble in Mind")
            #expect(songs.first?["track"] as? String == "2")
            #expect(songs.first?["date"] as? String == "1965")
            #expect(songs.first?["genre"] as? String == "Jazz")
            #expect((songs.first?["duration"] as? Double ?? 0) > 0.2)

            let none = try self.playerctl(socket, ["search", "zzz", "beyonce"])
            #expect(none.status == 1)
            #expect(none.stdout.isEmpty)
            #expect(none.stderr.contains("nothing in the library matches \"zzz beyonce\""), "\(none)")
            #expect(try self.playerctl(socket, ["search"]).status == 2)
        }
    }

    @Test("list artists, albums (grouped, with years), one artist's albums, genres; --json")
    func lists() throws {
        try withLibrary { daemon, _ in
            let socket = daemon.socketPath
            #expect(try self.playerctl(socket, ["list", "artists"]).stdout == "Beyoncé\nNina Simone\nThe O'Jays\n")
            #expect(
                try self.playerctl(socket, ["list", "albums"]).stdout == """
                    Beyoncé
                      Lemonade (2016)
                    Nina Simone
                      Pastel Blues (1965)
                    The O'Jays
                      Ship Ahoy (1973)

                    """)
            #expect(try self.playerctl(socket, ["list", "albums", "The O'Jays"]).stdout == "Ship Ahoy (1973)\n")
            #expect(try self.playerctl(socket, ["list", "genres"]).stdout == "Jazz\nPop\nSoul\n")

            let artists = try self.playerctl(socket, ["list", "artists", "--json"]).stdout
            #expect(
                try JSONSerialization.jsonObject(with: Data(artists.utf8)) as? [String] == [
                    "Beyoncé", "Nina Simone", "The O'Jays",
                ])
            let albums = try self.playerctl(socket, ["list", "albums", "--json"]).stdout
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(albums.utf8)) as? [[String: Any]])
            #expect(objects.count == 3)
            #expect(objects.first?["artist"] as? String == "Beyoncé")
            #expect(objects.first?["album"] as? String == "Lemonade")
            #expect(objects.first?["year"] as? String == "2016")
        }
    }

    @Test("play --search replaces the queue and plays; play --album plays in track order")
    func play() throws {
        try withLibrary { daemon, _ in
            let socket = daemon.socketPath
            // Repeat keeps the 0.3 s songs playing while the test looks.
            #expect(try self.playerctl(socket, ["repeat", "on"]).status == 0)
            let played = try self.playerctl(socket, ["play", "--search", "beyonce", "hold"])
            #expect(played.status == 0, "\(played)")
            #expect(played.stdout == "playing 1 song from the library\n")
            #expect(try self.queue(daemon) == ["Beyoncé/Lemonade/02 Hold Up.mp3"])
            #expect(try MPDConnection(socketPath: socket).status().state == .play)

            let album = try self.playerctl(socket, ["play", "--album", "pastel blues", "--artist", "Nina Simone"])
            #expect(album.status == 0, "\(album)")
            #expect(album.stdout == "playing 3 songs from the library\n")
            #expect(
                try self.queue(daemon) == [
                    "Nina Simone/Pastel Blues/03 Trouble in Mind.mp3", "Nina Simone/Pastel Blues/02 Be My Husband.mp3",
                    "Nina Simone/Pastel Blues/01 Sinnerman.mp3",
                ])
            #expect(try MPDConnection(socketPath: socket).status().state == .play)
        }
    }

    @Test("queue add --album appends in track order; queue add --search appends what it finds")
    func queueAdd() throws {
        try withLibrary { daemon, _ in
            let socket = daemon.socketPath
            #expect(
                try self.playerctl(socket, ["queue", "add", "--search", "o'jays"]).stdout
                    == "added 1 song to the queue\n")
            let added = try self.playerctl(socket, ["queue", "add", "--album", "Pastel Blues"])
            #expect(added.status == 0, "\(added)")
            #expect(added.stdout == "added 3 songs to the queue\n")
            #expect(
                try self.queue(daemon) == [
                    "The O'Jays/Ship Ahoy/01 For the Love.mp3", "Nina Simone/Pastel Blues/03 Trouble in Mind.mp3",
                    "Nina Simone/Pastel Blues/02 Be My Husband.mp3", "Nina Simone/Pastel Blues/01 Sinnerman.mp3",
                ])
            #expect(try MPDConnection(socketPath: socket).status().state == .stop)
        }
    }

    @Test("nothing matches: exit 1, said so, and the queue and the player as they were")
    func noMatch() throws {
        try withLibrary { daemon, _ in
            let socket = daemon.socketPath
            #expect(try self.playerctl(socket, ["queue", "add", "--album", "Lemonade"]).status == 0)
            let before = try self.queue(daemon)
            for arguments in [
                ["play", "--search", "zzz"], ["play", "--album", "Lemonade", "--artist", "Nina Simone"],
                ["queue", "add", "--search", "beyonce", "zzz"], ["queue", "add", "--album", "Nope"],
            ] {
                let result = try self.playerctl(socket, arguments)
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(result.stderr.contains("nothing in the library matches"), "\(arguments): \(result)")
                #expect(try self.queue(daemon) == before, "\(arguments)")
            }
            #expect(try MPDConnection(socketPath: socket).status().state == .stop)
            // Paths and the library do not mix.
            #expect(try self.playerctl(socket, ["play", "x.mp3", "--search", "zzz"]).status == 2)
            #expect(try self.playerctl(socket, ["queue", "add"]).status == 2)
        }
    }

    @Test("a daemon without a library: update and search fail with a clear message")
    func noLibrary() throws {
        try withPlayerd { daemon in
            for arguments in [
                ["update", "--wait"], ["search", "x"], ["list", "artists"], ["play", "--search", "x"],
            ] {
                let result = try self.playerctl(daemon.socketPath, arguments)
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(result.stderr.contains("the server has no music library"), "\(arguments): \(result)")
            }
        }
    }
}
