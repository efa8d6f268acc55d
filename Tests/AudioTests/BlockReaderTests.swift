import Foundation
import Testing

@testable import Audio

#if canImport(Glibc)
    import Glibc
#endif

@Suite("BlockReader: libmpg123's reader in 64 KB blocks")
struct BlockReaderTests {
    /// The 333 KB fixture: more than five blocks, the last one partial.
    let path = fixture("big-id3.mp3")

    func withReader(_ body: (BlockReader, [UInt8]) throws -> Void) throws {
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: self.path)))
        let descriptor = open(self.path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        try body(BlockReader(descriptor: descriptor), file)
    }

    /// Reads `count` bytes with `read(into:count:)`, as `read(2)` would hand them.
    func read(_ reader: BlockReader, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { reader.read(into: $0.baseAddress!, count: count) }
        return got < 0 ? nil : Array(bytes.prefix(got))
    }

    @Test("reads of every size, across blocks, give the file's bytes in order; the end reads as empty")
    func readsInOrder() throws {
        try self.withReader { reader, file in
            var offset = 0
            // Small reads (a frame's header, then its body), a read across a block's end, a read larger
            // than a block, then on to the end.
            for count in [4, 1041, 4, 70_000, 1, 200_000, 65_536, 100_000] {
                let expected = Array(file[min(offset, file.count)..<min(offset + count, file.count)])
                #expect(self.read(reader, count) == expected, "reading \(count) bytes at \(offset)")
                offset += expected.count
            }
            #expect(offset == file.count)
            #expect(self.read(reader, 10) == [])
        }
    }

    @Test("a file that cannot be read gives -1 with errno set, as read(2) would")
    func readErrors() throws {
        // A directory opens, but reading it fails with EISDIR: as a file on a disk that went away fails.
        let directory = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(directory >= 0)
        defer { close(directory) }
        let reader = BlockReader(descriptor: directory)
        var bytes = [UInt8](repeating: 0, count: 16)
        errno = 0
        let got = bytes.withUnsafeMutableBytes { reader.read(into: $0.baseAddress!, count: 16) }
        #expect(got == -1)
        #expect(errno == EISDIR)
        // A descriptor that cannot be read at an offset at all (a pipe): ESPIPE, for a small read
        // (through the block) and for one larger than a block (straight into the caller's buffer).
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let piped = BlockReader(descriptor: ends[0])
        for count in [4, BlockReader.blockBytes + 1] {
            var buffer = [UInt8](repeating: 0, count: count)
            errno = 0
            #expect(buffer.withUnsafeMutableBytes { piped.read(into: $0.baseAddress!, count: count) } == -1)
            #expect(errno == ESPIPE, "reading \(count) bytes")
        }
    }

    @Test("seeks as lseek(2) does: from the start, from here, from the end; negative offsets are refused")
    func seeks() throws {
        try self.withReader { reader, file in
            #expect(reader.seek(0, whence: SEEK_END) == off_t(file.count))
            #expect(reader.seek(-128, whence: SEEK_END) == off_t(file.count - 128))
            #expect(self.read(reader, 3) == Array(file[(file.count - 128)..<(file.count - 125)]))
            #expect(reader.seek(300_051, whence: SEEK_SET) == 300_051)
            #expect(self.read(reader, 4) == Array(file[300_051..<300_055]))
            // Back inside the block just read, and forward past it.
            #expect(reader.seek(-2, whence: SEEK_CUR) == 300_053)
            #expect(self.read(reader, 2) == Array(file[300_053..<300_055]))
            #expect(reader.seek(20_000, whence: SEEK_CUR) == 320_055)
            #expect(self.read(reader, 10) == Array(file[320_055..<320_065]))
            #expect(reader.seek(0, whence: SEEK_CUR) == 320_065)
            #expect(reader.seek(-1, whence: SEEK_SET) == -1)
            #expect(reader.seek(0, whence: 42) == -1)
            // Past the end, as lseek allows: reading there gives nothing.
            #expect(reader.seek(off_t(file.count + 10), whence: SEEK_SET) == off_t(file.count + 10))
            #expect(self.read(reader, 10) == [])
        }
    }
}
