// Crossfade and MixRamp, after MPD's src/player/CrossFade.cxx and src/pcm/Mix.cxx: when one song ends
// by itself and the next follows, the last seconds of the one are mixed into the start of the other.
// The rules (when it applies, how long the overlap is) are MPD's; the mixing is done per frame rather
// than per 4 KiB chunk, so the fade is a smooth curve and exactly as long as asked.

import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's cross-fade settings: `crossfade`, `mixrampdb` and `mixrampdelay`.
public struct CrossfadeSettings: Sendable, Hashable {
    /// The crossfade, in seconds; 0 (the default) joins songs gaplessly, sample-exact.
    public var seconds = 0
    /// The level, in dB, at which MixRamp joins two songs (MPD's default: 0).
    public var mixRampDB: Float = 0
    /// Seconds taken off the MixRamp overlap; zero or less (MPD's default: -1) switches MixRamp off.
    public var mixRampDelay: Double = -1

    /// The default: no crossfade, MixRamp off.
    public init() {}

    /// Songs shorter than this never cross-fade (MPD's `MIN_TOTAL_TIME`).
    public static let minimumSongSeconds = 20

    /// How many frames of the end of a song of `currentLength` frames overlap the start of the next
    /// one (`nextLength` frames), both in `format` (songs in different formats never overlap), as MPD's
    /// `CrossFadeSettings::Calculate` decides: 0 when crossfade is off, when either song's length is
    /// unknown, shorter than 20 s or not longer than the crossfade. With MixRamp on (a positive delay)
    /// and both ramps known (the next song's `MIXRAMP_START`, this one's `MIXRAMP_END`), the overlap is
    /// where both ramps reach `mixRampDB` (less the songs' ReplayGain), less the delay, and `isMixRamp`
    /// says the songs are added rather than faded; otherwise the overlap is the crossfade's length.
    public func overlap(
        currentLength: Int?, nextLength: Int?, format: AudioFormat, nextFormat: AudioFormat,
        mixRampStart: String? = nil, mixRampPreviousEnd: String? = nil,
        replayGainDB: Double = 0, previousReplayGainDB: Double = 0
    ) -> (frames: Int, isMixRamp: Bool) {
        guard self.seconds > 0, format == nextFormat, self.canCrossfade(currentLength, format),
            self.canCrossfade(nextLength, format)
        else { return (0, false) }
        guard self.mixRampDelay > 0, let mixRampStart, let mixRampPreviousEnd else {
            return (self.seconds * format.sampleRate, false)
        }
        let current = Self.interpolate(mixRampStart, requiredDB: Double(self.mixRampDB) - replayGainDB)
        let previous = Self.interpolate(mixRampPreviousEnd, requiredDB: Double(self.mixRampDB) - previousReplayGainDB)
        let overlap = current + previous
        guard current >= 0, previous >= 0, self.mixRampDelay <= overlap else { return (0, true) }
        let seconds = overlap - self.mixRampDelay
        // A ramp of a damaged tag could say anything (`inf`): no overlap is longer than the shorter song,
        // and one that is no number is none.
        guard !seconds.isNaN else { return (0, true) }
        let limit = min(currentLength ?? 0, nextLength ?? 0)
        guard seconds.isFinite, seconds * Double(format.sampleRate) < Double(limit) else { return (limit, true) }
        return (Int((seconds * Double(format.sampleRate)).rounded()), true)
    }

    /// Whether a song of `length` frames may cross-fade: known, at least 20 s, longer than the crossfade.
    private func canCrossfade(_ length: Int?, _ format: AudioFormat) -> Bool {
        guard let length else { return false }
        // At most 4294967295 s times 384 kHz: far inside an Int.
        return length >= Self.minimumSongSeconds * format.sampleRate && self.seconds * format.sampleRate < length
    }

