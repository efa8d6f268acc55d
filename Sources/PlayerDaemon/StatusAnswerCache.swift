import ControlProtocol
import PlayerCore
import Synchronization

/// The last `status` answer, while nothing it shows has changed: a client polling a stopped player is
/// answered with a copy, without reading and writing the status again (that was most of what such a
/// request cost).
///
/// What the answer shows changes only with a change the engine reports to its observers (player,
/// mixer, playlist, options) or with the library's job, which is compared; the engine's observer
/// calls `noteChange()` before anyone hears of the change. An answer that depends on the time (a song
/// playing or paused, a sleep timer's or a timed pause's time left) is never kept. Debug builds check
/// every kept answer against one written afresh.
final class StatusAnswerCache: Sendable {
    private struct Kept {
        /// False until an answer is kept.
        var isSet = false
        /// `changes` when the status was read.
        var changes = 0
        var job: Int?
        var status = PlayerStatus()
        var answer = ResponseWriter(capacity: 0)
    }

    /// Counts the changes the engine has reported.
    private let changes = Atomic<Int>(0)
    private let kept = Mutex(Kept())

    /// Called by the engine's observer after every change it reports, before it is passed on.
    func noteChange() {
        self.changes.add(1, ordering: .releasing)
    }

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

    /// Appends the `status` answer to `response`: the kept one if no change has been reported since it
    /// was written and the library's `job` is the same; else what `write` writes for the status `read`
    /// returns now (kept, unless it depends on the time).
    func answer(
        job: Int?, to response: inout ResponseWriter, reading read: () -> PlayerStatus,
        writing write: (PlayerStatus, inout ResponseWriter) -> Void
    ) {
        // Loaded before the status is read: a change reported meanwhile makes the next request read again.
        let changes = self.changes.load(ordering: .acquiring)
        let found = self.kept.withLock { kept -> Bool in
            guard kept.isSet, kept.changes == changes, kept.job == job else { return false }
            assert(Self.holds(kept.status, kept.answer, now: read(), writing: write), "a kept status answer is stale")
            response.append(kept.answer)
            return true
        }
        if found {
            return
        }
        let status = read()
        guard !Self.dependsOnTime(status) else {
            write(status, &response)
            return
        }
        var answer = ResponseWriter(capacity: 256)
        write(status, &answer)
        response.append(answer)
        self.kept.withLock { $0 = Kept(isSet: true, changes: changes, job: job, status: status, answer: answer) }
    }

    /// Whether `answer`, written for `kept`, is still the answer for `status`, or a change between them
    /// is on its way to `noteChange()` (published, its observers not yet called).
    private static func holds(
        _ kept: PlayerStatus, _ answer: ResponseWriter, now status: PlayerStatus,
        writing write: (PlayerStatus, inout ResponseWriter) -> Void
    ) -> Bool {
        var fresh = ResponseWriter(capacity: 256)
        write(status, &fresh)
        return fresh.bytes == answer.bytes || !PlayerChanges.between(kept, status).isEmpty
    }
}
