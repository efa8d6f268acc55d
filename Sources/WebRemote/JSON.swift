import Foundation
import PlayerClient

/// A JSON value as the API writes it. Nulls are written out (`"album": null`), as the API's
/// description promises, which Codable's synthesized encoders would leave out.
indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    static func == (left: JSON, right: JSON) -> Bool {
        left.serialized == right.serialized
    }

    /// `value` as a string, or null.
    static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    /// `value` as a whole number, or null.
    static func optional(_ value: Int?) -> JSON { value.map(JSON.int) ?? .null }
    /// `value` as a number, or null.
    static func optional(_ value: Double?) -> JSON { value.map(JSON.number) ?? .null }

    /// The UTF-8 text.
    var serialized: String {
        var text = ""
        self.write(into: &text)
        return text
    }

    private func write(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .int(let value): text += String(value)
        case .number(let value):
            if value.isFinite {
                // Whole seconds stay whole (`3` not `3.0`); the rest keeps three decimals, as MPD's.
                if value == value.rounded(), abs(value) < 1e15 {
                    text += String(Int(value))
                } else {
                    var fixed = String(format: "%.3f", value)
                    while fixed.hasSuffix("0") { fixed.removeLast() }
                    if fixed.hasSuffix(".") { fixed.removeLast() }
                    text += fixed
                }
            } else {
                text += "null"
            }
        case .string(let value): Self.writeString(value, into: &text)
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, into: &text)
                text += ":"
                value.write(into: &text)
            }
            text += "}"
        }
    }

    private static func writeString(_ value: String, into text: inout String) {
        text += jsonString(value)
    }
}
