import Dispatch
import Logging
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// The whole daemon: the player, the control socket, and an orderly end on SIGTERM or SIGINT.
public final class Daemon: Sendable {
    /// The player and its commands.
    public let service: PlayerService
    private let server: ControlServer
    private let logger: Logger

    /// Starts the player and listens on the configured socket (or on `listeningDescriptor`, a socket
    /// systemd handed over).
    /// - Throws: `ControlServerError` when the socket cannot be set up; nothing keeps running then.
    public init(configuration: DaemonConfiguration, listeningDescriptor: CInt? = nil, logger: Logger) throws {
        let service = PlayerService(configuration: configuration)
        do {
            if let listeningDescriptor {
                self.server = try ControlServer(
                    service: service, listeningDescriptor: listeningDescriptor, logger: logger)
            } else {
                self.server = try ControlServer(service: service, logger: logger)
            }
        } catch {
            service.shutdown()
            throw error
        }
        self.service = service
        self.logger = logger
    }

    /// Blocks until SIGTERM or SIGINT, then stops playback, closes the socket and removes its file.
    public func runUntilSignalled() {
        let done = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            sources.append(source)
        }
        done.wait()
        self.logger.info("stopping")
        self.shutdown()
        for source in sources {
            source.cancel()
        }
    }

    /// Stops playback and the socket.
    public func shutdown() {
        self.server.shutdown()
        self.service.shutdown()
    }
}
