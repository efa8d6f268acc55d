import CMPG123

/// A song's MixRamp profile (MPD's `MixRampInfo`): where its start and its end ramp through loudness
/// levels, as `dB seconds;dB seconds;...`, from the ID3v2 `TXXX` frames `MIXRAMP_START` and `MIXRAMP_END`
/// (names matched ignoring case, as MPD matches them).
public struct MixRamp: Sendable, Hashable {
    /// The start's ramp, when tagged.
    public var start: String?
    /// The end's ramp, when tagged.
    public var end: String?

    /// A profile; none by default.
    public init(start: String? = nil, end: String? = nil) {
        self.start = start
        self.end = end
    }

    /// The profile in the ID3v2 tag of the file `handle` has open (after `mpg123_getformat`).
    static func read(_ handle: OpaquePointer) -> MixRamp {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_meta_check(handle) & MPG123_ID3 != 0, mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue,
            let tag = v2?.pointee, let extras = tag.extra, tag.extras > 0
        else { return MixRamp() }
        var ramp = MixRamp()
        for entry in UnsafeBufferPointer(start: extras, count: tag.extras) {
            guard let description = ID3Tags.values(entry.description).first,
                let value = ID3Tags.values(entry.text).first
            else { continue }
            switch description.lowercased() {
            case "mixramp_start": ramp.start = value
            case "mixramp_end": ramp.end = value
            default: continue
            }
        }
        return ramp
    }
}
