import Testing

@testable import StreamInput

/// A stream of `audio` bytes with a metadata block (`blocks[k]`, NUL-padded) after every `metaint`.
private func icyStream(audio: [UInt8], metaint: Int, blocks: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    var block = 0
    var offset = 0
    while offset < audio.count {
        let end = min(offset + metaint, audio.count)
        out += audio[offset..<end]
        offset = end
        if end % metaint == 0 {
            let meta = blocks[block % blocks.count]
            let padded = (meta.count + 15) / 16
            out.append(UInt8(padded))
            out += meta + [UInt8](repeating: 0, count: padded * 16 - meta.count)
            block += 1
        }
    }
    return out
}

/// Runs `input` through a demuxer in chunks of the given sizes (cycled), with unlimited room.
private func demux(_ input: [UInt8], metaint: Int, chunks: [Int]) -> (audio: [UInt8], blocks: [[UInt8]]) {
    var demuxer = ICYDemuxer(metaint: metaint)
    var audio: [UInt8] = []
    var blocks: [[UInt8]] = []
    var offset = 0
    var index = 0
    while offset < input.count {
        let size = min(chunks[index % chunks.count], input.count - offset)
        index += 1
        let chunk = Array(input[offset..<offset + size])
        let consumed = chunk.withUnsafeBytes { bytes in
            demuxer.process(
                bytes, room: .max, audio: { audio += $0 }, metadata: { blocks.append($0) })
        }
        #expect(consumed == size)
        offset += size
    }
    return (audio, blocks)
}

@Suite("ICY metadata")
struct ICYTests {
    let audio = (0..<1000).map { UInt8($0 % 251) }
    let titles: [[UInt8]] = [
        Array("StreamTitle='First';StreamUrl='';".utf8), [], Array("StreamTitle='It's Me';".utf8),
    ]

    @Test("the audio and the blocks come out whole at every split of the stream into two chunks")
    func everySplit() {
        let input = icyStream(audio: audio, metaint: 100, blocks: titles)
        for split in 1..<input.count {
            let (out, blocks) = demux(input, metaint: 100, chunks: [split, input.count])
            #expect(out == audio, "split at \(split)")
            // Ten blocks, three of them empty (a length byte 0, not reported).
            #expect(blocks.count == 7, "split at \(split)")
            #expect(blocks.first.map { ICYMetadata.streamTitle(in: $0) } == .some(.some("First")))
        }
    }

    @Test("one byte at a time, and odd chunk sizes", arguments: [[1], [3, 1, 200], [17], [99, 101, 2]])
    func chunkSizes(_ sizes: [Int]) {
        let input = icyStream(audio: audio, metaint: 64, blocks: titles)
        let (out, blocks) = demux(input, metaint: 64, chunks: sizes)
        #expect(out == audio)
        // Fifteen blocks, five of them empty.
        #expect(blocks.count == 10)
    }

    @Test("no metaint: every byte is audio")
    func noMetadata() {
        let (out, blocks) = demux(audio, metaint: 0, chunks: [7])
        #expect(out == audio)
        #expect(blocks.isEmpty)
    }

    @Test("audio is given only as far as the room allows, and the rest is left unconsumed")
    func room() {
        let input = icyStream(audio: audio, metaint: 100, blocks: titles)
        var demuxer = ICYDemuxer(metaint: 100)
        var out: [UInt8] = []
        var offset = 0
        var rounds = 0
        while offset < input.count {
            rounds += 1
            let consumed = input[offset...].withUnsafeBytes { bytes in
                demuxer.process(bytes, room: 30, audio: { out += $0 }, metadata: { _ in })
            }
            #expect(consumed > 0)
            offset += consumed
        }
        #expect(out == audio)
        #expect(rounds >= audio.count / 30)
    }

    static let titleCases: [([UInt8], String)] = [
        (Array("StreamTitle='It's Me';StreamUrl='';".utf8), "It's Me"),
        (Array("StreamTitle='Björk - Jóga';".utf8), "Björk - Jóga"),
        (Array("StreamTitle='Bj".utf8) + [0xF6] + Array("rk';".utf8), "Björk"),
        (Array("StreamTitle='Sigur Rós';".utf8) + [0, 0, 0, 0], "Sigur Rós"),
        (Array("StreamTitle='';StreamUrl='http://x';".utf8), ""),
        (Array("StreamTitle='No end".utf8) + [0, 0], "No end"),
        (Array("StreamTitle='Trailing quote'".utf8), "Trailing quote"),
        (Array("StreamTitle='a';b';".utf8), "a"),
    ]

    @Test("titles: quotes inside, UTF-8, Latin-1, NUL padding, empty, missing", arguments: titleCases)
    func titles(_ block: [UInt8], _ expected: String) {
        #expect(ICYMetadata.streamTitle(in: block) == .some(expected))
    }

    @Test("a block without StreamTitle says nothing of the title")
    func noTitle() {
        #expect(ICYMetadata.streamTitle(in: Array("StreamUrl='http://x';".utf8)) == .none)
        #expect(ICYMetadata.streamTitle(in: [0, 0, 0]) == .none)
    }
}
