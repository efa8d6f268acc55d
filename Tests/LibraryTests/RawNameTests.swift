import Audio
import ControlProtocol
import Foundation
import MusicTags
import Testing

@testable import Library

/// Files and directories named by raw bytes, which `FileManager` (taking `String`s) cannot name.
enum RawNames {
    /// Copies the fixture `fixture` to the path made of `bytes`.
    static func copy(_ fixture: String, to bytes: [UInt8]) throws {
        let contents = try Data(contentsOf: URL(fileURLWithPath: ScannedTree.fixtures + "/" + fixture))
        let descriptor = open(Self.cPath(bytes), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw RawNameError(call: "open", path: bytes) }
        defer { close(descriptor) }
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == contents.count else { throw RawNameError(call: "write", path: bytes) }
    }

    static func makeDirectory(_ bytes: [UInt8]) throws {
        guard mkdir(Self.cPath(bytes), 0o755) == 0 else { throw RawNameError(call: "mkdir", path: bytes) }
    }

    static func remove(_ bytes: [UInt8]) throws {
        guard unlink(Self.cPath(bytes)) == 0 else { throw RawNameError(call: "unlink", path: bytes) }
    }

    static func removeDirectory(_ bytes: [UInt8]) throws {
        guard rmdir(Self.cPath(bytes)) == 0 else { throw RawNameError(call: "rmdir", path: bytes) }
    }

    private static func cPath(_ bytes: [UInt8]) -> [CChar] {
        bytes.map { CChar(bitPattern: $0) } + [0]
    }

    struct RawNameError: Error, CustomStringConvertible {
        let call: String
        let path: [UInt8]
        let code = errno
        var description: String { "\(self.call) \(self.path): \(String(cString: strerror(self.code)))" }
    }
}

/// Names that are not UTF-8 (a Latin-1 tree copied from an old disk) are kept: stored, listed and found
/// under their escaped names (`PathEscaping`), and opened by their real bytes.
@Suite struct RawNameTests {
    let all = Set(TagName.allCases)

    /// "café.mp3" in C, with é as Latin-1's 0xE9.
    static let cafe = Array("/C/caf".utf8) + [0xE9] + Array(".mp3".utf8)
    /// A directory "Été", Latin-1: 0xC9 't' 0xE9.
    static let ete = Array("/".utf8) + [0xC9, 0x74, 0xE9]

    private func files(_ tree: ScannedTree, _ filter: SongFilter) throws -> [String] {
        ScannedTree.files(
            try tree.answer { response throws(Ack) in
                try tree.library.find(LibraryQuery(filter: filter), tagTypes: all, to: &response) { _ in true }
            })
    }

    @Test func aLatin1FileAndDirectoryAreListedFoundKeptAndRemovedUnderEscapedNames() throws {
        let tree = try ScannedTree()
        let music = Array(tree.music.utf8)
        try RawNames.copy("tagged-id3v1.mp3", to: music + Self.cafe)
        try RawNames.makeDirectory(music + Self.ete)
        try RawNames.copy("one-second.mp3", to: music + Self.ete + Array("/one.mp3".utf8))
        try RawNames.copy("one-second.mp3", to: music + Self.ete + Array("/cover.jpg".utf8))

        let report = try tree.update()
        #expect(report.added == 6)
        #expect(report.skipped.count == 1 && report.skipped[0].contains("empty.mp3"), "\(report.skipped)")
        #expect(try tree.library.readStats().songs == 6)

        let listing = try tree.answer { response throws(Ack) in
            try tree.library.listAll("", info: false, tagTypes: all, to: &response) { _ in true }
        }
        #expect(listing.contains("file: C/caf\\xE9.mp3\n"))
        #expect(listing.contains("directory: \\xC9t\\xE9\nfile: \\xC9t\\xE9/one.mp3\n"))
        let inside = try tree.answer { response throws(Ack) in
            try tree.library.listInfo("\\xC9t\\xE9", tagTypes: all, to: &response)
        }
        #expect(ScannedTree.files(inside) == ["\\xC9t\\xE9/one.mp3"])
        #expect(inside.contains("Format: 44100:16:2\n"))

        // `find file`, and the tags, which come from the file itself.
        #expect(try files(tree, .compare(.file, .equals, "C/caf\\xE9.mp3", ignoringCase: false)) == ["C/caf\\xE9.mp3"])
        #expect(
            try files(tree, .compare(.tag(.artist), .equals, "Sigur Rós", ignoringCase: false))
                == ["C/caf\\xE9.mp3", "C/z.mp3"])
        #expect(try tree.library.songURIs(under: "\\xC9t\\xE9") == ["\\xC9t\\xE9/one.mp3"])

