// A process's memory as the kernel counts it, read from /proc/PID/status, and the `rss` mode that
// prints it for scripts.

#if canImport(Glibc)
    import Glibc
#endif

/// A process's resident memory at one moment.
struct ResidentMemory {
    /// `VmRSS` in kB: every resident page, the file-backed ones (code, shared libraries) included.
    let residentKilobytes: Int
    /// `RssAnon` in kB: resident anonymous pages (heap, stacks), the part that grows with the work.
    let anonymousKilobytes: Int

    /// Reads `/proc/PID/status`.
    init(pid: pid_t) throws(BenchFailure) {
        let path = "/proc/\(pid)/status"
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system(SystemCallError(function: "open(\(path))", code: errno)) }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let (count, code) = chunk.withUnsafeMutableBytes {
                let count = read(descriptor, $0.baseAddress, $0.count)
                return (count, errno)
            }
            if count == 0 { break }
            if count < 0 {
                if code == EINTR { continue }
                throw .system(SystemCallError(function: "read(\(path))", code: code))
            }
            contents += chunk[0..<count]
        }
        var fields: [Substring: Int] = [:]
        for line in String(decoding: contents, as: UTF8.self).split(separator: "\n") {
            // A line reads `VmRSS:	   12345 kB`.
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.count >= 2, let value = Int(words[1]) { fields[words[0]] = value }
        }
        guard let resident = fields["VmRSS:"], let anonymous = fields["RssAnon:"] else {
            throw .daemon("\(path) has no VmRSS or RssAnon line (a kernel thread, or a kernel before 4.5?)")
        }
        self.residentKilobytes = resident
        self.anonymousKilobytes = anonymous
    }
}

/// `daemon-bench rss PID`: prints `rss_kb` and `anon_kb`.
enum RSSCommand: BenchCommand {
    static let name = "rss"
    static let usage = "daemon-bench rss PID"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 1 else { throw .usage(self.usage) }
        let pid = try integerArgument(arguments[0], named: "PID", atLeast: 1, usage: self.usage)
        let memory = try ResidentMemory(pid: pid_t(pid))
        print("rss_kb \(memory.residentKilobytes)")
        print("anon_kb \(memory.anonymousKilobytes)")
    }
}
