import Audio
import ControlProtocol
import Library
import Logging
import MusicTags
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// What every client's commands act on: the audio engine, the song-info cache, the configuration.
public final class PlayerService: Sendable {
    /// The player.
    public let engine: AudioEngine
    /// The daemon's settings.
    public let configuration: DaemonConfiguration
    let songs: SongInfoCache
    let hub = ChangeHub()
    /// The clients' channels and messages (`subscribe`, `sendmessage` ...).
    let channels = ChannelRegistry()
    /// Recent quick library answers, until the database changes.
    let answers = QueryAnswerCache()
    /// The last `status` answer, while it holds.
    let statusAnswers = StatusAnswerCache()
    let startedAt: Int64
    /// The music library, when there is a music directory and a database for it.
    let library: MusicLibrary?
    /// The stored playlists (`NAME.m3u` in the configured directory); nil when none is configured.
    let storedPlaylists: StoredPlaylists?
    /// The sound card's mixer, with `--mixer hardware`.
    let cardMixer: CardMixer?
    /// The sticker database, when one is configured and could be opened.
    let stickers: StickerDatabase?
    /// playerd's play statistics, kept as stickers.
    let playStatistics: PlayStatistics?

    /// Starts the engine on the configured output with `context` (a restored queue, say), and opens the
    /// library when one is configured (a library that cannot be opened is logged, and playerd runs
    /// without it).
    public init(
        configuration: DaemonConfiguration, context: PlayerContext? = nil,
        logger: Logger = Logger(label: "playerd")
    ) {
        self.configuration = configuration
        let hub = self.hub
        let songs = SongInfoCache()
        self.songs = songs
        if let musicDirectory = configuration.musicDirectory, let libraryPath = configuration.libraryPath {
            do {
                self.library = try MusicLibrary(musicDirectory: musicDirectory, databasePath: libraryPath) { event in
                    switch event {
                    case .updateStarted:
                        hub.broadcast([.update])
                    case .updateFinished(let id, let report):
                        if report.changed { songs.removeAll() }
                        hub.broadcast(report.changed ? [.update, .database] : [.update])
                        logger.info(
                            "library update \(id) done: \(report.added) added, \(report.updated) read again, \(report.removed) removed, \(report.skipped.count) skipped"
                        )
                    case .notice(let text):
                        logger.warning("\(text)")
                    }
                }
            } catch {
                logger.error("library \(libraryPath): \(error); running without a library")
                self.library = nil
            }
        } else {
            self.library = nil
        }
        if let library = self.library {
            let prefix = library.musicDirectory + "/"
            songs.setSource { path in
                guard path.hasPrefix(prefix), let facts = library.songFacts(String(path.dropFirst(prefix.count)))
                else { return nil }
                return SongInfo(
                    tags: facts.tags, duration: facts.duration, lastModified: facts.lastModified, format: facts.format)
            }
        }
        self.stickers = Commands.openStickers(configuration, logger: logger)
        self.storedPlaylists = configuration.playlistDirectory.map {
            StoredPlaylists(
                directory: $0, musicDirectory: configuration.musicDirectory,
                maximumLength: configuration.maximumQueueLength)
        }
        var context =
            context
            ?? PlayerContext(
                queue: Queue(maximumLength: configuration.maximumQueueLength),
                releasesOutputOnPause: configuration.releasesOutputOnPause)
        context.replayGainSettings = configuration.replayGain
        var engineConfiguration = EngineConfiguration(outputs: configuration.outputs.map(OutputDefinition.init))
        engineConfiguration.scalesVolume = configuration.mixer == .software
        switch configuration.mixer {
        case .software:
            self.cardMixer = nil
        case .none:
            self.cardMixer = nil
            context.mirrorVolume(nil)
        case .hardware(let control, let device):
            // The card's level, not the state file's, is the volume: other programs may have moved it.
            let cardMixer = CardMixer(
                device: MixerChoice.ctlDevice(given: device, outputs: configuration.outputs), control: control,
                logger: logger)
            cardMixer.start()
            context.mirrorVolume(cardMixer.volume())
            self.cardMixer = cardMixer
        }
        let engine = AudioEngine(configuration: engineConfiguration, context: context)
        self.engine = engine
        self.cardMixer?.attach(to: engine)
        self.startedAt = engine.now()
        if configuration.recordsPlayStatistics, let stickers = self.stickers,
            let musicDirectory = configuration.musicDirectory
        {
            let statistics = PlayStatistics(
                engine: engine, stickers: stickers, hub: hub, musicDirectory: musicDirectory, logger: logger)
            statistics.start()
            self.playStatistics = statistics
        } else {
            self.playStatistics = nil
        }
        let outputLog = OutputLog(initial: engine.status.outputs, logger: logger)
        engine.observe { changes in
            if changes.contains(.output) {
                outputLog.note(engine.status.outputs)
            }
            var subsystems: Set<IdleSubsystem> = []
            if changes.contains(.player) { subsystems.insert(.player) }
            if changes.contains(.mixer) { subsystems.insert(.mixer) }
            if changes.contains(.playlist) { subsystems.insert(.playlist) }
            if changes.contains(.options) { subsystems.insert(.options) }
            if changes.contains(.output) { subsystems.insert(.output) }
            hub.broadcast(subsystems)
        }
    }