        // `listfiles` and `albumart` reach the real directory through the escaped URI.
        let entries = try DirectoryListing.entries(of: tree.library.path(of: "\\xC9t\\xE9"))
        #expect(entries.map(\.name) == ["cover.jpg", "one.mp3"])
        #expect(try DirectoryListing.entries(of: tree.library.path(of: "C")).map(\.name).contains("caf\\xE9.mp3"))
        let cover = try #require(CoverArt.file(inDirectory: tree.library.path(of: "\\xC9t\\xE9")))
        #expect(try CoverArt.chunk(ofFile: cover, offset: 0, limit: 100).totalSize == 17_135)

        // A no-op update reads nothing again and removes nothing.
        let again = try tree.update()
        #expect(!again.changed)
        #expect(again.skipped.isEmpty)
        #expect(try tree.library.readStats().songs == 6)

        // Deleted, they leave.
        try RawNames.remove(music + Self.cafe)
        #expect(try tree.update().removed == 1)
        try RawNames.remove(music + Self.ete + Array("/one.mp3".utf8))
        try RawNames.remove(music + Self.ete + Array("/cover.jpg".utf8))
        try RawNames.removeDirectory(music + Self.ete)
        #expect(try tree.update().removed == 1)
        #expect(try tree.library.readStats().songs == 4)
        #expect(try tree.library.songURIs(under: "\\xC9t\\xE9") == nil)
    }

    @Test func anUpdateOfAnEscapedURIReadsTheRealFile() throws {
        let tree = try ScannedTree()
        let music = Array(tree.music.utf8)
        _ = try tree.update()
        try RawNames.makeDirectory(music + Self.ete)
        try RawNames.copy("one-second.mp3", to: music + Self.ete + Array("/one.mp3".utf8))
        #expect(try tree.update("\\xC9t\\xE9").added == 1)
        try RawNames.copy("tagged-id3v1.mp3", to: music + Self.cafe)
        #expect(try tree.update("C/caf\\xE9.mp3").added == 1)
        #expect(try tree.library.readStats().songs == 6)
    }

    @Test func genuineNamesHoldingTheEscapeCharacterRoundTrip() throws {
        let tree = try ScannedTree()
        // A backslash that reads as no escape is shown as it is; one followed by "x41" is escaped itself.
        for name in ["AC\\DC.mp3", "a\\x41.mp3"] {
            try FileManager.default.copyItem(
                atPath: ScannedTree.fixtures + "/one-second.mp3", toPath: tree.music + "/C/" + name)
        }
        let report = try tree.update()
        #expect(report.added == 6, "\(report.skipped)")
        // In MPD's listing order: songs without an album first, names collated (`\` before letters).
        #expect(try tree.library.songURIs(under: "C") == ["C/a\\x5Cx41.mp3", "C/AC\\DC.mp3", "C/z.mp3"])
        #expect(
            try files(tree, .compare(.file, .equals, "C/a\\x5Cx41.mp3", ignoringCase: false)) == ["C/a\\x5Cx41.mp3"])
        #expect(
            PathEscaping.bytes(of: tree.library.path(of: "C/a\\x5Cx41.mp3"))
                == Array((tree.music + "/C/a\\x41.mp3").utf8))
        #expect(try tree.update().changed == false)
        try FileManager.default.removeItem(atPath: tree.music + "/C/a\\x41.mp3")
        #expect(try tree.update().removed == 1)
        #expect(try tree.library.songURIs(under: "C") == ["C/AC\\DC.mp3", "C/z.mp3"])
    }
}
