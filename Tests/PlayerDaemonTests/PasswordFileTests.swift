import ControlProtocol
import Testing

@testable import PlayerDaemon

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The password file")
struct PasswordFileTests {
    /// Writes `text` to a new file of mode `mode` and returns its path.
    private func file(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = try Paths.makeTemporaryDirectory() + "/passwords"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        #expect(descriptor >= 0)
        var bytes = Array(text.utf8)
        #expect(write(descriptor, &bytes, bytes.count) == bytes.count)
        close(descriptor)
        #expect(chmod(path, mode) == 0)  // whatever the umask made of it
        return path
    }

    @Test("PASSWORD@PERMISSIONS lines, comments and blank lines; the last @ separates")
    func lines() throws {
        let path = try self.file(
            """
            # listeners and the people with the remote
            guest@read

            family@read,add,player\r
            admin@read,add,player,control,admin
            me@home@control
            """)
        let passwords = try PasswordFile.load(path)
        #expect(passwords.permission(for: "guest") == .read)
        #expect(passwords.permission(for: "family") == [.read, .add, .player])
        #expect(passwords.permission(for: "admin") == .all)
        #expect(passwords.permission(for: "me@home") == [.control, .player])
        #expect(passwords.permission(for: "Guest") == nil)
        #expect(passwords.permission(for: "") == nil)
        #expect(passwords.grants.count == 4)
    }

    @Test("a file other users may read or write is refused, naming its mode")
    func openToOthers() throws {
        for mode: mode_t in [0o644, 0o602, 0o604] {
            let path = try self.file("guest@read\n", mode: mode)
            #expect(throws: PasswordFileError.openToOthers(path: path, mode: mode)) { try PasswordFile.load(path) }
        }
        let readable = try self.file("guest@read\n", mode: 0o640)
        #expect(try PasswordFile.load(readable).permission(for: "guest") == .read)
        #expect(
            PasswordFileError.openToOthers(path: "/etc/p", mode: 0o644).description
                == "the password file /etc/p is open to other users (mode 644): chmod o-rwx it, so that its passwords stay secret"
        )
    }

    @Test("bad lines are refused with the file and the line named")
    func badLines() throws {
        let cases: [(String, Int, String)] = [
            ("guest@read\nno separator\n", 2, "expected PASSWORD@PERMISSIONS"),
            ("@read\n", 1, "the password is empty"),
            ("guest@read,play\n", 1, "unknown permission \"play\" (known: read, add, player, control, admin)"),
            ("guest@read\n# again:\nguest@add\n", 3, "this password is already on an earlier line"),
        ]
        for (text, number, reason) in cases {
            let path = try self.file(text)
            #expect(throws: PasswordFileError.line(path: path, number: number, reason: reason)) {
                try PasswordFile.load(path)
            }
        }
    }

    @Test("a missing file, a directory and a file that is not text are refused")
    func unreadable() throws {
        let directory = try Paths.makeTemporaryDirectory()
        #expect(throws: PasswordFileError.unreadable(path: directory + "/none", reason: "No such file or directory")) {
            try PasswordFile.load(directory + "/none")
        }
        #expect(chmod(directory, 0o700) == 0)
        #expect(throws: PasswordFileError.unreadable(path: directory, reason: "not a regular file")) {
            try PasswordFile.load(directory)
        }
        let binary = try self.file("guest@read\n\u{FF}")
        let descriptor = open(binary, O_WRONLY | O_APPEND | O_CLOEXEC)
        var invalid: [UInt8] = [0xFF, 0xFE]
        #expect(write(descriptor, &invalid, 2) == 2)
        close(descriptor)
        #expect(throws: PasswordFileError.unreadable(path: binary, reason: "not UTF-8 text")) {
            try PasswordFile.load(binary)
        }
    }
}
