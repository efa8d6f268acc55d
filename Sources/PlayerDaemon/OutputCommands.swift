import ControlProtocol
import Dispatch
import Logging
import PlayerCore
import Synchronization

/// MPD's output commands, answered as MPD answers them.
extension Commands {
    /// `outputs`: each output's number, name, plugin and switch. An output that failed, or that plays
    /// while putting up with something (a FIFO nobody reads), says so in an `error` attribute; one that
    /// could not keep up says how many frames it dropped. MPD clients show attributes as they are (mpc
    /// prints them); healthy outputs have none, as MPD's null and fifo outputs have none.
    ///
    /// A partition lists the outputs it holds, and a dummy where one was before `moveoutput` took it
    /// elsewhere (as MPD lists them: ids stay where they were).
    static func outputs(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let statuses = service.engine.status.outputs
        for (id, slot) in service.partitions.slots(of: service.name).enumerated() {
            guard slot.isPresent, statuses.indices.contains(slot.output) else {
                call.response.field("outputid", id)
                call.response.field("outputname", service.configuration.outputs[slot.output].name)
                call.response.field("plugin", "dummy")
                call.response.field("outputenabled", 0)
                continue
            }
            let output = statuses[slot.output]
            call.response.field("outputid", id)
            call.response.field("outputname", output.name)
            call.response.field("plugin", output.plugin)
            call.response.field("outputenabled", output.isEnabled ? 1 : 0)
            if let problem = output.problem {
                call.response.field("attribute", "error=\(problem)")
            }
            if output.droppedFrames > 0 {
                call.response.field("attribute", "dropped_frames=\(output.droppedFrames)")
            }
        }
    }

    /// `enableoutput`, `disableoutput`, `toggleoutput` (`enabled` nil).
    static func switchOutput(_ enabled: Bool?, _ service: PlayerService, _ call: CommandCall) async throws(Ack)
        -> CommandCall
    {
        let id = try Argument.unsigned(call.argument(0))
        // After any move under way (which may take this output away), before any later one.
        let found = await service.shared.outputChanges.run { () -> Bool in
            let slots = service.partitions.slots(of: service.name)
            guard id < slots.count else { return false }
            // A dummy left by `moveoutput` takes the switch and stays as it is, as in MPD.
            guard slots[id].isPresent else { return true }
            // An output with a mixer (software or the card's) switched on or off changes the volume
            // clients may read: MPD tells them `mixer` with `output`, in one change (an idle that answers
            // `output` alone forgets the rest, as MPD's does).
            let hasMixer = service.configuration.mixer != .none
            return await service.engine.setOutput(slots[id].output, enabled: enabled, announcingMixer: hasMixer)
        }
        guard found else {
            throw Ack(.noExist, "No such audio output", command: call.name)
        }
        return call
    }

    /// `outputset ID NAME VALUE`: none of playerd's outputs has a run-time attribute to set; the two
    /// attributes `outputs` may show are reports, not settings.
    static func setOutputAttribute(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let id = try Argument.unsigned(call.argument(0))
        let slots = service.partitions.slots(of: service.name)
        guard id < slots.count else {
            throw Ack(.noExist, "No such audio output", command: call.name)
        }
        let name = call.arguments[1]
        let isNameCharacter = { (scalar: Unicode.Scalar) in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
        }
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(isNameCharacter) else {
            throw Ack(.argument, "Illegal attribute name", command: call.name)
        }
        guard slots[id].isPresent else {
            throw Ack(.unknown, "Cannot set attribute on dummy output", command: call.name)
        }
        throw Ack(.argument, "Unsupported attribute", command: call.name)
    }
}

/// Says in the log what happens to the outputs: switched on or off, failing and back, a problem
/// appearing or going, the first frames one drops. Once for each change, off the audio thread.
final class OutputLog: Sendable {
    private let last: Mutex<[OutputStatus]>
    private let logger: Logger
    private let queue = DispatchQueue(label: "playerd.output-log")
    /// The partition whose engine it watches; named in the log unless it is the default one.
    private let partition: String

    init(initial: [OutputStatus], logger: Logger, partition: String = PartitionRegistry.defaultName) {
        self.last = Mutex(initial)
        self.logger = logger
        self.partition = partition
    }

    /// Logs how `outputs` differ from the ones logged last.
    func note(_ outputs: [OutputStatus]) {
        self.queue.async {
            let previous = self.last.withLock { last in
                defer { last = outputs }
                return last
            }
            for (old, new) in zip(previous, outputs) {
                self.log(from: old, to: new)
            }
        }
    }

    private func log(from old: OutputStatus, to new: OutputStatus) {
        let name =
            self.partition == PartitionRegistry.defaultName
            ? "output \"\(new.name)\"" : "output \"\(new.name)\" (partition \(self.partition))"
        if old.isEnabled != new.isEnabled {
            self.logger.info("\(name) \(new.isEnabled ? "enabled" : "disabled")")
        }
        if new.hasFailed && !old.hasFailed {
            self.logger.error(
                "\(name) failed: \(new.problem ?? "no reason given"); tried again every 10 seconds and at the next play (with no other output, the player pauses)"
            )
        } else if old.hasFailed && !new.hasFailed && new.isEnabled {
            self.logger.notice("\(name) plays again")
        } else if !new.hasFailed, new.problem != old.problem, let problem = new.problem {
            self.logger.warning("\(name): \(problem)")
        }
        if old.droppedFrames == 0 && new.droppedFrames > 0 {
            self.logger.warning(
                "\(name) cannot keep up: it drops the audio that does not fit in its buffer (counted in `outputs`) and catches up"
            )
        }
    }
}
