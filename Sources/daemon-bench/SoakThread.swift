// The soak's clients block in reads and writes, each on a POSIX thread of its own: tasks would tie up
// the few threads of Swift's cooperative pool.

#if canImport(Glibc)
    import Glibc
#endif

/// A POSIX thread running one closure; `join()` waits for it to end.
struct SoakThread {
    private let handle: pthread_t

    /// Starts `body` on a new thread, at `niceness` (0 keeps the caller's priority; Linux sets it per
    /// thread, so a higher value lowers only this thread).
    init(niceness: Int32 = 0, _ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let niceness: Int32
            let body: @Sendable () -> Void
            init(niceness: Int32, body: @escaping @Sendable () -> Void) {
                self.niceness = niceness
                self.body = body
            }
        }
        let box = Unmanaged.passRetained(Box(niceness: niceness, body: body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(
            &handle, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                if box.niceness != 0 {
                    // `who` 0 is the calling thread, not the whole process, on Linux.
                    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, box.niceness)
                }
                box.body()
                return nil
            }, box)
        precondition(status == 0, "pthread_create failed: \(status)")
        self.handle = handle
    }

    /// Waits for the thread to end.
    func join() {
        pthread_join(self.handle, nil)
    }
}
