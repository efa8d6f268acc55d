import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// The monotonic clock every time stamp of the bench comes from (the engine's own).
let monotonic = MonotonicClock()

/// Samples of one figure, in nanoseconds.
struct Samples {
    private(set) var values: [Int64] = []

    mutating func append(_ value: Int64) {
        self.values.append(value)
    }

    /// The value below which `fraction` of the samples lie (nearest rank).
    func percentile(_ fraction: Double) -> Int64 {
        let sorted = self.values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
    }

    /// `p50 p99 max count`, in milliseconds: one line the script reads.
    var summary: String {
        let ms = { (value: Int64) in milliseconds(value) }
        return
            "\(ms(self.percentile(0.5))) \(ms(self.percentile(0.99))) \(ms(self.values.max() ?? 0)) \(self.values.count)"
    }
}

/// Nanoseconds as milliseconds with three decimals.
func milliseconds(_ nanoseconds: Int64) -> String {
    fixed(nanoseconds, unit: 1_000_000)
}

/// `value / unit` with three decimals: `fixed(1_234_567, unit: 1_000_000)` is `1.235`.
func fixed(_ value: Int64, unit: Int64) -> String {
    let thousandths = (value * 1000 + unit / 2) / unit
    let fraction = String(thousandths % 1000)
    return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}

/// CPU time a process has used (user, system) and its threads' voluntary context switches: each is
/// a wake-up after a wait.
struct ProcessUsage {
    var userNanoseconds: Int64
    var systemNanoseconds: Int64
    var voluntarySwitches: Int

    /// This process's, from getrusage.
    static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func nanoseconds(_ time: timeval) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_usec) * 1000 }
        return ProcessUsage(
            userNanoseconds: nanoseconds(usage.ru_utime), systemNanoseconds: nanoseconds(usage.ru_stime),
            voluntarySwitches: usage.ru_nvcsw)
    }
}

/// The resident set of a process in kB (`VmRSS` in /proc/PID/status), or nil when unreadable.
func residentKilobytes(pid: String = "self") -> Int? {
    guard let text = readTextFile("/proc/\(pid)/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }
    return nil
}

/// CPU time (user, system) of another process from /proc/PID/stat, and the voluntary context
/// switches of all its threads from /proc/PID/task/*/status.
func processUsage(pid: String) -> ProcessUsage? {
    guard let text = readTextFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
    // After the command name in parentheses: state is field 3, utime 14 and stime 15, in clock ticks.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
    let tick = Int64(1_000_000_000 / sysconf(Int32(_SC_CLK_TCK)))
    var switches = 0
    if let tasks = opendir("/proc/\(pid)/task") {
        defer { closedir(tasks) }
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true, let status = readTextFile("/proc/\(pid)/task/\(name)/status") else {
                continue
            }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                switches += Int(line.split(separator: "\t").last?.trimmingPrefix(" ") ?? "") ?? 0
            }
        }
    }
    return ProcessUsage(userNanoseconds: user * tick, systemNanoseconds: system * tick, voluntarySwitches: switches)
}

/// A small text file's contents, or nil when it cannot be read.
func readTextFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Sleeps the calling task for a random time in `range` (milliseconds), so that commands land at
/// every phase of the engine's write cycle.
func sleepRandomly(milliseconds range: ClosedRange<Int>) async throws {
    try await Task.sleep(for: .milliseconds(Int.random(in: range)))
}

/// Writes to standard error and exits with status 1.
func fail(_ message: String) -> Never {
    var line = "engine-bench: \(message)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}
