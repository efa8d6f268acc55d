import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A library of every format playerd decodes, made at test time from sox's tones by the reference
/// encoders, tagged by metaflac, vorbiscomment and opusenc: what `Differential/formats.seq` runs on.
enum FormatsMusic {
    /// The cover embedded in `FLAC/16.flac` (a PICTURE block) and `Ogg/vorbis.ogg` (a
    /// `METADATA_BLOCK_PICTURE` comment): 20,000 bytes, three `binarylimit` chunks, declared JPEG.
    static let cover: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }

    /// A FLAC picture block's body (also what `METADATA_BLOCK_PICTURE` holds, in base64).
    static func pictureBlock(type: UInt32, mime: String, description: String, data: [UInt8]) -> [UInt8] {
        func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        return u32(type) + u32(UInt32(mime.utf8.count)) + Array(mime.utf8) + u32(UInt32(description.utf8.count))
            + Array(description.utf8) + u32(1) + u32(1) + u32(24) + u32(0) + u32(UInt32(data.count)) + data
    }

    /// The music directory, made once per test process (and removed when it exits).
    static func path() throws -> String {
        try made.get()
    }

    fileprivate static let cleanup = Mutex<String?>(nil)

    private static let made: Result<String, any Error> = Result {
        let root = try Paths.makeTemporaryDirectory()
        cleanup.withLock { $0 = root }
        atexit {
            if let root = FormatsMusic.cleanup.withLock({ $0 }) {
                try? FileManager.default.removeItem(atPath: root)
            }
        }
        let music = root + "/music"
        for directory in ["FLAC", "Ogg", "Opus", "MP3"] {
            try FileManager.default.createDirectory(atPath: music + "/" + directory, withIntermediateDirectories: true)
        }
        try Data(cover).write(to: URL(fileURLWithPath: root + "/cover.jpg"))
        let block = pictureBlock(type: 3, mime: "image/jpeg", description: "front", data: cover)
        let comments = [
            "TITLE=Vorbis Song", "ARTIST=One", "ALBUM=Ogg Album", "TRACKNUMBER=2", "DATE=2021",
            "REPLAYGAIN_TRACK_GAIN=-2.25 dB", "REPLAYGAIN_TRACK_PEAK=0.5",
            "METADATA_BLOCK_PICTURE=" + Data(block).base64EncodedString(),
        ]
        try (comments.joined(separator: "\n") + "\n").write(
            toFile: root + "/vorbis-comments.txt", atomically: true, encoding: .utf8)
        let script = """
            set -e -o pipefail
            cd '\(root)'
            # 6 s each: long enough to read a status while mpd (1.3 s ahead of its output) still plays.
            sox -q -n -r 44100 -c 2 -b 16 t16.wav synth 6 sine 440 vol 0.3
            sox -q -n -r 96000 -c 2 -b 24 t24.wav synth 6 sine 550 vol 0.3
            sox -q -n -r 22050 -c 1 -b 16 mono.wav synth 6 sine 300 vol 0.3
            flac -s -f t16.wav -o '\(music)/FLAC/16.flac'
            flac -s -f t24.wav -o '\(music)/FLAC/24.flac'
            metaflac --set-tag='TITLE=Sixteen Bits' --set-tag=ARTIST=One --set-tag=ARTIST=Two \\
                --set-tag='ALBUM=FLAC Album' --set-tag='ALBUMARTIST=Both of Them' --set-tag=TRACKNUMBER=1/2 \\
                --set-tag=DISCNUMBER=1/1 --set-tag=DATE=2020 --set-tag=GENRE=Rock \\
                --set-tag='REPLAYGAIN_TRACK_GAIN=-3.50 dB' --set-tag=REPLAYGAIN_TRACK_PEAK=0.9 \\
                --set-tag='REPLAYGAIN_ALBUM_GAIN=-4.00 dB' --set-tag=REPLAYGAIN_ALBUM_PEAK=0.95 \\
                --import-picture-from='3|image/jpeg|front|1x1x24|cover.jpg' '\(music)/FLAC/16.flac'
            metaflac --set-tag='TITLE=Twenty-four Bits' --set-tag=ARTIST=Three --set-tag='ALBUM=FLAC Album' \\
                --set-tag='ALBUMARTIST=Both of Them' --set-tag=TRACKNUMBER=2/2 --set-tag=DISCNUMBER=1/1 \\
                '\(music)/FLAC/24.flac'
            oggenc -Q t16.wav -o '\(music)/Ogg/vorbis.ogg'
            vorbiscomment -w -c vorbis-comments.txt '\(music)/Ogg/vorbis.ogg'
            oggenc -Q -t 'Mono Song' -a Four mono.wav -o '\(music)/Ogg/mono.ogg'
            flac -s -f --ogg -T 'TITLE=Ogg FLAC Song' -T ARTIST=Five t16.wav -o '\(music)/Ogg/flac.oga'
            opusenc --quiet --title 'Opus Song' --artist Two --album 'Opus Album' \\
                --comment R128_TRACK_GAIN=-768 --comment R128_ALBUM_GAIN=-512 t16.wav '\(music)/Opus/r128.opus'
            lame --quiet -b 128 --tt 'MP3 Song' --ta One --tl 'MP3 Album' t16.wav '\(music)/MP3/tone.mp3'
            """
        let result = try runProgram("/bin/bash", ["-c", script], within: .seconds(120))
        guard result.status == 0 else {
            throw HarnessError("making the formats library (sox, flac, vorbis-tools, opus-tools, lame): \(result)")
        }
        return music
    }
}

