import Audio
import ControlProtocol
import Library
import MusicTags
import PlayerCore
import StreamInput

/// The daemon's one command table: every command's name, argument counts, permission and handler.
/// Handlers only parse their arguments and act; counting and permissions happen in the table.
enum Commands {
    static let table: CommandTable<CommandHandler> = {
        var table = CommandTable<CommandHandler>()
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        // Status and the current song.
        add("status", .answer { service, response in service.writeStatus(to: &response) })
        add("currentsong", .immediate(currentSong))
        add("stats", .immediate(stats))
        add("replay_gain_status", .immediate(replayGainStatus))
        add("replay_gain_mode", .deferred(setReplayGainMode))
        // Playback.
        add("play", .deferred(play))
        add("playid", .deferred(playID))
        add("pause", .deferred(pause))
        add("stop", .deferred { service, call throws(Ack) in try await request(.stop, service, call) })
        add("next", .deferred { service, call throws(Ack) in try await request(.next, service, call) })
        add("previous", .deferred { service, call throws(Ack) in try await request(.previous, service, call) })
        add("seek", .deferred(seek))
        add("seekid", .deferred(seekID))
        add("seekcur", .deferred(seekCurrent))
        // Volume.
        add("setvol", .deferred(setVolume))
        add("volume", .deferred(changeVolume))
        add(
            "getvol",
            .immediate { service, call throws(Ack) in
                if let volume = service.engine.status.volume { call.response.field("volume", volume) }
            })
        // The queue.
        add("add", .deferred(addURI))
        add("addid", .deferred(addID))
        add("delete", .deferred(delete))
        add("deleteid", .deferred(deleteID))
        add("move", .deferred(move))
        add("moveid", .deferred(moveID))
        add("clear", .deferred(clear))
        add("playlistinfo", .deferred(playlistInfo))
        add("playlistid", .deferred(playlistID))
        add("plchanges", .deferred(playlistChanges))
        add("plchangesposid", .deferred(playlistChanges))
        // Modes.
        add("repeat", .deferred(setMode))
        add("random", .deferred(setMode))
        add("single", .deferred(setMode))
        add("consume", .deferred(setMode))
        // Outputs.
        add("outputs", .immediate(outputs))
        add("enableoutput", .deferred { service, call throws(Ack) in try await switchOutput(true, service, call) })
        add("disableoutput", .deferred { service, call throws(Ack) in try await switchOutput(false, service, call) })
        add("toggleoutput", .deferred { service, call throws(Ack) in try await switchOutput(nil, service, call) })
        add("outputset", .immediate(setOutputAttribute))
        // The connection and what the server offers.
        add("tagtypes", .immediate(tagTypes))
        add("config", .immediate(config))
        add(
            "commands",
            .immediate { service, call throws(Ack) in
                // Without a sticker database `sticker` is not offered, as in MPD, nor `listneighbors`
                // without neighbor plugins. `noidle` is in the table to be routed; MPD's table lacks it,
                // and neither listing names it.
                for name in Commands.table.names(permittedTo: call.session.permission)
                where name != "noidle" && name != "listneighbors" && (name != "sticker" || service.stickers != nil) {
                    call.response.field("command", name)
                }
            })
        add(
            "notcommands",
            .immediate { _, call throws(Ack) in
                for name in Commands.table.names(deniedTo: call.session.permission) where name != "noidle" {
                    call.response.field("command", name)
                }
            })
        add(
            "urlhandlers",
            .immediate { _, call throws(Ack) in
                // As MPD: files only for clients on this machine.
                if call.session.isLocal {
                    call.response.field("handler", "file://")
                }
                for scheme in PlayerService.streamSchemes {
                    call.response.field("handler", scheme + "://")
                }
            })
        // playerd's decoders, each as mpd 0.23 lists its plugin for the format (`decoderPlugins`).
        add(
            "decoders",
            .immediate { _, call throws(Ack) in
                for plugin in decoderPlugins {
                    call.response.field("plugin", plugin.name)
                    for suffix in plugin.suffixes { call.response.field("suffix", suffix) }
                    for type in plugin.mimeTypes { call.response.field("mime_type", type) }
                }
            })
        add("ping", .immediate { _, _ throws(Ack) in })
        add(
            "password",
            .immediate { service, call throws(Ack) in
                // The password's grant replaces what the client had, as in MPD.
                guard let granted = service.configuration.passwords?.permission(for: call.argument(0)) else {
                    throw Ack(.password, "incorrect password", command: call.name)
                }
                call.session.permission = granted
            })
        add("close", .session)
        add("idle", .session)
        add("noidle", .session)
        add("kill", .session)
        registerLibraryCommands(in: &table)
        registerStoredPlaylistCommands(in: &table)
        registerQueueCommands(in: &table)
        registerStickerCommands(in: &table)
        registerChannelCommands(in: &table)
        registerStorageCommands(in: &table)
        registerSongDataCommands(in: &table)
        registerCrossfadeCommands(in: &table)
        registerPartitionCommands(in: &table)
        // playerd's own, in MPD's style.
        table.register(CommandSpec("clearerror", arguments: 0, .player), .deferred(clearError))
        table.register(CommandSpec("pausefor", arguments: 1, .player), .deferred(pauseFor))
        table.register(CommandSpec("sleeptimer", arguments: 1, .player), .deferred(sleepTimer))
        table.register(
            CommandSpec("playnow", minimumArguments: 1, maximumArguments: nil, [.add, .player]), .deferred(playNow))
        return table
    }()

