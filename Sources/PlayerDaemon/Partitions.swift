import Audio
import ControlProtocol
import Library
import Logging
import PlayerCore
import Synchronization

/// What every partition shares: the configuration, the library and its caches, the stored playlists,
/// the change hub, and the partitions themselves (MPD's `Instance`).
final class DaemonShared: Sendable {
    /// The daemon's settings.
    let configuration: DaemonConfiguration
    let songs: SongInfoCache
    /// Fans changes out to the clients: the daemon's to all of them, a partition's to its own.
    let hub: ChangeHub
    /// Recent quick library answers, until the database changes.
    let answers = QueryAnswerCache()
    /// The clients' channels and messages (`subscribe`, `sendmessage` ...), across partitions.
    let channels = ChannelRegistry()
    /// The music library, when there is a music directory and a database for it.
    let library: MusicLibrary?
    /// The stored playlists (`NAME.m3u` in the configured directory); nil when none is configured.
    let storedPlaylists: StoredPlaylists?
    /// The sticker database, when one is configured and could be opened.
    let stickers: StickerDatabase?
    /// The partitions, `default` first.
    let partitions = PartitionRegistry()
    /// Runs output moves and switches one at a time, each to its end: a switch that read the lists
    /// before a move, or two moves of one output, would otherwise leave an output on in two engines.
    let outputChanges = SerialWork()
    /// The sound card's mixer, with `--mixer hardware`: the volume of the partition that holds
    /// `cardMixerOutput` (the default partition when that is nil).
    let cardMixer: CardMixer?
    /// The output whose device the card's mixer belongs to (the first ALSA output, when `--mixer-device`
    /// does not name one); it takes the mixer with it into another partition.
    let cardMixerOutput: Int?
    /// When the daemon started, on the engines' clock (`uptime`).
    let startedAt = MonotonicClock().now()
    let logger: Logger

    init(
        configuration: DaemonConfiguration, songs: SongInfoCache, hub: ChangeHub, library: MusicLibrary?,
        storedPlaylists: StoredPlaylists?, cardMixer: CardMixer?, stickers: StickerDatabase?, logger: Logger
    ) {
        self.configuration = configuration
        self.stickers = stickers
        self.cardMixer = cardMixer
        if cardMixer != nil, case .hardware(_, nil) = configuration.mixer {
            self.cardMixerOutput = configuration.outputs.firstIndex {
                if case .alsa = $0.spec { true } else { false }
            }
        } else {
            self.cardMixerOutput = nil
        }
        self.songs = songs
        self.hub = hub
        self.library = library
        self.storedPlaylists = storedPlaylists
        self.logger = logger
    }
}

/// One place in a partition's list of outputs (MPD's `outputs` there): an output of the daemon's
/// configuration, by its index, that plays here, or a dummy left where an output was before
/// `moveoutput` took it elsewhere (MPD keeps them so that the other outputs keep their ids).
struct OutputSlot: Sendable, Equatable {
    /// The output's index in the configuration (and in every engine's outputs).
    var output: Int
    /// False for the dummy left behind by `moveoutput`.
    var isPresent: Bool
}

/// The partitions (MPD's `Instance::partitions`), in the order they were made, `default` first, each
/// with the outputs it lists. Every engine is given all the configured outputs; a partition plays only
/// on those present in its slots (the others stay switched off in its engine), and each output is
/// present in exactly one partition.
final class PartitionRegistry: Sendable {
    /// MPD's "arbitrary limit for now".
    static let maximumCount = 16
    static let defaultName = "default"

    struct Entry {
        var service: PlayerService
        var slots: [OutputSlot]
    }

    private let entries = Mutex<[Entry]>([])

    /// MPD's rule for partition names: ASCII letters and digits, `-` and `_`, at least one.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// The partition named `name`.
    func find(_ name: String) -> PlayerService? {
        self.entries.withLock { entries in entries.first { $0.service.name == name }?.service }
    }

    /// Every partition, in order.
    var all: [PlayerService] { self.entries.withLock { $0.map(\.service) } }

    /// The partitions' names, in order.
    var names: [String] { self.entries.withLock { $0.map(\.service.name) } }

