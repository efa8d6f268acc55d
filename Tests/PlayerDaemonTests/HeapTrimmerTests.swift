import Dispatch
import Synchronization
import Testing

@testable import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct HeapTrimmerTests {
    /// When the trimmer's release ran, in milliseconds since the test began; empty if it did not.
    final class Releases: Sendable {
        let started = ContinuousClock.now
        let times = Mutex<[Int]>([])
        func record() {
            let elapsed = ContinuousClock.now - self.started
            self.times.withLock { $0.append(Int(elapsed / .milliseconds(1))) }
        }
    }

    @Test func waitsForQuietThenReleasesOnce() async throws {
        let releases = Releases()
        let trimmer = HeapTrimmer(delay: .milliseconds(300), maximumPostponements: 50) { releases.record() }
        trimmer.clientLeft()
        trimmer.clientLeft()  // the same trim
        // A client busy for 900 ms: three delays with something sent in each.
        for _ in 0..<45 {
            trimmer.noteActivity()
            try await Task.sleep(for: .milliseconds(20))
        }
        let busyUntil = Int((ContinuousClock.now - releases.started) / .milliseconds(1))
        #expect(releases.times.withLock { $0 }.isEmpty, "released while a client was sending")
        try await Task.sleep(for: .milliseconds(1_500))
        let times = releases.times.withLock { $0 }
        #expect(times.count == 1)
        #expect(times.allSatisfy { $0 >= busyUntil })
    }

    @Test func aClientThatNeverStopsPutsItOffOnlySoLong() async throws {
        let releases = Releases()
        let trimmer = HeapTrimmer(delay: .milliseconds(50), maximumPostponements: 3) { releases.record() }
        trimmer.clientLeft()
        // Busy for 1.5 s, far past 4 delays: the trim runs meanwhile all the same.
        for _ in 0..<75 {
            trimmer.noteActivity()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(releases.times.withLock { $0 }.count == 1)
    }
}
