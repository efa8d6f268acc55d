// The `clients` mode: what an idle client costs a daemon in memory, and whether a thousand of them
// slow down the one client that is talking.

#if canImport(Glibc)
    import Glibc
#endif

/// `daemon-bench clients SOCKET COUNT PID REQUESTS`: prints `clients`, the RSS before and after, the
/// growth per client, and the active client's round trips.
enum ClientsCommand: BenchCommand {
    static let name = "clients"
    static let usage = "daemon-bench clients SOCKET COUNT PID REQUESTS"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 4 else { throw .usage(self.usage) }
        let socketPath = arguments[0]
        let count = try integerArgument(arguments[1], named: "COUNT", atLeast: 1, usage: self.usage)
        let pid = pid_t(try integerArgument(arguments[2], named: "PID", atLeast: 1, usage: self.usage))
        let requests = try integerArgument(arguments[3], named: "REQUESTS", atLeast: 1, usage: self.usage)

        let before = try ResidentMemory(pid: pid)
        var idle: [Connection] = []
        idle.reserveCapacity(count)
        for number in 1...count {
            switch self.connectIdle(socketPath) {
            case .success(let connection):
                idle.append(connection)
            case .failure(let reason):
                print("clients \(idle.count)")
                throw .daemon("client \(number) of \(count): \(reason)")
            }
        }
        // The daemon may finish setting a client up (buffers, tasks) after the greeting has gone out.
        usleep(1_000_000)
        let after = try ResidentMemory(pid: pid)

        let active: Connection
        switch self.connectIdle(socketPath) {
        case .success(let connection): active = connection
        case .failure(let reason): throw .daemon("the active client, beside \(count) idle ones: \(reason)")
        }
        let times = try RoundTripTimes(on: active, count: requests)
        idle.removeAll()

        print("clients \(count)")
        print("rss_before_kb \(before.residentKilobytes)")
        print("rss_after_kb \(after.residentKilobytes)")
        print("anon_before_kb \(before.anonymousKilobytes)")
        print("anon_after_kb \(after.anonymousKilobytes)")
        print("per_client_bytes \((after.residentKilobytes - before.residentKilobytes) * 1024 / count)")
        times.printFigures()
    }

    /// Why one client could not join.
    private struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens one connection and reads its greeting; a daemon at its client limit refuses with an ACK or
    /// closes the connection.
    private static func connectIdle(_ path: String) -> Result<Connection, Refusal> {
        let connection: Connection
        do throws(SystemCallError) {
            connection = try Connection(path: path)
        } catch {
            return .failure(Refusal(description: error.description))
        }
        switch connection.readAnswer() {
        case .ok(_, let greeting) where greeting.hasPrefix("OK MPD "): return .success(connection)
        case .ok(_, let line): return .failure(Refusal(description: "'\(line)' instead of a greeting"))
        case .ack(let line): return .failure(Refusal(description: "the daemon refused: \(line)"))
        case .broken(let reason): return .failure(Refusal(description: "no greeting: \(reason)"))
        }
    }
}
