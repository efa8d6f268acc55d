// MPD 0.23.12's answers to LibraryClientTests.differentialRequests on the generated tree, normalised by
// AnswerNormalizer and checked by hand against the tree (LibraryTree): which songs a request selects,
// their tags, the fallbacks (AlbumArtist to Artist, "" for an absent tag), the orders (`list` and
// `sort` byte order), the sizes of the files (lame 3.100's output) and of cover.jpg. Regenerate them
// with PLAYERD_INTEROP_SERVER=mpd PLAYERD_INTEROP_DUMP=FILE, and inspect them again before pasting.

extension LibraryClientTests {
    static let mpdAnswers: [String: String] = [
        "lsinfo": """
        directory: Beyoncé
        directory: Misc
        directory: Motörhead
        directory: Sigur Rós
        directory: Various Artists
        directory: 東京事変
        file: loose.mp3
        Artist: Nobody
        Date: 2001
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Loose Song
        Track: 1
        duration: 0.365
        OK
        """,
        "lsinfo \"Sigur Rós\"": """
        directory: Sigur Rós/Takk
        directory: Sigur Rós/Ágætis byrjun
        OK
        """,
        "lsinfo \"Beyoncé/Lemonade\"": """
        file: Beyoncé/Lemonade/01 Formation.mp3
        Album: Lemonade
        AlbumArtist: Beyoncé
        Artist: Beyoncé
        Date: 2016
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Formation
        Track: 1
        duration: 0.365
        file: Beyoncé/Lemonade/02 Hold Up.mp3
        Album: Lemonade
        AlbumArtist: Beyoncé
        Artist: Beyoncé
        Date: 2016
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Hold Up
        Track: 2
        duration: 0.365
        OK
        """,
        "lsinfo \"Various Artists/Mixtape\"": """
        file: Various Artists/Mixtape/01 Overkill.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Motörhead
        Date: 2020
        Disc: 1
        Genre: Metal
        Time: 0
        Title: Overkill
        Track: 1
        duration: 0.365
        file: Various Artists/Mixtape/02 Crazy in Love.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Beyoncé
        Date: 2020
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Crazy in Love
        Track: 2
        duration: 0.365
        OK
        """,
        "lsinfo \"Misc/Deep/Deeper\"": """
        file: Misc/Deep/Deeper/untagged.mp3
        Time: 0
        duration: 0.365
        OK
        """,
        "lsinfo \"No Such Directory\"": """
        ACK [50@0] {lsinfo}
        """,
        "listall": """
        directory: Beyoncé
        directory: Beyoncé/Lemonade
        directory: Misc
        directory: Misc/Deep
        directory: Misc/Deep/Deeper
        directory: Motörhead
        directory: Motörhead/Ace of Spades
        directory: Sigur Rós
        directory: Sigur Rós/Takk
        directory: Sigur Rós/Ágætis byrjun
        directory: Various Artists
        directory: Various Artists/Mixtape
        directory: 東京事変
        directory: 東京事変/教育
        file: Beyoncé/Lemonade/01 Formation.mp3
        file: Beyoncé/Lemonade/02 Hold Up.mp3
        file: Misc/Deep/Deeper/untagged.mp3
        file: Motörhead/Ace of Spades/01 Ace of Spades.mp3
        file: Motörhead/Ace of Spades/02 Love Me Like a Reptile.mp3
        file: Sigur Rós/Takk/01 Glósóli.mp3
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        file: Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3
        file: Various Artists/Mixtape/01 Overkill.mp3
        file: Various Artists/Mixtape/02 Crazy in Love.mp3
        file: loose.mp3
        file: 東京事変/教育/01 林檎の唄.mp3
        file: 東京事変/教育/02 群青日和.mp3
        OK
        """,
        "listall Misc": """
        directory: Misc
        directory: Misc/Deep
        directory: Misc/Deep/Deeper
        file: Misc/Deep/Deeper/untagged.mp3
        OK
        """,
        "listallinfo \"Sigur Rós\"": """
        directory: Sigur Rós
        directory: Sigur Rós/Takk
        directory: Sigur Rós/Ágætis byrjun
        file: Sigur Rós/Takk/01 Glósóli.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Glósóli
        Track: 1
        duration: 0.365
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Hoppípolla
        Track: 2
        duration: 0.365
        file: Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3
        Album: Ágætis byrjun
        Artist: Sigur Rós
        Date: 1999
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Svefn-g-englar
        Track: 1
        duration: 0.365
        OK
        """,
        "find artist \"Sigur Rós\"": """
        file: Sigur Rós/Takk/01 Glósóli.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Glósóli
        Track: 1
        duration: 0.365
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Hoppípolla
        Track: 2
        duration: 0.365
        file: Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3
        Album: Ágætis byrjun
        Artist: Sigur Rós
        Date: 1999
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Svefn-g-englar
        Track: 1
        duration: 0.365
        OK
        """,
        "find artist \"Sigur Rós\" album Takk": """
        file: Sigur Rós/Takk/01 Glósóli.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Glósóli
        Track: 1
        duration: 0.365
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Hoppípolla
        Track: 2
        duration: 0.365
        OK
        """,
        "find albumartist \"Sigur Rós\"": """
        file: Sigur Rós/Takk/01 Glósóli.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Glósóli
        Track: 1
        duration: 0.365
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Hoppípolla
        Track: 2
        duration: 0.365
        file: Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3
        Album: Ágætis byrjun
        Artist: Sigur Rós
        Date: 1999
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Svefn-g-englar
        Track: 1
        duration: 0.365
        OK
        """,
        "find album \"\"": """
        file: Misc/Deep/Deeper/untagged.mp3
        Time: 0
        duration: 0.365
        file: loose.mp3
        Artist: Nobody
        Date: 2001
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Loose Song
        Track: 1
        duration: 0.365
        OK
        """,
        "find \"(Artist == \\\"Motörhead\\\")\"": """
        file: Motörhead/Ace of Spades/01 Ace of Spades.mp3
        Album: Ace of Spades
        AlbumArtist: Motörhead
        Artist: Motörhead
        Date: 1980
        Disc: 1
        Genre: Metal
        Time: 0
        Title: Ace of Spades
        Track: 1
        duration: 0.365
        file: Motörhead/Ace of Spades/02 Love Me Like a Reptile.mp3
        Album: Ace of Spades
        AlbumArtist: Motörhead
        Artist: Motörhead
        Date: 1980
        Disc: 1
        Genre: Metal
        Time: 0
        Title: Love Me Like a Reptile
        Track: 2
        duration: 0.365
        file: Various Artists/Mixtape/01 Overkill.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Motörhead
        Date: 2020
        Disc: 1
        Genre: Metal
        Time: 0
        Title: Overkill
        Track: 1
        duration: 0.365
        OK
        """,
        "find \"((Album == \\\"Mixtape\\\") AND (Artist == \\\"Beyoncé\\\"))\"": """
        file: Various Artists/Mixtape/02 Crazy in Love.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Beyoncé
        Date: 2020
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Crazy in Love
        Track: 2
        duration: 0.365
        OK
        """,
        "find \"(Album != \\\"\\\")\" sort -Title window 0:2": """
        file: 東京事変/教育/02 群青日和.mp3
        Album: 教育
        AlbumArtist: 東京事変
        Artist: 東京事変
        Date: 2004
        Disc: 1
        Genre: Pop
        Time: 0
        Title: 群青日和
        Track: 2
        duration: 0.365
        file: 東京事変/教育/01 林檎の唄.mp3
        Album: 教育
        AlbumArtist: 東京事変
        Artist: 東京事変
        Date: 2004
        Disc: 1
        Genre: Pop
        Time: 0
        Title: 林檎の唄
        Track: 1
        duration: 0.365
        OK
        """,
        "find \"(Artist == \\\"Beyoncé\\\")\" sort Title": """
        file: Various Artists/Mixtape/02 Crazy in Love.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Beyoncé
        Date: 2020
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Crazy in Love
        Track: 2
        duration: 0.365
        file: Beyoncé/Lemonade/01 Formation.mp3
        Album: Lemonade
        AlbumArtist: Beyoncé
        Artist: Beyoncé
        Date: 2016
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Formation
        Track: 1
        duration: 0.365
        file: Beyoncé/Lemonade/02 Hold Up.mp3
        Album: Lemonade
        AlbumArtist: Beyoncé
        Artist: Beyoncé
        Date: 2016
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Hold Up
        Track: 2
        duration: 0.365
        OK
        """,
        "search any \"rós\"": """
        file: Sigur Rós/Takk/01 Glósóli.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Glósóli
        Track: 1
        duration: 0.365
        file: Sigur Rós/Takk/02 Hoppípolla.mp3
        Album: Takk
        AlbumArtist: Sigur Rós
        Artist: Sigur Rós
        Date: 2005
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Hoppípolla
        Track: 2
        duration: 0.365
        file: Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3
        Album: Ágætis byrjun
        Artist: Sigur Rós
        Date: 1999
        Disc: 1
        Genre: Rock
        Time: 0
        Title: Svefn-g-englar
        Track: 1
        duration: 0.365
        OK
        """,
        "search title \"HOLD\"": """
        file: Beyoncé/Lemonade/02 Hold Up.mp3
        Album: Lemonade
        AlbumArtist: Beyoncé
        Artist: Beyoncé
        Date: 2016
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Hold Up
        Track: 2
        duration: 0.365
        OK
        """,
        "search \"(any contains \\\"love\\\")\"": """
        file: Motörhead/Ace of Spades/02 Love Me Like a Reptile.mp3
        Album: Ace of Spades
        AlbumArtist: Motörhead
        Artist: Motörhead
        Date: 1980
        Disc: 1
        Genre: Metal
        Time: 0
        Title: Love Me Like a Reptile
        Track: 2
        duration: 0.365
        file: Various Artists/Mixtape/02 Crazy in Love.mp3
        Album: Mixtape
        AlbumArtist: Various Artists
        Artist: Beyoncé
        Date: 2020
        Disc: 1
        Genre: Pop
        Time: 0
        Title: Crazy in Love
        Track: 2
        duration: 0.365
        OK
        """,
        "list artist": """
        Artist:\u{20}
        Artist: Beyoncé
        Artist: Motörhead
        Artist: Nobody
        Artist: Sigur Rós
        Artist: 東京事変
        OK
        """,
        "list albumartist": """
        AlbumArtist:\u{20}
        AlbumArtist: Beyoncé
        AlbumArtist: Motörhead
        AlbumArtist: Nobody
        AlbumArtist: Sigur Rós
        AlbumArtist: Various Artists
        AlbumArtist: 東京事変
        OK
        """,
        "list album artist \"Sigur Rós\"": """
        Album: Takk
        Album: Ágætis byrjun
        OK
        """,
        "list album group albumartist": """
        AlbumArtist:\u{20}
        Album:\u{20}
        AlbumArtist: Beyoncé
        Album: Lemonade
        AlbumArtist: Motörhead
        Album: Ace of Spades
        AlbumArtist: Nobody
        Album:\u{20}
        AlbumArtist: Sigur Rós
        Album: Takk
        Album: Ágætis byrjun
        AlbumArtist: Various Artists
        Album: Mixtape
        AlbumArtist: 東京事変
        Album: 教育
        OK
        """,
        "list genre group date": """
        Date:\u{20}
        Genre:\u{20}
        Date: 1980
        Genre: Metal
        Date: 1999
        Genre: Rock
        Date: 2001
        Genre: Pop
        Date: 2004
        Genre: Pop
        Date: 2005
        Genre: Rock
        Date: 2016
        Genre: Pop
        Date: 2020
        Genre: Metal
        Genre: Pop
        OK
        """,
        "count artist \"Beyoncé\"": """
        songs: 3
        playtime: 1
        OK
        """,
        "count group artist": """
        Artist:\u{20}
        songs: 1
        playtime: 0
        Artist: Beyoncé
        songs: 3
        playtime: 1
        Artist: Motörhead
        songs: 3
        playtime: 1
        Artist: Nobody
        songs: 1
        playtime: 0
        Artist: Sigur Rós
        songs: 3
        playtime: 1
        Artist: 東京事変
        songs: 2
        playtime: 0
        OK
        """,
        "listfiles \"Beyoncé/Lemonade\"": """
        file: 01 Formation.mp3
        size: 1727
        file: 02 Hold Up.mp3
        size: 1723
        file: cover.jpg
        size: 1013
        OK
        """,
        "listfiles \"Various Artists/Mixtape\"": """
        file: 01 Overkill.mp3
        size: 1745
        file: 02 Crazy in Love.mp3
        size: 1749
        file: notes.txt
        size: 10
        OK
        """,
        "albumart \"Beyoncé/Lemonade/\" 0": """
        size: 1013
        binary: 1013
        <1013 bytes, fnv1a f3bc9536>
        OK
        """,
        "albumart \"Beyoncé/Lemonade/01 Formation.mp3\" 0": """
        size: 1013
        binary: 1013
        <1013 bytes, fnv1a f3bc9536>
        OK
        """,
        "albumart \"Sigur Rós/Takk/\" 0": """
        ACK [50@0] {albumart}
        """,
        "readpicture \"Beyoncé/Lemonade/01 Formation.mp3\" 0": """
        OK
        """,
    ]
}