    /// MPD's `mixramp_interpolate`: `ramp` is pairs of a level in dB and a time in seconds (`dB s;dB s`,
    /// levels rising); the time at which the ramp reaches `requiredDB`, interpolated linearly; -1 when
    /// the ramp never does or cannot be read.
    public static func interpolate(_ ramp: String, requiredDB: Double) -> Double {
        var lastDB = 0.0
        var lastSeconds = 0.0
        var haveLast = false
        return ramp.withCString { start -> Double in
            var cursor = start
            while true {
                var end: UnsafeMutablePointer<CChar>?
                let db = Double(strtof(cursor, &end))
                guard let afterDB = end, afterDB != UnsafeMutablePointer(mutating: cursor), afterDB.pointee == 0x20
                else { return -1 }
                cursor = UnsafePointer(afterDB + 1)
                var seconds = Double(strtof(cursor, &end))
                guard let afterSeconds = end, afterSeconds != UnsafeMutablePointer(mutating: cursor),
                    afterSeconds.pointee == 0x3B || afterSeconds.pointee == 0
                else { return -1 }
                cursor = UnsafePointer(afterSeconds.pointee == 0x3B ? afterSeconds + 1 : afterSeconds)
                if db == requiredDB {
                    return seconds
                }
                if db < requiredDB {
                    (lastDB, lastSeconds, haveLast) = (db, seconds, true)
                    continue
                }
                if !haveLast {
                    return seconds
                }
                seconds = lastSeconds + (requiredDB - lastDB) * (seconds - lastSeconds) / (db - lastDB)
                return seconds
            }
        }
    }
}

/// Mixing two songs' PCM where they overlap.
public enum CrossfadeMix {
    /// The weight of the incoming song at `step` of `length` steps into the fade, in 1/65536: MPD's
    /// curve, sin²(π/2 · step/length), rising from 0 to 1; the outgoing song gets the rest.
    public static func incomingWeight(step: Int, of length: Int) -> Int {
        guard length > 0 else { return 65536 }
        let portion = min(max(Double(step) / Double(length), 0), 1)
        let sine = sin(Double.pi / 2 * portion)
        return Int((sine * sine * 65536).rounded())
    }

    /// Mixes `incoming` into `outgoing` in place, `frames` interleaved frames of `format`: faded, the
    /// first frame `step` steps into a fade of `length` (each frame one step), or, for MixRamp
    /// (`adding`), simply added and clamped, as MPD's `pcm_mix` does.
    public static func mix(
        _ incoming: UnsafeRawBufferPointer, into outgoing: UnsafeMutableRawBufferPointer, frames: Int,
        format: AudioFormat, step: Int, length: Int, adding: Bool
    ) {
        let channels = format.channels
        switch format.sampleFormat {
        case .signed16:
            let from = incoming.bindMemory(to: Int16.self)
            let into = outgoing.bindMemory(to: Int16.self)
            for frame in 0..<frames {
                let weight = adding ? 0 : Self.incomingWeight(step: step + frame, of: length)
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    let a = Int(from[index])
                    let b = Int(into[index])
                    let mixed = adding ? a + b : (a * weight + b * (65536 - weight) + 32768) >> 16
                    into[index] = Int16(clamping: mixed)
                }
            }
        case .signed24, .signed32:
            let from = incoming.bindMemory(to: Int32.self)
            let into = outgoing.bindMemory(to: Int32.self)
            let limit = format.sampleFormat == .signed24 ? 8_388_607 : Int(Int32.max)
            for frame in 0..<frames {
                let weight = adding ? 0 : Self.incomingWeight(step: step + frame, of: length)
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    let a = Int(from[index])
                    let b = Int(into[index])
                    let mixed = adding ? a + b : (a * weight + b * (65536 - weight) + 32768) >> 16
                    into[index] = Int32(max(-limit - 1, min(limit, mixed)))
                }
            }
        case .float32:
            let from = incoming.bindMemory(to: Float.self)
            let into = outgoing.bindMemory(to: Float.self)
            for frame in 0..<frames {
                let weight = Float(adding ? 0 : Self.incomingWeight(step: step + frame, of: length)) / 65536
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    into[index] = adding ? from[index] + into[index] : from[index] * weight + into[index] * (1 - weight)
                }
            }
        }
    }
}
