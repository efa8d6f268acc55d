import Audio

/// One output the engine plays on: its name and plugin for clients, how to make it, and whether it
/// starts enabled.
public struct OutputDefinition: Sendable {
    /// The name clients see (MPD's `outputname`), unique among the engine's outputs.
    public var name: String
    /// The plugin's name (MPD's `plugin`): `alsa`, `null`, `wav`, `fifo`.
    public var plugin: String
    /// Whether it plays from the start.
    public var isEnabled: Bool
    /// Makes the output; called once, on the audio thread.
    public var makeOutput: @Sendable () -> any AudioOutput

    /// An output named `name`, made by `makeOutput`.
    public init(
        name: String, plugin: String, isEnabled: Bool = true, makeOutput: @escaping @Sendable () -> any AudioOutput
    ) {
        self.name = name
        self.plugin = plugin
        self.isEnabled = isEnabled
        self.makeOutput = makeOutput
    }

    /// The output a configured spec describes.
    public init(_ configured: ConfiguredOutput) {
        let spec = configured.spec
        self.init(
            name: configured.name, plugin: spec.plugin, isEnabled: configured.startsEnabled,
            makeOutput: { spec.makeOutput() })
    }
}

/// An output as clients see it, in the engine's status.
public struct OutputStatus: Sendable, Equatable {
    /// Its number, from 0, in the order the outputs were configured (MPD's `outputid`).
    public var id: Int
    /// Its name.
    public var name: String
    /// Its plugin's name.
    public var plugin: String
    /// Whether a client (or the configuration) has it on.
    public var isEnabled: Bool
    /// Why it is not playing (it failed and waits to be tried again), or what it is putting up with
    /// while it plays (a FIFO nobody reads); nil when all is well.
    public var problem: String?
    /// True while it is failed and out of play, waiting to be tried again.
    public var hasFailed = false
    /// Frames it threw away because it could not keep up, since the daemon started.
    public var droppedFrames = 0
    /// True for the output that elapsed time, pacing and gapless joins follow: the first enabled one
    /// that works.
    public var isLeading = false

    /// Creates the status of an output that has not played yet.
    public init(id: Int, name: String, plugin: String, isEnabled: Bool) {
        self.id = id
        self.name = name
        self.plugin = plugin
        self.isEnabled = isEnabled
    }

    /// What clients are told about through idle `output`: being switched, failing or recovering, a
    /// problem appearing or going, and the first dropped frames (not every frame dropped after them).
    func differsNoticeably(from other: OutputStatus) -> Bool {
        self.isEnabled != other.isEnabled || self.problem != other.problem || self.hasFailed != other.hasFailed
            || (self.droppedFrames > 0) != (other.droppedFrames > 0) || self.id != other.id
    }
}
