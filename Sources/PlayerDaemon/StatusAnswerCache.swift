import ControlProtocol
import PlayerCore
import Synchronization

/// The last `status` answer, with the values it was written from: a client polling a stopped player is
/// answered with a copy while those values are the same, without writing the answer again (that was
/// most of what such a request cost).
///
/// The copy is keyed on every value `Answer.status` shows (`Key`), compared on each request, so it
/// cannot go stale whatever changed the status and whether or not the change was reported. An answer
/// that depends on the time (a song playing or paused, a sleep timer's or a timed pause's time left)
/// is never kept. Debug builds check every copy against an answer written afresh.
final class StatusAnswerCache: Sendable {
    /// What the `status` answer shows, besides the time. (Keep this in step with `Answer.status`.)
    struct Key: Equatable {
        var volume: Int?
        var isMuted: Bool
        var repeatMode: Bool
        var random: Bool
        var single: PlayerCore.SingleMode
        var consume: Bool
        var queueVersion: Int
        var queueLength: Int
        var state: PlayerStateKind
        var position: Int?
        var entryID: Int?
        var nextPosition: Int?
        var nextEntryID: Int?
        var error: String?
        var sleepsAtEndOfSong: Bool
        var job: Int?

        init(_ status: PlayerStatus, job: Int?) {
            self.volume = status.volume
            self.isMuted = status.isMuted
            self.repeatMode = status.repeatMode
            self.random = status.random
            self.single = status.single
            self.consume = status.consume
            self.queueVersion = status.queueVersion
            self.queueLength = status.queueLength
            self.state = status.state
            self.position = status.position
            self.entryID = status.entry?.id
            self.nextPosition = status.nextPosition
            self.nextEntryID = status.nextEntry?.id
            self.error = status.error
            self.sleepsAtEndOfSong = status.sleepTimer == .endOfSong
            self.job = job
        }
    }

    private struct Kept {
        var key: Key
        var answer: ResponseWriter
    }

    private let kept = Mutex<Kept?>(nil)

    /// Whether `Answer.status` writes anything that depends on the time it is asked at: the elapsed time
    /// of a song playing or paused, a sleep timer's or a timed pause's time left. Such an answer is never
    /// kept. (Keep this in step with `Answer.status`.)
    static func dependsOnTime(_ status: PlayerStatus) -> Bool {
        if (status.state == .play || status.state == .pause) && status.format != nil {
            return true
        }
        if case .at = status.sleepTimer {
            return true
        }
        return status.resumesAt != nil
    }

    /// Appends the `status` answer for `status` (and the library's `job`) to `response`: the kept one
    /// when it was written from the same values, else what `write` writes (kept, unless it depends on
    /// the time).
    func answer(
        _ status: PlayerStatus, job: Int?, to response: inout ResponseWriter,
        writing write: (PlayerStatus, inout ResponseWriter) -> Void
    ) {
        guard !Self.dependsOnTime(status) else {
            write(status, &response)
            return
        }
        let key = Key(status, job: job)
        let found = self.kept.withLock { kept -> Bool in
            guard let kept, kept.key == key else { return false }
            assert(Self.isFresh(kept.answer, for: status, writing: write), "a kept status answer is stale")
            response.append(kept.answer)
            return true
        }
        if found {
            return
        }
        var answer = ResponseWriter(capacity: 256)
        write(status, &answer)
        response.append(answer)
        self.kept.withLock { $0 = Kept(key: key, answer: answer) }
    }

    /// Whether `answer` is what `write` writes for `status` now (debug builds' check).
    private static func isFresh(
        _ answer: ResponseWriter, for status: PlayerStatus, writing write: (PlayerStatus, inout ResponseWriter) -> Void
    ) -> Bool {
        var fresh = ResponseWriter(capacity: 256)
        write(status, &fresh)
        return fresh.bytes == answer.bytes
    }
}
