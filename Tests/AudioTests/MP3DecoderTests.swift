import Foundation
import MusicTags
import Testing

@testable import Audio

@Suite("MP3Decoder on the good fixtures")
struct MP3DecoderTests {
    @Test("decodes bit for bit what mpg123 -s prints, with the exact length", arguments: GoodFixture.all)
    func signed16MatchesMPG123(_ fixture: GoodFixture) throws {
        let decoder = try MP3Decoder(path: fixture.path)
        #expect(
            decoder.format
                == AudioFormat(sampleRate: fixture.sampleRate, channels: fixture.channels, sampleFormat: .signed16))
        #expect(decoder.lengthFrames == fixture.frames)
        let pcm = try decodeAll(decoder)
        let reference = try referencePCM(fixture.path)
        #expect(pcm.count == fixture.frames * decoder.format.bytesPerFrame)
        expectSamePCM(pcm, reference)
        #expect(decoder.position == fixture.frames)
    }

    @Test("decodes float bit for bit what mpg123 -e f32 -s prints", arguments: GoodFixture.all)
    func float32MatchesMPG123(_ fixture: GoodFixture) throws {
        let decoder = try MP3Decoder(path: fixture.path, sampleFormat: .float32)
        #expect(decoder.format.sampleFormat == .float32)
        let pcm = try decodeAll(decoder, chunkFrames: 777)
        #expect(pcm.count == fixture.frames * fixture.channels * 4)
        expectSamePCM(pcm, try referencePCM(fixture.path, .float32))
    }

    /// After a seek libmpg123 restarts its synthesis filter's ring buffer at another offset than a
    /// straight decode reaches, so a few float sums round the other way: a sample may differ by one
    /// step of 16 bits. Position is exact: one sample off, nearly every sample would differ, by far more.
    @Test("seeks sample-exactly, forwards and backwards", arguments: GoodFixture.all.prefix(6))
    func seekIsSampleExact(_ fixture: GoodFixture) throws {
        let reference = try referencePCM(fixture.path)
        let decoder = try MP3Decoder(path: fixture.path)
        let bytesPerFrame = decoder.format.bytesPerFrame
        let targets = [fixture.frames / 2, 1, 1151, 1152, 4097, fixture.frames - 1, 0, fixture.frames - 2000, 12345]
        for target in targets {
            try decoder.seek(toFrame: target)
            #expect(decoder.position == target)
            let pcm = try decode(decoder, frames: 2000)
            let end = min(fixture.frames, target + 2000)
            expectSameSamples(
                pcm, Array(reference[target * bytesPerFrame..<end * bytesPerFrame]), "seek to frame \(target)")
        }
        try decoder.seek(toFrame: fixture.frames)
        #expect(try decode(decoder, frames: 100).isEmpty)
    }

    @Test("a seek index scanned by another decoder is taken whole, and seeks with it stay sample-exact")
    func installedIndex() throws {
        let song = GoodFixture.all[0]
        let reference = try referencePCM(song.path)
        let decoder = try MP3Decoder(path: song.path)
        let bytesPerFrame = decoder.format.bytesPerFrame
        _ = try decode(decoder, frames: 3000)
        let known = decoder.indexExtent.entries
        let index = try MP3Decoder.scanIndex(path: song.path)
        decoder.install(try MP3Decoder.scanIndex(path: fixture("one-second.mp3")))  // another file's: ignored
        #expect(decoder.indexExtent.entries == known)
        decoder.install(index)
        // Every MPEG frame of the file is indexed (1152 samples each; the Info frame counts too).
        #expect(decoder.indexExtent.entries * decoder.indexExtent.step >= song.frames / 1152)
        #expect(decoder.indexExtent.entries > known)
        #expect(decoder.position == 3000)
        for target in [song.frames - 1000, 5000, song.frames / 2] {
            try decoder.seek(toFrame: target)
            #expect(decoder.position == target)
            let pcm = try decode(decoder, frames: 1000)
            let end = min(song.frames, target + 1000)
            expectSameSamples(
                pcm, Array(reference[target * bytesPerFrame..<end * bytesPerFrame]), "indexed seek to \(target)")
        }
    }

    @Test func seekPastEitherEndIsRefusedAndChangesNothing() throws {
        let path = fixture("one-second.mp3")
        let decoder = try MP3Decoder(path: path)
        _ = try decode(decoder, frames: 500)
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: 44101, length: 44100)) {
            try decoder.seek(toFrame: 44101)
        }
        #expect(throws: DecoderError.seekOutOfRange(path: path, frame: -1, length: 44100)) {
            try decoder.seek(toFrame: -1)
        }
        #expect(decoder.position == 500)
        let reference = try referencePCM(path)
        #expect(try decode(decoder, frames: 10) == Array(reference[500 * 4..<510 * 4]))
    }

    @Test("reads the end of the song again after seeking back from it")
    func seekAfterEnd() throws {
        let fixture = GoodFixture.all[2]
        let decoder = try MP3Decoder(path: fixture.path)
        let first = try decodeAll(decoder)
        try decoder.seek(toFrame: 0)
        expectSamePCM(try decodeAll(decoder), first)
    }

    @Test("gapless pair: A then B has exactly the frames of the whole, aligned with the source")
    func gaplessPairJoinsExactly() throws {
        let a = try decodeAll(MP3Decoder(path: fixture("gapless-a.mp3")))
        let b = try decodeAll(MP3Decoder(path: fixture("gapless-b.mp3")))
        let whole = try decodeAll(MP3Decoder(path: fixture("gapless-whole.mp3")))
        #expect(a.count / 4 == 57777)
        #expect(b.count / 4 == 74523)
        #expect((a + b).count == whole.count)

        // Alignment: B must line up with the source at lag 0. One sample early or late would leave an
        // error near the whole signal's amplitude; lossy coding leaves a small fraction of it.
        let source = try Data(contentsOf: URL(fileURLWithPath: fixture("gapless-source.raw")))
        let sourceB = self.samples([UInt8](source.dropFirst(57777 * 4)))
        let decodedB = self.samples(b)
        func error(lag: Int) -> Double {
            let window = 2000..<60000  // clear of both cut edges
            return window.reduce(0.0) { sum, index in
                let difference = Double(decodedB[index + lag]) - Double(sourceB[index])
                return sum + difference * difference
            } / Double(window.count)
        }
        #expect(error(lag: 0) * 50 < error(lag: 2))
        #expect(error(lag: 0) * 50 < error(lag: -2))
    }

    @Test("reads tags from ID3v2.3 (UTF-16), ID3v2.4 (UTF-8) and ID3v1.1 (Latin-1)")
    func tags() throws {
        #expect(
            try MP3Decoder(path: fixture("tagged-id3v23.mp3")).tags
                == Tags(
                    title: "Café Noir — Ünïcødé ☃", artist: "Björk & Sigur Rós", album: "日本語のアルバム",
                    track: "3/12", date: "2019", genre: "Électronique"))
        #expect(
            try MP3Decoder(path: fixture("tagged-id3v24.mp3")).tags
                == Tags(
                    title: "Ζωή σε 4/4 — Ελληνικά", artist: "Мумий Тролль", album: "Ça ira, mon cœur",
                    track: "7", date: "2021-05-04", genre: "Synthpop"))
        #expect(
            try MP3Decoder(path: fixture("tagged-id3v1.mp3")).tags
                == Tags(
                    title: "Motörhead Übung", artist: "Sigur Rós", album: "Ágætis byrjun", track: "5",
                    date: "1999", genre: "Rock"))
        #expect(try MP3Decoder(path: fixture("big-id3.mp3")).tags == Tags(title: "Big Tag"))
        #expect(try MP3Decoder(path: fixture("stereo-44k-cbr.mp3")).tags.isEmpty)
    }

    @Test func bitrateAndVBR() throws {
        let cbr = try MP3Decoder(path: fixture("stereo-44k-cbr.mp3"))
        #expect(cbr.bitrate == 192)
        #expect(!cbr.isVariableBitrate)
        #expect(try MP3Decoder(path: fixture("mono-48k-vbr.mp3")).isVariableBitrate)
    }

    @Test(
        "resolves ID3 genre references",
        arguments: [
            ("(17)", "Rock"), ("17", "Rock"), ("(13)Pop music", "Pop music"), ("(RX)", "Remix"),
            ("Synthpop", "Synthpop"), ("(999)", "(999)"), ("(", "("),
        ])
    func genreReferences(_ input: String, _ expected: String) {
        #expect(ID3Genre.resolve(input) == expected)
    }

    private func expectSameSamples(
        _ actual: [UInt8],
        _ expected: [UInt8],
        _ comment: Comment,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let actualSamples = self.samples(actual)
        let expectedSamples = self.samples(expected)
        #expect(actualSamples.count == expectedSamples.count, comment, sourceLocation: sourceLocation)
        let differences = zip(actualSamples, expectedSamples).map { abs(Int($0) - Int($1)) }
        #expect(differences.allSatisfy { $0 <= 1 }, comment, sourceLocation: sourceLocation)
        #expect(
            differences.filter { $0 != 0 }.count * 100 <= differences.count, comment, sourceLocation: sourceLocation)
    }

    private func samples(_ bytes: [UInt8]) -> [Int16] {
        stride(from: 0, to: bytes.count - 1, by: 2).map {
            Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
        }
    }
}