/// `Differential/formats.seq` on mpd and on playerd, both on `FormatsMusic`, compared as the differential
/// suite compares (`DifferentialNormalizer`, the rows of MPD-DIFFERENCES.md), and then more strictly for
/// what these formats are about: every song block's `Format:` and `duration:`, and `audio:` and
/// `duration:` in `status` while each plays (but for the differences MPD-DIFFERENCES.md lists).
@Suite("FLAC, Ogg Vorbis and Opus side by side with mpd", .serialized)
struct FormatsAgainstMPDTests {
    /// The sequences of `Differential/formats.seq` (the differential suite's format; `{music}` stands
    /// for the music directory's path). Not a `.txt`: the suite itself runs on another library.
    static func sequences(music: String) throws -> [DifferentialSequence] {
        let name = "formats.seq"
        let text = try String(contentsOfFile: DifferentialSequence.directory + "/" + name, encoding: .utf8)
        var sequences: [DifferentialSequence] = []
        var steps: [(line: Int, text: String)] = []
        var start = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.replacingOccurrences(of: "{music}", with: music)
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                if !steps.isEmpty {
                    sequences.append(DifferentialSequence(area: "formats", file: name, line: start, steps: steps))
                }
                steps = []
                continue
            }
            if line.hasPrefix("#") { continue }
            if steps.isEmpty { start = index + 1 }
            steps.append((index + 1, line))
        }
        if !steps.isEmpty {
            sequences.append(DifferentialSequence(area: "formats", file: name, line: start, steps: steps))
        }
        return sequences
    }

    /// The values of `key` in the song blocks of an answer, by file.
    static func values(_ key: String, _ lines: [String]) -> [String: [String]] {
        var file = ""
        var values: [String: [String]] = [:]
        for line in lines {
            if line.hasPrefix("file: ") { file = String(line.dropFirst(6)) }
            if line.hasPrefix(key + ": ") { values[file, default: []].append(String(line.dropFirst(key.count + 2))) }
        }
        return values
    }

    @Test(
        "lsinfo, listallinfo, find, search, list, count, stats, readcomments, readpicture, decoders, status: mpd's answers"
    )
    func formatsAgainstMPD() throws {
        let music = try FormatsMusic.path()
        let deliberate = try DifferentialDeliberate.load()
        let pair = try DifferentialPair(music: music)
        var failures: [String] = []
        var compared = 0
        var identical = 0
        var formats = 0
        var listed: [String] = []
        for sequence in try Self.sequences(music: music) {
            let mpd = try pair.mpdSide.run(sequence)
            let playerd = try pair.playerdSide.run(sequence)
            #expect(mpd.count == playerd.count, "\(sequence.name)")
            for (mpdAnswer, playerdAnswer) in zip(mpd, playerd) {
                compared += 1
                let location = "formats.seq:\(mpdAnswer.line) \(mpdAnswer.request)"
                let mpdLines = DifferentialNormalizer.normalize(mpdAnswer.lines)
                let playerdLines = DifferentialNormalizer.normalize(playerdAnswer.lines)
                if mpdLines == playerdLines {
                    identical += 1
                } else {
                    let verdict = deliberate.agree(mpdAnswer.request, mpd: mpdLines, playerd: playerdLines)
                    if verdict.agree {
                        listed.append("\(location) (MPD-DIFFERENCES.md lines \(verdict.rows))")
                    } else {
                        failures.append("\(location)\n  mpd:     \(mpdLines)\n  playerd: \(playerdLines)")
                    }
                }
                // Stricter than the suite's rows (which mask every `Format` and `duration` for MP3's sake):
                // the new formats' own values must be mpd's. `status` speaks of the song the sequence added.
                let added = sequence.steps.last { $0.text.hasPrefix("add ") }.map { String($0.text.dropFirst(4)) } ?? ""
                for key in ["Format", "duration", "audio"] {
                    let mpdValues = Self.values(key, mpdAnswer.lines)
                    let playerdValues = Self.values(key, playerdAnswer.lines)
                    for (file, values) in mpdValues {
                        let song = file.isEmpty ? added : file
                        // MP3's lengths and bits differ on purpose (MPD-DIFFERENCES.md), and while a song
                        // plays: an Opus's length (the exact one, where mpd counts the pre-skip in) and a
                        // Vorbis's `audio:` (16 bits as oggdec decodes, where mpd decodes floats).
                        let playing = file.isEmpty
                        if song.hasSuffix(".mp3") || (playing && key == "duration" && song.hasSuffix(".opus"))
                            || (playing && key == "audio" && song.hasSuffix(".ogg"))
                        {
                            continue
                        }
                        formats += 1
                        if playerdValues[file] != values {
                            failures.append(
                                "\(location): \(key) of \(song): mpd \(values), playerd \(playerdValues[file] ?? [])")
                        }
                    }
                }
            }
        }
        print(
            "formats against mpd: \(compared) answers, \(identical) identical, \(formats) format/duration values checked"
        )
        for line in listed {
            print("  differs as listed: " + line)
        }
        #expect(compared > 40)
        #expect(formats > 30)
        for failure in failures {
            Issue.record(Comment(rawValue: failure))
        }
    }
    /// mpd's answer to `getfingerprint URI` on a new connection; mpd 0.23.12 sometimes never answers
    /// (fixed upstream in 0.24.4): nil after three silent tries, each on a freshly started mpd.
    private static func mpdFingerprint(_ uri: String, music: String) throws -> [String]? {
        for _ in 0..<3 {
            let mpd = try RunningMPD(music: music)
            if let answer = try? mpd.connect().command("getfingerprint \(uri)", timeout: .seconds(15)) {
                return answer
            }
        }
        return nil
    }

    /// How many items a `chromaprint: ...` fingerprint holds: the 24-bit count after the algorithm's
    /// byte at the start of its compressed form (URL-safe base64, no padding).
    static func items(_ line: String) -> Int? {
        var text = String(line.dropFirst("chromaprint: ".count)).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let bytes = Data(base64Encoded: text), bytes.count >= 4 else { return nil }
        return Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
    }

    @Test("getfingerprint of FLAC (16 and 24 bits) and Vorbis is mpd's; an Opus's covers all of its audio")
    func fingerprintsAgainstMPD() throws {
        let root = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let music = root + "/music"
        // 25 s of sweeps and modulated tones: fingerprints with something in them (pure tones give almost
        // empty ones, which match too easily).
        let script = """
            set -e
            mkdir -p '\(music)'
            cd '\(root)'
            sox -q -n -r 44100 -c 2 -b 16 rich.wav synth 25 sine 200-3000 synth 25 sine amod 3 vol 0.4
            sox -q -n -r 48000 -c 2 -b 24 rich24.wav synth 25 sine 300-4000 synth 25 square amod 2 vol 0.3
            flac -s -f rich.wav -o '\(music)/rich.flac'
            flac -s -f rich24.wav -o '\(music)/rich24.flac'
            oggenc -Q rich.wav -o '\(music)/rich.ogg'
            opusenc --quiet rich.wav '\(music)/rich.opus'
            """
        let made = try runProgram("/bin/bash", ["-c", script], within: .seconds(120))
        #expect(made.status == 0, "\(made)")
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--music-dir", music]
        try withPlayerd(options) { daemon in
            var compared = 0
            var playerdPrints: [String: String] = [:]
            for uri in ["rich.flac", "rich24.flac", "rich.ogg", "rich.opus"] {
                let playerd = try daemon.connect().command("getfingerprint \(uri)", timeout: .seconds(30))
                #expect(playerd.count == 2 && playerd[0].hasPrefix("chromaprint: AQAA"), "\(uri): \(playerd)")
                playerdPrints[uri] = playerd.first
                guard uri != "rich.opus" else { continue }
                guard let mpd = try Self.mpdFingerprint(uri, music: music) else {
                    print("getfingerprint \(uri): mpd never answered (0.23.12's hang)")
                    continue
                }
                compared += 1
                #expect(playerd == mpd, "getfingerprint \(uri)")
            }
            #expect(compared >= 2, "mpd answered too few getfingerprint requests to compare")
            // The same 25 s as rich.flac: as many fingerprint items, where mpd's Opus plugin feeds
            // libchromaprint about half a second less (MPD-DIFFERENCES.md).
            let opusItems = playerdPrints["rich.opus"].flatMap(Self.items)
            #expect(opusItems != nil && opusItems == playerdPrints["rich.flac"].flatMap(Self.items))
        }
    }
}
