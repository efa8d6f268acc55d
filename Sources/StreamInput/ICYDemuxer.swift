/// Takes SHOUTcast/Icecast metadata out of a stream's bytes: every `metaint` bytes of audio, one length
/// byte (× 16 bytes) and that many bytes of metadata (`StreamTitle='...';StreamUrl='...';`, NUL-padded).
/// Works on any split of the bytes into chunks.
struct ICYDemuxer {
    /// Audio bytes between metadata blocks; 0 when the stream has no metadata.
    let metaint: Int
    private var audioLeft: Int
    private var metadataLeft = 0
    private var inMetadata = false
    private var metadata: [UInt8] = []

    init(metaint: Int) {
        self.metaint = max(0, metaint)
        audioLeft = self.metaint
        metadata.reserveCapacity(255 * 16)
    }

    /// Consumes from `input` as much as it can while giving at most `room` bytes of audio to `audio`;
    /// a whole metadata block goes to `metadata` (an empty block is not reported).
    /// - Returns: the bytes of `input` consumed.
    mutating func process(
        _ input: UnsafeRawBufferPointer, room: Int, audio: (UnsafeRawBufferPointer) -> Void,
        metadata onMetadata: ([UInt8]) -> Void
    ) -> Int {
        var offset = 0
        var room = room
        while offset < input.count {
            if metaint == 0 {
                let count = min(room, input.count - offset)
                if count == 0 { break }
                audio(UnsafeRawBufferPointer(rebasing: input[offset..<offset + count]))
                offset += count
                room -= count
            } else if !inMetadata {
                if audioLeft > 0 {
                    let count = min(room, audioLeft, input.count - offset)
                    if count == 0 { break }
                    audio(UnsafeRawBufferPointer(rebasing: input[offset..<offset + count]))
                    offset += count
                    room -= count
                    audioLeft -= count
                } else {
                    // The length byte.
                    metadataLeft = Int(input[offset]) * 16
                    offset += 1
                    if metadataLeft == 0 {
                        audioLeft = metaint
                    } else {
                        inMetadata = true
                        metadata.removeAll(keepingCapacity: true)
                    }
                }
            } else {
                let count = min(metadataLeft, input.count - offset)
                metadata.append(contentsOf: input[offset..<offset + count])
                offset += count
                metadataLeft -= count
                if metadataLeft == 0 {
                    inMetadata = false
                    audioLeft = metaint
                    onMetadata(metadata)
                }
            }
        }
        return offset
    }
}

/// The fields of an ICY metadata block.
enum ICYMetadata {
    /// The block's StreamTitle: nil when the block has none; "" when it is empty (the title is
    /// cleared). Quotes inside the title are kept (`StreamTitle='It's Me';` → "It's Me"): the value
    /// ends at the first "';" (or the block's last quote). UTF-8, else Latin-1.
    static func streamTitle(in block: [UInt8]) -> String?? {
        var end = block.count
        while end > 0, block[end - 1] == 0 { end -= 1 }
        let bytes = block[0..<end]
        let key = Array("StreamTitle='".utf8)
        guard let start = bytes.firstRange(of: key)?.upperBound else { return .none }
        var valueEnd = bytes.endIndex
        var index = start
        var found = false
        while index + 1 < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "'") && bytes[index + 1] == UInt8(ascii: ";") {
                valueEnd = index
                found = true
                break
            }
            index += 1
        }
        if !found {
            valueEnd = bytes[start...].lastIndex(of: UInt8(ascii: "'")) ?? bytes.endIndex
        }
        let value = decodeText(bytes[start..<valueEnd]).trimmingWhitespace()
        return .some(value)
    }
}
