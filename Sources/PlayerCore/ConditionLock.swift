#if canImport(Glibc)
    import Glibc
#endif

/// A mutex and a condition variable on `CLOCK_MONOTONIC`, as MPD's player control has: a thread can
/// wait for a deadline of the monotonic clock and still be woken at once by another. Swift's `Mutex`
/// has no condition to wait on.
final class ConditionLock: @unchecked Sendable {
    // @unchecked: the pthread objects are made for sharing between threads; they never move.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        self.mutex = .allocate(capacity: 1)
        self.condition = .allocate(capacity: 1)
        pthread_mutex_init(self.mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(self.condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(self.condition)
        pthread_mutex_destroy(self.mutex)
        self.condition.deallocate()
        self.mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(self.mutex)
        defer { pthread_mutex_unlock(self.mutex) }
        return try body()
    }

    /// Wakes one waiter. Call it with the mutex held, after changing what the waiter waits for.
    func signal() {
        pthread_cond_signal(self.condition)
    }

    /// Wakes every waiter. Call it with the mutex held.
    func broadcast() {
        pthread_cond_broadcast(self.condition)
    }

    /// With the mutex held: releases it until signalled or until `CLOCK_MONOTONIC` reaches `deadline`
    /// (nanoseconds, as `MonotonicClock` reads it), then holds it again. Returns false on the deadline.
    /// Wakes may be spurious: callers check their condition in a loop.
    @discardableResult
    func wait(until deadline: Int64) -> Bool {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(self.condition, self.mutex, &time) != ETIMEDOUT
    }
}