    /// Brings the library up to date with what changed while playerd was down (MPD does not).
    public func startLibrary() {
        _ = try? self.library?.update("")
    }

    /// Stops playback and the audio thread, and the library's update (what it wrote stays).
    public func shutdown() {
        self.cardMixer?.stop()
        self.playStatistics?.stop()
        self.library?.shutdown()
        self.engine.shutdown()
    }

    // MARK: - Paths

    /// Turns a client's URI into the absolute paths to queue: a file, a directory's MP3s, a playlist's
    /// entries. Absolute paths are allowed when the client's uid may read them, as MPD allows them. The
    /// walk runs off the cooperative pool, stops at the queue's length limit, and ends when the calling
    /// task is cancelled.
    func resolve(_ uri: String, for session: SessionSettings, command: String) async throws(Ack) -> [String] {
        // What the library holds is a query, not a walk: it runs on the library's threads, which are not
        // held back behind busy clients as the walks' are.
        if self.library != nil, !uri.hasPrefix("/"), !uri.hasPrefix("file://"),
            let paths = try await FileSystemWork.run(
                on: .library,
                { _ throws(Ack) in
                    try self.libraryPaths(uri, command: command)
                })
        {
            return paths
        }
        return try await FileSystemWork.run { cancellation throws(Ack) in
            try self.resolve(uri, for: session, command: command, cancellation: cancellation)
        }
    }

    /// The paths of what the library holds under the relative `uri`, in listing order; nil when it holds
    /// nothing there (or there is no library): then the disk is walked.
    private func libraryPaths(_ uri: String, command: String) throws(Ack) -> [String]? {
        try self.libraryPaths([uri], command: command)[0]?.get()
    }

    /// What the library holds under each of `uris`, looked up together in one read of the database: an
    /// entry for each, nil where `resolve` would not answer from the library (an absolute path, a URI the
    /// library does not know), else the paths or the refusal of too many. For a command list's `add`s.
    func libraryPaths(_ uris: [String], command: String) throws(Ack) -> [Result<[String], Ack>?] {
        guard let library = self.library, let musicDirectory = self.configuration.musicDirectory else {
            return uris.map { _ in nil }
        }
        let known = uris.map { uri in
            uri.hasPrefix("/") || uri.hasPrefix("file://") || QueueLoader.climbsUp(uri) ? nil : uri
        }
        var found = try library.songURIs(underEach: known.compactMap { $0 }, prefixedWith: musicDirectory + "/")
            .makeIterator()
        let limit = self.configuration.maximumQueueLength
        return known.map { uri -> Result<[String], Ack>? in
            guard let uri, let paths = found.next() ?? nil else { return nil }
            guard paths.count <= limit else {
                return .failure(
                    Ack(.playlistMax, "\(uri): more than \(limit) songs, the queue's limit", command: command))
            }
            return .success(paths)
        }
    }

