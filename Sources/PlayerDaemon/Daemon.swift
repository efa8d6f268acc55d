import Dispatch
import Logging
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// The whole daemon: the player (restored from the state file), the control socket (its own, or
/// systemd's), readiness and watchdog for systemd, and an orderly end on SIGTERM or SIGINT that saves
/// the state and removes the socket.
public final class Daemon: Sendable {
    /// The player and its commands.
    public let service: PlayerService
    /// Where clients connect.
    public let server: ControlServer
    private let persistence: StatePersistence?
    private let watchdog: Watchdog?
    private let systemd: Systemd
    let logger: Logger

    /// Starts everything and tells systemd it is ready.
    /// - Parameter resumePlaying: a saved state that was playing starts playing again, instead of
    ///   paused at its position.
    /// - Throws: `ControlServerError` when the socket cannot be set up, `StateFileError` when the state
    ///   directory is not writable; nothing keeps running then.
    public init(configuration: DaemonConfiguration, systemd: Systemd, resumePlaying: Bool = false, logger: Logger)
        throws
    {
        HeapTrimmer.limitArenas()
        self.systemd = systemd
        self.logger = logger
        var context: PlayerContext?
        var saved: SavedState?
        var partitionContexts: [PlayerContext] = []
        let stateFile = configuration.stateFile.map(StateFile.init(path:))
        if let stateFile {
            try stateFile.checkWritable()
            (context, saved, partitionContexts) = StatePersistence.restore(
                from: stateFile, logger: logger, releasesOutputOnPause: configuration.releasesOutputOnPause,
                maximumQueueLength: configuration.maximumQueueLength)
        }
        // Said before the socket answers, so that whoever connects first finds it in the log.
        if let problem = configuration.musicDirectory.flatMap(Self.problem(withMusicDirectory:)) {
            // As MPD, playerd starts all the same: the directory may be mounted later (a USB disk, a
            // network share), and files can still be played by absolute path meanwhile.
            logger.warning(
                "music directory \(problem); the library finds no songs and relative paths do not resolve until it can be read (--music-dir)"
            )
        }
        for output in configuration.outputs {
            do {
                try output.spec.checkAvailable()
            } catch {
                // playerd still starts: the device may come (USB, a suspended card), and clients must be
                // able to connect to learn why nothing plays.
                let advice =
                    configuration.outputs.count > 1
                    ? "it is tried again every 10 seconds while the others play"
                    : "every play will fail until it opens (no sound card? start playerd with --output null)"
                logger.warning("\(error); \(advice)")
            }
        }
        var configuration = configuration
        for saved in saved?.outputs ?? [] {
            // An output that has gone from the configuration is forgotten; a new one keeps its own setting.
            if let index = configuration.outputs.firstIndex(where: { $0.name == saved.name }) {
                configuration.outputs[index].startsEnabled = saved.isEnabled
            }
        }
        // An output another partition held starts there, switched off in the default partition's engine.
        for claims in PlayerService.claimedOutputs(saved?.partitions ?? [], configuration: configuration) {
            for claim in claims { configuration.outputs[claim.output].startsEnabled = false }
        }
        let service = PlayerService(configuration: configuration, context: context, logger: logger)
        service.restorePartitions(saved?.partitions ?? [], contexts: partitionContexts)
        self.service = service
        // The saved position is back before the first client can ask for it.
        if let stateFile {
            let persistence = StatePersistence(
                file: stateFile, engine: service.engine, partitions: service.partitions, logger: logger,
                restored: saved,
                savesVolume: configuration.mixer == .software)
            if let saved {
                Self.wait { await persistence.resume(saved, playing: resumePlaying) }
            }
            self.persistence = persistence
        } else {
            self.persistence = nil
        }
        // The start-up update is queued before the socket answers: the first client's `status` shows it.
        service.startLibrary()
        do {
            self.server = try ControlServer(service: service, inherited: systemd.listeningDescriptors, logger: logger)
        } catch {
            service.shutdown()
            throw error
        }
        self.persistence?.start()
        let server = self.server
        self.watchdog = Watchdog(systemd: systemd, engine: service.engine, logger: logger) {
            server.isResponsive(within: .seconds(1))
        }
        systemd.notify("READY=1\nSTATUS=listening on \(server.places.joined(separator: ", "))")
    }

    /// Holds SIGTERM and SIGINT back in the calling thread and in every thread it starts from then on, so
    /// that `runUntilSignalled` takes them however early they come. Call it first thing in `main`, before
    /// any thread exists. (Ignoring them so that Dispatch could catch them, as playerd did, lost one sent
    /// as soon as the socket answered: setting SIG_IGN discards a signal already pending, and a parent
    /// such as Foundation's Process starts its children with them blocked; without a parent's block, one
    /// sent that early killed playerd without a shutdown.)
    public static func holdStopSignals() {
        var signals = Self.stopSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    private static var stopSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        return signals
    }

    /// Blocks until SIGTERM or SIGINT (held back since `holdStopSignals`, so one sent during start-up is
    /// taken now), then runs `beforeShutdown` (what must end while the daemon still answers, such as the
    /// in-process MPRIS bridge) and shuts down.
    public func runUntilSignalled(beforeShutdown: () -> Void = {}) {
        Self.holdStopSignals()
        // A client's `kill` ends the daemon as SIGTERM does: it sends one, which the wait below takes.
        DaemonStop.install { _ = kill(getpid(), SIGTERM) }
        var signals = Self.stopSignals
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        DaemonStop.install(nil)
        self.logger.info("stopping")
        beforeShutdown()
        self.shutdown()
    }

    /// Saves the state (as it is, playing or paused), then stops playback and the socket.
    public func shutdown() {
        self.systemd.notify("STOPPING=1")
        self.watchdog?.stop()
        if let persistence = self.persistence {
            Self.wait { await persistence.finish() }
        }
        self.server.shutdown()
        self.service.shutdown()
    }

    /// Why the music directory at `path` cannot be listed, in a phrase that follows its name (`/x: No
    /// such file or directory`); nil when it can.
    static func problem(withMusicDirectory path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return "\(path): \(String(cString: strerror(errno)))"
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            return "\(path) is not a directory"
        }
        guard access(path, R_OK | X_OK) == 0 else {
            return "\(path): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Runs async work to its end from synchronous start-up and shutdown code.
    private static func wait(_ work: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await work()
            done.signal()
        }
        done.wait()
    }
}
