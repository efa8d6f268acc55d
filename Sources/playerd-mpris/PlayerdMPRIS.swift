import ArgumentParser
import Dispatch
import Logging
import MPRIS
import PlayerClient

#if canImport(Glibc)
    import Glibc
#endif

/// The per-user bridge: exports MPRIS on the user's session bus for a playerd the session does not
/// own (the system service, whose socket is /run/playerd/socket), as an ordinary client of its socket.
/// It follows playerd across restarts; SIGTERM or SIGINT ends it.
@main
struct PlayerdMPRIS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playerd-mpris",
        abstract: "Export MPRIS on the session bus for a playerd socket (media keys, desktop widgets, playerctl).",
        discussion: """
            Runs until SIGTERM or SIGINT, reconnecting whenever playerd restarts. playerd started in a \
            desktop session exports MPRIS itself; this bridge is for the system service. Exit status: 0 \
            stopped by a signal, 1 no session bus, or the bus connection failed.
            """)

    @Option(
        help: ArgumentHelp(
            "playerd's socket (default: $PLAYERD_SOCKET, else /run/playerd/socket, the system service's).",
            valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("The bus name to own.", valueName: "name"))
    var busName = "org.mpris.MediaPlayer2.playerd"

    @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    func validate() throws {
        guard Logger.Level(rawValue: self.logLevel.lowercased()) != nil else {
            throw ValidationError("invalid log level \"\(self.logLevel)\"")
        }
        guard self.busName.hasPrefix("org.mpris.MediaPlayer2.") else {
            throw ValidationError("an MPRIS bus name starts with org.mpris.MediaPlayer2.")
        }
    }

    func run() throws {
        let level = Logger.Level(rawValue: self.logLevel.lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "playerd-mpris")
        let environmentSocket = getenv("PLAYERD_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        let path = self.socket ?? environmentSocket ?? "/run/playerd/socket"
        var configuration = MPRISBridge.Configuration(serverName: "playerd at \(path)") {
            try MPDConnection(socketPath: path)
        }
        configuration.busName = self.busName
        let bridge = MPRISBridge(configuration: configuration, logger: logger)
        let name: String
        do {
            name = try bridge.start()
        } catch {
            logger.error("cannot export MPRIS: \(error)")
            throw ExitCode(1)
        }
        logger.info("exporting \(name) for playerd at \(path)")
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { bridge.stop() }
            source.resume()
            sources.append(source)
        }
        bridge.waitUntilFinished()
        if let failure = bridge.busFailure {
            logger.error("stopped: \(failure)")
            throw ExitCode(1)
        }
        logger.info("stopped")
    }
}
