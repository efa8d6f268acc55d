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

    @Test("a partition's changes reach its clients only, the daemon's everyone; a client that moves hears its new one")
    func partitionsKeepTheirChanges() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let hub = ChangeHub()
        let inDefault = Client()
        let inRoom = Client()
        let heard = Mutex<[ObjectIdentifier: Set<IdleSubsystem>]>([:])
        for (client, partition) in [(inDefault, "default"), (inRoom, "room")] {
            let key = ObjectIdentifier(client)
            hub.register(key, on: loop, partition: partition) { changes in
                heard.withLock { $0[key, default: []].formUnion(changes) }
            }
        }
        #expect(hub.count(in: "room") == 1)
        // One delivery on its way carries the room's, the default partition's and the daemon's changes.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        hub.broadcast([.player], partition: "room")
        hub.broadcast([.options], partition: "default")
        hub.broadcast([.database])
        release.signal()
        try loop.submit {}.wait()
        #expect(heard.withLock { $0[ObjectIdentifier(inDefault)] } == [.options, .database])
        #expect(heard.withLock { $0[ObjectIdentifier(inRoom)] } == [.player, .database])
        // Moved into the room, the default partition's client hears the room's changes, no longer its old one's.
        heard.withLock { $0.removeAll() }
        hub.move(ObjectIdentifier(inDefault), to: "room")
        #expect(hub.count(in: "room") == 2)
        #expect(hub.count(in: "default") == 0)
        hub.broadcast([.mixer], partition: "room")
        hub.broadcast([.playlist], partition: "default")
        try loop.submit {}.wait()
        #expect(heard.withLock { $0[ObjectIdentifier(inDefault)] } == [.mixer])
        #expect(heard.withLock { $0[ObjectIdentifier(inRoom)] } == [.mixer])
    }
}
