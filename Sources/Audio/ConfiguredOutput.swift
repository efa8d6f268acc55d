/// One output as the user configures it: a spec, plus what clients see of it. Written as the spec
/// followed by attributes: `alsa:hw:0,0,name=Kitchen`, `null,name=Silent,enabled=no`,
/// `fifo:/run/playerd/snapfifo,format=44100:16:2` (a FIFO's format, which only a FIFO has). Attributes are
/// peeled off the end, and only the known keys are: an ALSA device such as `dmix:CARD=0,DEV=0` keeps
/// its own `KEY=VALUE` parts.
public struct ConfiguredOutput: Sendable, Hashable, CustomStringConvertible {
    /// What plays.
    public var spec: OutputSpec
    /// The name clients see (MPD's `outputname`); the spec's text unless `name=` gives one.
    public var name: String
    /// Whether it plays from the start, until a client or the state file says otherwise.
    public var startsEnabled: Bool

    /// The attributes a spec may carry, for messages and help text.
    public static let attributeForms = "name=NAME, enabled=yes|no, format=RATE:BITS:CHANNELS (fifo only)"

    /// Parses a spec with its attributes.
    /// - Throws: `OutputSpecError` quoting the text and saying what is wrong.
    public init(parsing text: String) throws(OutputSpecError) {
        var rest = Substring(text)
        var name: String?
        var enabled: Bool?
        var format: FIFOFormat?
        while let comma = rest.lastIndex(of: ","),
            let equals = rest[comma...].firstIndex(of: "="),
            case let key = String(rest[rest.index(after: comma)..<equals]),
            ["name", "enabled", "format"].contains(key)
        {
            let value = String(rest[rest.index(after: equals)...])
            switch key {
            case "name":
                guard name == nil else { throw OutputSpecError(text: text, reason: "name= is given twice") }
                guard !value.isEmpty, value.allSatisfy({ !$0.isNewline }) else {
                    throw OutputSpecError(text: text, reason: "name= needs a name on one line")
                }
                name = value
            case "format":
                guard format == nil else { throw OutputSpecError(text: text, reason: "format= is given twice") }
                do throws(OutputSpecError) {
                    format = try FIFOFormat(parsing: value)
                } catch {
                    throw OutputSpecError(
                        text: text, reason: "format=\(value): \(error.reason ?? "not RATE:BITS:CHANNELS")")
                }
            default:
                guard enabled == nil else { throw OutputSpecError(text: text, reason: "enabled= is given twice") }
                switch value {
                case "yes", "1", "true", "on": enabled = true
                case "no", "0", "false", "off": enabled = false
                default: throw OutputSpecError(text: text, reason: "enabled= takes yes or no, not \"\(value)\"")
                }
            }
            rest = rest[..<comma]
        }
        var spec: OutputSpec
        do {
            spec = try OutputSpec(parsing: String(rest))
        } catch {
            throw OutputSpecError(text: text)
        }
        if let format {
            guard case .fifo(let path, _) = spec else {
                throw OutputSpecError(
                    text: text, reason: "format= is for fifo outputs only (\(spec.plugin) plays each song's own format)"
                )
            }
            spec = .fifo(path: path, format: format)
        }
        self.init(spec: spec, name: name, startsEnabled: enabled ?? true)
    }

    /// An output for `spec`, named `name` or after the spec.
    public init(spec: OutputSpec, name: String? = nil, startsEnabled: Bool = true) {
        self.spec = spec
        self.name = name ?? spec.description
        self.startsEnabled = startsEnabled
    }

    /// The text that parses back to this output.
    public var description: String {
        var text = self.spec.description
        if self.name != self.spec.description {
            text += ",name=\(self.name)"
        }
        if !self.startsEnabled {
            text += ",enabled=no"
        }
        if case .fifo(_, let format) = self.spec, format != .standard {
            text += ",format=\(format)"
        }
        return text
    }

    /// Checks that a list of outputs can be played together: at least one, and no two with one name
    /// (clients tell them apart by name, and the state file remembers them by it).
    /// - Throws: `OutputSpecError` naming the duplicate.
    public static func checkList(_ outputs: [ConfiguredOutput]) throws(OutputSpecError) {
        var seen: Set<String> = []
        for output in outputs where !seen.insert(output.name).inserted {
            throw OutputSpecError(
                text: output.description,
                reason: "another output is already named \"\(output.name)\": give each its own name=")
        }
    }
}
