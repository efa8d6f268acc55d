import CSdBus

/// A value of one of the D-Bus types MPRIS uses, as a property holds it and a message carries it.
enum DBusValue: Equatable {
    /// `s`: UTF-8 text without NUL.
    case string(String)
    /// `o`: an object path (`mpris:trackid`).
    case objectPath(String)
    /// `b`.
    case boolean(Bool)
    /// `d`.
    case double(Double)
    /// `x`: microseconds, in MPRIS.
    case int64(Int64)
    /// `i`.
    case int32(Int32)
    /// `as`.
    case strings([String])
    /// `a{sv}`: the `Metadata` map, in the order given.
    indirect case dictionary([(key: String, value: DBusValue)])

    /// The value's D-Bus signature.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .boolean: "b"
        case .double: "d"
        case .int64: "x"
        case .int32: "i"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }

    static func == (left: DBusValue, right: DBusValue) -> Bool {
        switch (left, right) {
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)): a == b
        case (.boolean(let a), .boolean(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.strings(let a), .strings(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)):
            a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// Appends the value to `message` (a reply, or a variant sd-bus has opened for a property); returns
    /// sd-bus's result, negative on failure.
    func append(to message: OpaquePointer) -> Int32 {
        switch self {
        case .string(let text):
            return appendText(text, type: "s", to: message)
        case .objectPath(let path):
            return appendText(path, type: "o", to: message)
        case .boolean(let flag):
            // sd-bus reads a `b` as a C int.
            var value: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(message, typeCode("b"), &value)
        case .double(let number):
            var value = number
            return sd_bus_message_append_basic(message, typeCode("d"), &value)
        case .int64(let number):
            var value = number
            return sd_bus_message_append_basic(message, typeCode("x"), &value)
        case .int32(let number):
            var value = number
            return sd_bus_message_append_basic(message, typeCode("i"), &value)
        case .strings(let texts):
            var result = sd_bus_message_open_container(message, typeCode("a"), "s")
            for text in texts where result >= 0 {
                result = appendText(text, type: "s", to: message)
            }
            return result < 0 ? result : sd_bus_message_close_container(message)
        case .dictionary(let entries):
            var result = sd_bus_message_open_container(message, typeCode("a"), "{sv}")
            for (key, value) in entries where result >= 0 {
                result = sd_bus_message_open_container(message, typeCode("e"), "sv")
                if result >= 0 { result = appendText(key, type: "s", to: message) }
                if result >= 0 { result = sd_bus_message_open_container(message, typeCode("v"), value.signature) }
                if result >= 0 { result = value.append(to: message) }
                if result >= 0 { result = sd_bus_message_close_container(message) }
                if result >= 0 { result = sd_bus_message_close_container(message) }
            }
            return result < 0 ? result : sd_bus_message_close_container(message)
        }
    }
}

/// A D-Bus type code as sd-bus takes it: `s` is `CChar(0x73)`.
func typeCode(_ code: Unicode.Scalar) -> CChar {
    CChar(bitPattern: UInt8(code.value))
}

/// Appends a string or object path. sd-bus refuses text that is not UTF-8 (-EINVAL), which a Swift
/// String always is; a NUL would cut the C string short, so it is dropped first (D-Bus strings cannot
/// hold one).
private func appendText(_ text: String, type: Unicode.Scalar, to message: OpaquePointer) -> Int32 {
    let clean = DBusText.clean(text)
    return clean.withCString { pointer in
        sd_bus_message_append_basic(message, typeCode(type), pointer)
    }
}

/// Text made fit for D-Bus.
enum DBusText {
    /// `text` without NULs. Anything else a Swift String holds is valid UTF-8 and goes as it is: bytes
    /// that were not UTF-8 in a tag became U+FFFD before they became a String (playerd replaces them
    /// itself, and `MPDConnection` reads any other server's that way).
    static func clean(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return String(text.unicodeScalars.filter { $0 != "\0" }.map(Character.init))
    }
}
