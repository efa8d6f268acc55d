import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The music library of the differential suite, made once per test run with sox and lame into a
/// temporary directory: names with accents ("Ágætis byrjun", "Émilie"), CJK (坂本龍一), names that differ
/// only in case, a compilation (Album Artist "Various Artists", several Artists), a multi-disc album,
/// a directory mixing albums, discs and tracks (MPD orders a directory's songs by album, disc, track,
/// then name), songs with no tags, a file name in Latin-1 bytes, nested folders and empty ones, a cover,
/// a text file, a hidden file, a playlist file, and four 40 s songs to play. Stored playlists are
/// written into each daemon's playlist directory before every sequence (`writePlaylists(into:)`).
enum DifferentialLibrary {
    /// One tagged song: its path and the tags lame writes (ID3v2.3, UTF-16).
    struct Song {
        let path: String
        var title: String?
        var artist: String?
        var album: String?
        var albumArtist: String?
        var track: String?
        var disc: String?
        var date: String?
        var genre: String?
        var composer: String?
        var comment: String?
        var long = false
    }

    static let songs: [Song] = [
        Song(
            path: "Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3", title: "Svefn-g-englar", artist: "Sigur Rós",
            album: "Ágætis byrjun", track: "1/2", date: "1999", genre: "Post-Rock"),
        Song(
            path: "Sigur Rós/Ágætis byrjun/02 Starálfur.mp3", title: "Starálfur", artist: "Sigur Rós",
            album: "Ágætis byrjun", track: "2/2", date: "1999", genre: "Post-Rock", composer: "Jón Þór Birgisson"),
        Song(
            path: "Sigur Rós/Takk/01 Glósóli.mp3", title: "Glósóli", artist: "Sigur Rós", album: "Takk",
            albumArtist: "Sigur Rós", track: "1", date: "2005", genre: "Post-Rock"),
        Song(
            path: "Sigur Rós/Takk/02 Hoppípolla.mp3", title: "Hoppípolla", artist: "Sigur Rós", album: "Takk",
            albumArtist: "Sigur Rós", track: "2", date: "2005", genre: "Post-Rock", comment: "played at every wedding"),
        Song(
            path: "sigur rós (lower)/hljómalind.mp3", title: "hljómalind", artist: "sigur rós", album: "takk",
            track: "3", genre: "post-rock"),
        Song(
            path: "Émilie Simon/Émilie/01 Désert.mp3", title: "Désert", artist: "Émilie Simon", album: "Émilie",
            track: "1", date: "2003", genre: "Electronic"),
        Song(
            path: "Émilie Simon/Émilie/02 Flowers.mp3", title: "Flowers", artist: "Émilie Simon", album: "Émilie",
            track: "2", date: "2003", genre: "Electronic"),
        Song(
            path: "emilie/lowercase.mp3", title: "lowercase", artist: "emilie", album: "émilie", track: "1",
            genre: "electronic"),
        Song(
            path: "坂本龍一/音楽図鑑/01 Tibetan Dance.mp3", title: "Tibetan Dance", artist: "坂本龍一", album: "音楽図鑑",
            track: "1", date: "1984", genre: "Electronic"),
        Song(
            path: "坂本龍一/音楽図鑑/02 羽の林で.mp3", title: "羽の林で", artist: "坂本龍一", album: "音楽図鑑", track: "2",
            date: "1984", genre: "Electronic"),
        Song(
            path: "Compilations/Now Ærø/01 Zebra Song.mp3", title: "Zebra Song", artist: "Zebra", album: "Now Ærø",
            albumArtist: "Various Artists", track: "1/3", date: "2010", genre: "Pop"),
        Song(
            path: "Compilations/Now Ærø/02 apple pie.mp3", title: "apple pie", artist: "apple", album: "Now Ærø",
            albumArtist: "Various Artists", track: "2/3", date: "2010", genre: "Pop"),
        Song(
            path: "Compilations/Now Ærø/03 Apple Core.mp3", title: "Apple Core", artist: "Apple", album: "Now Ærø",
            albumArtist: "Various Artists", track: "3/3", date: "2010", genre: "pop"),
        Song(
            path: "Box Set/Disc 1/01 One.mp3", title: "One", artist: "Boxer", album: "The Box", track: "1",
            disc: "1/2", date: "2001", genre: "Rock"),
        Song(
            path: "Box Set/Disc 1/02 Two.mp3", title: "Two", artist: "Boxer", album: "The Box", track: "2",
            disc: "1/2", date: "2001", genre: "Rock"),
        Song(
            path: "Box Set/Disc 2/01 Three.mp3", title: "Three", artist: "Boxer", album: "The Box", track: "1",
            disc: "2/2", date: "2001", genre: "Rock"),
        Song(
            path: "Box Set/Disc 2/02 Four.mp3", title: "Four", artist: "Boxer", album: "The Box", track: "2",
            disc: "2/2", date: "2001", genre: "Rock"),
        // One directory, several albums and discs: MPD lists it by album, disc, track, then name.
        Song(path: "Mixed/a.mp3", title: "Mixed A", artist: "Mixer", album: "Zeta", track: "2"),
        Song(path: "Mixed/b.mp3", title: "Mixed B", artist: "Mixer", album: "alpha", track: "1", disc: "2"),
        Song(path: "Mixed/c.mp3", title: "Mixed C", artist: "Mixer", album: "Alpha", track: "3", disc: "1"),
        Song(path: "Mixed/d.mp3", title: "Mixed D", artist: "Mixer"),
        Song(path: "Mixed/e.mp3", title: "Mixed E", artist: "mixer", album: "Zeta", track: "1"),
        Song(path: "Mixed/Ω.mp3", title: "Omega", artist: "Mixer", album: "Ärger", track: "1"),
        Song(path: "Ärger.mp3", title: "Ärger", artist: "Die Ärzte", date: "1998", genre: "Punk"),
        Song(path: "ant.mp3", title: "ant", artist: "insects"),
        Song(path: "Bee.mp3", title: "Bee", artist: "Insects"),
        Song(
            path: "Long/01 Long One.mp3", title: "Long One", artist: "Long Player", album: "Long Album",
            track: "1", date: "2020", genre: "Ambient", long: true),
        Song(
            path: "Long/02 Long Two.mp3", title: "Long Two", artist: "Long Player", album: "Long Album",
            track: "2", date: "2020", genre: "Ambient", long: true),
        Song(
            path: "Long/03 Long Three.mp3", title: "Long Three", artist: "Long Player", album: "Long Album",
            track: "3", date: "2020", genre: "Ambient", long: true),
        Song(
            path: "Long/04 Long Four.mp3", title: "Long Four", artist: "Long Player", album: "Long Album",
            track: "4", date: "2020", genre: "Ambient", long: true),
    ]

