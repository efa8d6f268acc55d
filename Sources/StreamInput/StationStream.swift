import Audio
import Dispatch
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Where a station's stream stands.
public enum StationState: Sendable, Equatable {
    /// The first connection, before the prebuffer is full.
    case connecting
    /// The prebuffer is full; bytes flowing (or buffered).
    case playing
    /// The connection dropped or stalled; it is being made again.
    case reconnecting(attempt: Int, reason: String)
    /// Given up: the message names the URL and the reason.
    case failed(String)
    /// A finite body read whole (Content-Length met, or a chunked body's end).
    case ended
}

/// What is known of a station: its name and genre (from the response head), the current ICY title and
/// the state of its stream.
public struct StationInfo: Sendable, Equatable {
    /// icy-name (or ice-name).
    public var name: String?
    /// icy-genre (or ice-genre).
    public var genre: String?
    /// The last ICY StreamTitle (UTF-8, else Latin-1 decoded); nil before one, or after an empty one.
    public var title: String?
    public var state: StationState

    public init(name: String? = nil, genre: String? = nil, title: String? = nil, state: StationState) {
        self.name = name
        self.genre = genre
        self.title = title
        self.state = state
    }
}

/// The network's shared pieces: one event loop for every station, the TLS context, the log.
enum StreamNetwork {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    static let logger = Logger(label: "playerd.stream")

    /// The request for `url`: HTTP/1.1, the connection closed after it, ICY metadata asked for.
    static func request(for url: StreamURL, icy: Bool) -> String {
        var text = "GET \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: playerd\r\nAccept: */*\r\n"
        if icy { text += "Icy-MetaData: 1\r\n" }
        text += "Connection: close\r\n\r\n"
        return text
    }

    /// Seconds as NIO's time amount.
    /// Seconds as NIO's time amount: within 0...1e6 (not a number: 0).
    static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(clamp(seconds) * 1e9))
    }

    /// Seconds within 0...1e6; 0 for what is not a number.
    static func clamp(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : max(0, min(seconds, 1e6))
    }

    /// Seconds between two instants.
    static func seconds(from start: NIODeadline, to end: NIODeadline = .now()) -> Double {
        Double((end - start).nanoseconds) / 1e9
    }

    /// Seconds for messages: "2", "0.5".
    static func format(_ seconds: Double) -> String {
        let tenths = (clamp(seconds) * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))" : "\(tenths / 10)"
    }
}

/// The state a station's network side and its reader share, under one lock: the ring buffer of
/// bytes ahead of the decoder, the discontinuities in it, and what is known of the station.
struct StationShared: ~Copyable {
    let storage: UnsafeMutableRawBufferPointer
    var readIndex = 0
    var count = 0
    /// Bytes read / written since the start: the positions of `marks` count in the same way.
    var readTotal = 0
    var writeTotal = 0
    /// Where discontinuities are (a reconnection's first byte), in written bytes.
    var marks: [Int] = []
    var info = StationInfo(state: .connecting)
    /// ICY titles that came with the audio not yet read, each with the byte it takes effect at: a title
    /// is the station's once the audio before it has been handed to the decoder (as MPD shows it when
    /// the audio reaches it, not when it arrives, up to a buffer ahead).
    var titles: [(at: Int, title: String?)] = []
    /// Different titles waiting for their audio to be read, at most (a buffer of very short songs).
    static let maximumQueuedTitles = 1024
    /// Counts the titles that took effect, so that a reader sees a change without comparing them.
    var titleChanges = 0
    /// Set by `cancel()`: a title read afterwards is not reported.
    var cancelled = false
    var contentType: String?
    var failure: String?
    /// No more bytes will be written.
    var finished = false

    init(capacity: Int) {
        storage = .allocate(byteCount: max(1, capacity), alignment: 8)
        marks.reserveCapacity(16)
    }

    deinit { storage.deallocate() }

    var free: Int { storage.count - count }

