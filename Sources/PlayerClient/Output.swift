/// One of the server's outputs, as `outputs` lists it.
public struct Output: Sendable, Equatable {
    /// Its number, from 0 (MPD's `outputid`).
    public var id: Int
    /// Its name.
    public var name: String
    /// Its plugin: `alsa`, `null`, `fifo`, `wav`, ...
    public var plugin: String
    /// Whether it is switched on.
    public var isEnabled: Bool
    /// Its `attribute:` lines, in order, as name and value.
    public var attributes: [(name: String, value: String)]

    /// The attribute named `name`, if it has one.
    public func attribute(_ name: String) -> String? {
        self.attributes.first { $0.name == name }?.value
    }

    public static func == (left: Output, right: Output) -> Bool {
        left.id == right.id && left.name == right.name && left.plugin == right.plugin
            && left.isEnabled == right.isEnabled && left.attributes.map(\.name) == right.attributes.map(\.name)
            && left.attributes.map(\.value) == right.attributes.map(\.value)
    }

    /// Reads `outputs`' answer: a new output starts at each `outputid`.
    public static func list(from pairs: [(key: String, value: String)]) throws(ClientError) -> [Output] {
        var outputs: [Output] = []
        for (key, value) in pairs {
            if key == "outputid" {
                guard let id = Int(value) else { throw .malformed("outputid: \(value)") }
                outputs.append(Output(id: id, name: "", plugin: "", isEnabled: false, attributes: []))
                continue
            }
            guard !outputs.isEmpty else { continue }
            switch key {
            case "outputname": outputs[outputs.count - 1].name = value
            case "plugin": outputs[outputs.count - 1].plugin = value
            case "outputenabled": outputs[outputs.count - 1].isEnabled = value == "1"
            case "attribute":
                let parts = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                outputs[outputs.count - 1].attributes.append(
                    (String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
            default: continue
            }
        }
        return outputs
    }
}

extension MPDConnection {
    /// The server's outputs.
    public func outputs() throws(ClientError) -> [Output] {
        try Output.list(from: try self.command("outputs"))
    }
}
