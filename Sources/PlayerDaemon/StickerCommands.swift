import ControlProtocol
import Library
import Logging

/// MPD's `sticker` command on songs, answered as MPD 0.23.12 answers it (codes, texts, the order of its
/// checks), with MPD 0.24's additions: `inc` and `dec`, `find`'s `sort` and `window`, and its `eq`, `lt`,
/// `gt`, `contains` and `starts_with` comparisons. Stickers live in their own file (`--sticker-file`).
extension Commands {
    static func registerStickerCommands(in table: inout CommandTable<CommandHandler>) {
        guard let spec = CommandSpec.standard("sticker") else { preconditionFailure("no MPD spec for sticker") }
        // SQLite reads and writes block: on the library's threads, as the database commands run.
        table.register(spec, .library({ service, call, _ throws(Ack) in try sticker(service, &call) }, quick: false))
    }

    /// What `sticker` says when there is no sticker database: MPD's words when none is configured; when
    /// the configured file could not be used, those words and why (the log has the whole story).
    static func stickerRefusal(_ service: PlayerService) -> String {
        guard service.configuration.stickerFile != nil else { return "sticker database is disabled" }
        return "sticker database is disabled: the sticker file could not be used (see playerd's log)"
    }

    /// `sticker SUBCOMMAND TYPE URI [NAME [VALUE]]` and `sticker find TYPE DIR NAME [OP VALUE] [sort S]
    /// [window START:END]`. MPD's checks, in MPD's order: a sticker database, the type, a music
    /// database, the subcommand and its argument count, the song.
    private static func sticker(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        guard let stickers = service.stickers else {
            throw Ack(.unknown, self.stickerRefusal(service), command: call.name)
        }
        guard call.argument(1) == "song" else {
            throw Ack(.argument, "unknown sticker domain", command: call.name)
        }
        let library = try self.library(service, call)
        let arguments = call.arguments
        let uri = arguments[2]
        let name = call.name
        func failed(_ error: StickerDatabaseError) -> Ack {
            Ack(.system, "sticker database: \(error.description)", command: name)
        }
        func requireSong() throws(Ack) {
            let present: Bool
            do {
                present = try library.hasSong(uri)
            } catch {
                throw Ack(.system, error.description, command: name)
            }
            guard present else { throw Ack(.noExist, "No such song", command: name) }
        }
        let noSticker = Ack(.noExist, "no such sticker", command: name)
        switch (arguments[0], arguments.count) {
        case ("get", 4):
            try requireSong()
            let value: String?
            do {
                value = try stickers.value(type: "song", uri: uri, name: arguments[3])
            } catch {
                throw failed(error)
            }
            // An empty value reads as no sticker, as in MPD.
            guard let value, !value.isEmpty else { throw noSticker }
            call.response.field("sticker", "\(arguments[3])=\(value)")
        case ("list", 3):
            try requireSong()
            do {
                for (stickerName, value) in try stickers.list(type: "song", uri: uri) {
                    call.response.field("sticker", "\(stickerName)=\(value)")
                }
            } catch {
                throw failed(error)
            }
        case ("set", 5):
            try requireSong()
            do {
                if try stickers.set(type: "song", uri: uri, name: arguments[3], value: arguments[4]) {
                    service.hub.broadcast([.sticker])
                }
            } catch {
                throw failed(error)
            }
        case ("inc", 5), ("dec", 5):
            // MPD 0.24's: an empty name is refused before the song is looked up.
            guard !arguments[3].isEmpty else { throw Ack(.argument, "empty sticker name", command: name) }
            try requireSong()
            do {
                try stickers.increment(
                    type: "song", uri: uri, name: arguments[3], by: arguments[4], decrement: arguments[0] == "dec")
            } catch {
                throw failed(error)
            }
            service.hub.broadcast([.sticker])
        case ("delete", 3), ("delete", 4):
            try requireSong()
            let deleted: Bool
            do {
                deleted =
                    arguments.count == 3
                    ? try stickers.delete(type: "song", uri: uri)
                    : try stickers.delete(type: "song", uri: uri, name: arguments[3])
            } catch {
                throw failed(error)
            }
            guard deleted else { throw noSticker }
            service.hub.broadcast([.sticker])
        case ("find", 4...):
            try self.find(stickers, library, &call)
        default:
            throw Ack(.argument, "bad request", command: name)
        }
    }

    /// `sticker find song DIR NAME [OP VALUE] [sort uri|value|value_int] [window START:END]`: the songs
    /// below DIR that the library holds, each as `file:` and its `sticker:` line.
    ///
    /// MPD 0.24 takes `window` off the end, then `sort`; what is left must be MPD 0.23's four or six
    /// arguments. The window is taken from the songs the library holds (MPD takes it before it drops
    /// stickers of songs it no longer has, which it deletes when they leave; playerd keeps those).
    private static func find(_ stickers: StickerDatabase, _ library: MusicLibrary, _ call: inout CommandCall)
        throws(Ack)
    {
        let name = call.name
        var arguments = call.arguments
        var window = PositionRange.all
        if arguments.count >= 6 && arguments[arguments.count - 2] == "window" {
            do {
                window = try Argument.range(arguments[arguments.count - 1])
            } catch {
                throw Ack(error.code, error.message, command: name)
            }
            arguments.removeLast(2)
        }
        var order: StickerDatabase.Order?
        var descending = false
        if arguments.count >= 6 && arguments[arguments.count - 2] == "sort" {
            var text = Substring(arguments[arguments.count - 1])
            if text.hasPrefix("-") {
                descending = true
                text = text.dropFirst()
            }
            guard let given = StickerDatabase.Order(rawValue: String(text)) else {
                throw Ack(.argument, "Unknown sort tag \"\(text)\"", command: name)
            }
            order = given
            arguments.removeLast(2)
        }
        var comparison: (StickerDatabase.Comparison, String)?
        switch arguments.count {
        case 4: break
        case 6:
            guard let given = StickerDatabase.Comparison(rawValue: arguments[4]) else {
                throw Ack(.argument, "bad operator", command: name)
            }
            comparison = (given, arguments[5])
        default:
            throw Ack(.argument, "bad request", command: name)
        }
        let stickerName = arguments[3]
        let found: [StickerDatabase.Found]
        let present: Set<String>
        do {
            found = try stickers.find(
                type: "song", below: arguments[2], name: stickerName, comparison: comparison, order: order,
                descending: descending)
            present = try library.songsPresent(found.map(\.uri))
        } catch {
            throw Ack(.system, "sticker database: \(error.description)", command: name)
        }
        let songs = found.filter { present.contains($0.uri) }
        let start = min(window.start, songs.count)
        let end = min(window.end ?? songs.count, songs.count)
        for sticker in songs[start..<max(start, end)] {
            call.response.field("file", sticker.uri)
            call.response.field("sticker", "\(stickerName)=\(sticker.value)")
            guard call.flushIfLarge() else { return }
        }
    }

    /// Opens the configured sticker database; one that cannot be used is logged, and playerd runs
    /// without stickers (the file stays as it is, for its owner to look at).
    static func openStickers(_ configuration: DaemonConfiguration, logger: Logger) -> StickerDatabase? {
        guard let path = configuration.stickerFile else { return nil }
        do {
            return try StickerDatabase(path: path)
        } catch {
            logger.error(
                "sticker database: \(error.description); running without stickers (the file is left as it is)")
            return nil
        }
    }
}