    /// Songs with no tag at all.
    static let untagged = ["untagged.mp3", "Nested/Deeper/Deepest/deep.mp3"]

    /// The song whose name is Latin-1 "café.mp3" (not UTF-8), at the root.
    static let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".mp3".utf8)

    /// Folders with nothing in them, one to a parent (MPD lists several of one parent in `readdir`
    /// order: MPD-DIFFERENCES.md).
    static let emptyFolders = ["empty", "Nested/Empty Child", "Box Set/Disc 3/Bonus"]

    /// Stored playlists: name and lines. One names a song the library lacks.
    static let playlists: [(name: String, lines: [String])] = [
        ("Mix", ["Long/01 Long One.mp3", "Sigur Rós/Takk/01 Glósóli.mp3", "坂本龍一/音楽図鑑/01 Tibetan Dance.mp3"]),
        ("ágætis", ["Sigur Rós/Ágætis byrjun/01 Svefn-g-englar.mp3", "Sigur Rós/Ágætis byrjun/02 Starálfur.mp3"]),
        ("zed", ["Bee.mp3", "no/such/song.mp3", "ant.mp3"]),
        ("Long", ["Long/01 Long One.mp3", "Long/02 Long Two.mp3", "Long/03 Long Three.mp3", "Long/04 Long Four.mp3"]),
    ]

    /// The playlists' modification time (both daemons show the same `Last-Modified`).
    static let playlistTime = Date(timeIntervalSince1970: 1_700_000_000)

    /// The library, made at the first use in this test run; a failure to make it is kept and rethrown.
    static func path() throws -> String {
        try made.get()
    }

    /// Empties `directory` (it stays) and writes the stored playlists into it.
    static func writePlaylists(into directory: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: directory) {
            try manager.removeItem(atPath: directory + "/" + name)
        }
        for playlist in playlists {
            let path = directory + "/" + playlist.name + ".m3u"
            try Data(playlist.lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
            try manager.setAttributes([.modificationDate: playlistTime], ofItemAtPath: path)
        }
    }

    private static let made: Result<String, HarnessError> = {
        do {
            let directory = try makeDirectory(prefix: "/tmp/playerd-difflib-")
            cleanup.withLock { $0 = directory }
            atexit {
                if let directory = DifferentialLibrary.cleanup.withLock({ $0 }) {
                    try? FileManager.default.removeItem(atPath: directory)
                }
            }
            try generate(in: directory + "/music")
            return .success(directory + "/music")
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("making the differential library: \(error)"))
        }
    }()

    fileprivate static let cleanup = Mutex<String?>(nil)

    private static func generate(in root: String) throws {
        for tool in ["/usr/bin/sox", "/usr/bin/lame"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw HarnessError("\(tool) is missing: run scripts/setup.sh test")
        }
        let manager = FileManager.default
        try manager.createDirectory(atPath: root, withIntermediateDirectories: true)
        // Short songs: 0.5 s of 440 Hz at 22050 Hz mono; long ones: 40 s of 330 Hz at 8000 Hz mono.
        let shortWave = root + "/../short.wav"
        let longWave = root + "/../long.wav"
        try checked(
            runProgram(
                "/usr/bin/sox", ["-R", "-D", "-n", "-r", "22050", "-c", "1", shortWave, "synth", "0.5", "sine", "440"]))
        try checked(
            runProgram(
                "/usr/bin/sox",
                ["-R", "-D", "-n", "-r", "8000", "-c", "1", longWave, "synth", "40", "sine", "330", "vol", "0.3"]))
        var encoders: [BackgroundProgram] = []
        for song in songs {
            try manager.createDirectory(
                atPath: root + "/" + (song.path as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            // lame reads tag text in the locale's charset: C.UTF-8 keeps every letter.
            var arguments = ["LC_ALL=C.UTF-8", "/usr/bin/lame", "--quiet", "-b", song.long ? "8" : "32"]
            arguments += ["--id3v2-only", "--id3v2-utf16"]
            let frames: [(String, String?)] = [
                ("--tt", song.title), ("--ta", song.artist), ("--tl", song.album), ("--tn", song.track),
                ("--ty", song.date), ("--tg", song.genre), ("--tc", song.comment),
            ]
            for (option, value) in frames {
                if let value { arguments += [option, value] }
            }
            let texts: [(String, String?)] = [("TPE2", song.albumArtist), ("TPOS", song.disc), ("TCOM", song.composer)]
            for (frame, value) in texts {
                if let value { arguments += ["--tv", frame + "=" + value] }
            }
            arguments += [song.long ? longWave : shortWave, root + "/" + song.path]
            encoders.append(try BackgroundProgram("/usr/bin/env", arguments))
            if encoders.count >= 8 {
                try checked(encoders.removeFirst().finish(within: .seconds(60)))
            }
        }
        for encoder in encoders {
            try checked(encoder.finish(within: .seconds(60)))
        }
        for path in untagged {
            try manager.createDirectory(
                atPath: root + "/" + (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try checked(runProgram("/usr/bin/lame", ["--quiet", "-b", "32", shortWave, root + "/" + path]))
        }
        let staging = root + "/latin1.mp3"
        try checked(
            runProgram(
                "/usr/bin/env",
                [
                    "LC_ALL=C.UTF-8", "/usr/bin/lame", "--quiet", "-b", "32", "--id3v2-only", "--tt", "Latin-1 Name",
                    "--ta", "Nobody", shortWave, staging,
                ]))
        // Foundation's paths are Strings; a name that is not UTF-8 needs the C call with raw bytes.
        let from = Array(staging.utf8CString)
        let to = (Array(root.utf8) + [UInt8(ascii: "/")] + latin1Name + [0]).map { CChar(bitPattern: $0) }
        guard rename(from, to) == 0 else {
            throw HarnessError.system("rename to the Latin-1 name", errno)
        }
        for folder in emptyFolders {
            try manager.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        try Data("not music\n".utf8).write(to: URL(fileURLWithPath: root + "/Long/notes.txt"))
        try Data("hidden\n".utf8).write(to: URL(fileURLWithPath: root + "/Long/.hidden.txt"))
        // A playlist inside the music directory (lsinfo lists it; listplaylist and load read it).
        try Data("02 Long Two.mp3\n../ant.mp3\n/nowhere.mp3\n".utf8).write(
            to: URL(fileURLWithPath: root + "/Long/side.m3u"))
        let cover: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00] + [UInt8](repeating: 7, count: 300)
            + [0xFF, 0xD9]
        try Data(cover).write(to: URL(fileURLWithPath: root + "/Long/cover.jpg"))
        try? manager.removeItem(atPath: shortWave)
        try? manager.removeItem(atPath: longWave)
    }

    private static func checked(_ result: ProgramResult) throws {
        guard result.status == 0 else {
            throw HarnessError("making the differential library: \(result)")
        }
    }
}
