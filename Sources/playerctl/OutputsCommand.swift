import ArgumentParser
import PlayerClient

/// What `outputs` can do to an output.
enum OutputAction: String, ExpressibleByArgument, CaseIterable {
    /// Switch it on.
    case enable
    /// Switch it off.
    case disable
    /// Switch it over.
    case toggle
}

/// `outputs [enable|disable|toggle NAME]`: lists the outputs, or switches one.
struct OutputsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outputs",
        abstract: "List the outputs, or switch one on, off or over.",
        discussion: """
            An output is named by its name or its number (from 1, as listed). An output that failed, or \
            that plays while something is wrong (a FIFO nobody reads), shows why; one that could not keep \
            up shows how many frames it dropped.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "enable, disable or toggle; nothing to list.")
    var action: OutputAction?

    @Argument(help: "The output's name or number.")
    var output: String?

    @Flag(help: "Print one JSON object per output, one a line.")
    var json = false

    func validate() throws {
        if self.action != nil && self.output == nil {
            throw ValidationError("\(self.action!.rawValue) needs an output's name or number")
        }
        if self.action != nil && self.json {
            throw ValidationError("--json only lists")
        }
    }

    func run() throws {
        let connection = try self.global.connect()
        var outputs = try connection.outputs()
        if let action = self.action, let wanted = self.output {
            let output = try Self.find(wanted, in: outputs)
            let command =
                switch action {
                case .enable: "enableoutput"
                case .disable: "disableoutput"
                case .toggle: "toggleoutput"
                }
            _ = try connection.command(command, [String(output.id)])
            outputs = try connection.outputs()
        }
        for output in outputs {
            print(self.json ? Self.json(output) : Self.line(output))
        }
    }

    /// The output named `wanted`, or numbered so (from 1); a name wins over a number.
    static func find(_ wanted: String, in outputs: [Output]) throws -> Output {
        if let output = outputs.first(where: { $0.name == wanted }) {
            return output
        }
        if let number = Int(wanted), let output = outputs.first(where: { $0.id == number - 1 }) {
            return output
        }
        let names = outputs.map { "\"\($0.name)\"" }.joined(separator: ", ")
        throw ClientError.refused(
            code: 50, command: "outputs", message: "no output is named or numbered \"\(wanted)\"; there are \(names)")
    }

    /// `1 Kitchen (alsa): on`, and what is wrong after it.
    static func line(_ output: Output) -> String {
        var text = "\(output.id + 1) \(output.name) (\(output.plugin)): \(output.isEnabled ? "on" : "off")"
        if let error = output.attribute("error") {
            text += " - \(error)"
        }
        if let dropped = output.attribute("dropped_frames") {
            text += " - dropped \(dropped) frames"
        }
        return text
    }

    static func json(_ output: Output) -> String {
        var object = JSONObject()
        object.add("number", .integer(output.id + 1))
        object.add("name", .string(output.name))
        object.add("plugin", .string(output.plugin))
        object.add("enabled", .bool(output.isEnabled))
        object.add("error", output.attribute("error").map(JSONValue.string) ?? .null)
        object.add("dropped_frames", .integer(output.attribute("dropped_frames").flatMap { Int($0) } ?? 0))
        return object.text
    }
}
