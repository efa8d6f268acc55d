// Fuzzes the state-file reader, `SavedState(decoding:)`, with the text a damaged or hand-edited file
// could hold. Besides the sanitizers' crashes, it checks that whatever the reader accepts is a state the
// daemon can use and save again: the saved text reads back as the same state.

import FuzzSupport
import PlayerDaemon

/// libFuzzer's entry point: one state file's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStateFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // StateFile.read() decodes the file the same way: invalid UTF-8 is repaired, not refused.
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    let state: SavedState
    do {
        state = try SavedState(decoding: text)
    } catch {
        if case .corrupt(let reason) = error {
            require(!reason.isEmpty, "a corrupt file without a reason")
        } else {
            fatalError("decoding text failed with an I/O error: \(error)")
        }
        return 0
    }
    require((0...100).contains(state.volume), "volume \(state.volume) accepted")
    require(state.current.map { (0..<state.paths.count).contains($0) } ?? true, "current past the queue")
    require(state.elapsed.isFinite && state.elapsed >= 0, "elapsed \(state.elapsed) accepted")
    // The daemon resumes at this offset: converting the position must not trap.
    require(state.offset >= 0, "elapsed \(state.elapsed) gives the offset \(state.offset)")
    for partition in state.partitions {
        require(
            partition.volume.map { (0...100).contains($0) } ?? true,
            "volume \(String(describing: partition.volume)) accepted")
        require(partition.current.map { (0..<partition.paths.count).contains($0) } ?? true, "current past the queue")
        require(partition.elapsed.isFinite && partition.elapsed >= 0, "elapsed \(partition.elapsed) accepted")
    }

    // What the daemon does with a restored state: saves it again (positions are written to the
    // millisecond, so the first save may round; from then on the text is stable) and resumes at its
    // position.
    let saved = state.encoded()
    do {
        let reread = try SavedState(decoding: saved)
        require(reread.encoded() == saved, "a saved state reads back differently:\n\(saved)")
        var rounded = state
        rounded.elapsed = reread.elapsed
        for index in rounded.partitions.indices where index < reread.partitions.count {
            rounded.partitions[index].elapsed = reread.partitions[index].elapsed
        }
        // Lines read past are reported at the restore and not written again.
        rounded.skippedLines = []
        require(reread == rounded, "a saved state reads back as another state:\n\(saved)")
    } catch {
        fatalError("the daemon cannot read back what it saved: \(error)\n\(saved)")
    }
    return 0
}
