import Audio
import Dispatch
import Foundation
import PlayerCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the library current while playerd runs: inotify watches every directory of the music tree,
/// and changes are gathered until things are quiet (a copy of an album is one update, not hundreds)
/// and then handed on as the directories to update.
///
/// When the kernel's watch limit is reached (`fs.inotify.max_user_watches`), or inotify cannot be had
/// at all, the watcher says so once and falls back to rescanning everything periodically: a cheap
/// no-op when nothing changed, and never a silently missed change (MPD's failure).
final class LibraryWatcher: Sendable {
    private let descriptor: Int32
    /// A pipe `stop()` writes to, to wake the thread at once: read end, write end.
    private let wakeUp: Int32
    private let wakeUpWriter: Int32
    private let thread = Mutex<pthread_t?>(nil)
    private let state = Mutex(State())
    private let changed: @Sendable ([String]) -> Void
    private let notice: @Sendable (String) -> Void
    /// How long things must stay quiet before the changes are handed on, and the most they wait.
    static let quietPeriod: Int32 = 300
    static let longestWait: Int64 = 2_000
    /// How often everything is rescanned when inotify cannot watch it all.
    let rescanInterval: Int64
    /// A lower watch limit than the kernel's, for tests of what happens when the limit is reached.
    let watchLimit: Int?

    private struct State {
        var uriByWatch: [Int32: String] = [:]
        var watchByURI: [String: Int32] = [:]
        var pending: Set<String> = []
        var firstPending: Int64?
        var degraded = false
        var stopped = false
    }

    /// Starts watching; `changed` gets the URIs of directories whose contents changed, from the
    /// watcher's thread.
    init(
        rescanInterval: Int64 = 60_000, watchLimit: Int? = nil, changed: @escaping @Sendable ([String]) -> Void,
        notice: @escaping @Sendable (String) -> Void
    ) {
        self.descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        var pipe: [Int32] = [-1, -1]
        if Glibc.pipe(&pipe) == 0 {
            for end in pipe {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        }
        self.wakeUp = pipe[0]
        self.wakeUpWriter = pipe[1]
        self.changed = changed
        self.notice = notice
        self.rescanInterval = rescanInterval
        self.watchLimit = watchLimit
        if self.descriptor < 0 {
            self.degrade("inotify is unavailable (\(String(cString: strerror(errno))))")
        }
        let thread = startThread(stackSize: 1 << 20) { [self] in self.run() }
        self.thread.withLock { $0 = thread }
    }

    /// Stops the watcher's thread and waits until it has ended.
    func stop() {
        let first = self.state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        var one: UInt8 = 1
        _ = write(self.wakeUpWriter, &one, 1)
        if let thread = self.thread.withLock({ $0.take() }) {
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)  // asked from its own callback: it ends by itself
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Whether the watcher has fallen back to periodic rescans.
    var isDegraded: Bool { self.state.withLock { $0.degraded } }

    /// Watches exactly `directories` (URIs, "" for the music directory), found at `path(of:)` (escaped).
    func watch(_ directories: [String], path: (String) -> String) {
        guard self.descriptor >= 0 else { return }
        let wanted = Set(directories)
        let mask = UInt32(
            IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF
                | IN_ONLYDIR)
        // The descriptor is used under the lock only, so that it is never used after the watcher's
        // thread closed it (its number may belong to another file by then).
        let limitReached = self.state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            for (uri, watch) in state.watchByURI where !wanted.contains(uri) {
                inotify_rm_watch(self.descriptor, watch)
                state.watchByURI[uri] = nil
                state.uriByWatch[watch] = nil
            }
            for uri in directories where state.watchByURI[uri] == nil {
                if let limit = self.watchLimit, state.watchByURI.count >= limit { return true }
                let watch = inotify_add_watch(self.descriptor, PathEscaping.systemPath(path(uri)), mask)
                if watch < 0 {
                    if errno == ENOSPC { return true }
                    continue  // gone meanwhile, or unreadable: the next update says so
                }
                state.uriByWatch[watch] = uri
                state.watchByURI[uri] = watch
            }
            return false
        }
        if limitReached {
            let limit =
                self.watchLimit.map(String.init)
                ?? (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            self.degrade("the kernel's inotify watch limit (fs.inotify.max_user_watches = \(limit)) is reached")
        }
    }

    private func degrade(_ reason: String) {
        let first = self.state.withLock { state -> Bool in
            defer { state.degraded = true }
            return !state.degraded
        }
        if first {
            let interval =
                self.rescanInterval % 1000 == 0 ? "\(self.rescanInterval / 1000) s" : "\(self.rescanInterval) ms"
            // Said once, not per directory, with what to do about it.
            self.notice(
                "\(reason): the library is rescanned every \(interval) instead of watched; run `update` to "
                    + "rescan at once, or raise the limit (sysctl fs.inotify.max_user_watches) and restart "
                    + "playerd to have changes seen as they happen")
        }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var lastRescan = Self.now()
        while !self.state.withLock({ $0.stopped }) {
            if self.descriptor >= 0 {
                var pollers = [
                    pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: self.wakeUp, events: Int16(POLLIN), revents: 0),
                ]
                _ = poll(&pollers, 2, Self.quietPeriod)
                let count = buffer.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    self.collect(buffer[..<count])
                    continue
                }
            } else {
                var poller = pollfd(fd: self.wakeUp, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, Self.quietPeriod)
            }
            // Quiet for a while (or busy for too long): hand the changes on.
            let ready = self.state.withLock { state -> [String] in
                guard state.firstPending != nil else { return [] }
                let uris = state.pending
                state.pending = []
                state.firstPending = nil
                return Array(uris)
            }
            if !ready.isEmpty {
                self.changed(Self.outermost(ready))
            }
            if self.isDegraded && Self.now() - lastRescan >= self.rescanInterval {
                lastRescan = Self.now()
                self.changed([""])
            }
        }
        self.state.withLock { _ in
            if self.descriptor >= 0 { close(self.descriptor) }
            close(self.wakeUp)
            close(self.wakeUpWriter)
        }
    }

