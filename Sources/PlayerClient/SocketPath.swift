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

/// How to start playerd, for a user who found it not running on `socketPath`: by hand, always; and a
/// systemd unit only where one listens: the system service on its socket (`/run/playerd/socket`), the
/// user service on `$XDG_RUNTIME_DIR/playerd/socket` (`runtimeDirectory`: this process's by default).
public func startAdvice(
    socketPath: String, userID: UInt32,
    runtimeDirectory: String? = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
) -> String {
    let unit: String? =
        if socketPath == defaultSocketPath(environment: [:], userID: 0) {
            userID == 0 ? "systemctl start playerd.socket" : "sudo systemctl start playerd.socket"
        } else if socketPath
            == defaultSocketPath(environment: ["XDG_RUNTIME_DIR": runtimeDirectory ?? ""], userID: userID)
        {
            "systemctl --user start playerd.socket"
        } else {
            nil
        }
    guard let unit else {
        return "start it by hand: playerd --socket \(socketPath)"
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
