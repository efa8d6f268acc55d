import PlayerClient
import Testing

/// `key: value` lines as a server prints them, split the way the connection splits them.
private func fields(_ text: String) -> [(key: String, value: String)] {
    text.split(separator: "\n").map { line in
        let parts = line.split(separator: ": ", maxSplits: 1, omittingEmptySubsequences: false)
        return (key: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
    }
}

@Suite("what playerctl asks of the library")
struct LibraryTests {
    @Test(
        "a value in a filter expression: single quotes, with quotes and backslashes escaped",
        arguments: [
            ("nina", "'nina'"), ("don't", "'don\\'t'"), ("a\\b", "'a\\\\b'"), ("say \"hi\"", "'say \"hi\"'"),
            ("\\'", "'\\\\\\''"), ("", "''"), ("Beyoncé", "'Beyoncé'"),
        ])
    func quoting(value: String, quoted: String) {
        #expect(LibraryFilter.quoted(value) == quoted)
    }

    @Test("one word is one clause; several must all match")
    func searchExpressions() {
        #expect(LibrarySearch(words: ["nina"]).expression == "(any contains 'nina')")
        #expect(
            LibrarySearch(words: ["w1", "w2"]).expression == "((any contains 'w1') AND (any contains 'w2'))")
        #expect(
            LibrarySearch(words: ["it's"], artist: "a", album: "b", title: "c").expression
                == "((any contains 'it\\'s') AND (artist contains 'a') AND (album contains 'b') AND (title contains 'c'))"
        )
        #expect(LibrarySearch(words: []).expression == nil)
        #expect(LibrarySearch(words: [], title: "x").expression == "(title contains 'x')")
        #expect(LibrarySearch(words: ["a", "b"], artist: "c").description == "\"a b\", artist \"c\"")
    }

    @Test("an album, with or without its artist")
    func albumExpressions() {
        #expect(AlbumQuery(album: "Lemonade").expression == "(album == 'Lemonade')")
        #expect(
            AlbumQuery(album: "Lemonade", artist: "Beyoncé").expression
                == "((album == 'Lemonade') AND (albumartist == 'Beyoncé'))")
        #expect(AlbumQuery(album: "L", artist: "B").description == "album \"L\" by \"B\"")
    }

    @Test("song blocks: tags, durations, and lsinfo's directories skipped")
    func songBlocks() throws {
        let songs = try Song.list(
            from: fields(
                """
                directory: Early
                Last-Modified: 2024-01-01T00:00:00Z
                file: A/B/01 x.mp3
                Last-Modified: 2024-01-01T00:00:00Z
                Format: 44100:16:2
                Artist: Nina Simone
                Artist: Second Artist
                AlbumArtist: Nina Simone
                Title: Sinnerman
                Album: Pastel Blues
                Track: 10/12
                Disc: 1/2
                Date: 1965-10-01
                Genre: Jazz
                Time: 620
                duration: 620.250
                playlist: mix.m3u
                Last-Modified: 2024-01-01T00:00:00Z
                Title: not a song's
                file: loose.mp3
                Time: 3
                """))
        #expect(songs.count == 2)
        #expect(
            songs[0]
                == Song(
                    file: "A/B/01 x.mp3", title: "Sinnerman", artist: "Nina Simone", albumArtist: "Nina Simone",
                    album: "Pastel Blues", track: "10/12", disc: "1/2", date: "1965-10-01", genre: "Jazz",
                    duration: 620.25))
        #expect(songs[0].trackNumber == 10)
        #expect(songs[0].discNumber == 1)
        #expect(songs[1] == Song(file: "loose.mp3", duration: 3))
        #expect(throws: ClientError.self) { try Song.list(from: fields("Title: x\nfile: y")) }
        #expect(throws: ClientError.self) { try Song.list(from: fields("file: y\nduration: soon")) }
    }

    @Test("an album plays by disc, then by track number (10 after 9), then by path")
    func albumOrder() {
        let songs = [
            Song(file: "x/10.mp3", track: "10"), Song(file: "x/2-1.mp3", track: "1", disc: "2"),
            Song(file: "x/9.mp3", track: "9/12"), Song(file: "x/none.mp3"),
            Song(file: "x/01.mp3", track: "01", disc: "1/2"), Song(file: "x/b.mp3", track: "3"),
            Song(file: "x/a.mp3", track: "3"),
        ]
        #expect(
            Song.albumOrder(songs).map(\.file) == [
                "x/01.mp3", "x/a.mp3", "x/b.mp3", "x/9.mp3", "x/10.mp3", "x/none.mp3", "x/2-1.mp3",
            ])
    }

    @Test("two albums of one name stay apart, in the order they first appear")
    func albumsApart() {
        let songs = [
            Song(file: "b/2.mp3", albumArtist: "B", track: "2"),
            Song(file: "a/1.mp3", albumArtist: "A", track: "1"),
            Song(file: "b/1.mp3", albumArtist: "B", track: "1"),
        ]
        #expect(Song.albumOrder(songs).map(\.file) == ["b/1.mp3", "b/2.mp3", "a/1.mp3"])
    }

    @Test("list album group date group albumartist: grouped albums with their first year")
    func albumGroups() {
        let albums = LibraryAlbum.list(
            from: fields(
                """
                AlbumArtist:
                Date:
                Album: Loose
                AlbumArtist: Beyoncé
                Date: 2016-04-23
                Album: Lemonade
                AlbumArtist: Nina Simone
                Date: 1966
                Album: Pastel Blues
                Date: 1965
                Album: Pastel Blues
                Album:
                Date: unknown
                Album: Wild Is the Wind
                """))
        #expect(
            albums == [
                LibraryAlbum(artist: nil, album: "Loose", year: nil),
                LibraryAlbum(artist: "Beyoncé", album: "Lemonade", year: "2016"),
                LibraryAlbum(artist: "Nina Simone", album: "Pastel Blues", year: "1965"),
                LibraryAlbum(artist: "Nina Simone", album: "Wild Is the Wind", year: nil),
            ])
        #expect(albums[1].text == "Lemonade (2016)")
        #expect(albums[3].text == "Wild Is the Wind")
    }

    @Test("stats and the summary of an update")
    func summary() throws {
        let before = try LibraryStats(
            fields: fields("uptime: 4\nplaytime: 0\nartists: 199\nalbums: 1999\nsongs: 19995\ndb_playtime: 9"))
        #expect(before == LibraryStats(songs: 19995, artists: 199, albums: 1999))
        let after = LibraryStats(songs: 20000, artists: 200, albums: 2000)
        #expect(
            LibraryStats.summary(before: before, after: after)
                == "added 5 songs; the library holds 20,000 songs by 200 artists on 2,000 albums")
        #expect(
            LibraryStats.summary(before: after, after: LibraryStats(songs: 19999, artists: 1, albums: 1))
                == "removed 1 song; the library holds 19,999 songs by 1 artist on 1 album")
        #expect(
            LibraryStats.summary(before: after, after: after).hasPrefix("no songs added or removed; the library"))
        #expect(throws: ClientError.self) { try LibraryStats(fields: fields("songs: many")) }
        #expect(groupedDigits(0) == "0")
        #expect(groupedDigits(999) == "999")
        #expect(groupedDigits(1000) == "1,000")
        #expect(groupedDigits(1_234_567) == "1,234,567")
    }

    @Test(
        "an update job is over when no job runs, or a later one does",
        arguments: [
            (nil, true), (3, false), (2, false), (4, true),
        ] as [(Int?, Bool)])
    func jobOver(running: Int?, over: Bool) {
        #expect(updateFinished(job: 3, updatingDB: running) == over)
    }

    @Test("a year is the four digits a date starts with")
    func years() {
        #expect(yearOf("1965") == "1965")
        #expect(yearOf("2016-04-23") == "2016")
        #expect(yearOf("65") == nil)
        #expect(yearOf("circa 1965") == nil)
        #expect(yearOf(nil) == nil)
    }
}
