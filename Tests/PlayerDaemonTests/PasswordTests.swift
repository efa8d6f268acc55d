import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `password` and permissions over the protocol, against the real daemon with a password file.
@Suite("Passwords and permissions")
struct PasswordTests {
    private func passwordFile(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = try Paths.makeTemporaryDirectory() + "/passwords"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test("a wrong password is ACK 3; a right one grants its permissions, and commands past them get ACK 4")
    func passwords() throws {
        let file = try self.passwordFile("guest@read\nfamily@read,add,player\nadmin@read,add,player,control,admin\n")
        var options = RunningPlayerd.Options()
        options.extraArguments = ["--password-file", file]
        try withPlayerd(options) { daemon in
            let client = try daemon.connect()
            // A local client may do everything until it sends a password.
            #expect(try client.command("notcommands") == ["OK"])
            #expect(try client.command("password nope") == ["ACK [3@0] {password} incorrect password"])
            #expect(try client.command("password guest") == ["OK"])
            #expect(try client.command("status").last == "OK")
            #expect(try client.command("play") == ["ACK [4@0] {play} you don't have permission for \"play\""])
            #expect(
                try client.command("add stereo-44k-cbr.mp3")
                    == ["ACK [4@0] {add} you don't have permission for \"add\""])
            let allowed = try client.command("commands")
            #expect(allowed.contains("command: status") && !allowed.contains("command: play"))
            let denied = try client.command("notcommands")
            #expect(denied.contains("command: play") && denied.contains("command: update"))
            // In a command list, the refused command is named with its place.
            try client.send(line: "command_list_begin")
            try client.send(line: "status")
            try client.send(line: "pause 1")
            try client.send(line: "command_list_end")
            let answer = try client.readAnswer()
            #expect(answer.contains { $0.hasPrefix("state: ") }, "\(answer)")
            #expect(answer.last == "ACK [4@1] {pause} you don't have permission for \"pause\"")
            // A wrong password leaves what the last right one granted.
            #expect(try client.command("password wrong") == ["ACK [3@0] {password} incorrect password"])
            #expect(try client.command("play") == ["ACK [4@0] {play} you don't have permission for \"play\""])
            // On the socket file, whose clients may do everything anyway, guessing is neither slowed
            // down nor cut off.
            for guess in 1...4 {
                #expect(try client.command("password guess\(guess)") == ["ACK [3@0] {password} incorrect password"])
            }
            #expect(try client.command("password family") == ["OK"])
            #expect(try client.command("add stereo-44k-cbr.mp3") == ["OK"])
            #expect(try client.command("play") == ["OK"])
            #expect(try client.command("update") == ["ACK [4@0] {update} you don't have permission for \"update\""])
            #expect(try client.command("password admin") == ["OK"])
            #expect(try client.command("notcommands") == ["OK"])
            // Another client is not touched by this one's password.
            #expect(try daemon.connect().command("notcommands") == ["OK"])
        }
    }

    @Test("a password file other users may read stops playerd before it starts, with the reason")
    func fileOpenToOthers() throws {
        let file = try self.passwordFile("guest@read\n", mode: 0o644)
        let program = Process()
        program.executableURL = URL(fileURLWithPath: Paths.playerd)
        program.arguments = [
            "--socket", try Paths.makeTemporaryDirectory() + "/socket", "--output", "null", "--state-file", "none",
            "--library", "none", "--playlist-dir", "none", "--password-file", file,
        ]
        let errors = Pipe()
        program.standardError = errors
        program.standardOutput = FileHandle.nullDevice
        try program.run()
        program.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(program.terminationStatus == 64)
        #expect(said.contains("the password file \(file) is open to other users (mode 644)"), "\(said)")
    }
}
