import Testing

@testable import MPRIS

@Suite("MPRIS: file URIs")
struct FileURLTests {
    @Test("a song's URL: relative in the music directory, absolute as it is, percent-encoded")
    func songURL() {
        #expect(FileURL.forSong("a b/c.mp3", musicDirectory: "/music") == "file:///music/a%20b/c.mp3")
        #expect(FileURL.forSong("x.mp3", musicDirectory: "/music/") == "file:///music/x.mp3")
        #expect(FileURL.forSong("/tmp/é#.mp3", musicDirectory: nil) == "file:///tmp/%C3%A9%23.mp3")
        #expect(FileURL.forSong("http://radio/x", musicDirectory: "/music") == "http://radio/x")
        #expect(FileURL.forSong("rel.mp3", musicDirectory: nil) == "rel.mp3")
        // playerd's escape for a byte that is not UTF-8 is the byte itself in the URI.
        #expect(FileURL.forSong("caf\\xE9.mp3", musicDirectory: "/m") == "file:///m/caf%E9.mp3")
    }

    @Test("OpenUri's argument: file URIs decoded, paths as they are, other schemes refused")
    func openPath() {
        #expect(FileURL.path(fromURI: "file:///music/a%20b.mp3") == "/music/a b.mp3")
        #expect(FileURL.path(fromURI: "file://localhost/x.mp3") == "/x.mp3")
        #expect(FileURL.path(fromURI: "/plain/path.mp3") == "/plain/path.mp3")
        #expect(FileURL.path(fromURI: "file:///m/caf%E9.mp3") == "/m/caf\\xE9.mp3")
        #expect(FileURL.path(fromURI: "file:///m/%C3%A9.mp3") == "/m/é.mp3")
        #expect(FileURL.path(fromURI: "http://example.com/a.mp3") == nil)
        #expect(FileURL.path(fromURI: "relative.mp3") == nil)
    }
}
