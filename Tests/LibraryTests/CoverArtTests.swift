import ControlProtocol
import Foundation
import Testing

@testable import Library

@Suite("Cover art")
struct CoverArtTests {
    private static func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test("MPD 0.23's names in MPD's order: cover.png, cover.jpg, cover.webp, nothing else")
    func findsCover() throws {
        let directory = try TemporaryDirectory()
        #expect(CoverArt.file(inDirectory: directory.path) == nil)
        for other in ["folder.jpg", "Cover.jpg", "cover.jpeg", "front.png", "cover.gif"] {
            try directory.write("x", to: other)
        }
        #expect(CoverArt.file(inDirectory: directory.path) == nil)
        try directory.write("w", to: "cover.webp")
        #expect(CoverArt.file(inDirectory: directory.path) == directory.path + "/cover.webp")
        try directory.write("j", to: "cover.jpg")
        #expect(CoverArt.file(inDirectory: directory.path + "/") == directory.path + "/cover.jpg")
        try directory.write("p", to: "cover.png")
        #expect(CoverArt.file(inDirectory: directory.path) == directory.path + "/cover.png")
        // A directory of that name is no cover.
        let other = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: other.path + "/cover.png", withIntermediateDirectories: false)
        try other.write("j", to: "cover.jpg")
        #expect(CoverArt.file(inDirectory: other.path) == other.path + "/cover.jpg")
        #expect(CoverArt.file(inDirectory: other.path + "/missing") == nil)
    }

    @Test("MIME types by suffix")
    func mimeTypes() {
        #expect(CoverArt.mimeType(ofFile: "/a/cover.jpg") == "image/jpeg")
        #expect(CoverArt.mimeType(ofFile: "/a/cover.JPEG") == "image/jpeg")
        #expect(CoverArt.mimeType(ofFile: "/a/cover.png") == "image/png")
        #expect(CoverArt.mimeType(ofFile: "/a/cover.webp") == "image/webp")
        #expect(CoverArt.mimeType(ofFile: "/a.b/cover") == nil)
        #expect(CoverArt.mimeType(ofFile: "/a/cover.txt") == nil)
    }

    @Test("chunks reassemble the file; the end gives an empty chunk; past it, Offset too large")
    func chunks() throws {
        let directory = try TemporaryDirectory()
        let content = Self.bytes(20000)
        let path = directory.path + "/cover.jpg"
        try Data(content).write(to: URL(fileURLWithPath: path))
        var assembled: [UInt8] = []
        while true {
            let (total, chunk) = try CoverArt.chunk(ofFile: path, offset: assembled.count, limit: 8192)
            #expect(total == 20000)
            #expect(chunk.count <= 8192)
            if chunk.isEmpty { break }
            assembled += chunk
        }
        #expect(assembled == content)
        let last = try CoverArt.chunk(ofFile: path, offset: 19990, limit: 8192)
        #expect(last.totalSize == 20000)
        #expect(last.bytes == Array(content[19990...]))
        #expect(try CoverArt.chunk(ofFile: path, offset: 20000, limit: 8192).bytes.isEmpty)
        expectAck(.argument, "Offset too large") { () throws(Ack) in
            _ = try CoverArt.chunk(ofFile: path, offset: 20001, limit: 8192)
        }
        expectAck(.noExist, "No file exists") { () throws(Ack) in
            _ = try CoverArt.chunk(ofFile: directory.path + "/missing.jpg", offset: 0, limit: 8192)
        }
        expectAck(.noExist, "Cannot get size for stream") { () throws(Ack) in
            _ = try CoverArt.chunk(ofFile: directory.path, offset: 0, limit: 8192)
        }
    }

    @Test("an empty cover: size 0, one empty chunk")
    func emptyFile() throws {
        let directory = try TemporaryDirectory()
        try directory.write("", to: "cover.png")
        let chunk = try CoverArt.chunk(ofFile: directory.path + "/cover.png", offset: 0, limit: 64)
        #expect(chunk.totalSize == 0)
        #expect(chunk.bytes.isEmpty)
    }
}