    /// Records the directories the events in `bytes` touch.
    private func collect(_ bytes: ArraySlice<UInt8>) {
        let headerSize = MemoryLayout<inotify_event>.size
        var touched: [String] = []
        var overflowed = false
        bytes.withUnsafeBytes { raw in
            var position = 0
            while position + headerSize <= raw.count {
                let event = raw.loadUnaligned(fromByteOffset: position, as: inotify_event.self)
                let nameBytes = raw[(position + headerSize)..<min(raw.count, position + headerSize + Int(event.len))]
                let name = PathEscaping.escaped(Array(nameBytes.prefix { $0 != 0 }))
                position += headerSize + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    overflowed = true
                    continue
                }
                guard let uri = self.state.withLock({ $0.uriByWatch[event.wd] }) else { continue }
                if event.mask & UInt32(IN_IGNORED) != 0 {
                    self.state.withLock { state in
                        state.uriByWatch[event.wd] = nil
                        if state.watchByURI[uri] == event.wd { state.watchByURI[uri] = nil }
                    }
                    continue
                }
                if name.hasPrefix(".") { continue }
                let isDirectory = event.mask & UInt32(IN_ISDIR) != 0
                let relevant =
                    isDirectory || name.isEmpty || AudioFileKind.hasSongSuffix(name)
                    || LibraryWalk.hasSuffix(name, ".m3u") || LibraryWalk.hasSuffix(name, ".m3u8")
                if relevant {
                    touched.append(uri)
                }
            }
        }
        if overflowed {
            touched = [""]
        }
        guard !touched.isEmpty else { return }
        let waitedTooLong = self.state.withLock { state -> Bool in
            state.pending.formUnion(touched)
            let now = Self.now()
            if state.firstPending == nil { state.firstPending = now }
            return now - state.firstPending! >= Self.longestWait
        }
        if waitedTooLong {
            let ready = self.state.withLock { state -> [String] in
                let uris = state.pending
                state.pending = []
                state.firstPending = nil
                return Array(uris)
            }
            self.changed(Self.outermost(ready))
        }
    }

    /// The URIs without those inside another of them: an update of a directory covers its subtree.
    static func outermost(_ uris: [String]) -> [String] {
        let sorted = uris.sorted()
        var result: [String] = []
        for uri in sorted {
            if let last = result.last, last.isEmpty || uri == last || uri.hasPrefix(last + "/") {
                continue
            }
            result.append(uri)
        }
        return result
    }
}
