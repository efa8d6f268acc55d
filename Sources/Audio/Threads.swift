#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on a new POSIX thread (a real thread, not a task: it blocks in writes to the device, or
/// in a scan, in a poll), with a stack of `stackSize` bytes if given. The thread is joinable: join it.
public func startThread(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(body: body)).toOpaque()
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if let stackSize {
        pthread_attr_setstacksize(&attributes, stackSize)
    }
    let status = pthread_create(
        &thread, &attributes,
        { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    return thread
}
