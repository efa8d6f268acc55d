import ControlProtocol
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's `crossfade`, `mixrampdb`, `mixrampdelay` and `rangeid`, answered as mpd 0.23 answers them.
extension Commands {
    static func registerCrossfadeCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("crossfade", .deferred(setCrossfade))
        add("mixrampdb", .deferred(setMixRampDB))
        add("mixrampdelay", .deferred(setMixRampDelay))
        add("rangeid", .deferred(setRange))
    }

    /// `crossfade SECONDS`: an unsigned 32-bit number, as MPD reads it (`Integer expected`, `Number too
    /// large`). Idle `options` follows every accepted request, changed or not, as in MPD.
    private static func setCrossfade(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let seconds = try Argument.unsigned(call.argument(0))
        try await changeSettings(service, call) { $0.seconds = seconds }
        return call
    }

    /// `mixrampdb DB`: any float C's `strtof` reads (`Float expected`).
    private static func setMixRampDB(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let decibels = try cFloat(call.argument(0))
        try await changeSettings(service, call) { $0.mixRampDB = decibels }
        return call
    }

    /// `mixrampdelay SECONDS`: a float, kept with a float's precision as MPD keeps it (`0.1` shows as
    /// `0.10000000149011612`); zero or less switches MixRamp off.
    private static func setMixRampDelay(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall
    {
        let delay = Double(try cFloat(call.argument(0)))
        try await changeSettings(service, call) { $0.mixRampDelay = delay }
        return call
    }

    private static func changeSettings(
        _ service: PlayerService, _ call: CommandCall, _ change: @escaping @Sendable (inout CrossfadeSettings) -> Void
    ) async throws(Ack) {
        do {
            try await service.engine.withContext { context throws(PlayerError) in
                change(&context.crossfade)
                return ((), [])
            }
        } catch {
            throw Ack(error, command: call.name)
        }
        service.hub.broadcast([.options])
    }

    /// A number as MPD's `ParseFloat` (C's `strtof`) reads it, the whole argument: `Float expected: x`.
    static func cFloat(_ text: String) throws(Ack) -> Float {
        let parsed: Float? = text.withCString { start in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtof(start, &end)
            guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
            return value
        }
        guard let parsed else { throw Ack(.argument, "Float expected: \(text)") }
        return parsed
    }

    /// `rangeid ID START:END`: the song plays only from START to END (seconds with a fraction, in
    /// milliseconds as MPD keeps them; either end open; `:` plays it whole again). MPD's refusals: `Bad
    /// range`, `No such song`, `Cannot edit the current song` (ACK 4, while playing or paused),
    /// `Invalid start offset` (past the song's end); an end at or past the song's end is open. Idle
    /// `playlist` follows.
    private static func setRange(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let id = try Argument.unsigned(call.argument(0))
        guard let (start, end) = timeRange(call.argument(1)) else {
            throw Ack(.argument, "Bad range", command: call.name)
        }
        let name = call.name
        let path = try await read(service, call) { queue throws(Ack) in
            guard let entry = queue.entry(withID: id) else { throw Ack(.noExist, "No such song", command: name) }
            return entry.path
        }
        // The song's length, from the library or the file (a millisecond's work, off the cooperative pool).
        let duration = try await FileSystemWork.run(on: .songInfo) { _ throws(Ack) in
            service.songs.info(for: path).duration
        }
        let durationMilliseconds = duration.map { Int(($0 * 1000).rounded(.down)) }
        let outcome: Result<Void, Ack>
        do {
            outcome = try await service.engine.withContext { context throws(PlayerError) in
                guard context.queue.entry(withID: id) != nil else {
                    return (.failure(Ack(.noExist, "No such song", command: name)), [])
                }
                if context.state.kind != .stop, context.state.entry?.id == id {
                    return (.failure(Ack(.permission, "Cannot edit the current song", command: name)), [])
                }
                var end = end
                if let durationMilliseconds {
                    if start > durationMilliseconds {
                        return (.failure(Ack(.argument, "Invalid start offset", command: name)), [])
                    }
                    if let last = end, last >= durationMilliseconds {
                        end = nil
                    }
                }
                let range = start == 0 && end == nil ? nil : SongRange(start: start, end: end)
                let ((), effects) = try context.editQueue(name) { queue throws(QueueError) in
                    try queue.setRange(range, id: id)
                }
                return (.success(()), effects)
            }
        } catch {
            throw Ack(error, command: call.name)
        }
        try outcome.get()
        return call
    }

    /// MPD's `parse_time_range`: `START:END` in seconds read with `strtof`, either side empty (0, and an
    /// open end), neither negative, END after START unless open; in whole milliseconds, rounded down as
    /// MPD's `SongTime::FromS(float)` rounds (`1.2345` is 1234). Nil for a bad range. NaN is 0, as
    /// mpd 0.23.12 takes it (`nan:` plays the whole song); times past 2^32 ms are held there.
    static func timeRange(_ text: String) -> (start: Int, end: Int?)? {
        text.withCString { start -> (Int, Int?)? in
            var end: UnsafeMutablePointer<CChar>?
            let first = strtof(start, &end)
            guard let colon = end, colon.pointee == 0x3A, !(first < 0) else { return nil }
            let afterColon = UnsafePointer(colon + 1)
            let startMilliseconds = colon == UnsafeMutablePointer(mutating: start) ? 0 : milliseconds(first)
            let second = strtof(afterColon, &end)
            guard let last = end, last.pointee == 0, !(second < 0) else { return nil }
            let endMilliseconds = last == UnsafeMutablePointer(mutating: afterColon) ? 0 : milliseconds(second)
            guard endMilliseconds == 0 || endMilliseconds > startMilliseconds else { return nil }
            return (startMilliseconds, endMilliseconds == 0 ? nil : endMilliseconds)
        }
    }

    private static func milliseconds(_ seconds: Float) -> Int {
        guard !seconds.isNaN else { return 0 }
        let scaled = seconds * 1000
        return scaled < 4_294_967_296 ? Int(scaled) : Int(UInt32.max)
    }
}
