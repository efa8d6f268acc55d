import ControlProtocol
import PlayerCore
import Testing

@testable import PlayerDaemon

/// The kept `status` answer is reused only for the very values it was written from.
@Suite("The kept status answer")
struct StatusAnswerCacheTests {
    private static func answer(_ cache: StatusAnswerCache, _ status: PlayerStatus, job: Int? = nil) -> String {
        var response = ResponseWriter(capacity: 0)
        cache.answer(status, job: job, to: &response) { status, response in
            Answer.status(status, now: 0, to: &response)
            if let job { response.field("updating_db", job) }
        }
        return String(decoding: response.bytes, as: UTF8.self)
    }

    @Test("every value the answer shows, changed alone, gives a fresh answer; the same values give the same")
    func everyValueCounts() {
        let cache = StatusAnswerCache()
        var status = PlayerStatus()
        status.queueLength = 3
        status.nextPosition = 0
        status.nextEntry = QueueEntry(id: 7, path: "/music/a.mp3")
        let first = Self.answer(cache, status)
        #expect(Self.answer(cache, status) == first)
        #expect(first.contains("nextsongid: 7\n"))

        let changes: [(String, (inout PlayerStatus) -> Void, String)] = [
            ("next song", { $0.nextEntry = QueueEntry(id: 8, path: "/music/b.mp3") }, "nextsongid: 8\n"),
            ("volume", { $0.volume = 40 }, "volume: 40\n"),
            ("no mixer", { $0.volume = nil }, "repeat: 0\n"),
            ("error", { $0.error = "gone" }, "error: gone\n"),
            ("queue length", { $0.queueLength = 4 }, "playlistlength: 4\n"),
            ("single", { $0.single = .oneshot }, "single: oneshot\n"),
            ("sleep at the end", { $0.sleepTimer = .endOfSong }, "sleeptimer: end\n"),
            ("mixrampdb -0, which == takes for 0", { $0.crossfade.mixRampDB = -0.0 }, "mixrampdb: -0\n"),
            ("mixrampdelay", { $0.crossfade.mixRampDelay = 2.5 }, "mixrampdelay: 2.5\n"),
            ("crossfade", { $0.crossfade.seconds = 3 }, "xfade: 3\n"),
        ]
        for (name, change, line) in changes {
            var changed = status
            change(&changed)
            let answer = Self.answer(cache, changed)
            #expect(answer != first, "\(name)")
            #expect(answer.contains(line), "\(name): \(answer)")
            #expect(Self.answer(cache, status) == first, "\(name), back")
        }
        #expect(Self.answer(cache, status, job: 3).contains("updating_db: 3\n"))
        #expect(!Self.answer(cache, status).contains("updating_db"))
    }
}
