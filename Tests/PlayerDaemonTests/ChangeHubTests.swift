import ControlProtocol
import Dispatch
import NIOPosix
import Synchronization
import Testing

@testable import PlayerDaemon

/// The fan-out of changes to the clients' `idle`, on a real event loop.
@Suite("Change hub")
struct ChangeHubTests {
    /// A client, as far as the hub knows one: an identity.
    private final class Client: Sendable {}

    @Test("changes that come while a delivery is on its way join it: one task per loop, not per client and change")
    func changesJoinTheDeliveryOnItsWay() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let hub = ChangeHub()
        let clients = (0..<50).map { _ in Client() }
        let heard = Mutex<[ObjectIdentifier: [Set<IdleSubsystem>]]>([:])
        for client in clients {
            let key = ObjectIdentifier(client)
            hub.register(key, on: loop) { changes in heard.withLock { $0[key, default: []].append(changes) } }
        }
        // The loop is busy (a long tick) while a thousand changes come.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        for number in 0..<1000 {
            hub.broadcast([number % 2 == 0 ? .player : .mixer])
        }
        release.signal()
        try loop.submit {}.wait()
        // Each client heard of both, once: not a thousand tasks each, 50,000 in one tick.
        for client in clients {
            let deliveries = heard.withLock { $0[ObjectIdentifier(client)] ?? [] }
            #expect(deliveries.count == 1)
            #expect(deliveries.first == [.player, .mixer])
        }
        // Later changes make a delivery of their own.
        hub.broadcast([.playlist])
        try loop.submit {}.wait()
        #expect(heard.withLock { $0[ObjectIdentifier(clients[0])] } == [[.player, .mixer], [.playlist]])
    }
}