    mutating func write(_ bytes: UnsafeRawBufferPointer, markFirst: Bool) -> Int {
        let total = min(bytes.count, free)
        guard total > 0 else { return 0 }
        if markFirst, marks.last != writeTotal, marks.count < 64 { marks.append(writeTotal) }
        let start = (readIndex + count) % storage.count
        let first = min(total, storage.count - start)
        storage.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!, byteCount: first)
        if total > first {
            storage.baseAddress!.copyMemory(from: bytes.baseAddress!.advanced(by: first), byteCount: total - first)
        }
        count += total
        writeTotal += total
        return total
    }

    /// Queues `title` to take effect after the bytes written so far, unless it is the title already
    /// coming; with too many waiting, the oldest takes effect at once.
    mutating func announce(_ title: String?) {
        // Most servers send the title again in block after block: only a change is queued.
        if (titles.last.map { $0.title } ?? info.title) == title { return }
        if titles.count >= Self.maximumQueuedTitles {
            takeTitle(titles.removeFirst().title)
        }
        titles.append((at: writeTotal, title: title))
        if count == 0 {
            // Nothing of the audio before it is waiting: it is on air now.
            while let first = titles.first, first.at <= readTotal {
                titles.removeFirst()
                takeTitle(first.title)
            }
        }
    }

    private mutating func takeTitle(_ title: String?) {
        guard info.title != title else { return }
        info.title = title
        titleChanges &+= 1
    }

    /// Bytes readable before the next discontinuity.
    var readable: Int {
        if let mark = marks.first { return min(count, mark - readTotal) }
        return count
    }

    func copy(into buffer: UnsafeMutableRawBufferPointer, count total: Int) {
        let first = min(total, storage.count - readIndex)
        buffer.baseAddress!.copyMemory(from: storage.baseAddress!.advanced(by: readIndex), byteCount: first)
        if total > first {
            buffer.baseAddress!.advanced(by: first).copyMemory(from: storage.baseAddress!, byteCount: total - first)
        }
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        if let mark = marks.first, mark == readTotal {
            marks.removeFirst()
            return .discontinuity
        }
        var total = min(buffer.count, readable)
        if let title = titles.first, title.at > readTotal {
            // A read ends where a title takes effect, so that each title is on air in turn.
            total = min(total, title.at - readTotal)
        }
        guard total > 0 else { return count == 0 && finished ? .end : .waiting }
        copy(into: buffer, count: total)
        readIndex = (readIndex + total) % storage.count
        count -= total
        readTotal += total
        while let first = titles.first, first.at <= readTotal {
            titles.removeFirst()
            takeTitle(first.title)
        }
        return .bytes(total)
    }
}

/// `StationShared` under a lock (NIO's: a plain mutex).
final class LockedShared: @unchecked Sendable {
    private let lock = NIOLock()
    private var value: StationShared

    init(capacity: Int) {
        value = StationShared(capacity: capacity)
    }

    func withLock<Result>(_ body: (inout StationShared) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// One station being listened to: a connection (made again as needed) filling a bounded buffer, read
/// by a decoder without waiting. The connection lives on the shared event loop; `read` and `peek` take
/// a lock around the buffer and nothing else.
public final class StationStream: StreamByteSource, Sendable {
    public let url: String
    let shared: LockedShared
    private let driver: StationDriver
    private let onChange: @Sendable () -> Void

    /// - Parameter onChange: called when `info` changes (state, name, title), never for bytes arriving,
    ///   never under the buffer's lock, never after `cancel()` returned: on the network's thread, except
    ///   for an ICY title, which takes effect when `read` hands out the audio it came after, on the
    ///   reader's thread.
    public init(url: String, limits: StreamLimits, onChange: @escaping @Sendable () -> Void) {
        self.url = url
        shared = LockedShared(capacity: limits.bufferBytes)
        self.onChange = onChange
        driver = StationDriver(url: url, limits: limits, onChange: onChange)
        driver.stream = self
    }

    deinit {
        let driver = self.driver
        driver.loop.execute { _ = driver.shutdown() }
    }

    /// Begins connecting on the network's thread; returns at once.
    public func start() {
        let driver = self.driver
        driver.loop.execute { driver.begin() }
    }

    /// Closes the connection and stops: no `onChange` after it returns; idempotent. It waits (briefly)
    /// until the socket is closed, unless called on the network's thread itself (from `onChange`).
    public func cancel() {
        shared.withLock { $0.cancelled = true }
        let driver = self.driver
        if driver.loop.inEventLoop {
            _ = driver.shutdown()
            return
        }
        let done = DispatchSemaphore(value: 0)
        driver.loop.execute {
            EventLoopFuture.andAllComplete(driver.shutdown(), on: driver.loop).whenComplete { _ in done.signal() }
        }
        done.wait()
    }

    /// Whether `uri` names a station playerd can listen to: an `http://` or `https://` address (the
    /// scheme in any case) with something after it. The queue, the player and the protocol all ask this.
    public static func isStation(_ uri: String) -> Bool {
        let head = uri.prefix(9).lowercased()
        return (head.hasPrefix("http://") && uri.utf8.count > 7) || (head.hasPrefix("https://") && uri.utf8.count > 8)
    }

    /// A snapshot of what is known of the station.
    public var info: StationInfo { shared.withLock { $0.info } }

    /// Counts the ICY titles that took effect (each as `read` handed out the audio it came after).
    public var titleChanges: Int { shared.withLock { $0.titleChanges } }

    /// The bytes `read` has handed out since the station started (every connection's).
    public var bytesRead: Int { shared.withLock { $0.readTotal } }

    public var contentType: String? { shared.withLock { $0.contentType } }

    public var failure: String? { shared.withLock { $0.failure } }

    /// Bytes held ahead of the reader.
    public var bufferedBytes: Int { shared.withLock { $0.count } }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamRead {
        let (result, titled) = shared.withLock { state in
            let before = state.titleChanges
            let result = state.read(into: buffer)
            return (result, state.titleChanges != before && !state.cancelled)
        }
        if titled {
            // An ICY title whose audio is now being read is on air: said from the reader's thread.
            onChange()
        }
        return result
    }

    public func peek(count: Int) -> [UInt8] {
        shared.withLock { state in
            let total = min(max(0, count), state.readable)
            guard total > 0 else { return [] }
            return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
                state.copy(into: UnsafeMutableRawBufferPointer(buffer), count: total)
                initialized = total
            }
        }
    }
}
