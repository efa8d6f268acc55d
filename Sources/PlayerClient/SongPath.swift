/// What to send in `add` for a path a person typed: the absolute, standardized path (`.` and `..`
/// taken out, slashes collapsed) relative to `currentDirectory`, because the daemon does not know the
/// client's directory. A URL (`scheme://...`) is returned unchanged. The file need not exist here:
/// the daemon checks it, with the client's permissions.
public func absolutePath(_ path: String, currentDirectory: String) -> String {
    if isURL(path) {
        return path
    }
    let joined: String
    if path.hasPrefix("/") {
        joined = path
    } else if currentDirectory.hasPrefix("/") {
        joined = currentDirectory + "/" + path
    } else {
        // Without a directory to start from, the daemon gets the path as typed and refuses it itself.
        return path
    }
    var components: [Substring] = []
    for component in joined.split(separator: "/") {
        switch component {
        case ".":
            continue
        case "..":
            // As in realpath, `/..` is `/`.
            _ = components.popLast()
        default:
            components.append(component)
        }
    }
    return "/" + components.joined(separator: "/")
}

/// Whether the text starts with a URL scheme and `://`, as `http://host/a.mp3` does.
private func isURL(_ text: String) -> Bool {
    guard let separator = text.firstRange(of: "://") else {
        return false
    }
    let scheme = text[..<separator.lowerBound]
    guard let first = scheme.first, first.isASCII, first.isLetter else {
        return false
    }
    return scheme.allSatisfy { character in
        character.isASCII && (character.isLetter || character.isNumber || "+-.".contains(character))
    }
}