    /// `resolve` on the calling thread, which may block for as long as the walk takes.
    func resolve(
        _ uri: String,
        for session: SessionSettings,
        command: String,
        cancellation: WalkCancellation
    ) throws(Ack) -> [String] {
        try Self.checkScheme(uri, command: command)
        var path = uri
        if path.hasPrefix("file://") {
            path.removeFirst("file://".count)
        }
        if !path.hasPrefix("/") {
            guard let musicDirectory = self.configuration.musicDirectory else {
                throw Ack(.noExist, "no music directory is configured: use an absolute path", command: command)
            }
            // A relative path names something inside the music directory; `..` would leave it and skip
            // the access check absolute paths get.
            guard !QueueLoader.climbsUp(path) else {
                throw Ack(.noExist, "\(uri): no such file in the music directory", command: command)
            }
            // What the library knows comes from the database, in its order, without walking the disk.
            if let paths = try self.libraryPaths(path, command: command) {
                return paths
            }
            path = musicDirectory + "/" + path
        } else {
            try Self.checkAccess(path, session: session, command: command)
        }
        var info = stat()
        if stat(PathEscaping.systemPath(path), &info) == 0, info.st_mode & S_IFMT == S_IFREG, !Self.isPlayable(path) {
            // Decoders are chosen by suffix, as MPD chooses them: what is not MP3 (or a playlist) is refused
            // now, rather than skipped when its turn comes.
            throw Ack(.noExist, "\(uri): not an MP3 file or playlist", command: command)
        }
        let result: QueueLoader.Result
        do {
            result = try QueueLoader.expand(
                path, limits: QueueLoader.Limits(maximumSongs: self.configuration.maximumQueueLength),
                cancellation: cancellation)
        } catch {
            let code: AckCode =
                switch error.reason {
                case .permissionDenied: .permission
                case .tooManySongs: .playlistMax
                case .cancelled: .system
                default: .noExist
                }
            throw Ack(code, error.description, command: command)
        }
        return result.paths
    }

    /// MPD's refusal of a URI whose scheme it has no input plugin for (`bogus://x`): playerd reads
    /// local files only, so every scheme but `file://` is refused (`urlhandlers` lists just that one).
    static func checkScheme(_ uri: String, command: String) throws(Ack) {
        guard !uri.hasPrefix("/"), let separator = uri.range(of: "://") else { return }
        let scheme = uri[..<separator.lowerBound]
        guard !scheme.isEmpty, !scheme.contains("/"), scheme != "file" else { return }
        throw Ack(.argument, "Unsupported URI scheme", command: command)
    }

    /// Whether a file's suffix is one playerd plays (MP3) or expands (M3U playlists).
    static func isPlayable(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".mp3") || lowered.hasSuffix(".m3u") || lowered.hasSuffix(".m3u8")
    }

    /// MPD's rule for absolute paths: only from local clients, and then for root, the file's owner, the
    /// daemon's own user, or a world-readable file. `info` is the file's (or its directory's) `stat`.
    static func checkAccess(_ path: String, session: SessionSettings, info: stat, command: String) throws(Ack) {
        guard session.isLocal else {
            throw Ack(
                .permission, "\(path): access denied: only clients on this machine may name files by absolute path",
                command: command)
        }
        guard let uid = session.uid else {
            throw Ack(.permission, "\(path): access denied: the client's identity is unknown", command: command)
        }
        if uid == 0 || uid == geteuid() || uid == info.st_uid || info.st_mode & S_IROTH != 0 {
            return
        }
        throw Ack(.permission, "\(path): access denied", command: command)
    }

    /// `checkAccess(_:session:info:command:)` for a file that must exist. A remote client learns
    /// nothing of the file system: it is refused before the file is looked at.
    static func checkAccess(_ path: String, session: SessionSettings, command: String) throws(Ack) {
        var info = stat()
        if session.isLocal, stat(PathEscaping.systemPath(path), &info) != 0 {
            let reason = String(cString: strerror(errno))
            throw Ack(.noExist, "\(path): \(reason)", command: command)
        }
        try Self.checkAccess(path, session: session, info: info, command: command)
    }

    /// The path as clients see it: relative to the music directory when inside it, as MPD shows it.
    func displayPath(_ path: String) -> String {
        Answer.displayPath(path, musicDirectory: self.configuration.musicDirectory)
    }

    // MARK: - Answers

    /// Writes MPD's `status` answer (a copy of the last one, when nothing it shows has changed).
    func writeStatus(to response: inout ResponseWriter) {
        let job = self.library?.runningJob
        self.statusAnswers.answer(self.engine.status, job: job, to: &response) { status, response in
            Answer.status(status, now: self.engine.now(), updatingJob: job, to: &response)
        }
    }

    /// Writes one song block, with the song's tags and length from the song-info cache.
    func writeSong(
        _ entry: QueueEntry,
        position: Int,
        tagTypes: Set<TagName>,
        to response: inout ResponseWriter
    ) {
        let info = self.songs.info(for: entry.path)
        Answer.song(
            file: self.displayPath(entry.path), tags: info.tags, duration: info.duration, position: position,
            id: entry.id, priority: entry.priority, tagTypes: tagTypes, lastModified: info.lastModified,
            format: info.format, range: entry.range, to: &response)
    }
}
