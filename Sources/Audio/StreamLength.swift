import CMPG123

#if canImport(Glibc)
    import Glibc
#endif

/// The length of an MP3 stream in sample frames, as libmpg123 decodes it, measured cheaply on a handle
/// that has just opened the file (after `mpg123_getformat`). `SongReader` and `MP3Decoder` both use it,
/// so the library, the queue's song blocks and the player's status agree.
///
/// - A Xing/Info header's frame count (with a LAME header's delay and padding, exact after gapless
///   trimming) is libmpg123's own answer: taken as it is, unless the file is too small to hold it.
/// - Without one, `mpg123_length` is "a bad estimate, ignoring tags": the whole file but an ID3v1 tag,
///   divided by the first frame's size. An ID3v2 tag counts as audio (0.3 s of 22 kHz audio behind a
///   264-byte tag came out as 0.43 s) and so does an APE tag; and the first frame's size is that of a
///   frame without its padding byte (0.5 % long at 32 kbit/s), or, in a VBR file, any size at all.
///   So the audio's bytes are measured here: from the first frame to the trailing tags.
///   - Within the first 8 KiB (short files) the frames are counted: exact, for a few microseconds.
///   - A constant bitrate (the frames at the start, a third and two thirds in all agree) gives the
///     frame count from the bytes and the mean frame size.
///   - Otherwise (VBR without a header, free format, damage) libmpg123 scans every frame header
///     (`mpg123_scan`, about 1 µs a frame: 25 ms for ten minutes), which is exact.
enum StreamLength {
    /// How many bytes of audio are read at each place the bitrate is sampled.
    static let sampleBytes = 8192

    /// The length of the stream `handle` has open on `descriptor`, or nil when libmpg123 cannot tell.
    /// The handle is left as it was found (its file size, its position).
    static func frames(_ handle: OpaquePointer, descriptor: Int32) -> Int? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return Self.reported(handle) }
        let fileSize = Int(info.st_size)
        let hasID3v1 = Self.hasID3v1(handle)
        // With the file's size unknown, libmpg123 answers only from a header's frame count. The size
        // it had is the file's less an ID3v1 tag (its reader stops there): it is put back.
        guard mpg123_set_filesize(handle, -1) == MPG123_OK.rawValue else { return Self.reported(handle) }
        let fromHeader = mpg123_length(handle)
        _ = mpg123_set_filesize(handle, off_t(hasID3v1 ? fileSize - 128 : fileSize))
        if fromHeader >= 0, Int(fromHeader) <= Self.mostSamples(inBytes: fileSize) {
            return Int(fromHeader)
        }
        let start = Int(mpg123_framepos(handle))
        let end = Self.audioEnd(descriptor, fileSize: fileSize, hasID3v1: hasID3v1)
        if start >= 0, end > start, let counted = Self.countedOrConstant(descriptor, start: start, end: end) {
            return counted
        }
        return Self.scanned(handle)
    }

    /// More sample frames than a file of `size` bytes can hold: every frame of 1152 samples (the most)
    /// takes 24 bytes or more (MPEG-2 layer III at 8 kbit/s and 24 kHz is the smallest). A header that
    /// claims more lies, and believing it costs more than a wrong time: libmpg123 counts its way to a seek
    /// target frame by frame, so seeking to the middle of a billion claimed frames took seconds.
    static func mostSamples(inBytes size: Int) -> Int {
        (size / 24 + 1) * 1152
    }

    /// What `mpg123_length` says; nil for its negative codes.
    private static func reported(_ handle: OpaquePointer) -> Int? {
        let length = mpg123_length(handle)
        return length >= 0 ? Int(length) : nil
    }

    /// The exact length from a scan of every frame header; libmpg123 goes back to where it was.
    private static func scanned(_ handle: OpaquePointer) -> Int? {
        guard mpg123_scan(handle) == MPG123_OK.rawValue else { return Self.reported(handle) }
        return Self.reported(handle)
    }

    /// Whether libmpg123 found an ID3v1 tag at the end of the file (it then stops reading before it).
    private static func hasID3v1(_ handle: OpaquePointer) -> Bool {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        return mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue && v1 != nil
    }

    /// Where the audio ends: before the ID3v1 tag and an APEv2 tag in front of it (its 32-byte footer
    /// gives its size, and its flags whether a 32-byte header comes first).
    private static func audioEnd(_ descriptor: Int32, fileSize: Int, hasID3v1: Bool) -> Int {
        let end = hasID3v1 ? fileSize - 128 : fileSize
        let footer = Self.bytes(descriptor, at: end - 32, count: 32)
        guard footer.count == 32, footer.starts(with: Array("APETAGEX".utf8)) else { return end }
        func little(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(footer[at + $1]) << (8 * $1) } }
        let size = little(12) + (little(20) & 0x8000_0000 != 0 ? 32 : 0)
        return size > 0 && size <= end ? end - size : end
    }

    /// The exact frame count of a short stream, or the count a constant bitrate gives; nil when the
    /// frames' bitrates differ (VBR) or their headers do not follow one another.
    private static func countedOrConstant(_ descriptor: Int32, start: Int, end: Int) -> Int? {
        let head = Self.bytes(descriptor, at: start, count: min(Self.sampleBytes, end - start))
        guard let first = MPEGFrameHeader(head, at: 0) else { return nil }
        let walk = first.walk(head, from: 0)
        if start + head.count == end {
            // The whole stream was read: the walk counted every frame, unless something broke it off.
            return walk.end == head.count ? walk.frames * first.samplesPerFrame : nil
        }
        var bitrates = walk.bitrates
        for place in [start + (end - start) / 3, start + (end - start) * 2 / 3] {
            let block = Self.bytes(descriptor, at: place, count: min(Self.sampleBytes, end - place))
            guard let offset = first.firstFrame(in: block) else { return nil }
            bitrates.formUnion(first.walk(block, from: offset).bitrates)
        }
        guard bitrates.count == 1, first.bitrate > 0 else { return nil }
        let frames = (Double(end - start) / first.meanLength).rounded()
        return Int(frames) * first.samplesPerFrame
    }

    /// Up to `count` bytes of the file from `offset` (fewer at its end, none on an error).
    private static func bytes(_ descriptor: Int32, at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = max(0, pread(descriptor, buffer.baseAddress, count, off_t(offset)))
        }
    }
}

