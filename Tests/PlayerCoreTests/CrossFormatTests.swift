import Audio
import FormatTestSupport
import Foundation
import Testing

@testable import PlayerCore

/// Songs of every format in one queue, through the engine: gapless joins, format changes, full resolution.
/// The material is made at test time (sox, then each format's encoder) and the expected PCM comes from
/// each format's reference decoder: `flac -d`, `opusdec --no-dither`, `mpg123 -s`, `oggdec`.
@Suite("Formats side by side in the engine")
struct CrossFormatTests {
    @Test("FLAC → Opus → MP3 → Vorbis at 48 kHz join without a gap or an extra sample, on one open output")
    func gaplessAcrossFormats() async throws {
        let material = try EncodedMaterial()
        // Lengths that end mid-frame and mid-block in every format.
        let flac = try material.flac("a", from: material.source("a", seconds: 1.1234, rate: 48000, frequency: 330))
        let opus = try material.opus("b", from: material.source("b", seconds: 0.9871, rate: 48000, frequency: 440))
        let mp3 = try material.mp3("c", from: material.source("c", seconds: 1.5013, rate: 48000, frequency: 550))
        let vorbis = try material.vorbis("d", from: material.source("d", seconds: 1.7707, rate: 48000, frequency: 660))
        let songs = [flac, opus, mp3, vorbis]
        // Each reference decoder gives back exactly the source's frames (Opus's pre-skip and end trimmed).
        for (song, name) in zip(songs, ["a", "b", "c", "d"]) {
            let frames = try EncodedMaterial.frames(material.path(name + ".wav"))
            #expect(song.pcm.count == frames * 4, "\(song.path)")
        }

        let (engine, recording) = try makeEngine(songs.map(\.path))
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        expectSamePCM(recording.data, songs.flatMap(\.pcm))
        // One format all along: the output opened once and never drained between songs.
        #expect(recording.log == ["open 48000:16:2", "drain", "drop", "close"])
    }

    @Test("24-bit 96 kHz FLAC reaches the output at 24 bits and 96 kHz, then 16-bit Vorbis after a format change")
    func fullResolution() async throws {
        let material = try EncodedMaterial()
        let hires = try material.flac(
            "hires", from: material.source("hires", seconds: 0.75, rate: 96000, bits: 24, frequency: 1000))
        let vorbis = try material.vorbis(
            "after", from: material.source("after", seconds: 0.5, rate: 44100, frequency: 500))
        let (engine, recording) = try makeEngine([hires.path, vorbis.path])
        defer { engine.shutdown() }
        try await engine.handle(.play)
        try await waitUntil(engine) { $0.state == .stop }
        #expect(recording.log == ["open 96000:24:2", "drain", "close", "open 44100:16:2", "drain", "drop", "close"])
        // flac -d writes three bytes a sample; the engine carries each in a sign-extended 32-bit word.
        #expect(hires.pcm.count == 72000 * 2 * 3)
        expectSamePCM(recording.data, EncodedMaterial.widen24(hires.pcm) + vorbis.pcm)
    }
}
