import Audio
import Foundation
import Testing

/// A one-second 440 Hz tone at `amplitude`, encoded by lame with ReplayGain TXXX frames (and no
/// gain of lame's own in its header), in a fresh temporary directory.
func replayGainTone(
    amplitude: Double, trackGain: String?, trackPeak: String?, albumGain: String?, albumPeak: String?
) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("playerd-test-rg-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let wav = directory.appendingPathComponent("tone.wav").path
    let mp3 = directory.appendingPathComponent("tone.mp3").path
    let sox = try run(
        "/usr/bin/sox",
        ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "1", "sine", "440", "vol", "\(amplitude)"])
    #expect(sox.status == 0)
    var arguments = ["--quiet", "--noreplaygain"]
    let frames = [
        ("REPLAYGAIN_TRACK_GAIN", trackGain), ("REPLAYGAIN_TRACK_PEAK", trackPeak),
        ("REPLAYGAIN_ALBUM_GAIN", albumGain), ("REPLAYGAIN_ALBUM_PEAK", albumPeak),
    ]
    for case (let name, let value?) in frames { arguments += ["--tv", "TXXX=\(name)=\(value)"] }
    let lame = try run("/usr/bin/lame", arguments + [wav, mp3])
    #expect(lame.status == 0)
    return mp3
}

/// The RMS level of signed 16-bit PCM, and its largest sample's magnitude.
func levels(_ pcm: [UInt8]) -> (rms: Double, peak: Int) {
    var sum = 0.0
    var peak = 0
    pcm.withUnsafeBytes { raw in
        for sample in raw.bindMemory(to: Int16.self) {
            let value = Int(Int16(littleEndian: sample))
            sum += Double(value * value)
            peak = max(peak, abs(value))
        }
    }
    return ((sum / Double(pcm.count / 2)).squareRoot(), peak)
}

func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

@Suite struct ReplayGainTests {
    static let tagged = Result {
        try replayGainTone(
            amplitude: 0.5, trackGain: "-6.00 dB", trackPeak: "0.5", albumGain: "-3.00 dB", albumPeak: "0.5")
    }

    func level(_ path: String, _ gain: ReplayGain) throws -> (rms: Double, peak: Int, applied: Double) {
        let decoder = try MP3Decoder(path: path, replayGain: gain)
        let measured = levels(try decodeAll(decoder))
        return (measured.rms, measured.peak, decoder.appliedGainDB)
    }

    @Test func offIsBitIdenticalToMpg123() throws {
        let path = try Self.tagged.get()
        #expect(try decodeAll(MP3Decoder(path: path, replayGain: .off)) == referencePCM(path))
    }

    @Test func trackModePlaysTheTrackGain() throws {
        let path = try Self.tagged.get()
        let off = try self.level(path, .off)
        let track = try self.level(path, ReplayGain(source: .track))
        let measured = decibels(track.rms / off.rms)
        print("track mode: \(measured) dB (applied \(track.applied) dB)")
        #expect(abs(measured - -6.0) <= 0.05)
        #expect(abs(track.applied - -6.0) <= 0.01)
    }

    @Test func albumModePlaysTheAlbumGain() throws {
        let path = try Self.tagged.get()
        let off = try self.level(path, .off)
        let album = try self.level(path, ReplayGain(source: .album))
        let measured = decibels(album.rms / off.rms)
        print("album mode: \(measured) dB (applied \(album.applied) dB)")
        #expect(abs(measured - -3.0) <= 0.05)
    }

    @Test func thePreampAddsToTheStoredGain() throws {
        let path = try Self.tagged.get()
        let off = try self.level(path, .off)
        let track = try self.level(path, ReplayGain(source: .track, preampDB: 2))
        #expect(abs(decibels(track.rms / off.rms) - -4.0) <= 0.05)
    }

    @Test func aPeakThatWouldClipIsLimited() throws {
        let path = try replayGainTone(
            amplitude: 0.9, trackGain: "+10.00 dB", trackPeak: "0.9", albumGain: nil, albumPeak: nil)
        let off = try self.level(path, .off)
        let limited = try self.level(path, ReplayGain(source: .track))
        let measured = decibels(limited.rms / off.rms)
        print("limited: \(measured) dB (1/0.9 = \(decibels(1 / 0.9)) dB), peak sample \(limited.peak)")
        #expect(abs(measured - decibels(1 / 0.9)) <= 0.05)
        #expect(limited.peak < 32767)
        let unlimited = try self.level(path, ReplayGain(source: .track, limitsToPeak: false))
        #expect(abs(unlimited.applied - 10) <= 0.01)
    }

    @Test func aFileWithoutGainGetsTheMissingPreamp() throws {
        let path = try replayGainTone(amplitude: 0.5, trackGain: nil, trackPeak: nil, albumGain: nil, albumPeak: nil)
        let off = try self.level(path, .off)
        let missing = try self.level(path, ReplayGain(source: .track, missingPreampDB: -2))
        #expect(abs(decibels(missing.rms / off.rms) - -2.0) <= 0.05)
        #expect(missing.applied == -2)
    }
}
