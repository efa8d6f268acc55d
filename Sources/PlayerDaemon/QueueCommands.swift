import ControlProtocol
import Library
import MusicTags
import PlayerCore

/// MPD's queue commands beyond adding, deleting and moving: `shuffle`, `swap`, `swapid`, `prio`,
/// `prioid`, the listings `playlist`, `playlistfind`, `playlistsearch`, and `addtagid`/`cleartagid`.
/// Their answers, errors and idle events are mpd 0.23's (src/command/QueueCommands.cxx,
/// src/queue/PlaylistEdit.cxx).
extension Commands {
    static func registerQueueCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("shuffle", .deferred(shuffle))
        add("swap", .deferred(swap))
        add("swapid", .deferred(swapID))
        add("prio", .deferred(priority))
        add("prioid", .deferred(priorityID))
        add("playlist", .deferred(playlist))
        add(
            "playlistfind",
            .deferred { service, call throws(Ack) in try await find(service, call, ignoringCase: false) })
        add(
            "playlistsearch",
            .deferred { service, call throws(Ack) in try await find(service, call, ignoringCase: true) })
        add("addtagid", .deferred(addTagID))
        add("cleartagid", .deferred(clearTagID))
    }

    // MARK: - Editing

    /// Runs `body` on the queue as one edit, with the player's state (MPD's `playing`: playing or
    /// paused); its ACK is the command's. The queue keeps what `body` did before it threw, as MPD's
    /// commands keep what they did before an argument failed (`prio 1 0 x`).
    static func change<Result: Sendable>(
        _ service: PlayerService,
        _ call: CommandCall,
        _ body: @escaping @Sendable (inout Queue, _ isPlaying: Bool) throws(Ack) -> Result
    ) async throws(Ack) -> Result {
        let name = call.name
        let outcome: Swift.Result<Result, Ack>
        do {
            outcome = try await service.engine.withContext { context throws(PlayerError) in
                let isPlaying = context.state.kind != .stop
                return try context.editQueue(name) { queue throws(QueueError) -> Swift.Result<Result, Ack> in
                    do throws(Ack) {
                        return .success(try body(&queue, isPlaying))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        } catch {
            throw Ack(error, command: name)
        }
        do {
            return try outcome.get()
        } catch {
            throw error.command.isEmpty ? Ack(error.code, error.message, command: name) : error
        }
    }

    /// A queue refusal in MPD's words: `Bad song index` (ACK 2), `No such song` (ACK 50),
    /// `Playlist is too large` (ACK 51).
    static func mpdAck(_ error: QueueError) -> Ack {
        switch error {
        case .badPosition, .badRange: Ack(.argument, error.description)
        case .noSuchID: Ack(.noExist, error.description)
        case .tooLong: Ack(.playlistMax, error.description)
        }
    }

    /// Runs a queue edit, its refusal in MPD's words (`mpdAck`).
    static func inMPDWords<Result>(_ body: () throws(QueueError) -> Result) throws(Ack) -> Result {
        do {
            return try body()
        } catch {
            throw mpdAck(error)
        }
    }

    /// MPD's insert position (`add URI POS`, `addid`, `findadd ... position POS`): `N` up to the queue's
    /// length, `+N` after the current song, `-N` before it (src/command/PositionArg.cxx). The relative
    /// forms need a current song: `No current song` (ACK 55).
    static func insertPosition(_ text: String, count: Int, current: Int?) throws(Ack) -> Int {
        guard let sign = text.first, sign == "+" || sign == "-" else {
            return try Argument.unsigned(text, maximum: count)
        }
        guard let current, current < count else {
            throw Ack(.playerSync, "No current song")
        }
        let offset = String(text.dropFirst())
        if sign == "+" {
            return current + 1 + (try Argument.unsigned(offset, maximum: count - current - 1))
        }
        return current - (try Argument.unsigned(offset, maximum: current))
    }

    /// MPD's destination of `move` and `moveid` (src/command/PositionArg.cxx): `N` up to where the block
    /// still fits, `+N` after the current song, `-N` before it, once the block is out of the way; the
    /// current song cannot move relative to itself.
    static func moveDestination(_ text: String, moving range: Range<Int>, in queue: Queue) throws(Ack) -> Int {
        let count = queue.count
        let length = range.count
        guard let sign = text.first, sign == "+" || sign == "-" else {
            // MPD computes the limits in unsigned ints: a range longer than the queue wraps them, any
            // destination passes, and the move's own check answers `Bad song index`.
            return try Argument.unsigned(text, maximum: Self.unsignedLimit(count - length))
        }
        guard var current = queue.currentPosition else {
            throw Ack(.playerSync, "No current song")
        }
        if range.contains(current) {
            throw Ack(.argument, "Cannot move current song relative to itself")
        }
        if current >= range.upperBound {
            current -= length
        }
        let maximum = Self.unsignedLimit(count - current - length)
        let offset = try Argument.unsigned(String(text.dropFirst()), maximum: maximum)
        if sign == "+" {
            return current + 1 + offset
        }
        guard offset <= current else { throw Ack(.argument, "Bad song index") }
        return current - offset
    }

    /// A limit MPD computes as an `unsigned` difference: a negative one wraps around 2^32.
    private static func unsignedLimit(_ difference: Int) -> Int {
        Int(UInt32(truncatingIfNeeded: difference))
    }

    /// `insertPosition` against the status last published: MPD reads the position before anything
    /// else, so its refusals come first; the edit reads it again from the queue itself.
    static func checkInsertPosition(_ text: String?, _ service: PlayerService) throws(Ack) {
        guard let text else { return }
        let status = service.engine.status
        _ = try insertPosition(text, count: status.queueLength, current: status.position)
    }

    /// `shuffle [START:END]`: MPD's Playlist::Shuffle.
    private static func shuffle(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let range = try call.optionalArgument(0).map { text throws(Ack) in try Argument.range(text) } ?? .all
        try await change(service, call) { queue, isPlaying throws(Ack) in
            try inMPDWords { () throws(QueueError) in
                try queue.shuffle(positions: range.start..<(range.end ?? Int.max), keepingCurrent: isPlaying)
            }
        }
        return call
    }

    /// `swap POS1 POS2`.
    private static func swap(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let first = try Argument.unsigned(call.argument(0))
        let second = try Argument.unsigned(call.argument(1))
        try await change(service, call) { queue, _ throws(Ack) in
            try inMPDWords { () throws(QueueError) in try queue.swap(first, second) }
        }
        return call
    }

    /// `swapid ID1 ID2`.
    private static func swapID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let first = try Argument.unsigned(call.argument(0))
        let second = try Argument.unsigned(call.argument(1))
        try await change(service, call) { queue, _ throws(Ack) in
            try inMPDWords { () throws(QueueError) in try queue.swap(id: first, id: second) }
        }
        return call
    }

    /// `prio PRIO START:END...`: each range in turn, as MPD takes them, so the ranges before a bad one
    /// keep their new priority.
    private static func priority(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let priority = UInt8(try Argument.unsigned(call.argument(0), maximum: Int(UInt8.max)))
        let texts = Array(call.arguments.dropFirst())
        try await change(service, call) { queue, _ throws(Ack) in
            for text in texts {
                let range = try Argument.range(text)
                try inMPDWords { () throws(QueueError) in
                    try queue.setPriority(priority, positions: range.start..<(range.end ?? Int.max))
                }
            }
        }
        return call
    }

    /// `prioid PRIO ID...`.
    private static func priorityID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let priority = UInt8(try Argument.unsigned(call.argument(0), maximum: Int(UInt8.max)))
        let texts = Array(call.arguments.dropFirst())
        try await change(service, call) { queue, _ throws(Ack) in
            for text in texts {
                let id = try Argument.unsigned(text)
                try inMPDWords { () throws(QueueError) in try queue.setPriority(priority, id: id) }
            }
        }
        return call
    }

    // MARK: - Listings

    /// `playlist`: MPD's deprecated listing, `POS:file: URI` a line.
    private static func playlist(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let entries = try await read(service, call) { queue throws(Ack) in queue.entries }
        var call = call
        for (position, entry) in entries.enumerated() {
            call.response.field("\(position):file", service.displayPath(entry.path))
        }
        return call
    }

    /// `playlistfind FILTER` / `playlistsearch FILTER`: the queued songs the filter matches (legacy
    /// `TAG VALUE` pairs or expressions, as `find` takes them; no `sort` or `window`, as in MPD 0.23),
    /// as `playlistinfo` shows them. `playlistsearch` folds case (and accents, as `search` does).
    private static func find(_ service: PlayerService, _ call: CommandCall, ignoringCase: Bool) async throws(Ack)
        -> CommandCall
    {
        let filter: SongFilter?
        do {
            filter = try LibraryQuery.parse(call.arguments[...], ignoringCase: ignoringCase, allowing: []).filter
        } catch {
            throw Ack(error.code, error.message, command: call.name)
        }
        guard let filter else {
            throw Ack(.argument, "Incorrect number of filter arguments", command: call.name)
        }
        let entries = try await read(service, call) { queue throws(Ack) in
            queue.entries.enumerated().map { ($0.offset, $0.element) }
        }
        // Off the cooperative pool: a file not seen before is opened for its tags.
        let matching = try await FileSystemWork.run(on: .songInfo) { cancellation throws(Ack) in
            let matcher = SongMatcher(filter, fold: TextFolding.fold)
            return entries.filter { _, entry in
                guard !cancellation.isCancelled else { return false }
                let info = service.songs.info(for: entry.path)
                return matcher.matches(QueuedSong(info: info, uri: service.displayPath(entry.path)))
            }
        }
        return try await writeSongs(matching, service, call)
    }

    // MARK: - Tags of remote songs

    /// `addtagid ID TAG VALUE`: MPD edits only remote songs' tags; playerd queues local files only, so
    /// every song is refused as mpd refuses a local one. The tag is checked first, then the id.
    private static func addTagID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        try checkTagName(call.argument(1), call)
        try await refuseTagEdit(id: id, service, call)
        return call
    }

    /// `cleartagid ID [TAG]`: as `addtagid`.
    private static func clearTagID(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        if let name = call.optionalArgument(1) {
            try checkTagName(name, call)
        }
        try await refuseTagEdit(id: id, service, call)
        return call
    }

    private static func checkTagName(_ name: String, _ call: CommandCall) throws(Ack) {
        guard TagName(name: name) != nil else {
            throw Ack(.argument, "Unknown tag type: \(name)", command: call.name)
        }
    }

    private static func refuseTagEdit(id: Int, _ service: PlayerService, _ call: CommandCall) async throws(Ack) {
        let name = call.name
        try await read(service, call) { queue throws(Ack) -> Void in
            guard queue.position(ofID: id) != nil else {
                throw Ack(.noExist, "No such song", command: name)
            }
            throw Ack(.permission, "Cannot edit tags of local file", command: name)
        }
    }
}

/// A queued song as a filter sees it: its tags and length from the song-info cache.
private struct QueuedSong: FilterableSong {
    let info: SongInfo
    let uri: String

    func values(of tag: TagName) -> [String] { self.info.tags[tag] }
    var lastModified: Int64 { self.info.lastModified ?? 0 }
    var added: Int64 { 0 }
    var audioFormat: AudioFormatPattern? {
        self.info.format.flatMap { try? AudioFormatPattern(parsing: $0, allowingMasks: false) }
    }
}