    // MARK: - Playback

    private static func request(_ request: PlayerRequest, _ service: PlayerService, _ call: CommandCall)
        async throws(Ack) -> CommandCall
    {
        do {
            try await service.engine.handle(request)
        } catch {
            throw Ack(error, command: call.name)
        }
        return call
    }

    /// `play [POS]`: the position is a 32-bit int, as MPD reads it; -1 (and no argument) is "the current
    /// song, or resume", another negative number MPD's `Bad song index`.
    private static func play(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let position = try call.optionalArgument(0).map { text throws(Ack) in try Argument.integer(text) } ?? -1
        if position == -1 {
            // An empty queue gives `play` nothing to do; mpd answers OK.
            do {
                try await service.engine.handle(.play)
            } catch PlayerError.emptyQueue {
                return call
            } catch {
                throw Ack(error, command: call.name)
            }
            return call
        }
        guard position >= 0 else {
            throw Ack(.argument, "Bad song index", command: call.name)
        }
        return try await request(.playPosition(position), service, call)
    }

    /// `playnow URI...`: replaces the queue with what the URIs name and plays the first song that
    /// opens. Every URI is resolved and songs are opened in order until one can play before anything
    /// changes: a URI that cannot be queued, or songs none of which can play, are refused (each song's
    /// reason in the ACK) with the queue, the current song, the position and the play state untouched.
    private static func playNow(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let (paths, first) = try await FileSystemWork.run { cancellation throws(Ack) in
            var paths: [String] = []
            for uri in call.arguments {
                paths += try service.resolve(uri, for: call.session, command: call.name, cancellation: cancellation)
                let limit = service.configuration.maximumQueueLength
                guard paths.count <= limit else {
                    throw Ack(.playlistMax, "more than \(limit) songs, the queue's limit", command: call.name)
                }
            }
            guard !paths.isEmpty else {
                throw Ack(.noExist, "no songs in \(call.arguments.joined(separator: ", "))", command: call.name)
            }
            var failures: [String] = []
            for (index, path) in paths.enumerated() {
                guard !cancellation.isCancelled else { throw Ack(.system, "cancelled", command: call.name) }
                // A station is tried when it plays: whether it answers is the network's to tell.
                if StationStream.isStation(path) {
                    return (paths, index)
                }
                do throws(DecoderError) {
                    _ = try AudioDecoders.open(path: path)
                    return (paths, index)
                } catch {
                    failures.append(error.description)
                }
            }
            throw Ack(.noExist, PlayerContext.summary(ofFailures: failures), command: call.name)
        }
        do throws(PlayerError) {
            try await service.engine.replaceQueue(with: paths, playingFrom: first)
        } catch {
            throw Ack(error, command: call.name)
        }
        return call
    }

