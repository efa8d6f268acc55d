// The `make-library` mode: a tagged music library for the library benchmarks (section G of
// scripts/bench.sh), made the same, byte for byte, for the same song count. Artists, albums and titles
// come from syllable and word tables with accents, ß, ø, CJK and Cyrillic; each file is an ID3v2.4
// tag (UTF-8 text frames) in front of the same 0.2 s of MPEG audio, encoded once by sox and lame.

import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `daemon-bench make-library DIR COUNT`: writes COUNT songs under DIR (which must not exist) as
/// `Artist/Album (Year)/NN Title.mp3`, and prints what the benchmarks ask for and expect: `version`
/// (of the generator), `songs`,
/// `artists`, `big_directory` and `big_songs` (a top-level directory of a tenth of the songs),
/// `search_term` and `search_songs`, `find_album` and `find_songs`, `lsinfo_dir` and `lsinfo_songs`.
/// With `mixed`, the songs are MP3, FLAC, Ogg Vorbis and Ogg Opus in turn (LibraryFormats.swift), the
/// same songs and tags otherwise, and `formats mixed` is printed too.
enum MakeLibraryCommand: BenchCommand {
    static let name = "make-library"
    static let usage = "daemon-bench make-library DIR COUNT [mixed]"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 2 || (arguments.count == 3 && arguments[2] == "mixed") else {
            throw .usage(self.usage)
        }
        let mixed = arguments.count == 3
        let count = try integerArgument(arguments[1], named: "COUNT", atLeast: 10, usage: self.usage)
        let root = arguments[0]
        guard mkdir(root, 0o755) == 0 else {
            throw .system(SystemCallError(function: "mkdir(\(root))", code: errno))
        }
        let audio = try self.encodeAudio(in: root)
        let templates = mixed ? try FormatTemplates.encode(in: root, mp3: audio) : nil
        let plan = LibraryPlan(songs: count, mixed: mixed)
        var made = Set<String>()
        for song in plan.songs {
            let directory = song.artist + "/" + song.albumDirectory
            if !made.contains(song.artist) {
                try makeDirectory(root + "/" + song.artist)
                made.insert(song.artist)
            }
            if !made.contains(directory) {
                try makeDirectory(root + "/" + directory)
                made.insert(directory)
            }
        }
        // The files from two threads a core, each a run of songs of its own (a million songs is minutes
        // of tags built and files written: half as long as from one thread on two cores). The bytes are
        // the same whichever thread writes them.
        let songs = plan.songs
        let threads = max(1, min(16, 2 * sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let failure = Mutex<BenchFailure?>(nil)
        DispatchQueue.concurrentPerform(iterations: threads) { part in
            let range = (songs.count * part / threads)..<(songs.count * (part + 1) / threads)
            for index in range {
                let song = songs[index]
                do throws(BenchFailure) {
                    try writeFile(
                        root + "/" + song.path, templates?.file(song, format: song.format) ?? song.tag() + audio)
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                    return
                }
                if index % 1024 == 0, failure.withLock({ $0 != nil }) { return }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        for line in plan.summary { print(line) }
        if mixed { print("formats mixed") }
    }

    /// 0.2 s of a quiet 440 Hz tone, mono, CBR 32 kbit/s, as lame writes it from sox's WAV: the MPEG
    /// frames only (lame writes no ID3 tag here, but one would be cut off).
    private static func encodeAudio(in root: String) throws(BenchFailure) -> [UInt8] {
        let wav = root + "/.tone.wav"
        let mp3 = root + "/.tone.mp3"
        let script =
            "sox -R -n -r 44100 -c 1 -b 16 \"$1\" synth 0.2 sine 440 vol 0.1"
            + " && lame --quiet --noreplaygain -b 32 -m m --resample 44.1 \"$1\" \"$2\""
        let status = try runCommand(["/bin/sh", "-c", script, "sh", wav, mp3])
        defer {
            unlink(wav)
            unlink(mp3)
        }
        guard status == 0 else { throw .daemon("sox or lame failed (status \(status)); are both installed?") }
        var bytes = try readFile(mp3)
        if bytes.count > 10, bytes.starts(with: "ID3".utf8) {
            let size = bytes[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            bytes.removeFirst(min(bytes.count, 10 + size + (bytes[5] & 0x10 != 0 ? 10 : 0)))
        }
        if bytes.count > 128, bytes[(bytes.count - 128)...].starts(with: "TAG".utf8) {
            bytes.removeLast(128)
        }
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else {
            throw .daemon("lame's output does not start with an MPEG frame")
        }
        return bytes
    }
}

/// One song of the generated library.
struct PlannedSong {
    let artist: String
    let album: String
    let year: Int
    let genre: String
    let track: Int
    let tracks: Int
    let title: String
    /// The file's format: MP3 but in a mixed library.
    var format = LibraryFormat.mp3

    var albumDirectory: String { "\(self.album) (\(self.year))" }
    var path: String {
        let number = self.track < 10 ? "0\(self.track)" : "\(self.track)"
        return "\(self.artist)/\(self.albumDirectory)/\(number) \(self.title).\(self.format.suffix)"
    }

    /// The song's ID3v2.4 tag: UTF-8 text frames, no padding.
    func tag() -> [UInt8] {
        let frames: [(String, String)] = [
            ("TIT2", self.title), ("TPE1", self.artist), ("TPE2", self.artist), ("TALB", self.album),
            ("TRCK", "\(self.track)/\(self.tracks)"), ("TPOS", "1/1"), ("TDRC", "\(self.year)"),
            ("TCON", self.genre),
        ]
        var body: [UInt8] = []
        for (id, text) in frames {
            let size = 1 + text.utf8.count
            body += Array(id.utf8) + synchsafe(size) + [0, 0, 3] + Array(text.utf8)
        }
        return Array("ID3".utf8) + [4, 0, 0] + synchsafe(body.count) + body
    }

    private func synchsafe(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }
}

/// The whole library, decided by a fixed-seed generator: the same song count gives the same songs.
struct LibraryPlan {
    /// The word every 499th title of the first 20,000 holds, and no other tag: `search any` finds 41 songs
    /// in 20,000 and in 100,000.
    static let rareWord = "Nachtigall"
    static let artistCount = 400
    /// Changes whenever the same count would give other files: scripts remake trees of other versions.
    static let version = 2

    private(set) var songs: [PlannedSong] = []
    private(set) var summary: [String] = []

    /// With `mixed`, song N is in format N % 4 of `LibraryFormat.allCases`.
    init(songs count: Int, mixed: Bool = false) {
        var random = SplitMix64(seed: 0x706C_6179_6572_64)
        let artists = Self.artists(&random)
        let bigSongs = count / 10
        var albumsOf: [String: Set<String>] = [:]
        var albumTitleSongs: [String: Int] = [:]
        var albumIndex = 0
        var ordinaryAlbums = 0
        var sample: (album: String, directory: String, songs: Int)?
        while self.songs.count < count {
            // The first artist holds a tenth of the library; the others take albums in turn.
            let inBig = self.songs.count < bigSongs
            let artist = inBig ? artists[0] : artists[1 + albumIndex % (artists.count - 1)]
            let limit = inBig ? bigSongs : count
            let tracks = min(10 + Int(random.next() % 3), limit - self.songs.count)
            var album = Self.albumTitle(&random)
            let year = 1960 + Int(random.next() % 65)
            let genre = Self.genres[Int(random.next() % UInt64(Self.genres.count))]
            var suffix = 1
            let base = album
            while albumsOf[artist, default: []].contains("\(album) (\(year))") {
                suffix += 1
                album = "\(base) \(suffix)"
            }
            albumsOf[artist, default: []].insert("\(album) (\(year))")
            for track in 1...tracks {
                var title = Self.trackTitle(&random)
                // Only among the first 20,000 songs: the same songs match in every larger library, so
                // a search's answer does not grow with it and its time shows the search alone.
                if self.songs.count % 499 == 7 && self.songs.count < 20_000 { title += " " + Self.rareWord }
                let format = mixed ? LibraryFormat.allCases[self.songs.count % LibraryFormat.allCases.count] : .mp3
                self.songs.append(
                    PlannedSong(
                        artist: artist, album: album, year: year, genre: genre, track: track, tracks: tracks,
                        title: title, format: format))
            }
            albumTitleSongs[album, default: 0] += tracks
            if !inBig {
                // The sixth album of the ordinary artists is the one `find` and `lsinfo` ask for.
                if ordinaryAlbums == 5 { sample = (album, "\(artist)/\(album) (\(year))", tracks) }
                ordinaryAlbums += 1
            }
            albumIndex += 1
        }
        let rare = self.songs.filter { $0.title.hasSuffix(Self.rareWord) }.count
        let sampled = sample ?? (self.songs[0].album, self.songs[0].artist + "/" + self.songs[0].albumDirectory, 0)
        self.summary = [
            "version \(Self.version)",
            "songs \(self.songs.count)",
            "artists \(Set(self.songs.map(\.artist)).count)",
            "albums \(albumIndex)",
            "big_directory \(artists[0])",
            "big_songs \(bigSongs)",
            "search_term \(Self.rareWord.lowercased())",
            "search_songs \(rare)",
            "find_album \(sampled.album)",
            "find_songs \(albumTitleSongs[sampled.album] ?? 0)",
            "lsinfo_dir \(sampled.directory)",
            "lsinfo_songs \(sampled.songs)",
        ]
    }

    static let givenNames = [
        "Mé", "Lö", "Ka", "Ri", "So", "Bjø", "Grü", "Fa", "Ta", "No", "Zé", "Vi", "Hå", "Ma", "Ul", "Pé", "Dö", "Ra",
    ]
    static let nameEndings = ["lo", "ne", "rik", "ßen", "dal", "mir", "ra", "vé", "tö", "na", "gø", "sa", "rin", "li"]
    static let familyNames = [
        "Åberg", "Dupré", "Müller", "Straßer", "Sørensen", "Øvrebø", "Jourdé", "Köhler", "Løvland", "Brontë",
        "Höglund", "Pérez", "Núñez", "Weiß", "Ångström", "Czerný",
    ]
    static let bandWords = [
        "Léopards", "Fjørd", "Übermut", "Rêveurs", "Schwäne", "Bølger", "Ménage", "Grönland", "Straßenbahn",
        "Cœurs", "Eisbär", "Ørnen",
    ]
    static let cjkFamilies = ["山田", "佐藤", "鈴木", "高橋", "李", "王", "김", "박", "陳", "林"]
    static let cjkGiven = ["花子", "太郎", "美咲", "翔", "伟", "芳", "민준", "서연", "結衣", "健"]
    static let cyrillicGiven = ["Иван", "Мария", "Алексей", "Ольга", "Дмитрий", "Анна", "Ёлка", "Борис"]
    static let cyrillicFamilies = ["Петров", "Смирнова", "Кузнецов", "Соколова", "Волков", "Попова", "Лебедев"]
    static let albumWords = [
        "Nuit", "Été", "Straße", "Fjøra", "Sommer", "Grün", "Blå", "Über", "Mañana", "Café", "Ørken", "Schön",
        "Rêve", "Лето", "Ночь", "夏", "夜", "Ciel", "Vögel", "Søndag", "Déjà", "Hôtel", "Fiancée", "Naïve", "Köln",
        "Zürich", "Måne", "Glück", "Éclat", "Hiver", "Ström", "Sørlandet",
    ]
    static let titleWords = [
        "amour", "Liebe", "Frühling", "cœur", "Mädchen", "rêverie", "Tränen", "søvn", "Straßen", "été", "Morgen",
        "lumière", "Schnee", "vår", "Nacht", "déluge", "Größe", "ånd", "ветер", "солнце", "雨", "風", "사랑", "Walzer",
        "berceuse", "Tanz", "fête", "Brücke", "mer", "Weg", "éternité", "Ozean",
    ]
    static let genres = [
        "Rock", "Pop", "Jazz", "Électro", "Musique concrète", "Schlager", "Klassik", "Folk", "Hip-Hop", "Chanson",
        "J-Pop", "Metal", "Blues", "Ambient", "Fado", "Tango", "Народная", "Reggae",
    ]

    /// `artistCount` different names: people, bands, CJK and Cyrillic names, and one big orchestra first.
    private static func artists(_ random: inout SplitMix64) -> [String] {
        var names = ["Orquesta Sinfónica de Tōkyō"]
        var seen = Set(names)
        while names.count < Self.artistCount {
            let name: String
            switch random.next() % 5 {
            case 0, 1:
                name =
                    random.pick(Self.givenNames) + random.pick(Self.nameEndings) + " " + random.pick(Self.familyNames)
            case 2:
                name =
                    random.pick(["Les ", "Die ", "The ", "Los "]) + random.pick(Self.bandWords)
                    + random.pick(["", " Ensemble", " Trio", " Kollektiv"])
            case 3:
                name = random.pick(Self.cjkFamilies) + random.pick(Self.cjkGiven)
            default:
                name = random.pick(Self.cyrillicGiven) + " " + random.pick(Self.cyrillicFamilies)
            }
            var unique = name
            var suffix = 1
            while seen.contains(unique) {
                suffix += 1
                unique = "\(name) \(suffix)"
            }
            seen.insert(unique)
            names.append(unique)
        }
        return names
    }

    private static func albumTitle(_ random: inout SplitMix64) -> String {
        switch random.next() % 3 {
        case 0: random.pick(Self.albumWords)
        case 1: random.pick(Self.albumWords) + " " + random.pick(Self.albumWords)
        default: random.pick(["Le ", "Der ", "El ", "Det "]) + random.pick(Self.albumWords)
        }
    }

    private static func trackTitle(_ random: inout SplitMix64) -> String {
        let first = random.pick(Self.titleWords)
        let capitalised = first.prefix(1).uppercased() + first.dropFirst()
        return random.next() % 2 == 0 ? capitalised : capitalised + " " + random.pick(Self.titleWords)
    }
}

/// A small, fast generator with a fixed sequence for a seed (SplitMix64).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func pick(_ values: [String]) -> String { values[Int(self.next() % UInt64(values.count))] }
}

private func makeDirectory(_ path: String) throws(BenchFailure) {
    guard mkdir(path, 0o755) == 0 else { throw .system(SystemCallError(function: "mkdir(\(path))", code: errno)) }
}

/// Writes `bytes` to a new file at `path`.
func writeFile(_ path: String, _ bytes: [UInt8]) throws(BenchFailure) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw .system(SystemCallError(function: "open(\(path))", code: errno)) }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else {
        throw .system(SystemCallError(function: "write(\(path))", code: written < 0 ? errno : EIO))
    }
}

/// The whole file at `path`.
func readFile(_ path: String) throws(BenchFailure) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .system(SystemCallError(function: "open(\(path))", code: errno)) }
    defer { close(descriptor) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { return contents }
        if count < 0 {
            if errno == EINTR { continue }
            throw .system(SystemCallError(function: "read(\(path))", code: errno))
        }
        contents += chunk[0..<count]
    }
}

/// Runs `command` (a path and its arguments) with our stdout and stderr, and returns its exit status.
func runCommand(_ command: [String]) throws(BenchFailure) -> Int32 {
    var pid: pid_t = 0
    var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer {
        for argument in argv { free(argument) }
    }
    let spawned = posix_spawn(&pid, command[0], nil, nil, &argv, environ)
    guard spawned == 0 else { throw .system(SystemCallError(function: "posix_spawn(\(command[0]))", code: spawned)) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw .system(SystemCallError(function: "waitpid", code: errno)) }
    }
    // WIFEXITED / WEXITSTATUS, which Swift does not import.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}
