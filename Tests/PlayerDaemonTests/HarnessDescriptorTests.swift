import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test process starts thousands of programs (playerd, mpd, mpc, playerctl) over a run. Each must
/// leave no descriptor behind: once about 1,300 are open, Foundation's `Process.run` (which walks
/// /proc/self/fd) reads past glibc's directory buffer and the whole test process dies (it did, in CI).
@Suite("The test harness leaves no descriptors open")
struct HarnessDescriptorTests {
    private func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    @Test("programs run to their end and daemons started and stopped leave no descriptor behind")
    func noDescriptorsLeft() throws {
        // One of each first: whatever Foundation opens once for good (its process monitor) is not a leak.
        _ = try runProgram("/bin/true", [])
        try withPlayerd { _ in }
        let before = try self.openDescriptors()
        for _ in 0..<40 {
            let result = try runProgram("/bin/sh", ["-c", "echo out; echo err >&2"])
            #expect(result.stdout == "out\n" && result.stderr == "err\n")
        }
        for _ in 0..<5 {
            try withPlayerd { playerd in
                let answer = try playerd.connect().command("ping")
                #expect(answer == ["OK"])
            }
        }
        let after = try self.openDescriptors()
        // Descriptors other tests' threads open meanwhile come and go; 45 runs leaking two each would be 90.
        #expect(after - before < 10, "open descriptors: \(before) before, \(after) after 45 programs")
    }
}