    /// `playid [ID]`: the id is a 32-bit int, as MPD reads it; -1 (and no argument) is "the current song,
    /// or resume", another negative number names no song.
    private static func playID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try call.optionalArgument(0).map { text throws(Ack) in try Argument.integer(text) } ?? -1
        if id == -1 {
            return try await request(.play, service, call)
        }
        guard id >= 0 else {
            throw Ack(.noExist, "No such song", command: call.name)
        }
        return try await request(.playID(id), service, call)
    }

    private static func pause(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        guard let text = call.optionalArgument(0) else {
            return try await request(.togglePause, service, call)
        }
        return try await request(try Argument.bool(text) ? .pause : .resume, service, call)
    }

    /// A client's time in nanoseconds, held at Int64's bounds (292 years) beyond them: the parsers take
    /// up to 1e12 s, and `seekcur 99999999999` multiplied out overflowed and stopped the daemon. The
    /// player refuses what lies past a song's end, and a timer that far off never fires.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowedAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowed && !overflowedAgain else {
            return seconds < 0 ? .min : .max
        }
        return sum
    }

    private static func seek(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let position = try Argument.unsigned(call.argument(0))
        let offset = nanoseconds(try Argument.songTime(call.argument(1)))
        return try await request(.seekPosition(position, offset: offset), service, call)
    }

    private static func seekID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        let offset = nanoseconds(try Argument.songTime(call.argument(1)))
        return try await request(.seekID(id, offset: offset), service, call)
    }

    private static func seekCurrent(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        switch try Argument.seekTarget(call.argument(0)) {
        case .absolute(let time):
            return try await request(.seek(offset: nanoseconds(time)), service, call)
        case .relative(let delta):
            do {
                try await service.engine.seek(by: nanoseconds(delta))
            } catch {
                throw Ack(error, command: call.name)
            }
            return call
        }
    }

    private static func clearError(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        do {
            try await service.engine.withContext { context throws(PlayerError) in
                context.clearError()
                return ((), [])
            }
        } catch {
            throw Ack(error, command: call.name)
        }
        return call
    }

    private static func pauseFor(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let duration = nanoseconds(try Argument.songTime(call.argument(0)))
        return try await request(.pauseFor(duration: duration), service, call)
    }

    private static func sleepTimer(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        switch call.argument(0) {
        case "end": return try await request(.sleepAtEndOfSong, service, call)
        case "off": return try await request(.cancelSleep, service, call)
        default:
            let duration = nanoseconds(try Argument.songTime(call.argument(0)))
            return try await request(.sleepAfter(duration: duration), service, call)
        }
    }

    // MARK: - Volume

    private static func setVolume(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let volume = try Argument.volume(call.argument(0))
        try await Self.apply(volume: volume, service, call)
        return call
    }

    private static func changeVolume(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let change = try Argument.volumeChange(call.argument(0))
        guard let current = service.engine.status.volume else {
            throw Ack(.system, "No mixer", command: call.name)
        }
        try await Self.apply(volume: min(100, max(0, current + change)), service, call)
        return call
    }

    /// Sets the volume where `--mixer` says it is: the samples' scale, or the card's mixer (whose new
    /// reading is then mirrored at once, so the client's next `status` shows it). MPD's words when
    /// there is no mixer, or it fails.
    private static func apply(volume: Int, _ service: PlayerService, _ call: CommandCall) async throws(Ack) {
        switch service.configuration.mixer {
        case .software:
            // A partition with no outputs has no mixer (MPD's new partitions).
            guard service.engine.status.volume != nil else { throw Ack(.unknown, "No mixer", command: call.name) }
            do {
                try await service.engine.setVolume(volume)
            } catch {
                throw Ack(error, command: call.name)
            }
        case .none:
            throw Ack(.unknown, "No mixer", command: call.name)
        case .hardware:
            guard let cardMixer = service.cardMixer else { throw Ack(.unknown, "No mixer", command: call.name) }
            do {
                try cardMixer.setVolume(volume)
            } catch {
                throw Ack(.unknown, "Failed to set mixer: \(error)", command: call.name)
            }
            await service.engine.mirrorVolume(cardMixer.volume())
        }
    }

    // MARK: - The queue

    static func edit<Result: Sendable>(
        _ service: PlayerService,
        _ call: CommandCall,
        _ body: @escaping @Sendable (inout Queue) throws(QueueError) -> Result
    ) async throws(Ack) -> Result {
        let name = call.name
        do {
            return try await service.engine.withContext { context throws(PlayerError) in
                try context.editQueue(name, body)
            }
        } catch {
            throw Ack(error, command: call.name)
        }
    }

    static func read<Result: Sendable>(
        _ service: PlayerService,
        _ call: CommandCall,
        _ body: @escaping @Sendable (Queue) throws(Ack) -> Result
    ) async throws(Ack) -> Result {
        let outcome: Swift.Result<Result, Ack>
        do {
            outcome = try await service.engine.withContext { context throws(PlayerError) in
                do throws(Ack) {
                    return (.success(try body(context.queue)), [])
                } catch {
                    return (.failure(error), [])
                }
            }
        } catch {
            throw Ack(error, command: call.name)
        }
        return try outcome.get()
    }

    /// `add URI [POS]`: POS as MPD reads it (`N`, or `+N`/`-N` around the current song), checked before
    /// the URI is.
    private static func addURI(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let position = call.optionalArgument(1)
        try checkInsertPosition(position, service)
        let paths = try await service.resolve(call.argument(0), for: call.session, command: call.name)
        _ = try await insert(paths, at: position, service, call)
        return call
    }

    /// Queues `paths` at the insert position `text` (nil: the end), read from the queue itself.
    /// `songBySong`: the queue's version moves once per song, as MPD's `findadd` and `searchadd` append
    /// them (its `add` and `load` are one bulk edit).
    static func insert(
        _ paths: [String], at text: String?, songBySong: Bool = false, _ service: PlayerService, _ call: CommandCall
    ) async throws(Ack) -> [Int] {
        let name = call.name
        return try await change(service, call) { queue, _ throws(Ack) in
            let position = try text.map { text throws(Ack) in
                try insertPosition(text, count: queue.count, current: queue.currentPosition)
            }
            do throws(QueueError) {
                return try queueSongs(paths, at: position, songBySong: songBySong, to: &queue)
            } catch {
                throw Ack(PlayerError.queue(request: name, detail: error.description), command: name)
            }
        }
    }

    /// Adds `paths` and moves the queue's version as MPD's does: a step for the append (one per song
    /// `songBySong`), and one more for the move to `position` when it is before the end.
    static func queueSongs(_ paths: [String], at position: Int?, songBySong: Bool, to queue: inout Queue)
        throws(QueueError) -> [Int]
    {
        let oldCount = queue.count
        let ids = try queue.add(paths, at: position)
        guard !ids.isEmpty else { return ids }
        var extra = songBySong ? ids.count - 1 : 0
        if let position, position < oldCount {
            extra += 1
        }
        queue.advanceVersion(by: extra)
        return ids
    }

    /// Consecutive `add`s of one command list, run as one edit of the queue: their URIs are resolved in
    /// order until one fails, and what resolved is queued in a single visit to the audio thread, as the
    /// adds one at a time would have queued it. A list of 1,000 adds costs one trip instead of 1,000
    /// (100,000 adds took 4.5 s one trip each). Returns how many adds succeeded and the first failure;
    /// the ones before it stay done, as in MPD.
    static func addAll(_ service: PlayerService, _ calls: [CommandCall]) async -> (added: Int, failure: Ack?) {
        // One trip to the walk threads for all of them: a trip each cost 100,000 adds 1.7 s more.
        let resolved = try? await FileSystemWork.run {
            cancellation throws(Ack) -> ([(paths: [String], position: String?)], Ack?) in
            var items: [(paths: [String], position: String?)] = []
            // What the library holds, in one read for all of them (a read each cost 1,000 adds 40 ms).
            let known: [Result<[String], Ack>?]
            do throws(Ack) {
                known = try service.libraryPaths(calls.map { $0.argument(0) }, command: "add")
            } catch {
                return (items, error)
            }
            for (call, known) in zip(calls, known) {
                do throws(Ack) {
                    let paths: [String]
                    if let known {
                        paths = try known.get()
                    } else {
                        paths = try service.resolve(
                            call.argument(0), for: call.session, command: call.name, cancellation: cancellation)
                    }
                    // Read against the queue as the edit finds it (`+N` names the current song then).
                    items.append((paths, call.optionalArgument(1)))
                } catch {
                    return (items, error)
                }
            }
            return (items, nil)
        }
        let (items, failure): ([(paths: [String], position: String?)], Ack?) =
            resolved ?? ([], Ack(.system, "cancelled", command: "add"))
        guard !items.isEmpty else { return (0, failure) }
        let batch = items
        let added: Int
        let queueFailure: Ack?
        do throws(PlayerError) {
            (added, queueFailure) = try await service.engine.withContext { context throws(PlayerError) in
                try context.editQueue("add") { queue throws(QueueError) in
                    for (done, item) in batch.enumerated() {
                        do throws(Ack) {
                            let position = try item.position.map { text throws(Ack) in
                                try insertPosition(text, count: queue.count, current: queue.currentPosition)
                            }
                            do throws(QueueError) {
                                _ = try queueSongs(item.paths, at: position, songBySong: false, to: &queue)
                            } catch {
                                throw Ack(PlayerError.queue(request: "add", detail: error.description), command: "add")
                            }
                        } catch {
                            return (
                                done, error.command.isEmpty ? Ack(error.code, error.message, command: "add") : error
                            )
                        }
                    }
                    return (batch.count, nil)
                }
            }
        } catch {
            return (0, Ack(error, command: "add"))
        }
        if let queueFailure {
            return (added, queueFailure)
        }
        return (added, failure)
    }

    private static func addID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let position = call.optionalArgument(1)
        try checkInsertPosition(position, service)
        let uri = call.argument(0)
        let paths = try await service.resolve(uri, for: call.session, command: call.name)
        // One song, named as itself: a directory or a playlist (even of one song) is no song to mpd.
        // A station is named by its URL.
        let file = uri.hasPrefix("file://") ? String(uri.dropFirst("file://".count)) : uri
        let path =
            StationStream.isStation(uri) || file.hasPrefix("/")
            ? file : (service.configuration.musicDirectory ?? "") + "/" + file
        guard paths.count == 1, paths[0] == path else {
            throw Ack(.noExist, "No such song", command: call.name)
        }
        let ids = try await insert(paths, at: position, service, call)
        var call = call
        call.response.field("Id", ids[0])
        return call
    }

    private static func delete(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let range = try Argument.range(call.argument(0))
        try await edit(service, call) { queue throws(QueueError) in
            if let end = range.end {
                try queue.delete(positions: range.start..<end)
            } else if range == .all {
                queue.clear()
            } else {
                try queue.delete(positions: range.start..<Int.max)
            }
        }
        return call
    }

    private static func deleteID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        try await edit(service, call) { queue throws(QueueError) in try queue.delete(id: id) }
        return call
    }

    private static func move(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let range = try Argument.range(call.argument(0))
        // MPD 0.23 refuses `START:` (and `-1`, its whole-queue range) here, before looking at the queue.
        guard let end = range.end else { throw Ack(.argument, "Open-ended range not supported") }
        let text = call.argument(1)
        try await change(service, call) { queue, _ throws(Ack) in
            let destination = try moveDestination(text, moving: range.start..<end, in: queue)
            try inMPDWords { () throws(QueueError) in try queue.move(from: range.start..<end, to: destination) }
        }
        return call
    }

    private static func moveID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        let text = call.argument(1)
        try await change(service, call) { queue, _ throws(Ack) in
            guard let position = queue.position(ofID: id) else { throw Ack(.noExist, "No such song") }
            let destination = try moveDestination(text, moving: position..<(position + 1), in: queue)
            try inMPDWords { () throws(QueueError) in try queue.move(id: id, to: destination) }
        }
        return call
    }

    private static func clear(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        try await edit(service, call) { queue in queue.clear() }
        return call
    }

    private static func playlistInfo(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let range = try call.optionalArgument(0).map { text throws(Ack) in try Argument.range(text) } ?? .all
        let name = call.name
        let entries = try await read(service, call) { queue throws(Ack) in
            // As mpd: a range may start at the end of the queue (and list nothing), not past it.
            guard let positions = range.clipped(to: queue.count) else {
                throw Ack(.argument, "Bad song index", command: name)
            }
            return positions.map { ($0, queue.entries[$0]) }
        }
        return try await writeSongs(entries, service, call)
    }

    /// Writes song blocks off the cooperative pool: a file not seen before is opened for its tags, about
    /// a millisecond each, which the `playlistinfo` of a long queue must not spend there.
    static func writeSongs(
        _ entries: [(position: Int, entry: QueueEntry)],
        _ service: PlayerService,
        _ call: CommandCall
    ) async throws(Ack) -> CommandCall {
        try await FileSystemWork.run(on: .songInfo) { cancellation throws(Ack) in
            var call = call
            for (position, entry) in entries {
                if cancellation.isCancelled { break }
                service.writeSong(entry, position: position, tagTypes: call.session.tagTypes, to: &call.response)
                // A long queue's answer goes out piece by piece, not built whole (issue 27).
                guard call.flushIfLarge() else { break }
            }
            return call
        }
    }

    private static func playlistID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try call.optionalArgument(0).map { text throws(Ack) in try Argument.unsigned(text) }
        let name = call.name
        let entries = try await read(service, call) { queue throws(Ack) in
            guard let id else { return queue.entries.enumerated().map { ($0.offset, $0.element) } }
            guard let position = queue.position(ofID: id) else {
                throw Ack(.noExist, "No such song", command: name)
            }
            return [(position, queue.entries[position])]
        }
        return try await writeSongs(entries, service, call)
    }

    /// `plchanges VERSION [START:END]`, `plchangesposid ...`: the songs new or moved since the queue's
    /// VERSION, those in the range of positions only (one past the queue is no error, as in MPD).
    private static func playlistChanges(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall
    {
        let version = try Argument.queueVersion(call.argument(0))
        let range = try call.optionalArgument(1).map { text throws(Ack) in try Argument.range(text) } ?? .all
        let entries = try await read(service, call) { queue throws(Ack) in
            queue.positionsChanged(since: version).filter { $0 >= range.start && $0 < range.end ?? .max }.map {
                ($0, queue.entries[$0])
            }
        }
        guard call.name == "plchangesposid" else {
            return try await writeSongs(entries, service, call)
        }
        var call = call
        for (position, entry) in entries {
            call.response.field("cpos", position)
            call.response.field("Id", entry.id)
        }
        return call
    }

    private static func setMode(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.name
        if name == "single" {
            let mode = try Argument.singleMode(call.argument(0))
            let single = PlayerCore.SingleMode(rawValue: mode.rawValue) ?? .off
            try await edit(service, call) { queue in queue.single = single }
            return call
        }
        let on = try Argument.bool(call.argument(0))
        try await edit(service, call) { queue in
            switch name {
            case "repeat": queue.repeatMode = on
            case "random": queue.random = on
            default: queue.consume = on
            }
        }
        return call
    }

    // MARK: - Immediate answers

    private static func currentSong(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let status = service.engine.status
        guard let entry = status.entry, let position = status.position else { return }
        service.writeSong(entry, position: position, tagTypes: call.session.tagTypes, to: &call.response)
    }

    private static func stats(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        // Without a library the database figures are zero, as an empty MPD database's are.
        let library = service.library?.stats ?? LibraryStats()
        // MPD's order: the daemon's own figures first. `playtime` is the audio played since the start,
        // every song counted, in whole seconds (MPD's total play time).
        call.response.field("uptime", Int((service.engine.now() - service.startedAt) / 1_000_000_000))
        call.response.field("playtime", Int(service.engine.status.playedNanoseconds / 1_000_000_000))
        call.response.field("artists", library.artists)
        call.response.field("albums", library.albums)
        call.response.field("songs", library.songs)
        call.response.field("db_playtime", library.playtime)
        call.response.field("db_update", Int(library.lastUpdate))
    }

    private static func tagTypes(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        guard let subcommand = call.optionalArgument(0) else {
            for tag in TagName.allCases where call.session.tagTypes.contains(tag) {
                call.response.field("tagtype", tag.rawValue)
            }
            return
        }
        // MPD's checks and words, in its order; a session's tags stay within those MPD announces.
        let names = call.arguments.dropFirst()
        func tags() throws(Ack) -> Set<TagName> {
            guard !names.isEmpty else { throw Ack(.argument, "Not enough arguments", command: call.name) }
            var tags = Set<TagName>()
            for name in names {
                guard let tag = TagName(name: name) else {
                    throw Ack(.argument, "Unknown tag type", command: call.name)
                }
                tags.insert(tag)
            }
            return tags.intersection(TagName.announced)
        }
        switch subcommand {
        case "clear", "all":
            guard names.isEmpty else { throw Ack(.argument, "Too many arguments", command: call.name) }
            call.session.tagTypes = subcommand == "all" ? TagName.announced : []
        case "enable": call.session.tagTypes.formUnion(try tags())
        case "disable": call.session.tagTypes.subtract(try tags())
        default: throw Ack(.argument, "Unknown sub command", command: call.name)
        }
    }

    private static func config(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        // The music directory's place on disk is the machine's business (MPD's rule and words).
        guard call.session.isLocal else {
            throw Ack(.permission, "Command only permitted to local clients", command: call.name)
        }
        guard let musicDirectory = service.configuration.musicDirectory else {
            throw Ack(.noExist, "no music directory is configured", command: call.name)
        }
        call.response.field("music_directory", musicDirectory)
    }
}

