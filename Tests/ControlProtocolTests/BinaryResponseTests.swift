import ControlProtocol
import Testing

@Suite("Binary answers")
struct BinaryResponseTests {
    @Test("size, type, binary, the raw bytes and a newline, byte for byte as MPD 0.23 frames them")
    func framing() {
        var writer = ResponseWriter()
        let chunk: [UInt8] = [0xFF, 0xD8, 0x0A, 0x0D, 0x00, 0x4F, 0x4B, 0x0A]
        writer.binary(totalSize: 3004, type: "image/jpeg", chunk: chunk)
        writer.ok()
        let expected =
            Array("size: 3004\ntype: image/jpeg\nbinary: 8\n".utf8) + chunk + Array("\nOK\n".utf8)
        #expect(writer.bytes == expected)
    }

    @Test("without a type (albumart), and an empty chunk at the end of the file")
    func noTypeAndEmpty() {
        var writer = ResponseWriter()
        writer.binary(totalSize: 20000, type: nil, chunk: [UInt8]())
        #expect(writer.bytes == Array("size: 20000\nbinary: 0\n\n".utf8))
        writer.removeAll()
        writer.binary(totalSize: 3, type: nil, chunk: [UInt8]([1, 2, 3])[1...])
        #expect(writer.bytes == Array("size: 3\nbinary: 2\n".utf8) + [2, 3, 0x0A])
    }

    @Test("a large chunk arrives whole, after what was written before it")
    func largeChunk() {
        var writer = ResponseWriter(capacity: 16)
        writer.field("x", 1)
        let chunk = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        writer.binary(totalSize: 250_000, type: "image/png", chunk: chunk)
        let header = Array("x: 1\nsize: 250000\ntype: image/png\nbinary: 100000\n".utf8)
        #expect(writer.bytes.count == header.count + chunk.count + 1)
        #expect(Array(writer.bytes[..<header.count]) == header)
        #expect(Array(writer.bytes[header.count..<(header.count + chunk.count)]) == chunk)
        #expect(writer.bytes.last == 0x0A)
    }
}
