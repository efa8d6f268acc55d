/// `daemon-bench playing SOCKET`: what a daemon plays, from `status` and `currentsong`: prints `state`
/// (play, pause, stop), `audio` (the format at the output, `rate:bits:channels`, or `-`) and `file` (or
/// `-`), so that a script can check that a figure was taken while the daemon played what it meant.
enum PlayingCommand: BenchCommand {
    static let name = "playing"
    static let usage = "daemon-bench playing SOCKET"

    static func run(_ arguments: [String]) throws(BenchFailure) {
        guard arguments.count == 1 else { throw .usage(self.usage) }
        let connection = try openSession(arguments[0])
        let status = try connection.fields("status\n")
        let song = try connection.fields("currentsong\n")
        print("state \(status["state"] ?? "-")")
        print("audio \(status["audio"] ?? "-")")
        // The file name may hold spaces: the rest of the line.
        print("file \(song["file"] ?? "-")")
    }
}