/// One of MPD's decoder plugins, as `decoders` lists it.
struct DecoderPlugin: Sendable {
    var name: String
    var suffixes: [String]
    var mimeTypes: [String]
}

/// What playerd decodes, as mpd 0.23.12 lists the plugin of each format in `decoders`, in its order:
/// libmpg123 for MP3 (mpd's `mad` plugin, which it lists first, is not playerd's), libvorbisfile for Ogg
/// Vorbis, libFLAC for FLAC and FLAC in Ogg, libopusfile for Opus.
let decoderPlugins: [DecoderPlugin] = [
    DecoderPlugin(name: "mpg123", suffixes: ["mp3"], mimeTypes: []),
    DecoderPlugin(
        name: "vorbis", suffixes: ["ogg", "oga"],
        mimeTypes: [
            "application/ogg", "application/x-ogg", "audio/ogg", "audio/vorbis", "audio/vorbis+ogg", "audio/x-ogg",
            "audio/x-vorbis", "audio/x-vorbis+ogg",
        ]),
    DecoderPlugin(
        name: "oggflac", suffixes: ["ogg", "oga"],
        mimeTypes: ["application/ogg", "application/x-ogg", "audio/ogg", "audio/x-flac+ogg", "audio/x-ogg"]),
    DecoderPlugin(
        name: "flac", suffixes: ["flac"],
        mimeTypes: ["application/flac", "application/x-flac", "audio/flac", "audio/x-flac"]),
    DecoderPlugin(
        name: "opus", suffixes: ["opus", "ogg", "oga"], mimeTypes: ["audio/ogg", "application/ogg", "audio/opus"]),
]
