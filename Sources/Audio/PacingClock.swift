#if canImport(Glibc)
    import Glibc
#endif

/// The time source an output paces itself against: read the time, sleep until a deadline.
/// Injected so that tests can run paced outputs in virtual time.
public protocol PacingClock: Sendable {
    /// Nanoseconds on a monotonic scale; only differences mean anything.
    func now() -> Int64
    /// Returns once `now()` has reached `deadline`.
    func sleep(until deadline: Int64)
    /// True when the clock is `CLOCK_MONOTONIC` itself: its time passes by itself, so a thread may
    /// wait for one of its deadlines on something a command can interrupt (a condition variable)
    /// instead of in `sleep(until:)`. A virtual clock moves only when someone sleeps on it: false.
    var isRealTime: Bool { get }
}

extension PacingClock {
    public var isRealTime: Bool { false }
}

/// `CLOCK_MONOTONIC`, with sleeps to absolute deadlines so that error does not accumulate.
public struct MonotonicClock: PacingClock {
    /// Creates the system's monotonic clock.
    public init() {}

    public var isRealTime: Bool { true }

    public func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    public func sleep(until deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // A signal interrupts the sleep with EINTR; the deadline is absolute, so sleeping again is exact.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}
