// The `decode` mode: one file decoded as fast as it goes, through `AudioDecoders.open` and `read`, as
// the engine's audio thread does it, without the engine around it: the decoders' throughput, side by
// side with each format's reference tool (scripts/bench-formats.sh).

import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes `file` to its end with the decoder its content calls for, asking for `sampleFormat`
/// (`.signed16`: integers at the file's own resolution, as the daemon asks), and with `toStandardOutput`
/// writes the PCM to standard output (`> /dev/null`: the same work as a reference tool writing its
/// output there). Prints, to standard error so that the PCM stays clean,
/// `decoded FRAMES RATE:BITS:CHANNELS KIND NANOSECONDS` (the decoding's own wall time, from the open to
/// the last read). A file the decoder refuses prints `refused REASON` and exits with status 2.
func measureDecoding(file: String, sampleFormat: SampleFormat, toStandardOutput: Bool) {
    let start = monotonic.now()
    let kind: AudioFileKind
    let decoder: any AudioDecoder
    do {
        kind = try AudioDecoders.kind(path: file)
        decoder = try AudioDecoders.open(path: file, sampleFormat: sampleFormat)
    } catch {
        report("refused \(error)")
        exit(2)
    }
    let format = decoder.format
    let frameBytes = max(1, format.bytesPerFrame)
    // 4,096 frames a read: what the engine's audio thread asks of a decoder at once.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * frameBytes, alignment: 16)
    defer { buffer.deallocate() }
    var frames = 0
    while true {
        let count: Int
        do {
            count = try decoder.read(into: buffer)
        } catch {
            report("failed after \(frames) frames: \(error)")
            exit(1)
        }
        guard count > 0 else { break }
        guard count <= 4096 else {
            report("the decoder returned \(count) frames for a buffer of 4096")
            exit(1)
        }
        frames += count
        if toStandardOutput {
            writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<count * frameBytes]))
        }
    }
    report("decoded \(frames) \(format) \(kind.rawValue) \(monotonic.now() - start)")
}

/// Writes all of `bytes` to standard output, or exits.
private func writeAll(_ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
        let count = write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else {
            report("writing the PCM: \(String(cString: strerror(errno)))")
            exit(1)
        }
        offset += count
    }
}

/// One line to standard error.
private func report(_ line: String) {
    let text = line + "\n"
    text.withCString { _ = write(STDERR_FILENO, $0, strlen($0)) }
}