    /// The outputs partition `name` lists, in its order.
    func slots(of name: String) -> [OutputSlot] {
        self.entries.withLock { entries in entries.first { $0.service.name == name }?.slots ?? [] }
    }

    /// Adds `service` with `slots`, unless its name is taken or the limit is reached.
    func add(_ service: PlayerService, slots: [OutputSlot]) throws(Ack) {
        try self.entries.withLock { entries throws(Ack) in
            guard !entries.contains(where: { $0.service.name == service.name }) else {
                throw Ack(.exist, "name already exists")
            }
            guard entries.count < Self.maximumCount else {
                throw Ack(.unknown, "too many partitions")
            }
            entries.append(Entry(service: service, slots: slots))
        }
    }

    /// Adds a partition the state file kept, holding `outputs` (indexes in the configuration), which
    /// become dummies where they were.
    func restore(_ service: PlayerService, holding outputs: [Int]) throws(Ack) {
        try self.entries.withLock { entries throws(Ack) in
            guard !entries.contains(where: { $0.service.name == service.name }) else {
                throw Ack(.exist, "name already exists")
            }
            guard entries.count < Self.maximumCount else {
                throw Ack(.unknown, "too many partitions")
            }
            for output in outputs {
                for index in entries.indices {
                    if let place = entries[index].slots.firstIndex(of: OutputSlot(output: output, isPresent: true)) {
                        entries[index].slots[place].isPresent = false
                    }
                }
            }
            entries.append(Entry(service: service, slots: outputs.map { OutputSlot(output: $0, isPresent: true) }))
        }
    }

    /// Removes partition `name` (never `default`) when `mayRemove` allows it (asked under the lock, with
    /// whether an output still plays there); returns it.
    func remove(_ name: String, mayRemove: (_ holdsOutputs: Bool) throws(Ack) -> Void) throws(Ack) -> PlayerService {
        try self.entries.withLock { entries throws(Ack) in
            guard let index = entries.firstIndex(where: { $0.service.name == name }) else {
                throw Ack(.noExist, "no such partition")
            }
            guard index != 0 else {
                throw Ack(.unknown, "cannot delete the default partition")
            }
            try mayRemove(entries[index].slots.contains { $0.isPresent })
            return entries.remove(at: index).service
        }
    }

    /// Forgets every partition (at shutdown: they refer to the registry through the shared part).
    func removeAll() -> [PlayerService] {
        self.entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.map(\.service)
        }
    }

    /// What `moveoutput` does to the lists: the output `outputName` of the configuration, present in
    /// another partition, becomes a dummy there and present in `destination` (in its old place there,
    /// if it left a dummy, else at the end). Nil when no other partition has it present; `source` nil
    /// when it is present in `destination` already (nothing to do).
    func move(output index: Int, to destination: String) -> (source: PlayerService?, output: Int)? {
        self.entries.withLock { entries -> (source: PlayerService?, output: Int)? in
            guard let target = entries.firstIndex(where: { $0.service.name == destination }) else { return nil }
            if entries[target].slots.contains(OutputSlot(output: index, isPresent: true)) {
                return (nil, index)
            }
            guard
                let owner = entries.firstIndex(where: {
                    $0.slots.contains(OutputSlot(output: index, isPresent: true))
                }),
                let place = entries[owner].slots.firstIndex(of: OutputSlot(output: index, isPresent: true))
            else { return nil }
            entries[owner].slots[place].isPresent = false
            if let dummy = entries[target].slots.firstIndex(of: OutputSlot(output: index, isPresent: false)) {
                entries[target].slots[dummy].isPresent = true
            } else {
                entries[target].slots.append(OutputSlot(output: index, isPresent: true))
            }
            return (entries[owner].service, index)
        }
    }
}

/// Runs async work one piece at a time, in the order it was asked for, each to its end (its awaits
/// included, which an actor would interleave).
final class SerialWork: Sendable {
    private let last = Mutex<Task<Void, Never>?>(nil)

    /// Runs `work` once the work asked for before it has ended; returns what it returns.
    func run<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) async -> Result {
        let task = self.last.withLock { last -> Task<Result, Never> in
            let previous = last
            let task = Task {
                await previous?.value
                return await work()
            }
            last = Task { _ = await task.value }
            return task
        }
        return await task.value
    }
}
