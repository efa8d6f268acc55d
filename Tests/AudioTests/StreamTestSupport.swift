import Foundation
import Testing

@testable import Audio

/// An in-memory network stream: the bytes of one or more connections handed out in random chunk
/// sizes (1 byte to 64 KiB, small ones as often as large), with `.waiting` between them at random,
/// `.discontinuity` between connections and `.end` (for ever) after the last.
final class ChunkedSource: StreamByteSource, @unchecked Sendable {
    let url: String
    let contentType: String?
    let failure: String? = nil
    private var connections: [[UInt8]]
    private var connection = 0
    private var offset = 0
    private var generator: SplitMix64
    /// Whether the next read begins a new connection (the discontinuity has not been told yet).
    private var owesDiscontinuity = false
    /// How many `.waiting` were answered.
    private(set) var waits = 0
    /// Whether the source waits for ever once its bytes are out (a live stream gone quiet).
    private let waitsAtEnd: Bool

    init(
        _ connections: [[UInt8]], contentType: String? = "audio/mpeg", url: String = "http://127.0.0.1:1/stream",
        seed: UInt64 = 1, waitsAtEnd: Bool = false
    ) {
        self.connections = connections
        self.contentType = contentType
        self.url = url
        self.generator = SplitMix64(state: seed)
        self.waitsAtEnd = waitsAtEnd
    }

    /// A chunk size between 1 byte and 64 KiB, spread evenly over the powers of two.
    private func chunkSize() -> Int {
        let power = Int.random(in: 0...16, using: &self.generator)
        return Int.random(in: 1...(1 << power), using: &self.generator)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        if Int.random(in: 0..<3, using: &self.generator) == 0 {
            self.waits += 1
            return .waiting
        }
        if self.owesDiscontinuity {
            self.owesDiscontinuity = false
            return .discontinuity
        }
        while self.connection < self.connections.count, self.offset == self.connections[self.connection].count {
            guard self.connection + 1 < self.connections.count else {
                self.connection += 1
                break
            }
            self.connection += 1
            self.offset = 0
            return .discontinuity
        }
        guard self.connection < self.connections.count else {
            if self.waitsAtEnd {
                self.waits += 1
                return .waiting
            }
            return .end
        }
        let bytes = self.connections[self.connection]
        let count = min(self.chunkSize(), buffer.count, bytes.count - self.offset)
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + self.offset, byteCount: count)
        }
        self.offset += count
        return .bytes(count)
    }

    func peek(count: Int) -> [UInt8] {
        guard self.connection < self.connections.count else { return [] }
        let bytes = self.connections[self.connection]
        return Array(bytes[self.offset..<min(bytes.count, self.offset + count)])
    }
}

/// What a stream decoder produced, read to its end.
struct StreamDecoded {
    var pcm: [UInt8] = []
    var error: DecoderError?
    var reads = 0
}

/// Prepares `decoder` and reads it to `.ended` (or an error), in buffers of `chunkFrames` frames; a
/// `.waiting` is asked again (the fake source brings more). Gives up after `maxCalls` calls.
func drain(_ decoder: any StreamDecoder, chunkFrames: Int = 1500, maxCalls: Int = 2_000_000) -> StreamDecoded {
    var result = StreamDecoded()
    var calls = 0
    do {
        while try !decoder.prepare() {
            calls += 1
            if calls > maxCalls {
                Issue.record("prepare() never returned true")
                return result
            }
        }
        let format = decoder.format!
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: chunkFrames * format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while calls <= maxCalls {
            calls += 1
            switch try decoder.read(into: buffer) {
            case .frames(let frames):
                #expect(frames > 0 && frames <= chunkFrames)
                result.pcm += buffer[0..<frames * format.bytesPerFrame]
                result.reads += 1
            case .waiting:
                continue
            case .ended:
                return result
            }
        }
        Issue.record("the decoder never ended")
    } catch {
        result.error = error
    }
    return result
}

/// Calls `prepare()` until it returns true (the fake source brings more each time), or throws; false
/// when it never does.
@discardableResult
func prepareFully(_ decoder: any StreamDecoder) throws(DecoderError) -> Bool {
    for _ in 0..<100_000 where try decoder.prepare() {
        return true
    }
    return false
}

/// The bytes of a file.
func bytesOfFile(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}
