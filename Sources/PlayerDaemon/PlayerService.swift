import Audio
import ControlProtocol
import Dispatch
import Library
import Logging
import MusicTags
import PlayerCore
import StreamInput

#if canImport(Glibc)
    import Glibc
#endif

/// What a client's commands act on: its partition's player (MPD's `Partition`: an audio engine with
/// its own thread, queue, modes, volume and outputs), and through it what all partitions share (the
/// configuration, the library, the song-info cache). Each client is in one partition, `default` until
/// it says `partition NAME`.
public final class PlayerService: Sendable {
    /// The partition's name.
    public let name: String
    /// The partition's player.
    public let engine: AudioEngine
    /// What all partitions share.
    let shared: DaemonShared
    /// The last `status` answer, while it holds.
    let statusAnswers = StatusAnswerCache()
    /// The sound card's mixer, with `--mixer hardware`, while this partition holds its output.
    var cardMixer: CardMixer? {
        guard let cardMixer = self.shared.cardMixer else { return nil }
        return self.holdsCardMixer ? cardMixer : nil
    }
    /// playerd's play statistics of this partition's player, kept as stickers.
    let playStatistics: PlayStatistics?

    /// Whether the card's mixer is this partition's volume: it holds the mixer's output (or, for a mixer
    /// of no output, it is the default partition).
    var holdsCardMixer: Bool {
        guard let output = self.shared.cardMixerOutput else { return self.name == PartitionRegistry.defaultName }
        return self.partitions.slots(of: self.name).contains(OutputSlot(output: output, isPresent: true))
    }

    /// The daemon's settings.
    public var configuration: DaemonConfiguration { self.shared.configuration }
    var songs: SongInfoCache { self.shared.songs }
    /// When the daemon started, on the engine's clock.
    var startedAt: Int64 { self.shared.startedAt }
    var hub: ChangeHub { self.shared.hub }
    /// Recent quick library answers, until the database changes.
    var answers: QueryAnswerCache { self.shared.answers }
    /// The music library, when there is a music directory and a database for it.
    var library: MusicLibrary? { self.shared.library }
    /// The stored playlists (`NAME.m3u` in the configured directory); nil when none is configured.
    var storedPlaylists: StoredPlaylists? { self.shared.storedPlaylists }
    /// Every partition, `default` first.
    var partitions: PartitionRegistry { self.shared.partitions }
    /// The sticker database, when one is configured and could be opened.
    var stickers: StickerDatabase? { self.shared.stickers }
    /// The clients' channels and messages (`subscribe`, `sendmessage` ...), across partitions.
    var channels: ChannelRegistry { self.shared.channels }

