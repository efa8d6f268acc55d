import Testing

@testable import ControlProtocol

@Suite("Framing a byte stream into lines")
struct LineFramerTests {
    @Test("yields each complete line, without its newline")
    func lines() {
        var framer = LineFramer()
        #expect(framer.feed(Array("status\nping\n".utf8)) == [.line("status"), .line("ping")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test("strips one trailing carriage return, and only at the end")
    func crlf() {
        var framer = LineFramer()
        #expect(
            framer.feed(Array("status\r\nadd \"a\rb\"\r\n\r\n".utf8)) == [
                .line("status"), .line("add \"a\rb\""), .line(""),
            ])
        #expect(framer.feed(Array("x\r\r\n".utf8)) == [.line("x\r")])
    }

    @Test("keeps an empty line: deciding what it means is the tokenizer's job")
    func emptyLine() {
        var framer = LineFramer()
        #expect(framer.feed(Array("\n\n".utf8)) == [.line(""), .line("")])
    }

    @Test("joins a line split across feeds, even a multi-byte character cut in half")
    func splitAcrossFeeds() {
        var framer = LineFramer()
        let bytes = Array("add \"caf\u{e9}\"\nping\n".utf8)
        var frames: [LineFramer.Frame] = []
        for byte in bytes {
            frames += framer.feed([byte])
        }
        #expect(frames == [.line("add \"caf\u{e9}\""), .line("ping")])
        #expect(framer.feed(Array("sta".utf8)) == [])
        #expect(framer.bufferedByteCount == 3)
        #expect(framer.feed(Array("tus\r".utf8)) == [])
        #expect(framer.feed(Array("\nne".utf8)) == [.line("status")])
        #expect(framer.feed(Array("xt\n".utf8)) == [.line("next")])
    }

    @Test("accepts a line of exactly the limit and refuses one byte more, whole or in pieces")
    func exactLimit() {
        for pieces in [1, 2, 7] {
            var framer = LineFramer(maximumLineLength: 10)
            let atLimit = Array("ping 12345".utf8)
            let overLimit = Array("ping 123456".utf8)
            var frames: [LineFramer.Frame] = []
            for stream in [atLimit + [0x0A], overLimit + [0x0A], Array("ok\n".utf8)] {
                let size = (stream.count + pieces - 1) / pieces
                for start in stride(from: 0, to: stream.count, by: size) {
                    frames += framer.feed(Array(stream[start..<min(start + size, stream.count)]))
                }
            }
            #expect(frames == [.line("ping 12345"), .tooLong, .line("ok")], "in \(pieces) pieces")
        }
    }

    @Test("the limit counts a carriage return before the newline")
    func limitCountsCarriageReturn() {
        var framer = LineFramer(maximumLineLength: 4)
        #expect(framer.feed(Array("ping\r\nabc\r\n".utf8)) == [.tooLong, .line("abc")])
    }

    @Test("a 10 MB line fed in chunks is reported once and never buffered past the limit")
    func hugeLine() {
        let limit = 65536
        var framer = LineFramer()
        #expect(framer.maximumLineLength == limit)
        let chunk = [UInt8](repeating: 0x61, count: 4096)
        var frames: [LineFramer.Frame] = []
        frames += framer.feed(Array("add ".utf8))
        var mostBuffered = 0
        var mostAllocated = 0
        for _ in 0..<(10 * 1024 * 1024 / chunk.count) {
            frames += framer.feed(chunk)
            mostBuffered = max(mostBuffered, framer.bufferedByteCount)
            mostAllocated = max(mostAllocated, framer.bufferCapacity)
        }
        #expect(mostBuffered <= limit)
        #expect(mostBuffered > limit - chunk.count)
        // Array may round an allocation up a little, never to the next doubling.
        #expect(mostAllocated <= limit + 64)
        #expect(frames == [.tooLong])
        frames += framer.feed(Array("aaa\nstatus\n".utf8))
        #expect(frames == [.tooLong, .line("status")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test("a too-long line inside one big read is reported once, and the lines around it survive")
    func hugeLineInOneRead() {
        var framer = LineFramer(maximumLineLength: 100)
        let bytes = Array("ping\n".utf8) + [UInt8](repeating: 0x62, count: 1000) + Array("\nstatus\n".utf8)
        #expect(framer.feed(bytes) == [.line("ping"), .tooLong, .line("status")])
    }

    @Test("a line that is not UTF-8 is reported as such, and the next one is fine")
    func invalidUTF8() {
        var framer = LineFramer()
        #expect(
            framer.feed([0x61, 0x64, 0x64, 0x20, 0xFF, 0xFE, 0x0A] + Array("ping\n".utf8)) == [
                .invalidUTF8, .line("ping"),
            ])
        // A truncated sequence, and an overlong encoding of "/".
        #expect(framer.feed([0x61, 0xE2, 0x82, 0x0A, 0xC0, 0xAF, 0x0A]) == [.invalidUTF8, .invalidUTF8])
        // Split across feeds, a valid character is not mistaken for an invalid one.
        #expect(framer.feed([0x61, 0xE2]) == [])
        #expect(framer.feed([0x82, 0xAC, 0x0A]) == [.line("a\u{20ac}")])
    }

    @Test("names its refusals as ACKs")
    func acks() {
        let framer = LineFramer()
        #expect(framer.ack(for: .tooLong)?.line == "ACK [2@0] {} line too long: more than 65536 bytes\n")
        #expect(framer.ack(for: .invalidUTF8)?.line == "ACK [2@0] {} invalid UTF-8 in request\n")
        #expect(framer.ack(for: .line("ping")) == nil)
        #expect(
            LineFramer(maximumLineLength: 8192).ack(for: .tooLong)?.message == "line too long: more than 8192 bytes")
    }

    @Test("reads from a raw buffer into a reused frame array")
    func rawBuffer() {
        var framer = LineFramer()
        var frames: [LineFramer.Frame] = []
        Array("a\nb".utf8).withUnsafeBytes { framer.feed($0, into: &frames) }
        Array("\n".utf8).withUnsafeBytes { framer.feed($0, into: &frames) }
        #expect(frames == [.line("a"), .line("b")])
    }

    @Test("a line repeated, whole or split across reads, reads the same each time; a line that differs does not")
    func repeatedLines() {
        var framer = LineFramer()
        #expect(
            framer.feed(Array("status\nstatus\r\nstatus\nstatu\n".utf8)) == [
                .line("status"), .line("status"), .line("status"), .line("statu"),
            ])
        #expect(framer.feed(Array("sta".utf8)) == [])
        #expect(framer.feed(Array("tus\nstatuses\n".utf8)) == [.line("status"), .line("statuses")])
        let long = String(repeating: "x", count: 100)
        #expect(framer.feed(Array("\(long)\n\(long)\nstatus\n".utf8)) == [.line(long), .line(long), .line("status")])
    }
}
