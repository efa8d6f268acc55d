#if canImport(Glibc)
    import Glibc
#endif

/// Where playerd listens unless told otherwise, from this process's environment and user id.
public func defaultSocketPath() -> String {
    var environment: [String: String] = [:]
    for name in ["PLAYERD_SOCKET", "XDG_RUNTIME_DIR"] {
        if let value = getenv(name) {
            environment[name] = String(cString: value)
        }
    }
    return defaultSocketPath(environment: environment, userID: getuid())
}

/// How to start playerd, for a user who found it not running: root, and anyone whose socket is the
/// system service's, is told of the system service; anyone else of their user service; both of
/// running it by hand on `socketPath`.
public func startAdvice(socketPath: String, userID: UInt32) -> String {
    let unit =
        if userID == 0 {
            "systemctl start playerd.socket"
        } else if socketPath == defaultSocketPath(environment: [:], userID: 0) {
            "sudo systemctl start playerd.socket"
        } else {
            "systemctl --user start playerd.socket"
        }
    return "start it with: \(unit), or by hand: playerd --socket \(socketPath)"
}

/// Where playerd listens: `$PLAYERD_SOCKET` if set, else `$XDG_RUNTIME_DIR/playerd/socket`, else
/// `/run/playerd/socket` for root (the system service), else `/run/user/UID/playerd/socket`. An
/// empty variable counts as unset, as shells treat `VAR=`.
public func defaultSocketPath(environment: [String: String], userID: UInt32) -> String {
    if let path = environment["PLAYERD_SOCKET"], !path.isEmpty {
        return path
    }
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
        let directory = runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime
        return "\(directory)/playerd/socket"
    }
    if userID == 0 {
        return "/run/playerd/socket"
    }
    return "/run/user/\(userID)/playerd/socket"
}