/// The four bytes that start an MPEG audio frame (layer I, II or III; MPEG-1, 2 or 2.5), read as far as
/// the length is concerned: version, layer, bitrate, sample rate, padding.
struct MPEGFrameHeader: Equatable {
    /// 1 for MPEG-1, 2 for MPEG-2, 25 for MPEG-2.5.
    let version: Int
    /// 1, 2 or 3.
    let layer: Int
    /// Bits per second; 0 for free format.
    let bitrate: Int
    /// Samples per second.
    let sampleRate: Int
    /// Whether the frame carries a padding slot.
    let padded: Bool

    /// kbit/s by bitrate index, for MPEG-1 layers I, II, III and MPEG-2/2.5 layers I, and II and III.
    private static let bitrates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ]

    /// The header at `offset` in `bytes`, or nil where there is none (no sync, a reserved value).
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset >= 0, offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0
        else { return nil }
        let versionBits = Int(bytes[offset + 1] >> 3) & 3
        let layerBits = Int(bytes[offset + 1] >> 1) & 3
        let bitrateIndex = Int(bytes[offset + 2] >> 4)
        let rateIndex = Int(bytes[offset + 2] >> 2) & 3
        guard versionBits != 1, layerBits != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        self.version = [25, 0, 2, 1][versionBits]
        self.layer = 4 - layerBits
        let table = self.version == 1 ? self.layer - 1 : (self.layer == 1 ? 3 : 4)
        self.bitrate = Self.bitrates[table][bitrateIndex] * 1000
        self.sampleRate = [44100, 48000, 32000][rateIndex] / (self.version == 1 ? 1 : self.version == 2 ? 2 : 4)
        self.padded = bytes[offset + 2] & 0x02 != 0
    }

    /// 384 for layer I, 1152 for layer II and MPEG-1 layer III, 576 for MPEG-2/2.5 layer III.
    var samplesPerFrame: Int {
        self.layer == 1 ? 384 : (self.layer == 3 && self.version != 1 ? 576 : 1152)
    }

    /// The frame's length in bytes, header included; 0 for free format (the header does not say).
    var length: Int {
        guard self.bitrate > 0 else { return 0 }
        if self.layer == 1 {
            return (12 * self.bitrate / self.sampleRate + (self.padded ? 1 : 0)) * 4
        }
        return self.samplesPerFrame / 8 * self.bitrate / self.sampleRate + (self.padded ? 1 : 0)
    }

    /// The mean length of the stream's frames: encoders pad just enough frames to reach the bitrate.
    var meanLength: Double {
        Double(self.samplesPerFrame) / 8 * Double(self.bitrate) / Double(self.sampleRate)
    }

    /// Whether `other` belongs to the same stream (version, layer and sample rate do not change).
    func isSameStream(as other: MPEGFrameHeader) -> Bool {
        self.version == other.version && self.layer == other.layer && self.sampleRate == other.sampleRate
    }

    /// Follows frame after frame of this stream from `offset` while whole frames fit in `bytes`: how many
    /// there were, where the walk stopped and the bitrates met.
    func walk(_ bytes: [UInt8], from offset: Int) -> (frames: Int, end: Int, bitrates: Set<Int>) {
        var position = offset
        var frames = 0
        var bitrates = Set<Int>()
        while let header = MPEGFrameHeader(bytes, at: position), header.isSameStream(as: self), header.length > 0,
            position + header.length <= bytes.count
        {
            bitrates.insert(header.bitrate)
            frames += 1
            position += header.length
        }
        return (frames, position, bitrates)
    }

    /// The first offset in `bytes` where a frame of this stream starts that the next one follows.
    func firstFrame(in bytes: [UInt8]) -> Int? {
        var offset = 0
        while offset + 4 <= bytes.count {
            if let header = MPEGFrameHeader(bytes, at: offset), header.isSameStream(as: self), header.length > 0,
                let next = MPEGFrameHeader(bytes, at: offset + header.length), next.isSameStream(as: self)
            {
                return offset
            }
            offset += 1
        }
        return nil
    }
}