    /// Starts the default partition's engine on the configured outputs with `context` (a restored
    /// queue, say), and opens the library when one is configured (a library that cannot be opened is
    /// logged, and playerd runs without it).
    public convenience init(
        configuration: DaemonConfiguration, context: PlayerContext? = nil,
        logger: Logger = Logger(label: "playerd")
    ) {
        let songs = SongInfoCache()
        let hub = ChangeHub()
        let library: MusicLibrary?
        if let musicDirectory = configuration.musicDirectory, let libraryPath = configuration.libraryPath {
            do {
                library = try MusicLibrary(musicDirectory: musicDirectory, databasePath: libraryPath) { event in
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
                library = nil
            }
        } else {
            library = nil
        }
        if let library {
            let prefix = library.musicDirectory + "/"
            songs.setSource { path in
                guard path.hasPrefix(prefix), let facts = library.songFacts(String(path.dropFirst(prefix.count)))
                else { return nil }
                return SongInfo(
                    tags: facts.tags, duration: facts.duration, lastModified: facts.lastModified, format: facts.format)
            }
        }
        let stickers = Commands.openStickers(configuration, logger: logger)
        let storedPlaylists = configuration.playlistDirectory.map {
            StoredPlaylists(
                directory: $0, musicDirectory: configuration.musicDirectory,
                maximumLength: configuration.maximumQueueLength)
        }
        var cardMixer: CardMixer?
        if case .hardware(let control, let device) = configuration.mixer {
            cardMixer = CardMixer(
                device: MixerChoice.ctlDevice(given: device, outputs: configuration.outputs), control: control,
                logger: logger)
            cardMixer?.start()
        }
        let shared = DaemonShared(
            configuration: configuration, songs: songs, hub: hub, library: library, storedPlaylists: storedPlaylists,
            cardMixer: cardMixer, stickers: stickers, logger: logger)
        self.init(name: PartitionRegistry.defaultName, shared: shared, context: context)
        // The default partition holds every configured output; it cannot be refused (it is the first).
        try? shared.partitions.add(
            self, slots: configuration.outputs.indices.map { OutputSlot(output: $0, isPresent: true) })
    }

    /// Starts a partition's engine: the default one on the configured outputs, another with every
    /// output switched off but those it holds (`outputs`, by index, with their switches; none for a new
    /// one: MPD's new partitions have no outputs until `moveoutput`, and so no volume to show).
    init(name: String, shared: DaemonShared, context: PlayerContext? = nil, outputs: [Int: Bool] = [:]) {
        let configuration = shared.configuration
        let logger = shared.logger
        let isDefault = name == PartitionRegistry.defaultName
        self.name = name
        self.shared = shared
        let hub = shared.hub
        var context =
            context
            ?? PlayerContext(
                queue: Queue(maximumLength: configuration.maximumQueueLength),
                releasesOutputOnPause: configuration.releasesOutputOnPause)
        context.replayGainSettings = configuration.replayGain
        var definitions = configuration.outputs.map(OutputDefinition.init)
        if !isDefault {
            for index in definitions.indices { definitions[index].isEnabled = outputs[index] ?? false }
        }
        var engineConfiguration = EngineConfiguration(outputs: definitions)
        engineConfiguration.scalesVolume = configuration.mixer == .software
        engineConfiguration.streamLimits = configuration.streamLimits
        switch configuration.mixer {
        case .software:
            if !isDefault && outputs.isEmpty {
                context.mirrorVolume(nil)
            } else if context.volume == nil {
                context.mirrorVolume(100)
            }
        case .none:
            context.mirrorVolume(nil)
        case .hardware:
            // The card's level, not the state file's, is the volume: other programs may have moved it.
            // It starts with the default partition; a restored partition holding its output takes it
            // over (`restorePartitions`).
            context.mirrorVolume(isDefault ? shared.cardMixer?.volume() : nil)
        }
        let engine = AudioEngine(configuration: engineConfiguration, context: context)
        self.engine = engine
        if isDefault {
            shared.cardMixer?.attach(to: engine)
        }
        if configuration.recordsPlayStatistics, let stickers = shared.stickers,
            let musicDirectory = configuration.musicDirectory
        {
            let statistics = PlayStatistics(
                engine: engine, stickers: stickers, hub: hub, musicDirectory: musicDirectory, logger: logger)
            statistics.start()
            self.playStatistics = statistics
        } else {
            self.playStatistics = nil
        }
        let outputLog = OutputLog(initial: engine.status.outputs, logger: logger, partition: name)
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
            hub.broadcast(subsystems, partition: name)
        }
    }

    /// Brings back the partitions a state file kept, with their players (`contexts`, in `saved`'s order)
    /// and the outputs they held, which are dummies in the default partition's list from then on. The
    /// default partition's engine must have been started with those outputs switched off
    /// (`Self.claimedOutputs`).
    func restorePartitions(_ saved: [SavedPartition], contexts: [PlayerContext]) {
        let claims = Self.claimedOutputs(saved, configuration: self.configuration)
        for (index, partition) in saved.enumerated() where index < contexts.count {
            let outputs = claims[index]
            let service = PlayerService(
                name: partition.name, shared: self.shared, context: contexts[index],
                outputs: Dictionary(outputs.map { ($0.output, $0.enabled) }) { first, _ in first })
            do throws(Ack) {
                try self.partitions.restore(service, holding: outputs.map(\.output))
                if let cardMixer = self.shared.cardMixer, service.holdsCardMixer {
                    cardMixer.attach(to: service.engine)
                    Self.handOver(cardMixer, from: self, to: service)
                }
            } catch {
                self.shared.logger.error("cannot restore partition \(partition.name): \(error.message)")
                DispatchQueue.global().async { service.shutdownPartition() }
            }
        }
    }

