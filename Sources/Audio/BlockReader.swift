import CMPG123

#if canImport(Glibc)
    import Glibc
#endif

/// libmpg123's reader for a file open on a descriptor, reading it in blocks of `blockBytes`.
///
/// libmpg123's own reader asks the system for every frame twice: its 4-byte header, then its body. That
/// is two system calls per 26 ms of audio (77 a second), each on a thread that has just woken with cold
/// caches while playing in real time. This reader hands libmpg123 exactly the same bytes from a block
/// it fills with one `pread` per 64 KB (one every 1.6 s at 320 kbit/s) and answers seeks without a
/// system call, so what is decoded does not change. It reads with `pread` only: the descriptor's own
/// offset is never used, so the tag and length readers may `pread` the same descriptor freely.
///
/// A reader belongs to one decoder, and so to one thread at a time.
final class BlockReader {
    /// How much is read from the file at a time, unless told otherwise.
    static let blockBytes = 65536

    private let descriptor: Int32
    /// How much this reader reads at a time.
    private let blockSize: Int
    private let block: UnsafeMutableRawPointer
    /// The file offset of the block's first byte.
    private var blockStart = 0
    /// How many bytes of the file the block holds.
    private var blockCount = 0
    /// The offset libmpg123 reads from next.
    private var offset = 0

    /// A reader of the file open on `descriptor` (which the caller keeps open, and closes, itself),
    /// `blockSize` bytes at a time.
    init(descriptor: Int32, blockSize: Int = BlockReader.blockBytes) {
        self.descriptor = descriptor
        self.blockSize = blockSize
        self.block = .allocate(byteCount: blockSize, alignment: 16)
    }

    deinit {
        self.block.deallocate()
    }

    /// Opens `handle` on this reader: libmpg123 reads through it until `mpg123_close`. The handle must
    /// not outlive the reader.
    func open(_ handle: OpaquePointer) -> Int32 {
        let status = mpg123_replace_reader_handle(
            handle,
            { reader, buffer, count in
                guard let reader, let buffer else { return -1 }
                return Unmanaged<BlockReader>.fromOpaque(reader).takeUnretainedValue().read(into: buffer, count: count)
            },
            { reader, offset, whence in
                guard let reader else { return -1 }
                return Unmanaged<BlockReader>.fromOpaque(reader).takeUnretainedValue().seek(offset, whence: whence)
            },
            nil)
        guard status == MPG123_OK.rawValue else { return status }
        return mpg123_open_handle(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    /// As `read(2)`: up to `count` bytes from the offset on, fewer only at the end of the file; -1 with
    /// `errno` set when the system cannot read the file.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        var done = 0
        while done < count {
            let inBlock = self.offset - self.blockStart
            if inBlock >= 0 && inBlock < self.blockCount {
                let run = min(count - done, self.blockCount - inBlock)
                (buffer + done).copyMemory(from: self.block + inBlock, byteCount: run)
                done += run
                self.offset += run
                continue
            }
            let wanted = count - done
            if wanted >= self.blockSize {
                // A large read (a long ID3v2 tag) goes straight to the caller's buffer.
                let got = self.pread(into: buffer + done, count: wanted, at: self.offset)
                if got < 0 { return done > 0 ? done : -1 }
                if got == 0 { break }
                done += got
                self.offset += got
                continue
            }
            let got = self.pread(into: self.block, count: self.blockSize, at: self.offset)
            if got < 0 { return done > 0 ? done : -1 }
            self.blockStart = self.offset
            self.blockCount = got
            if got == 0 { break }
        }
        return done
    }

    /// As `lseek(2)`: the new offset, or -1 with `errno` set for a `whence` it does not know, a negative
    /// result, or a file whose size cannot be read.
    func seek(_ offset: off_t, whence: Int32) -> off_t {
        let base: Int
        switch whence {
        case SEEK_SET:
            base = 0
        case SEEK_CUR:
            base = self.offset
        case SEEK_END:
            var info = stat()
            guard fstat(self.descriptor, &info) == 0 else { return -1 }
            base = Int(info.st_size)
        default:
            errno = EINVAL
            return -1
        }
        let target = base + Int(offset)
        guard target >= 0 else {
            errno = EINVAL
            return -1
        }
        self.offset = target
        return off_t(target)
    }

    private func pread(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Int {
        while true {
            let got = Glibc.pread(self.descriptor, buffer, count, off_t(offset))
            if got < 0 && errno == EINTR { continue }
            return got
        }
    }
}
