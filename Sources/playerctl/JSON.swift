import PlayerClient

/// One JSON value of the few kinds playerctl prints.
enum JSONValue {
    /// A string, escaped on output.
    case string(String)
    /// A whole number.
    case integer(Int)
    /// Seconds, with at most three decimals.
    case seconds(Double)
    /// true or false.
    case bool(Bool)
    /// null: the value is unknown.
    case null

    /// The value's JSON text.
    var text: String {
        switch self {
        case .string(let string): jsonString(string)
        case .integer(let number): "\(number)"
        case .seconds(let seconds): protocolSeconds(seconds)
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        }
    }
}

/// A JSON object whose keys keep the order they were added in, for output a person can read too.
struct JSONObject {
    private var members: [(String, JSONValue)] = []

    /// Adds a member.
    mutating func add(_ key: String, _ value: JSONValue) {
        self.members.append((key, value))
    }

    /// The object on one line.
    var text: String {
        "{" + self.members.map { key, value in "\(jsonString(key)): \(value.text)" }.joined(separator: ", ") + "}"
    }
}
