import ControlProtocol
import Library
import MusicTags
import Synchronization

/// The answers of recent quick library queries (`lsinfo DIR`, `list Artist`, `find album X`), kept
/// until the database next changes: clients ask the same ones again and again (a browser screen, a
/// media library pane, each time it is shown), and a kept answer costs a copy, not a query.
///
/// Only whole answers are kept, none larger than `largestAnswer` and at most `capacity` bytes of them;
/// the root's `lsinfo`, which lists stored playlists from the disk, is never kept.
final class QueryAnswerCache: Sendable {
    struct Key: Hashable {
        let command: String
        let arguments: [String]
        /// The client's tag types, as a bit set of their orders.
        let tagTypes: UInt64
    }

    private struct Entries {
        var changeCount = -1
        var answers: [Key: [UInt8]] = [:]
        var bytes = 0
    }

    private let entries = Mutex(Entries())
    /// The most bytes of answers kept.
    let capacity: Int

    /// The largest answer kept.
    static let largestAnswer = 64 * 1024

    init(capacity: Int = 1 << 20) {
        self.capacity = capacity
    }

    static func key(_ call: CommandCall) -> Key? {
        if call.name == "lsinfo" && MusicLibrary.normalized(call.optionalArgument(0) ?? "").isEmpty {
            return nil
        }
        var tagTypes: UInt64 = 0
        for tag in call.session.tagTypes {
            tagTypes |= 1 << UInt64(tag.order)
        }
        return Key(command: call.name, arguments: call.arguments, tagTypes: tagTypes)
    }

    /// The answer kept for `key` while the database is at `changeCount`.
    func answer(_ key: Key, changeCount: Int) -> [UInt8]? {
        self.entries.withLock { entries in
            entries.changeCount == changeCount ? entries.answers[key] : nil
        }
    }

    /// Keeps `answer`, computed with the database at `changeCount`.
    func keep(_ answer: ResponseWriter, for key: Key, changeCount: Int) {
        self.entries.withLock { entries in
            if entries.changeCount != changeCount {
                guard changeCount > entries.changeCount else { return }
                entries = Entries(changeCount: changeCount)
            }
            if entries.bytes + answer.count > self.capacity {
                entries.answers.removeAll(keepingCapacity: true)
                entries.bytes = 0
            }
            guard answer.count <= Self.largestAnswer, entries.answers[key] == nil else { return }
            // Copied out of the writer only when it is kept.
            entries.answers[key] = answer.bytes
            entries.bytes += answer.count
        }
    }
}
