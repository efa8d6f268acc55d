import ControlProtocol
import PlayerCore
import Synchronization

/// The last `status` answer, with the values it was written from: a client polling a stopped player is
/// answered with a copy while those values are the same, without writing the answer again (that was
/// most of what such a request cost).
///
/// The copy is keyed on the whole status (but for when it was sampled) and the library's job, compared
/// on each request, so it cannot go stale whatever changed the status and whether or not the change was
/// reported; a change the answer does not show (an output's report) only costs one answer written
/// afresh. An answer that depends on the time (a song playing or paused, a sleep timer's or a timed
/// pause's time left) is never kept. Debug builds check every copy against an answer written afresh.
final class StatusAnswerCache: Sendable {
    /// What an answer was written from.
    struct Key: Equatable {
        var status: PlayerStatus
        var job: Int?
        /// MixRamp's settings as bits: `==` takes -0 for 0, and the answer shows `mixrampdb: -0` (as
        /// mpd's does) for what a client set to -0. (The soak's `mixrampdb "1e-999"` found a kept
        /// answer saying 0.)
        var mixRampBits: [UInt64]

        init(_ status: PlayerStatus, job: Int?) {
            self.status = status
            // The moment of the last sample moves with any publication, and a stopped answer does not show it.
            self.status.sampledAt = 0
            self.job = job
            self.mixRampBits = [
                UInt64(status.crossfade.mixRampDB.bitPattern), status.crossfade.mixRampDelay.bitPattern,
            ]
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
