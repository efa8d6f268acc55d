import PlayerClient
import Testing

/// `key: value` lines as a server prints them, split the way the connection splits them.
private func fields(_ text: String) -> [(key: String, value: String)] {
    var fields: [(key: String, value: String)] = []
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: ": ", maxSplits: 1, omittingEmptySubsequences: false)
        fields.append((key: String(parts[0]), value: String(parts[1])))
    }
    return fields
}

@Suite("decoding answers")
struct DecodingTests {
    @Test("a playing status from mpd 0.23")
    func playingStatus() throws {
        let status = try Status(
            fields: fields(
                """
                volume: 70
                repeat: 1
                random: 0
                single: oneshot
                consume: 1
                partition: default
                playlist: 6
                playlistlength: 5
                mixrampdb: 0
                state: play
                song: 1
                songid: 2
                time: 42:190
                elapsed: 42.125
                bitrate: 192
                duration: 190.041
                audio: 44100:16:2
                nextsong: 2
                nextsongid: 3
                error: Failed to decode x.mp3
                """))
        #expect(
            status
                == Status(
                    state: .play, song: 1, songID: 2, nextSong: 2, nextSongID: 3, playlistLength: 5, volume: 70,
                    repeat: true, random: false, single: .oneshot, consume: true, elapsed: 42.125, duration: 190.041,
                    bitrate: 192, audio: "44100:16:2", error: "Failed to decode x.mp3"))
    }

    @Test("a stopped status leaves out what it does not have; volume -1 means no mixer")
    func stoppedStatus() throws {
        let status = try Status(
            fields: fields("volume: -1\nrepeat: 0\nrandom: 1\nsingle: 0\nconsume: 0\nplaylistlength: 0\nstate: stop"))
        #expect(status == Status(state: .stop, volume: nil, random: true))
    }

    @Test("playerd's timers: resumein and sleeptimer, in seconds or at the end of the song")
    func timers() throws {
        let paused = try Status(fields: fields("state: pause\nresumein: 4.250\nsleeptimer: 1199.5"))
        #expect(paused.resumesIn == 4.25)
        #expect(paused.sleepTimer == .after(1199.5))
        #expect(try Status(fields: fields("state: play\nsleeptimer: end")).sleepTimer == .endOfSong)
        #expect(try Status(fields: fields("state: play")).sleepTimer == nil)
        #expect(throws: ClientError.malformed("sleeptimer: soon")) {
            try Status(fields: fields("state: play\nsleeptimer: soon"))
        }
    }

    @Test("an old server's time: field stands in for elapsed and duration")
    func timeField() throws {
        let status = try Status(fields: fields("state: pause\ntime: 12:180"))
        #expect(status.elapsed == 12)
        #expect(status.duration == 180)
        #expect(status.state == .pause)
    }

    @Test(
        "a status without a state, or with a value it cannot read, is malformed",
        arguments: [
            ("volume: 5", "status without a state"), ("state: playing", "state: playing"),
            ("state: play\nsong: x", "song: x"), ("state: play\nrepeat: 2", "repeat: 2"),
            ("state: play\nsingle: twice", "single: twice"), ("state: play\nelapsed: soon", "elapsed: soon"),
            ("state: play\ntime: 12", "time: 12"),
        ])
    func malformedStatus(text: String, reason: String) {
        #expect(throws: ClientError.malformed(reason)) {
            try Status(fields: fields(text))
        }
    }

    @Test("playlistinfo: each file: starts a song; the first of repeated tags wins; duration beats Time")
    func songList() throws {
        let songs = try Song.list(
            from: fields(
                """
                file: tagged-id3v23.mp3
                Last-Modified: 2026-11-21T22:43:59Z
                Format: 44100:16:2
                Artist: Björk & Sigur Rós
                Artist: Second Artist
                Title: Café Noir — Ünïcødé ☃
                Album: 日本語のアルバム
                Track: 3/12
                Date: 2019
                Genre: Électronique
                Time: 2
                duration: 2.012
                Pos: 0
                Id: 4
                file: /music/untagged.mp3
                Time: 181
                Pos: 1
                Id: 7
                file: http://radio.example/stream
                Pos: 2
                Id: 8
                """))
        #expect(
            songs == [
                Song(
                    file: "tagged-id3v23.mp3", title: "Café Noir — Ünïcødé ☃", artist: "Björk & Sigur Rós",
                    album: "日本語のアルバム", track: "3/12", date: "2019", genre: "Électronique", duration: 2.012,
                    position: 0, id: 4),
                Song(file: "/music/untagged.mp3", duration: 181, position: 1, id: 7),
                Song(file: "http://radio.example/stream", position: 2, id: 8),
            ])
    }

    @Test("no current song is an empty answer; a tag before any file: is malformed")
    func emptyAndMalformedSongs() throws {
        #expect(try Song.list(from: []) == [])
        #expect(throws: ClientError.malformed("Title: x before any file:")) {
            try Song.list(from: fields("Title: x\nfile: a.mp3"))
        }
        #expect(throws: ClientError.malformed("Pos: first")) {
            try Song.list(from: fields("file: a.mp3\nPos: first"))
        }
    }
}

@Suite("ACK lines")
struct AckLineTests {
    @Test(
        "reads code, list index, command and message",
        arguments: [
            (
                "ACK [2@0] {play} Bad song index",
                AckLine(code: 2, listIndex: 0, command: "play", message: "Bad song index")
            ),
            (
                "ACK [5@0] {} unknown command \"pausefor\"",
                AckLine(code: 5, listIndex: 0, command: "", message: "unknown command \"pausefor\"")
            ),
            (
                "ACK [50@3] {add} No such song: {weird} [name]",
                AckLine(code: 50, listIndex: 3, command: "add", message: "No such song: {weird} [name]")
            ),
            ("ACK [55@0] {seekcur}", AckLine(code: 55, listIndex: 0, command: "seekcur", message: "")),
        ])
    func parses(line: String, expected: AckLine) {
        #expect(AckLine(parsing: line) == expected)
    }

    @Test(
        "refuses lines that are not ACKs",
        arguments: [
            "OK", "ACK", "ACK [x@0] {a} b", "ACK [2@] {a} b", "ACK [2@0] a b", "ACK [2@0] {a b", "ack [2@0] {a} b",
        ]
    )
    func refuses(line: String) {
        #expect(AckLine(parsing: line) == nil)
    }

    @Test("the error a refusal throws describes itself with the server's message")
    func error() {
        let error = AckLine(code: 55, listIndex: 0, command: "seekcur", message: "Not playing").error
        #expect(error == .refused(code: 55, command: "seekcur", message: "Not playing"))
        #expect(error.description == "Not playing")
    }
}
