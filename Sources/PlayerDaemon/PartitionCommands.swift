import ControlProtocol
import Dispatch
import PlayerCore

/// MPD's partitions: `partition`, `newpartition`, `delpartition`, `listpartitions`, `moveoutput`,
/// answered as mpd 0.23 answers them (its words and codes, its order of checks).
extension Commands {
    static func registerPartitionCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("partition", .immediate(enterPartition))
        add("listpartitions", .immediate(listPartitions))
        add("newpartition", .immediate(newPartition))
        add("delpartition", .immediate(deletePartition))
        add("moveoutput", .deferred(moveOutput))
    }

    /// `partition NAME`: the client's later commands act on that partition (the session follows its
    /// settings, and its next `idle` reports what a partition has changed).
    static func enterPartition(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let name = call.argument(0)
        guard service.partitions.find(name) != nil else {
            throw Ack(.noExist, "partition does not exist", command: call.name)
        }
        call.session.partition = name
    }

    /// `listpartitions`: every partition's name, `default` first, then in the order they were made.
    static func listPartitions(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        for name in service.partitions.names {
            call.response.field("partition", name)
        }
    }

    /// `newpartition NAME`: a player of its own, with an empty queue and no outputs.
    static func newPartition(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let name = call.argument(0)
        guard PartitionRegistry.isValidName(name) else {
            throw Ack(.argument, "bad name", command: call.name)
        }
        let partitions = service.partitions
        // Checked before an audio thread is started for nothing; `add` checks again under its lock.
        guard partitions.find(name) == nil else {
            throw Ack(.exist, "name already exists", command: call.name)
        }
        guard partitions.names.count < PartitionRegistry.maximumCount else {
            throw Ack(.unknown, "too many partitions", command: call.name)
        }
        let partition = PlayerService(name: name, shared: service.shared)
        do {
            try partitions.add(partition, slots: [])
        } catch {
            Self.shutDownLater(partition)
            throw error
        }
        service.shared.logger.info("partition \(name) created")
        service.hub.broadcast([.partition])
    }

    /// `delpartition NAME`: only a partition no client is in and where no output plays (MPD's rules);
    /// its audio thread is ended off the event loop.
    static func deletePartition(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let name = call.argument(0)
        guard PartitionRegistry.isValidName(name) else {
            throw Ack(.argument, "bad name", command: call.name)
        }
        let hub = service.hub
        let removed = try service.partitions.remove(name) { holdsOutputs throws(Ack) in
            guard hub.count(in: name) == 0 else {
                throw Ack(.unknown, "partition still has clients")
            }
            guard !holdsOutputs else {
                throw Ack(.unknown, "partition still has outputs")
            }
        }
        Self.shutDownLater(removed)
        service.shared.logger.info("partition \(name) deleted")
        hub.broadcast([.partition])
    }

    /// Ends a partition's audio thread on another thread: `shutdown` waits for it to end.
    private static func shutDownLater(_ partition: PlayerService) {
        DispatchQueue.global().async { partition.shutdownPartition() }
    }

    /// `moveoutput NAME`: the output, wherever it plays, plays in the client's partition from now on,
    /// switched on or off as it was; where it was, a dummy keeps its place (and the other outputs'
    /// ids). Every client hears of it (`output`), as in MPD.
    static func moveOutput(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let name = call.argument(0)
        let moved = await service.shared.outputChanges.run { await Self.moveOutput(named: name, to: service) }
        guard moved else {
            throw Ack(.noExist, "No such output", command: call.name)
        }
        return call
    }

    /// Moves the output `name` into `service`'s partition; false when there is no such output.
    private static func moveOutput(named name: String, to service: PlayerService) async -> Bool {
        let configuration = service.configuration
        guard let index = configuration.outputs.firstIndex(where: { $0.name == name }),
            let moved = service.partitions.move(output: index, to: service.name)
        else {
            return false
        }
        guard let source = moved.source else {
            // Already here: nothing to do.
            return true
        }
        let wasEnabled = source.engine.status.outputs[index].isEnabled
        _ = await source.engine.setOutput(index, enabled: false)
        if let cardMixer = service.shared.cardMixer, index == service.shared.cardMixerOutput {
            // The card's mixer goes with its output: its level is the new partition's volume.
            cardMixer.attach(to: service.engine)
            await source.engine.mirrorVolume(nil)
            await service.engine.mirrorVolume(cardMixer.volume())
        } else if configuration.mixer == .software {
            // A partition's software volume is its outputs' (MPD's mixers belong to outputs): one
            // with none has no volume to show, one that gets its first has the full volume.
            if !service.partitions.slots(of: source.name).contains(where: \.isPresent) {
                await source.engine.mirrorVolume(nil)
            }
            if service.engine.status.volume == nil {
                await service.engine.mirrorVolume(100)
            }
        }
        _ = await service.engine.setOutput(index, enabled: wasEnabled)
        service.shared.logger.info("output \"\(name)\" moved from partition \(source.name) to \(service.name)")
        service.hub.broadcast([.output])
        return true
    }
}