    /// Makes the card's mixer `destination`'s volume and none of `source`'s, before any client asks.
    private static func handOver(_ cardMixer: CardMixer, from source: PlayerService, to destination: PlayerService) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await source.engine.mirrorVolume(nil)
            await destination.engine.mirrorVolume(cardMixer.volume())
            done.signal()
        }
        done.wait()
    }

    /// The outputs each saved partition held, by index in the configuration, with their switches: an
    /// output gone from the configuration, or named twice, is left to the first (or the default).
    static func claimedOutputs(_ saved: [SavedPartition], configuration: DaemonConfiguration)
        -> [[(output: Int, enabled: Bool)]]
    {
        var taken = Set<Int>()
        return saved.map { partition in
            partition.outputs.compactMap { output in
                guard let index = configuration.outputs.firstIndex(where: { $0.name == output.name }),
                    taken.insert(index).inserted
                else { return nil }
                return (index, output.isEnabled)
            }
        }
    }

    /// Brings the library up to date with what changed while playerd was down (MPD does not).
    public func startLibrary() {
        _ = try? self.library?.update("")
    }

    /// Stops playback and the audio threads of every partition, and the library's update (what it
    /// wrote stays).
    public func shutdown() {
        for partition in self.partitions.removeAll() where partition !== self {
            partition.shutdownPartition()
        }
        self.shared.cardMixer?.stop()
        self.shutdownPartition()
        self.library?.shutdown()
    }

    /// Stops this partition's playback and audio thread (blocks until the thread has ended).
    func shutdownPartition() {
        self.playStatistics?.stop()
        self.engine.shutdown()
    }

    // MARK: - Paths

    /// Turns a client's URI into the absolute paths to queue: a file, a directory's songs, a playlist's
    /// entries. Absolute paths are allowed when the client's uid may read them, as MPD allows them. The
    /// walk runs off the cooperative pool, stops at the queue's length limit, and ends when the calling
    /// task is cancelled.
    func resolve(_ uri: String, for session: SessionSettings, command: String) async throws(Ack) -> [String] {
        if StationStream.isStation(uri) {
            return [uri]
        }
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
        if StationStream.isStation(uri) {
            // A station: queued as its address (MPD adds a URL as one song, whatever it serves).
            return [uri]
        }
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
            // Files are taken by suffix, as MPD takes them: what is not a song (or a playlist) is refused
            // now, rather than skipped when its turn comes.
            throw Ack(.noExist, "\(uri): not a song (MP3, FLAC, Ogg Vorbis, Opus) or playlist", command: command)
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

    /// The URL schemes of network streams playerd plays (internet radio), as `urlhandlers` lists them.
    static let streamSchemes = ["http", "https"]

    /// MPD's refusal of a URI whose scheme it has no input plugin for (`bogus://x`): playerd reads
    /// local files (`file://`) and HTTP streams (`streamSchemes`); every other scheme is refused.
    static func checkScheme(_ uri: String, command: String) throws(Ack) {
        guard !uri.hasPrefix("/"), let separator = uri.range(of: "://") else { return }
        let scheme = uri[..<separator.lowerBound]
        guard !scheme.isEmpty, !scheme.contains("/"), scheme != "file",
            !Self.streamSchemes.contains(scheme.lowercased())
        else { return }
        throw Ack(.argument, "Unsupported URI scheme", command: command)
    }

    /// Whether a file's suffix is one playerd plays (`AudioFileKind.songSuffixes`) or expands (M3U
    /// playlists).
    static func isPlayable(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return AudioFileKind.hasSongSuffix(path) || lowered.hasSuffix(".m3u") || lowered.hasSuffix(".m3u8")
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
            Answer.status(status, now: self.engine.now(), partition: self.name, updatingJob: job, to: &response)
        }
    }

    /// Writes one song block, with the song's tags and length from the song-info cache.
    func writeSong(
        _ entry: QueueEntry,
        position: Int,
        tagTypes: Set<TagName>,
        to response: inout ResponseWriter
    ) {
        var info = self.songs.info(for: entry.path)
        if StationStream.isStation(entry.path) {
            // The station playing: what it announces now (its name, the title on air).
            let status = self.engine.status
            if let stream = status.stream, status.entry?.id == entry.id {
                info.tags = stream.songTags(over: info.tags)
            }
        }
        Answer.song(
            file: self.displayPath(entry.path), tags: info.tags, duration: info.duration, position: position,
            id: entry.id, priority: entry.priority, tagTypes: tagTypes, lastModified: info.lastModified,
            format: info.format, range: entry.range, to: &response)
    }
}
