import ControlProtocol
import MusicTags
import Testing

/// Shorthands for expected trees.
private func tag(
    _ name: TagName, _ filterOperator: FilterOperator, _ value: String, folding: Bool = false
) -> SongFilter {
    .compare(.tag(name), filterOperator, value, ignoringCase: folding)
}

private func expression(_ text: String, folding: Bool = false) throws(Ack) -> SongFilter {
    try SongFilter.parse(expression: text, ignoringCase: folding)
}

private func query(
    _ arguments: [String], folding: Bool = false, allowing: LibraryQuery.Clauses = [.sort, .window]
) throws(Ack) -> LibraryQuery {
    try LibraryQuery.parse(arguments[...], ignoringCase: folding, allowing: allowing)
}

@Suite("Song filters: MPD 0.23's grammar, refusals as mpd 0.23.12 words them, and the evaluator")
struct SongFilterTests {
    // MARK: Expressions

    @Test(
        "expressions",
        arguments: [
            ("(Artist == 'Foo')", tag(.artist, .equals, "Foo")),
            ("(artist == \"Foo\")", tag(.artist, .equals, "Foo")),
            ("(ALBUMARTIST != 'x')", tag(.albumArtist, .notEquals, "x")),
            (#"(Artist == "it\'s")"#, tag(.artist, .equals, "it's")),
            (#"(Artist == 'a\\b\"c')"#, tag(.artist, .equals, #"a\b"c"#)),
            ("(Artist == '')", tag(.artist, .equals, "")),
            ("(Genre contains 'rock')", tag(.genre, .contains, "rock")),
            ("(Genre CONTAINS   'rock')", tag(.genre, .contains, "rock")),
            ("(Date starts_with '19')", tag(.date, .startsWith, "19")),
            ("(Title =~ '^Love')", tag(.title, .matchesRegex, "^Love")),
            ("(Title !~ 'x$')", tag(.title, .notMatchesRegex, "x$")),
            ("(Artist=='A')", tag(.artist, .equals, "A")),
            ("(  Artist   ==   'A'  )  ", tag(.artist, .equals, "A")),
            ("(Artist == 'Ünïcödé ✓')", tag(.artist, .equals, "Ünïcödé ✓")),
            ("(MUSICBRAINZ_TRACKID == 'id')", tag(.musicBrainzTrackID, .equals, "id")),
            ("(!(Genre contains 'rock'))", .not(tag(.genre, .contains, "rock"))),
            ("(! (Genre == 'rock') )", .not(tag(.genre, .equals, "rock"))),
            ("((Artist == 'A'))", tag(.artist, .equals, "A")),
            (
                "((Artist == 'A') AND (Album != 'B') AND (Date starts_with '19'))",
                .and([tag(.artist, .equals, "A"), tag(.album, .notEquals, "B"), tag(.date, .startsWith, "19")])
            ),
            (
                "(((Artist == 'A') AND (Album == 'B')) AND (Date == 'C'))",
                .and([tag(.artist, .equals, "A"), tag(.album, .equals, "B"), tag(.date, .equals, "C")])
            ),
            ("(file == 'a/b.mp3')", .compare(.file, .equals, "a/b.mp3", ignoringCase: false)),
            ("(FileName contains 'b')", .compare(.file, .contains, "b", ignoringCase: false)),
            ("(any contains 'x')", .compare(.anyTag, .contains, "x", ignoringCase: false)),
            ("(ANY == 'x')", .compare(.anyTag, .equals, "x", ignoringCase: false)),
            ("(base 'Some/Dir')", .base("Some/Dir")),
            ("(base '')", .base("")),
            ("(base '../x')", .base("../x")),
            ("(modified-since '1700000000')", .modifiedSince(1_700_000_000)),
            ("(modified-since '2023-11-14T22:13:20Z')", .modifiedSince(1_700_000_000)),
            ("(added-since '1700000000')", .addedSince(1_700_000_000)),
            ("(added-since '2023-11-14')", .addedSince(1_699_920_000)),
            (
                "(AudioFormat == '44100:16:2')",
                .audioFormat(AudioFormatPattern(sampleRate: 44100, bits: 16, channels: 2), exact: true)
            ),
            (
                "(audioformat =~ '44100:*:2')",
                .audioFormat(AudioFormatPattern(sampleRate: 44100, bits: nil, channels: 2), exact: false)
            ),
            (
                "(AudioFormat =~ '*:*:*')",
                .audioFormat(AudioFormatPattern(sampleRate: nil, bits: nil, channels: nil), exact: false)
            ),
            (
                "(AudioFormat == '48000:f:1')",
                .audioFormat(
                    AudioFormatPattern(sampleRate: 48000, bits: AudioFormatPattern.floatBits, channels: 1), exact: true)
            ),
            (
                "(AudioFormat == 'dsd64:2')",
                .audioFormat(
                    AudioFormatPattern(sampleRate: 352_800, bits: AudioFormatPattern.dsdBits, channels: 2),
                    exact: true)
            ),
            (
                "(AudioFormat == '44100:24_3:2')",
                .audioFormat(AudioFormatPattern(sampleRate: 44100, bits: 24, channels: 2), exact: true)
            ),
        ])
    func expressions(_ text: String, _ expected: SongFilter) throws {
        #expect(try expression(text) == expected)
    }

    @Test("search folds case in every comparison of an expression")
    func expressionFolding() throws {
        #expect(
            try expression("((Artist == 'A') AND (!(any contains 'b')))", folding: true)
                == .and([
                    tag(.artist, .equals, "A", folding: true),
                    .not(.compare(.anyTag, .contains, "b", ignoringCase: true)),
                ]))
    }

    @Test(
        "refused expressions, with mpd 0.23.12's messages",
        arguments: [
            ("(bogus == 'x')", "Unknown filter type: bogus"),
            ("(Base 'A')", "Unknown filter type: Base"),
            ("(Modified-since '0')", "Unknown filter type: Modified-since"),
            ("(Artist == 'x'", "')' expected"),
            ("(Artist == 'x)", "Closing quote not found"),
            (#"(Artist == 'x\"#, "Closing quote not found"),
            ("(Artist === 'x')", "Quoted string expected"),
            ("(Artist ==", "Quoted string expected"),
            ("(Artist foo 'x')", "'==' or '!=' expected"),
            ("(Artist contains'A')", "'==' or '!=' expected"),
            ("(Artist", "'==' or '!=' expected"),
            ("(Artist == 'A'  'x')", "')' expected"),
            ("(Artist == 'A') x", "Unparsed garbage after expression"),
            ("(Artist == 'A')  )", "Unparsed garbage after expression"),
            ("((Artist == 'A') OR (Album == 'L'))", "'AND' expected"),
            ("((Artist == 'A') and (Album == 'L'))", "'AND' expected"),
            ("((Artist == 'A') AND)", "Word expected"),
            ("((Artist == 'A')", "Word expected"),
            ("(", "Word expected"),
            ("()", "Word expected"),
            ("(!Artist == 'A')", "'(' expected"),
            ("(!(Artist == 'A')", "')' expected"),
            ("((Artist == 'A') AND Album == 'L')", "'(' expected"),
            ("Artist == 'A'", "'(' expected"),
            ("", "'(' expected"),
            ("(base 'A' x)", "')' expected"),
            ("(AudioFormat != '44100:16:2')", "'==' or '=~' expected"),
            ("(AudioFormat == 'x')", "Failed to parse the sample rate"),
            ("(AudioFormat == '44100')", "Sample format missing"),
            ("(AudioFormat == '44100:')", "Failed to parse the sample format"),
            ("(AudioFormat == '44100:16')", "Channel count missing"),
            ("(AudioFormat == '44100:16:')", "Failed to parse the channel count"),
            ("(AudioFormat == '44100:17:2')", "Invalid sample format: 17"),
            ("(AudioFormat == '44100:16:9')", "Invalid channel count: 9"),
            ("(AudioFormat == '44100:16:2x')", "Extra data after channel count: x"),
            ("(AudioFormat == '0:16:2')", "Invalid sample rate: 0"),
            ("(AudioFormat == '16000:*:2')", "Failed to parse the sample format"),
            ("(AudioFormat =~ '-1:16:2')", "Invalid sample rate: 18446744073709551615"),
            ("(AudioFormat =~ '1073741824:16:2')", "Invalid sample rate: 1073741824"),
            ("(AudioFormat == 'dsd63:2')", "Failed to parse the sample rate"),
            ("(AudioFormat == 'dsd64:*')", "Failed to parse the channel count"),
            ("(AudioFormat =~ '*:*:*' x)", "')' expected"),
            ("(modified-since 'x')", "Failed to parse date"),
            ("(modified-since '')", "Failed to parse date"),
            ("(modified-since '5x')", "Failed to parse date"),
            ("(modified-since '2023-13-01')", "Failed to parse date"),
            ("(modified-since '2023-11-32')", "Failed to parse date"),
            ("(modified-since '12345-11-14')", "Failed to parse date"),
            ("(modified-since '2023-11-14T')", "Failed to parse time of day"),
            ("(modified-since '2023-11-14Tx')", "Failed to parse time of day"),
            ("(modified-since '2023-11-14T25')", "Failed to parse time of day"),
            ("(modified-since '2023-11-14T22:')", "Failed to parse time of day"),
            ("(modified-since '2023-11-14T22:13:')", "Failed to parse time of day"),
            ("(modified-since '2023-11-14x')", "Garbage at end of time stamp"),
            ("(modified-since '2023-11-14T22:60')", "Garbage at end of time stamp"),
            ("(modified-since '2023-11-14T22:13:20.5Z')", "Garbage at end of time stamp"),
            ("(modified-since '2023-11-14T22:13:20X')", "Garbage at end of time stamp"),
            ("(modified-since '2023-11-14T22:13:20+1')", "Failed to parse time zone offset"),
            ("(modified-since '2023-11-14T22:13:20+123')", "Failed to parse time zone offset"),
            ("(modified-since '2023-11-14T22:13:20+01:')", "Failed to parse time zone offset"),
            ("(modified-since '2023-11-14T22:13:20+01:5')", "Failed to parse time zone offset"),
            ("(modified-since '2023-11-14T22:13:20+2500')", "Time offset hours out of range"),
            ("(modified-since '2023-11-14T22:13:20+1400')", "Time offset hours out of range"),
            ("(modified-since '2023-11-14T22:13:20+0160')", "Time offset minutes out of range"),
        ])
    func refusedExpressions(_ text: String, _ message: String) {
        #expect(refusal { () throws(Ack) in try expression(text) } == message)
    }

    @Test("a regular expression that does not compile is refused when parsed", arguments: ["A(", "[", "a{2,1}"])
    func badRegex(_ pattern: String) {
        let message = refusal { () throws(Ack) in try expression("(Title =~ '\(pattern)')") }
        #expect(message?.hasPrefix("Error in regex") == true)
        let negated = refusal { () throws(Ack) in try expression("(Title !~ '\(pattern)')") }
        #expect(negated?.hasPrefix("Error in regex") == true)
    }

    @Test(
        "time stamps: Unix seconds as strtoull reads them (digits only, even 20231114), else ISO 8601 as MPD reads it",
        arguments: [
            ("0", 0), (" 5", 5), ("+5", 5), ("-1", -1), ("99999999999999999999999", -1),
            ("2023-11-14", 1_699_920_000), ("20231114", 20_231_114), ("20231114T00Z", 1_699_920_000),
            ("2023-1-1", 1_672_531_200),
            ("2023-11-14T22", 1_699_999_200), ("2023-11-14T22:13", 1_699_999_980),
            ("2023-11-14T2213", 1_699_999_980), ("2023-11-14T221320Z", 1_700_000_000),
            ("2023-11-14T22:13:20+01:00", 1_699_996_400), ("2023-11-14T22:13:20+0100", 1_699_996_400),
            ("2023-11-14T22:13:20-12", 1_700_043_200), ("2023-11-14T22:13:20+1300", 1_699_953_200),
            ("2023-11-14T22:13:61", 1_700_000_041), ("1969-12-31T23:59:59Z", -1), ("2024-02-29", 1_709_164_800),
        ])
    func timestamps(_ text: String, _ seconds: Int64) throws {
        #expect(try expression("(modified-since '\(text)')") == .modifiedSince(seconds))
    }

    @Test("10,000 nested parentheses are refused, not recursed into")
    func deepNesting() {
        let deep = String(repeating: "(", count: 10_000) + "Artist == 'A'" + String(repeating: ")", count: 10_000)
        #expect(
            refusal { () throws(Ack) in try expression(deep) }
                == "Filter expression nested too deeply (more than 64 levels)")
        let negations =
            String(repeating: "(!", count: 10_000) + "(Artist == 'A')" + String(repeating: ")", count: 10_000)
        #expect(refusal { () throws(Ack) in try expression(negations) }?.hasPrefix("Filter expression nested") == true)
        let unclosed = String(repeating: "(", count: 10_000)
        #expect(refusal { () throws(Ack) in try expression(unclosed) }?.hasPrefix("Filter expression nested") == true)
    }

    @Test("64 levels are allowed")
    func nestingLimit() throws {
        var text = "(Artist == 'A')"
        for _ in 1..<SongFilter.maximumNestingDepth {
            text = "(!\(text))"
        }
        var expected = tag(.artist, .equals, "A")
        for _ in 1..<SongFilter.maximumNestingDepth {
            expected = .not(expected)
        }
        #expect(try expression(text) == expected)
        #expect(refusal { () throws(Ack) in try expression("(!\(text))") } != nil)
    }

    @Test("a quoted value is limited to 4095 bytes as in MPD; a legacy value of 1 MB parses")
    func longValues() throws {
        let limit = String(repeating: "é", count: 2047) + "x"
        #expect(try expression("(Title == '\(limit)')") == tag(.title, .equals, limit))
        let over = String(repeating: "x", count: 4096)
        #expect(refusal { () throws(Ack) in try expression("(Title == '\(over)')") } == "Quoted value is too long")
        let megabyte = String(repeating: "x", count: 1 << 20)
        #expect(refusal { () throws(Ack) in try expression("(Title == '\(megabyte)')") } == "Quoted value is too long")
        #expect(try query(["Title", megabyte]).filter == tag(.title, .equals, megabyte))
    }

    // MARK: Legacy pairs and clauses

    @Test(
        "legacy pairs: find matches whole values, search folded substrings",
        arguments: [
            (["artist", "A"], false, tag(.artist, .equals, "A")),
            (["Artist", "A"], true, tag(.artist, .contains, "A", folding: true)),
            (["artist", ""], false, tag(.artist, .equals, "")),
            (["any", "x"], false, .compare(.anyTag, .equals, "x", ignoringCase: false)),
            (["file", "a.mp3"], true, .compare(.file, .contains, "a.mp3", ignoringCase: true)),
            (["filename", "a.mp3"], false, .compare(.file, .equals, "a.mp3", ignoringCase: false)),
            (["base", "A/B"], false, .base("A/B")),
            (["modified-since", "1700000000"], false, .modifiedSince(1_700_000_000)),
            (["added-since", "2023-11-14T22:13:20Z"], true, .addedSince(1_700_000_000)),
            (
                ["AudioFormat", "44100:16:2"], false,
                .audioFormat(AudioFormatPattern(sampleRate: 44100, bits: 16, channels: 2), exact: true)
            ),
            (
                ["artist", "A", "album", "B", "date", "2001"], false,
                .and([tag(.artist, .equals, "A"), tag(.album, .equals, "B"), tag(.date, .equals, "2001")])
            ),
            (
                ["(Artist == 'A')", "album", "L"], false,
                .and([tag(.artist, .equals, "A"), tag(.album, .equals, "L")])
            ),
            (
                ["album", "L", "(Artist == 'A')", "((Date == '1') AND (Genre == 'g'))"], false,
                .and([
                    tag(.album, .equals, "L"), tag(.artist, .equals, "A"), tag(.date, .equals, "1"),
                    tag(.genre, .equals, "g"),
                ])
            ),
            (["artist", "sort"], false, tag(.artist, .equals, "sort")),
            (["artist", "(x"], false, tag(.artist, .equals, "(x")),
        ] as [([String], Bool, SongFilter)])
    func legacyPairs(_ arguments: [String], _ folding: Bool, _ expected: SongFilter) throws {
        let parsed = try query(arguments, folding: folding)
        #expect(parsed.filter == expected)
        #expect(parsed.sort == nil && parsed.window == nil && parsed.groups.isEmpty)
    }

    @Test(
        "refused filters and clauses, with mpd 0.23.12's messages",
        arguments: [
            (["bogus", "x"], "Unknown filter type"),
            (["", "x"], "Unknown filter type"),
            (["artist"], "Incorrect number of filter arguments"),
            (["artist", "A", "album"], "Incorrect number of filter arguments"),
            ([], "Incorrect number of filter arguments"),
            (["window", "0:1"], "Incorrect number of filter arguments"),
            (["sort", "artist"], "Incorrect number of filter arguments"),
            (["base", "../A"], "Bad URI"), (["base", "/A"], "Bad URI"), (["base", "A/"], "Bad URI"),
            (["base", ""], "Bad URI"), (["base", "A//B"], "Bad URI"), (["base", "A/./B"], "Bad URI"),
            (["modified-since", "x"], "Failed to parse date"),
            (["artist", "A", "window", "x:y"], "Integer or range expected: x:y"),
            (["artist", "A", "window", "5:2"], "Malformed range: 5:2"),
            (["artist", "A", "window", "-1:2"], "Number is negative: -1:2"),
            (["artist", "A", "window", ":2"], "Integer or range expected: :2"),
            (["artist", "A", "window", "1:2:3"], "Integer or range expected: 1:2:3"),
            (["artist", "A", "window", ""], "Integer or range expected: "),
            (["artist", "A", "window", "99999999999:"], "Number too large: 99999999999:"),
            (["artist", "A", "sort", "bogus"], "Unknown sort tag"),
            (["artist", "A", "sort", "-"], "Unknown sort tag"),
            (["artist", "A", "sort", "title", "sort", "artist"], "Unknown filter type"),
            (["artist", "A", "group", "artist"], "Unknown filter type"),
            (["(Artist == 'A')", "x"], "Incorrect number of filter arguments"),
        ])
    func refusedQueries(_ arguments: [String], _ message: String) {
        #expect(refusal { () throws(Ack) in try query(arguments) } == message)
    }

    @Test("sort, window and group, in any order")
    func clauses() throws {
        let sorted = try query(["artist", "A", "sort", "-Last-Modified", "window", "1:"])
        #expect(sorted.filter == tag(.artist, .equals, "A"))
        #expect(sorted.sort == SortOrder(key: .lastModified, descending: true))
        #expect(sorted.window?.start == 1 && sorted.window?.end == nil)

        let reversed = try query(["(Artist == 'A')", "window", "2:5", "sort", "albumartist"])
        #expect(reversed.sort == SortOrder(key: .tag(.albumArtist), descending: false))
        #expect(reversed.window?.start == 2 && reversed.window?.end == 5)

        #expect(try query(["artist", "A", "sort", "added"]).sort == SortOrder(key: .added, descending: false))
        let one = try query(["artist", "A", "window", "3"])
        #expect(one.window?.start == 3 && one.window?.end == 4)
        #expect(try query(["artist", "A", "window", "-1"]).window == nil)

        let grouped = try query(["artist", "A", "group", "album", "group", "Date"], allowing: .group)
        #expect(grouped.groups == [.album, .date])
        #expect(grouped.filter == tag(.artist, .equals, "A"))
        let bare = try query(["group", "artist"], allowing: .group)
        #expect(bare.filter == nil && bare.groups == [.artist])
        #expect(
            refusal { () throws(Ack) in try query(["group", "bogus"], allowing: .group) } == "Unknown tag type: bogus")
        // A clause the command does not take is read as a filter, and refused there as MPD refuses it.
        #expect(
            refusal { () throws(Ack) in try query(["artist", "A", "window", "0:1"], allowing: .group) }
                == "Unknown filter type")
    }

    // MARK: list

    @Test(
        "list forms",
        arguments: [
            (["album"], ListRequest(subject: .tag(.album), query: LibraryQuery())),
            (
                ["Album", "A"],
                ListRequest(subject: .tag(.album), query: LibraryQuery(filter: tag(.artist, .equals, "A")))
            ),
            (["file"], ListRequest(subject: .file, query: LibraryQuery())),
            (
                ["filename", "artist", "A"],
                ListRequest(subject: .file, query: LibraryQuery(filter: tag(.artist, .equals, "A")))
            ),
            (
                ["album", "(Artist == 'A')"],
                ListRequest(subject: .tag(.album), query: LibraryQuery(filter: tag(.artist, .equals, "A")))
            ),
            (
                ["album", "group", "albumartist", "group", "date"],
                ListRequest(subject: .tag(.album), query: LibraryQuery(groups: [.albumArtist, .date]))
            ),
            (
                ["genre", "artist", "A", "group", "date"],
                ListRequest(
                    subject: .tag(.genre), query: LibraryQuery(filter: tag(.artist, .equals, "A"), groups: [.date]))
            ),
        ])
    func listForms(_ arguments: [String], _ expected: ListRequest) throws {
        #expect(try ListRequest.parse(arguments) == expected)
    }

    @Test(
        "refused list forms, with mpd 0.23.12's messages",
        arguments: [
            ([], "too few arguments for \"list\""),
            (["bogus"], "Unknown tag type: bogus"),
            (["any"], "Unknown tag type: any"),
            (["base"], "Unknown tag type: base"),
            (["artist", "A"], "should be \"Album\" for 3 arguments"),
            (["artist", "A", "B"], "Unknown filter type"),
            (["album", "A", "group", "artist"], "Incorrect number of filter arguments"),
            (["album", "group", "album"], "Conflicting group"),
            (["album", "group", "bogus"], "Unknown tag type: bogus"),
            (["album", "window", "0:1"], "Unknown filter type"),
            (["album", "sort", "artist"], "Unknown filter type"),
        ])
    func refusedListForms(_ arguments: [String], _ message: String) {
        #expect(refusal { () throws(Ack) in try ListRequest.parse(arguments) } == message)
    }

    // MARK: The evaluator

    @Test(
        "the evaluator, against what mpd 0.23.12 finds",
        arguments: [
            ("(Artist == 'A')", true),
            ("(Artist == 'a')", false),
            ("(Artist != 'A')", false),
            ("(Artist != 'B')", true),
            ("(Artist contains 'A')", true),
            ("(Title starts_with 'Love')", true),
            ("(Title starts_with 'Song')", false),
            // Multi-valued: `==` when any value equals, `!=` only when none does.
            ("(Genre == 'Pop')", true),
            ("(Genre == 'Rock')", true),
            ("(Genre != 'Rock')", false),
            ("(Genre != 'Jazz')", true),
            ("(Genre !~ '^R')", false),
            ("(Genre !~ '^J')", true),
            // Absent tags: an empty value is "absent"; other comparisons fail, negated ones pass.
            ("(Comment == '')", true),
            ("(Comment != '')", false),
            ("(Comment contains '')", true),
            ("(Comment =~ '.*')", false),
            ("(Comment !~ '.*')", true),
            ("(Comment != 'x')", true),
            ("(Artist == '')", false),
            // Fallbacks: AlbumArtist to Artist, the sort tags to their base tags.
            ("(AlbumArtist == 'A')", true),
            ("(AlbumArtist == '')", false),
            ("(ArtistSort == 'A')", true),
            ("(AlbumSort == 'L')", true),
            ("(AlbumArtistSort == 'A')", true),
            ("(ComposerSort == 'C')", true),
            // any: any value of any tag, never the path.
            ("(any == 'Pop')", true),
            ("(any contains 'one')", false),
            ("(any == '')", false),
            ("(any != 'zzz')", true),
            ("(file == 'A/one.mp3')", true),
            ("(file contains 'one')", true),
            ("(file != 'A/one.mp3')", false),
            ("(Title =~ '^Love')", true),
            ("(Title =~ '^love')", false),
            ("(Title !~ 'g$')", false),
            ("(base 'A')", true),
            ("(base 'A/')", true),
            ("(base 'A/one.mp3')", true),
            ("(base '')", true),
            ("(base 'A/o')", false),
            ("(base 'B')", false),
            ("(modified-since '1700000000')", true),
            ("(modified-since '1700000001')", false),
            ("(added-since '1800000000')", true),
            ("(added-since '1800000001')", false),
            ("(AudioFormat == '44100:16:2')", true),
            ("(AudioFormat == '44100:24:2')", false),
            ("(AudioFormat =~ '44100:*:2')", true),
            ("(AudioFormat =~ '*:*:1')", false),
            ("(AudioFormat =~ '*:*:*')", true),
            ("(!(Artist == 'A'))", false),
            ("((Artist == 'A') AND (Date == '2001'))", true),
            ("((Artist == 'A') AND (Date == '2002'))", false),
        ])
    func evaluator(_ text: String, _ expected: Bool) throws {
        #expect(try expression(text).matches(TestSong.one, fold: TestSong.fold) == expected)
    }

    @Test(
        "folded comparisons (search)",
        arguments: [
            ("(Artist == 'a')", true), ("(Title contains 'SONG')", true), ("(Title starts_with 'lOVE')", true),
            ("(Title =~ '^love')", true), ("(Genre != 'rock')", false), ("(file contains 'ONE')", true),
        ])
    func folding(_ text: String, _ expected: Bool) throws {
        #expect(try expression(text, folding: true).matches(TestSong.one, fold: TestSong.fold) == expected)
    }

    @Test("a song without an audio format matches no AudioFormat filter")
    func unknownFormat() throws {
        var song = TestSong.one
        song.audioFormat = nil
        #expect(try !expression("(AudioFormat =~ '*:*:*')").matches(song, fold: TestSong.fold))
    }

    @Test("legacy pairs evaluate as find and search do")
    func legacyEvaluation() throws {
        let find = try query(["artist", "A", "title", "Love Song"]).filter!
        #expect(find.matches(TestSong.one, fold: TestSong.fold))
        #expect(try !query(["title", "love"]).filter!.matches(TestSong.one, fold: TestSong.fold))
        #expect(try query(["title", "love"], folding: true).filter!.matches(TestSong.one, fold: TestSong.fold))
        #expect(try query(["comment", ""]).filter!.matches(TestSong.one, fold: TestSong.fold))
    }

    @Test("audio formats read back in MPD's notation")
    func audioFormatNotation() throws {
        for text in ["44100:16:2", "48000:f:1", "*:*:*", "44100:dsd:2", "96000:24:6"] {
            #expect(try AudioFormatPattern(parsing: text, allowingMasks: true).mpdNotation == text)
        }
    }
}

/// One song with a two-valued Genre, no AlbumArtist, no Comment.
private struct TestSong: FilterableSong {
    var tags: [TagName: [String]] = [
        .artist: ["A"], .title: ["Love Song"], .album: ["L"], .date: ["2001"], .genre: ["Pop", "Rock"],
        .composer: ["C"],
    ]
    var uri = "A/one.mp3"
    var lastModified: Int64 = 1_700_000_000
    var added: Int64 = 1_800_000_000
    var audioFormat: AudioFormatPattern? = AudioFormatPattern(sampleRate: 44100, bits: 16, channels: 2)

    func values(of tag: TagName) -> [String] { self.tags[tag] ?? [] }

    static let one = TestSong()

    /// ASCII case folding is enough here; the library folds accents too.
    static func fold(_ text: String) -> String { text.lowercased() }
}
