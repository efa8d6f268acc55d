/// A JSON string literal: quotes, backslashes and control characters escaped, everything else as
/// UTF-8; `<` and the line and paragraph separators escaped too, so the text is safe inside a page's
/// script and to JavaScript parsers older than ES2019.
public func jsonString(_ string: String) -> String {
    var text = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": text += "\\\""
        case "\\": text += "\\\\"
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case "\u{08}": text += "\\b"
        case "\u{0C}": text += "\\f"
        case "\u{00}"..."\u{1F}", "\u{7F}", "<", "\u{2028}", "\u{2029}":
            let hex = String(scalar.value, radix: 16)
            text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: text.unicodeScalars.append(scalar)
        }
    }
    return text + "\""
}
