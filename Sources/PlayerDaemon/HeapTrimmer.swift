import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Gives the memory a crowd of clients used back to the system once they are gone.
///
/// glibc keeps freed heap memory for reuse and returns by itself only the top of the main heap: after
/// fifty clients had sent long command lists and floods and left, playerd stayed at its peak (65 MB
/// instead of 17) until `malloc_trim(0)` brought it back to 20 MB. So a client leaving asks for a trim
/// a little later, off the event loop; the trims that more clients leaving ask for meanwhile are the
/// same one, so a steady coming and going costs one trim per delay at most.
///
/// The trim waits for a `delay` in which no client sent anything: a trim holds the heap's lock while it
/// walks it, and what it gives back the work under way takes back, page fault by page fault. A trim
/// landing amid the next client's `add` of 10,000 songs made that add take 10–27 ms instead of 4–7.
final class HeapTrimmer: Sendable {
    /// How long after a client leaves the trim runs, at the soonest; and how long the daemon must
    /// have been quiet.
    let delay: DispatchTimeInterval
    /// How many delays a trim waits for quiet, at most: a client polling all the time does not put it
    /// off for ever.
    let maximumPostponements: Int

    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not import `malloc.h`,
    /// and a C library without it has nothing to trim.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// glibc's `mallopt`, looked up as `malloc_trim` is.
    private static let setOption: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    /// glibc's `M_ARENA_MAX` (malloc.h).
    private static let arenaMaximumOption: Int32 = -8

    /// The heaps (arenas) the process's threads share.
    static let arenas: Int32 = 2

    /// Keeps the heap in `arenas` arenas; call it before the daemon starts its threads. glibc gives
    /// each thread that allocates an arena of its own, up to eight per core: playerd's threads (event
    /// loop, audio, Swift's pool, walks) spread their allocations over 14 of them, each of which
    /// keeps some after a trim, and after the soak the RSS stayed 2 to 9 MB above its start, a
    /// different figure each run. In two arenas it came back to within 1.4 MB.
    static func limitArenas() {
        _ = Self.setOption?(Self.arenaMaximumOption, Self.arenas)
    }

    /// Gives back what others keep for reuse, just before the trim (also where there is no
    /// `malloc_trim`): the library's SQLite caches and idle reader connections, 2.6 MB of the 6.9 MB of
    /// heap playerd kept with 100,000 songs.
    private let releasing: @Sendable () -> Void
    private let scheduled = Atomic<Bool>(false)
    /// Counts what clients send: a trim due finds whether the daemon was quiet meanwhile.
    private let activity = Atomic<Int>(0)

    init(
        delay: DispatchTimeInterval = .seconds(2), maximumPostponements: Int = 15,
        releasing: @escaping @Sendable () -> Void = {}
    ) {
        self.delay = delay
        self.maximumPostponements = maximumPostponements
        self.releasing = releasing
    }

    /// A client sent something.
    func noteActivity() {
        self.activity.wrappingAdd(1, ordering: .relaxed)
    }

    /// A client has left: trims once the daemon has been quiet for `delay`, unless a trim is already on
    /// its way.
    func clientLeft() {
        guard self.scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        self.scheduleTrim(after: self.activity.load(ordering: .relaxed), postponements: 0)
    }

    private func scheduleTrim(after seen: Int, postponements: Int) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + self.delay) {
            let now = self.activity.load(ordering: .relaxed)
            if now != seen && postponements < self.maximumPostponements {
                self.scheduleTrim(after: now, postponements: postponements + 1)
                return
            }
            self.scheduled.store(false, ordering: .relaxed)
            self.releasing()
            // What the release frees on other threads (the library's writer) is freed by then.
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) {
                _ = Self.trim?(0)
            }
        }
    }
}
