import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("scripts/run.sh")
struct RunScriptTests {
    /// Whether a path exists, and when it last changed.
    private func snapshot(_ path: String) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else { return "absent" }
        return "\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }

    @Test("the demo plays on a socket, state and playlists of its own, and leaves nothing behind")
    func demoLeavesTheMachineAlone() throws {
        let sandbox = try Paths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: sandbox) }
        try FileManager.default.createDirectory(atPath: sandbox + "/tmp", withIntermediateDirectories: true)
        // What a playerd run by this user would keep: the system's for root, else under the sandbox's
        // XDG directories below.
        let systemPaths = [
            "/var/cache/playerd/library.db", "/var/lib/playerd/state", "/var/lib/playerd/playlists",
            "/run/playerd/socket",
        ]
        let before = systemPaths.map(self.snapshot)
        let repository = (Paths.fixtures as NSString).deletingLastPathComponent
        let result = try runProgram(
            "/bin/bash", [repository + "/scripts/run.sh"],
            environment: [
                "RUN_BIN_DIR": (Paths.playerd as NSString).deletingLastPathComponent, "RUN_OUTPUT": "null:unpaced",
                "TMPDIR": sandbox + "/tmp", "HOME": sandbox + "/home", "XDG_CACHE_HOME": sandbox + "/cache",
                "XDG_STATE_HOME": sandbox + "/state", "XDG_RUNTIME_DIR": sandbox + "/run",
                "DBUS_SESSION_BUS_ADDRESS": "",
            ],
            within: .seconds(60))
        #expect(result.status == 0, "\(result)")
        // Its temporary directory is gone, and nothing else was made.
        #expect(contents(of: sandbox) == ["tmp"])
        #expect(contents(of: sandbox + "/tmp").isEmpty)
        #expect(systemPaths.map(self.snapshot) == before)
    }
}
