import NIOCore
import NIOPosix
import Synchronization

/// How the web remote reaches the daemon: a new client of it standing for a network client at `host`
/// (a descriptor to speak the protocol on; see `Daemon.connectNetworkClient(host:)`).
public typealias DaemonConnector = @Sendable (_ host: String) throws -> Int32

/// A browser's session: its own client of the daemon, opened when first needed and again after the
/// daemon closed it (its silence timeout), with the password the browser logged in with sent again on
/// the new connection. The daemon decides every permission, as for any network client.
actor WebSession {
    let token: String
    let host: String
    private let connector: DaemonConnector
    private var client: DaemonClient?
    private var connecting: Task<DaemonClient, any Error>?
    /// The password that was accepted, to send again on a new connection.
    private(set) var password: String?
    /// When it was last used, for eviction.
    private(set) var lastUsed = ContinuousClock.now

    init(token: String, host: String, connector: @escaping DaemonConnector) {
        self.token = token
        self.host = host
        self.connector = connector
    }

    /// Runs one command, reconnecting once when the connection had ended.
    func run(_ name: String, _ arguments: [String] = []) async throws(WebError) -> DaemonAnswer {
        self.lastUsed = .now
        for attempt in 0..<2 {
            let client = try await self.connected()
            do {
                return try await client.run(name, arguments)
            } catch .closed where attempt == 0 {
                self.dropClient(client)
            } catch {
                throw WebError(error, passwordGiven: self.password != nil)
            }
        }
        throw WebError(.closed, passwordGiven: self.password != nil)
    }

    /// Sends `password`; kept for new connections when the daemon accepts it.
    func logIn(password: String) async throws(WebError) {
        _ = try await self.run("password", [password])
        self.password = password
    }

    /// Ends the session's connection and forgets the password.
    func logOut() {
        self.password = nil
        self.client?.close()
        self.client = nil
    }

    /// Closes the connection (a later command opens another): for sessions of requests that carried
    /// no cookie, which will not come back, and evicted ones.
    func closeConnection() {
        self.client?.close()
        self.client = nil
    }

    /// A new connection of the session's own for a WebSocket's `idle` loop, logged in as the session.
    func openEventClient() async throws(WebError) -> DaemonClient {
        let client = try await Self.open(host: self.host, connector: self.connector)
        if let password = self.password {
            do {
                _ = try await client.run("password", [password])
            } catch {
                client.close()
                throw WebError(error, passwordGiven: true)
            }
        }
        return client
    }

    private func dropClient(_ client: DaemonClient) {
        client.close()
        if self.client === client { self.client = nil }
    }

    private func connected() async throws(WebError) -> DaemonClient {
        if let client = self.client, client.isOpen { return client }
        self.client = nil
        // One connection at a time: callers arriving meanwhile wait for the same one.
        let task: Task<DaemonClient, any Error>
        if let connecting = self.connecting {
            task = connecting
        } else {
            let host = self.host
            let connector = self.connector
            let password = self.password
            task = Task {
                let client = try await Self.open(host: host, connector: connector)
                // Covers arrive in one piece rather than 8 KiB at a time.
                _ = try? await client.run("binarylimit", ["1048576"])
                if let password {
                    _ = try await client.run("password", [password])
                }
                return client
            }
            self.connecting = task
        }
        defer { self.connecting = nil }
        do {
            let client = try await task.value
            self.client = client
            return client
        } catch let failure as DaemonFailure {
            throw WebError(failure, passwordGiven: self.password != nil)
        } catch let error as WebError {
            throw error
        } catch {
            throw WebError(status: .serviceUnavailable, "cannot reach the player: \(error)")
        }
    }

    private static func open(host: String, connector: DaemonConnector) async throws(WebError) -> DaemonClient {
        let descriptor: Int32
        do {
            descriptor = try connector(host)
        } catch {
            throw WebError(status: .serviceUnavailable, "cannot reach the player: \(error)")
        }
        do {
            return try await DaemonClient.connect(descriptor: descriptor, group: MultiThreadedEventLoopGroup.singleton)
        } catch let failure as DaemonFailure {
            throw WebError(failure, passwordGiven: false)
        } catch {
            throw WebError(status: .serviceUnavailable, "cannot reach the player: \(error)")
        }
    }
}

/// The sessions by token. Bounded: at most `perHost` from one address and `total` in all; past that the
/// least recently used one of that address (or of all) goes.
final class WebSessionStore: Sendable {
    private let sessions = Mutex<[String: WebSession]>([:])
    private let connector: DaemonConnector
    let perHost: Int
    let total: Int

    init(connector: @escaping DaemonConnector, perHost: Int = 32, total: Int = 512) {
        self.connector = connector
        self.perHost = perHost
        self.total = total
    }

    /// The session of `token` when it belongs to `host`; nil otherwise.
    func find(_ token: String?, host: String) -> WebSession? {
        guard let token, token.utf8.count == 43 else { return nil }
        return self.sessions.withLock { $0[token] }.flatMap { $0.host == host ? $0 : nil }
    }

    /// A new session for `host`, making room when the limits are reached.
    func make(host: String) async -> WebSession {
        let token = Self.newToken()
        let session = WebSession(token: token, host: host, connector: self.connector)
        let candidates = self.sessions.withLock { sessions -> [WebSession] in
            sessions[token] = session
            let fromHost = sessions.values.filter { $0.host == host }
            if fromHost.count > self.perHost { return fromHost }
            if sessions.count > self.total { return Array(sessions.values) }
            return []
        }
        if !candidates.isEmpty {
            var oldest: (session: WebSession, used: ContinuousClock.Instant)?
            for candidate in candidates where candidate !== session {
                let used = await candidate.lastUsed
                if oldest == nil || used < oldest!.used { oldest = (candidate, used) }
            }
            if let oldest {
                _ = self.sessions.withLock { $0.removeValue(forKey: oldest.session.token) }
                await oldest.session.closeConnection()
            }
        }
        return session
    }

    /// Forgets `session`.
    func remove(_ session: WebSession) {
        _ = self.sessions.withLock { $0.removeValue(forKey: session.token) }
    }

    /// Closes every session's connection (at shutdown).
    func closeAll() async {
        let all = self.sessions.withLock { sessions in
            defer { sessions.removeAll() }
            return Array(sessions.values)
        }
        for session in all { await session.closeConnection() }
    }

    /// 32 random bytes, base64url without padding: 43 characters.
    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var bytes: [UInt8] = []
        for _ in 0..<32 { bytes.append(UInt8.random(in: 0...255, using: &generator)) }
        var text = ""
        var bits = 0
        var value = 0
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                text.append(alphabet[(value >> bits) & 63])
            }
            value &= (1 << bits) - 1
        }
        if bits > 0 { text.append(alphabet[(value << (6 - bits)) & 63]) }
        return text
    }
}
