import Foundation
import Synchronization
import Testing

@testable import PlayerDaemon

/// `add` of a directory against the real daemon: bounded, and never in anyone else's way.
@Suite("Directory walks in the daemon")
struct DirectoryWalkTests {
    @Test("add of /proc, /sys or file:///proc is refused at once: kernel file systems hold no music")
    func kernelFileSystemsAreRefused() throws {
        try withPlayerd { daemon in
            let client = try daemon.connect()
            #expect(
                try client.command("add \"/proc/self\"").last
                    == "ACK [50@0] {add} /proc/self: a kernel file system (proc), which holds no music")
            #expect(
                try client.command("add \"/sys\"").last
                    == "ACK [50@0] {add} /sys: a kernel file system (sysfs), which holds no music")
            #expect(
                try client.command("add \"file:///proc\"").last?.hasPrefix("ACK [50@0] {add} /proc: a kernel") == true)
            #expect(try client.fields("status")["playlistlength"] == "0")
        }
    }

    @Test("a walk past the queue's limit is refused whole with an ACK naming the limit")
    func theQueueLimitEndsAWalk() throws {
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--max-queue-length", "5"]
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            _ = try client.command("add one-second.mp3")
            let answer = try client.command("add \"\(Paths.fixtures)\"").last
            #expect(answer == "ACK [51@0] {add} \(Paths.fixtures): more than 5 songs, the queue's limit")
            #expect(try client.fields("status")["playlistlength"] == "1")

            let played = try runProgram(Paths.playerctl, ["--socket", daemon.socketPath, "play", Paths.fixtures])
            #expect(played.status == 1)
            #expect(played.stderr.contains("more than 5 songs, the queue's limit"))
            #expect(try client.fields("status")["playlistlength"] == "1")
        }
    }

    @Test("while one client's add walks the whole file system, every other client is answered")
    func aWalkHoldsNobodyUp() throws {
        try withPlayerd { daemon in
            let walker = try daemon.connect()
            let other = try daemon.connect()
            _ = try other.command("add one-second.mp3")
            try walker.send(line: "add \"/\"")
            var answered = 0
            for line in ["setvol 40", "play", "pause 1", "status", "clear", "add one-second.mp3", "setvol 60"] {
                // Generous: nothing walks on the threads that answer these.
                #expect(try other.command(line, timeout: .seconds(5)).last == "OK", "\(line)")
                answered += 1
            }
            #expect(answered == 7)
            // The walk itself ends too, with every song it found or a clear refusal.
            let answer = try walker.readAnswer(timeout: .seconds(120))
            #expect(answer.last == "OK" || answer.last?.hasPrefix("ACK [51@0] {add}") == true, "\(answer)")
            #expect(try other.fields("status")["volume"] == "60")
        }
    }

    @Test("file-system work runs on threads of lower CPU priority than the rest of the daemon")
    func walksRunNiced() async throws {
        for lane in [FileSystemWork.Lane.walks, .songInfo] {
            let nice = try await FileSystemWork.run(on: lane) { _ in getpriority(__priority_which_t(0), 0) }
            // At least 10: a test run under `nice` starts its threads higher already.
            #expect(nice >= FileSystemWork.niceness)
        }
        // Library queries keep the daemon's own priority.
        let own = getpriority(__priority_which_t(0), 0)
        #expect(try await FileSystemWork.run(on: .library) { _ in getpriority(__priority_which_t(0), 0) } == own)
    }

    @Test("a walk whose client goes away is cancelled: the work stops, the daemon stays")
    func cancellationReachesTheWalk() async throws {
        let started = Flag()
        let task = Task {
            try await FileSystemWork.run { cancellation in
                started.set()
                let deadline = ContinuousClock.now + .seconds(30)
                while !cancellation.isCancelled && ContinuousClock.now < deadline {
                    usleep(1000)
                }
                return cancellation.isCancelled
            }
        }
        while !started.isSet {
            try await Task.sleep(for: .milliseconds(5))
        }
        task.cancel()
        #expect(try await task.value)
    }
}

/// A flag one thread sets and another reads.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { self.value.store(true, ordering: .relaxed) }

    var isSet: Bool { self.value.load(ordering: .relaxed) }
}
