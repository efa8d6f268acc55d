import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every number a client sends, at its extremes, to every command of playerd that takes one, with a
/// song playing or paused: the real daemon answers with MPD's ACK code (or clamps, and answers OK as
/// MPD does) and keeps running. `seekcur 99999999999` used to stop it: the seconds, multiplied out to
/// nanoseconds, overflowed.
@Suite("Numbers at their extremes")
struct NumericArgumentTests {
    /// The values every number place is given: zero, minus one, 2^31, Int64's bounds, 2^64, times past
    /// Int64's nanoseconds, past the largest Double, not numbers, and a negative fraction.
    static let values = [
        "0", "-1", "2147483648", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "1e11",
        "1e19", "1e300", "nan", "inf", "-0.000001",
    ]

    /// A number place: the request with `X` where the number goes (`ID` for the current song's id),
    /// and the answer to each of `values`, in order: `OK`, or the ACK's code.
    ///
    /// The answers are mpd 0.23.12's to the same requests, on a queue of two songs with the first
    /// playing or paused (the same in both), but where a comment says otherwise:
    /// - (time) playerd refuses with ACK 2 a song time of 1e12 s or more, infinity and NaN (`Float
    ///   expected`); mpd answers OK and goes wherever its 32-bit milliseconds wrap to (`seek 0 1e19`
    ///   lands 11 ms in), or to the song's end. A time past the end within that is the end in both.
    /// - (id) mpd hands out ids from 0 and reuses them; playerd's start at 1 and never repeat, so id 0
    ///   names no song (ACK 50, as mpd answers for an id it does not have).
    /// - (0.24) MPD 0.24's `sticker` additions (`inc`, `find ... window`), which 0.23 refuses.
    static let places: [(request: String, answers: String)] = [
        ("play X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("playid X", "50 OK 2 2 2 2 2 2 2 2 2 2"),  // (id)
        ("pause X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("seek X 1", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("seek 0 X", "OK 2 OK 2 2 2 OK 2 2 2 2 2"),  // (time) mpd: OK 2 OK OK 2 OK OK OK OK OK OK 2
        ("seekid X 1", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("seekid ID X", "OK 2 OK 2 2 2 OK 2 2 2 2 2"),  // (time) mpd: OK 2 OK OK 2 OK OK OK OK OK OK 2
        ("seekcur X", "OK OK OK 2 2 2 OK 2 2 2 2 OK"),  // (time) mpd: OK to each
        ("seekcur +X", "OK 2 OK 2 2 2 OK 2 2 2 2 2"),  // (time) mpd: OK 2 OK OK 2 OK OK OK OK OK OK 2
        ("seekcur -X", "OK 2 OK 2 2 2 OK 2 2 2 2 2"),  // (time) mpd: OK 2 OK OK 2 OK OK OK OK OK OK 2
        ("setvol X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("volume X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("add stereo-44k-cbr.mp3 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("addid stereo-44k-cbr.mp3 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("delete X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("delete X:", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("delete 0:X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("deleteid X", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("move X 0", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("move 0:X 0", "2 2 2 2 2 2 2 2 2 2 2 2"),
        ("move 0 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("moveid X 0", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("moveid ID X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("shuffle X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("shuffle X:", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("shuffle 0:X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("swap X 0", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("swap 0 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("swapid X ID", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("swapid ID X", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("prio X 0", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("prio 0 X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("prio 0 X:", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("prioid X ID", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("prioid 0 X", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("addtagid X artist x", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: 4 for 0, its local song
        ("cleartagid X", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: 4 for 0, its local song
        ("playlistinfo X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("playlistinfo X:", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("playlistinfo 0:X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("playlistid X", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: OK for 0
        ("plchanges X", "OK OK OK OK OK OK 2 2 2 2 2 2"),
        ("plchanges 0 X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("plchangesposid X", "OK OK OK OK OK OK 2 2 2 2 2 2"),
        ("plchangesposid 0 X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("repeat X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("random X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("consume X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("single X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("enableoutput X", "OK 2 50 2 2 2 2 2 2 2 2 2"),
        ("disableoutput X", "OK 2 50 2 2 2 2 2 2 2 2 2"),
        ("toggleoutput X", "OK 2 50 2 2 2 2 2 2 2 2 2"),
        ("outputset X name value", "2 2 50 2 2 2 2 2 2 2 2 2"),
        ("load pl X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("load pl 0: X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("playlistadd pl stereo-44k-cbr.mp3 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("playlistdelete pl X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("playlistmove pl X 0", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("playlistmove pl 0 X", "OK 2 2 2 2 2 2 2 2 2 2 2"),
        ("albumart stereo-44k-cbr.mp3 X", "50 2 50 2 2 2 2 2 2 2 2 2"),
        ("readpicture stereo-44k-cbr.mp3 X", "OK 2 OK 2 2 2 2 2 2 2 2 2"),
        ("binarylimit X", "2 2 2 2 2 2 2 2 2 2 2 2"),
        ("find \"(file == 'x')\" window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("search any x window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("findadd \"(file == 'x')\" window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("searchadd any x window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("searchaddpl pl2 any x window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),
        ("sticker find song \"\" n window X", "OK OK 2 2 2 2 2 2 2 2 2 2"),  // (0.24) mpd 0.23: 2 (bad operator)
        // (0.24) mpd 0.23 has no `inc` (bad request); 0.24 adds as SQLite adds, whatever the text.
        ("sticker inc song stereo-44k-cbr.mp3 n X", "OK OK OK OK OK OK OK OK OK OK OK OK"),
        ("crossfade X", "OK 2 OK 2 2 2 2 2 2 2 2 2"),
        ("mixrampdb X", "OK OK OK OK OK OK OK OK OK OK OK OK"),
        ("mixrampdelay X", "OK OK OK OK OK OK OK OK OK OK OK OK"),
        ("rangeid X 1:2", "50 2 50 2 2 2 2 2 2 2 2 2"),  // (id) mpd: 4 for 0 (its current song)
        ("rangeid ID X:", "4 2 4 4 2 4 4 4 4 4 4 2"),
        ("rangeid ID 0:X", "4 2 4 4 2 4 4 4 4 4 4 2"),
        // playerd's own, in MPD's style: a time in seconds, positive; `sleeptimer` also takes `end` and
        // `off`. Centuries are accepted (the timer never fires); what a song time refuses is refused.
        ("pausefor X", "2 2 OK 2 2 2 OK 2 2 2 2 2"),
        ("sleeptimer X", "2 2 OK 2 2 2 OK 2 2 2 2 2"),
    ]

    /// playerd's commands that take no number, or only words; with the places above, every command.
    static let withoutNumbers: Set = [
        "status", "currentsong", "stats", "replay_gain_status", "replay_gain_mode", "stop", "next", "previous",
        "getvol", "clear", "outputs", "tagtypes", "config", "commands", "notcommands", "urlhandlers", "decoders",
        "ping", "password", "close", "idle", "listplaylists", "listplaylist", "listplaylistinfo", "save",
        "playlistclear", "rm", "rename", "lsinfo", "list", "count", "update", "rescan", "listall", "listallinfo",
        "listfiles", "clearerror", "playnow", "playlist", "playlistfind", "playlistsearch",
        // Channels; mounts and kill; a song's own data.
        "subscribe", "unsubscribe", "channels", "sendmessage", "readmessages",
        "listmounts", "mount", "unmount", "kill",
        "readcomments", "getfingerprint",
        // Partitions: names only.
        "partition", "listpartitions", "newpartition", "delpartition", "moveoutput",
    ]

    @Test("the places cover every command that takes a number, each with an answer for every value")
    func placesCoverEveryCommand() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            let commands = Set(
                try client.command("commands").dropLast().map { String($0.dropFirst("command: ".count)) })
            let withNumbers = Set(Self.places.map { String($0.request.prefix { $0 != " " }) })
            #expect(withNumbers.isDisjoint(with: Self.withoutNumbers))
            #expect(
                commands == withNumbers.union(Self.withoutNumbers),
                "commands in one list and not the other: \(commands.symmetricDifference(withNumbers.union(Self.withoutNumbers)))"
            )
            for place in Self.places {
                #expect(place.answers.split(separator: " ").count == Self.values.count, "\(place.request)")
                #expect(place.request.contains("X"), "\(place.request)")
            }
        }
    }

    @Test("each number place, each extreme value: MPD's answer, and playerd still answers", arguments: [false, true])
    func extremes(paused: Bool) throws {
        var options = RunningPlayerd.Options()
        options.library = true
        var daemon = try RunningPlayerd(options)
        defer { daemon.kill() }
        try Self.waitForLibrary(daemon)
        for place in Self.places {
            let expected = place.answers.split(separator: " ").map(String.init)
            for (value, answer) in zip(Self.values, expected) {
                let id = try Self.reset(daemon, paused: paused)
                let request = place.request.replacingOccurrences(of: "ID", with: id)
                    .replacingOccurrences(of: "X", with: value)
                let name = String(request.prefix { $0 != " " })
                let client = try daemon.connect()
                let got: String
                do {
                    got = try client.command(request).last ?? ""
                    #expect(try client.command("ping") == ["OK"], "\(request)")
                    #expect(try client.command("status").last == "OK", "\(request)")
                } catch {
                    Issue.record("\(request) (\(paused ? "paused" : "playing")): \(error)\n\(daemon.logTail)")
                    // The rest goes on with a new daemon, so that one failure does not hide the others.
                    daemon.kill()
                    daemon = try RunningPlayerd(options)
                    try Self.waitForLibrary(daemon)
                    continue
                }
                if answer == "OK" {
                    #expect(got == "OK", "\(request) (\(paused ? "paused" : "playing"))")
                } else {
                    #expect(
                        got.hasPrefix("ACK [\(answer)@0] {\(name)} "), "\(request) (\(paused ? "paused" : "playing"))")
                }
                #expect(daemon.isRunning, "\(request)")
            }
        }
        try daemon.stop()
    }

    /// Puts the daemon where each request starts: two songs queued, the first playing (or paused), the
    /// output on, every option and timer off, volume 50, the stored playlist `pl` holding both songs and no `pl2`. Returns the first song's id.
    private static func reset(_ daemon: RunningPlayerd, paused: Bool) throws -> String {
        let client = try daemon.connect()
        _ = try client.command("rm pl")
        _ = try client.command("rm pl2")
        var lines = [
            "stop", "clear", "enableoutput 0", "repeat 0", "random 0", "single 0", "consume 0", "sleeptimer off",
            "add stereo-44k-cbr.mp3", "add one-second.mp3", "play 0", "setvol 50",
            "playlistadd pl stereo-44k-cbr.mp3", "playlistadd pl one-second.mp3",
        ]
        if paused {
            lines.append("pause 1")
        }
        for line in lines {
            let answer = try client.command(line)
            guard answer == ["OK"] else { throw HarnessError("\(line): \(answer)") }
        }
        let status = try client.fields("status")
        guard status["state"] == (paused ? "pause" : "play"), let id = status["songid"] else {
            throw HarnessError("not \(paused ? "paused" : "playing") after the reset: \(status)")
        }
        return id
    }

    /// Waits for the first scan of the music directory, so that the library's commands find it.
    private static func waitForLibrary(_ daemon: RunningPlayerd) throws {
        let client = try daemon.connect()
        for _ in 0..<500 {
            if try client.fields("status")["updating_db"] == nil { return }
            usleep(20_000)
        }
        throw HarnessError("the first scan did not end within 10 s")
    }
}
