// The latency of `status` on one connection: how long a client waits for the simplest question a
// player is asked most often. The `roundtrip` mode, and the active client of `clients`.

#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on a clock that only moves forward.
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// The durations of sequential `status` round trips on one connection, after a warm-up.
struct RoundTripTimes {
    /// Untimed requests first, so that the first timed ones do not pay for cold caches and lazy set-up.
    static let warmUpRequests = 200

    /// Every timed round trip, in nanoseconds, shortest first.
    private let sorted: [Int64]

    /// Sends the warm-up requests, then times `count` more, one at a time.
    init(on connection: Connection, count: Int) throws(BenchFailure) {
        for _ in 0..<Self.warmUpRequests {
            if let failure = connection.request("status\n").failure(of: "status") { throw .daemon(failure) }
        }
        var samples: [Int64] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = monotonicNanoseconds()
            let answer = connection.request("status\n")
            samples.append(monotonicNanoseconds() - start)
            if let failure = answer.failure(of: "status") { throw .daemon(failure) }
        }
        self.sorted = samples.sorted()
    }

    /// Prints `roundtrip_p50_us`, `roundtrip_p99_us` and `roundtrip_max_us`.
    func printFigures() {
        print("roundtrip_p50_us \(Double(self.percentile(0.50)) / 1000)")
        print("roundtrip_p99_us \(Double(self.percentile(0.99)) / 1000)")
        print("roundtrip_max_us \(Double(self.sorted.last!) / 1000)")
    }

    private func percentile(_ fraction: Double) -> Int64 {
        self.sorted[min(self.sorted.count - 1, Int(Double(self.sorted.count) * fraction))]
    }
}

/// `daemon-bench roundtrip SOCKET N`: N sequential `status` requests on one connection.
enum RoundTripCommand: BenchCommand {
    static let name = "roundtrip"
    static let usage = "daemon-bench roundtrip SOCKET N"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 2 else { throw .usage(self.usage) }
        let count = try integerArgument(arguments[1], named: "N", atLeast: 1, usage: self.usage)
        let connection = try openSession(arguments[0])
        try RoundTripTimes(on: connection, count: count).printFigures()
    }
}
