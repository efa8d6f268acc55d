import Testing

@testable import StreamInput

@Suite("Station lists")
struct StationListTests {
    @Test("plain m3u: entries in order, comments and blank lines ignored, CRLF and a BOM")
    func plainM3U() {
        let text = "\u{FEFF}# a comment\r\nhttp://radio.example/a.mp3\r\n\r\n  https://radio.example:8443/b  \r\n"
        #expect(
            StationList.parse(text, base: nil) == [
                StationListEntry(url: "http://radio.example/a.mp3"),
                StationListEntry(url: "https://radio.example:8443/b"),
            ])
    }

    @Test("extended m3u: #EXTINF names the next entry only")
    func extendedM3U() {
        let text = """
            #EXTM3U
            #EXTINF:-1,Radio One
            http://one.example/live
            http://two.example/live
            #EXTINF:123 tvg-name="a,b" logo="x",Three, with a comma
            http://three.example/live
            #EXTINF:-1,
            http://four.example/live
            """
        #expect(
            StationList.parse(text, base: nil) == [
                StationListEntry(url: "http://one.example/live", title: "Radio One"),
                StationListEntry(url: "http://two.example/live"),
                StationListEntry(url: "http://three.example/live", title: "Three, with a comma"),
                StationListEntry(url: "http://four.example/live"),
            ])
    }

    @Test("pls: FileN/TitleN in the order of N, whatever their order in the file; junk ignored")
    func pls() {
        let text = """
            [playlist]
            NumberOfEntries=3
            File2=http://b.example/stream
            Title2=Bee
            File1=http://a.example/stream
            Title1=Ay
            Length1=-1
            this line is junk
            File3=http://c.example/stream
            Version=2
            """
        #expect(
            StationList.parse(text.replacingCRLF(), base: nil) == [
                StationListEntry(url: "http://a.example/stream", title: "Ay"),
                StationListEntry(url: "http://b.example/stream", title: "Bee"),
                StationListEntry(url: "http://c.example/stream"),
            ])
    }

    @Test("relative entries resolve against the list's URL or its directory")
    func relative() {
        let text = "a.mp3\n/root.mp3\nsub/b.mp3\nhttp://other.example/c\n"
        #expect(
            StationList.parse(text, base: "http://host:8000/lists/radio.m3u?x=1").map(\.url) == [
                "http://host:8000/lists/a.mp3", "http://host:8000/root.mp3", "http://host:8000/lists/sub/b.mp3",
                "http://other.example/c",
            ])
        #expect(
            StationList.parse(text, base: "/music/lists").map(\.url) == [
                "/music/lists/a.mp3", "/root.mp3", "/music/lists/sub/b.mp3", "http://other.example/c",
            ])
        #expect(
            StationList.parse("[playlist]\nFile1=x.mp3\n", base: "https://h/p/l.pls").map(\.url) == [
                "https://h/p/x.mp3"
            ])
    }

    @Test("the number of entries is bounded; lines with control characters are junk")
    func bounded() {
        let many = (0..<10_000).map { "http://h/\($0)" }.joined(separator: "\n")
        let entries = StationList.parse(many, base: nil)
        #expect(entries.count == StationList.maxEntries)
        #expect(entries.last?.url == "http://h/\(StationList.maxEntries - 1)")
        #expect(StationList.parse("http://a/\u{1}b\nhttp://c/\n", base: nil).map(\.url) == ["http://c/"])
        #expect(StationList.parse("", base: nil).isEmpty)
        #expect(StationList.parse("\u{FEFF}", base: nil).isEmpty)
    }

    @Test("lists are told by name and by content type")
    func isList() {
        for name in ["a.m3u", "/x/Y.M3U8", "http://h/s.pls?sid=1", "radio.pls"] {
            #expect(StationList.isList(name: name), "\(name)")
        }
        for name in ["a.mp3", "http://h/stream", "http://h/x?list.m3u8x", "m3u"] {
            #expect(!StationList.isList(name: name), "\(name)")
        }
        for type in [
            "audio/x-mpegurl", "Audio/MPEGURL; charset=utf-8", "application/vnd.apple.mpegurl", "audio/x-scpls",
        ] {
            #expect(StationList.isList(contentType: type), "\(type)")
        }
        for type in ["audio/mpeg", "text/html", ""] {
            #expect(!StationList.isList(contentType: type), "\(type)")
        }
    }
}

@Suite("URLs and response heads")
struct HTTPPartsTests {
    @Test("addresses are taken apart")
    func urls() throws {
        let plain = try #require(StreamURL("http://radio.example/live?x=1#frag"))
        #expect(plain == StreamURL(secure: false, host: "radio.example", port: 80, target: "/live?x=1"))
        let secure = try #require(StreamURL("HTTPS://[::1]:8443"))
        #expect(secure == StreamURL(secure: true, host: "::1", port: 8443, target: "/"))
        #expect(secure.hostHeader == "[::1]:8443")
        #expect(StreamURL("http://h:99999/") == nil)
        #expect(StreamURL("ftp://h/") == nil)
        #expect(StreamURL("http:///x") == nil)
        #expect(StreamURL("http://user@h/") == nil)
        #expect(StreamURL("http://h/a b")?.target == "/a%20b")
        #expect(plain.resolving("/other")?.description == "http://radio.example/other")
        #expect(plain.resolving("next?y")?.description == "http://radio.example/next?y")
        #expect(plain.resolving("//cdn.example/s")?.description == "http://cdn.example/s")
        #expect(plain.resolving("https://x.example:444/s")?.description == "https://x.example:444/s")
    }

    @Test("heads: HTTP/1.x and ICY status lines, fields by lowercased name, a size bound")
    func heads() throws {
        let text = "ICY 200 OK\r\nicy-name: Radio Ä\r\nContent-Type: audio/mpeg\r\nicy-metaint:8192\r\n\r\nbody"
        let bytes = Array(text.utf8)
        let end = try #require(bytes.withUnsafeBytes { HTTPResponseHead.end(in: $0) })
        #expect(end == bytes.count - 4)
        let head = try bytes.withUnsafeBytes {
            try HTTPResponseHead.parse(UnsafeRawBufferPointer(rebasing: $0[0..<end]))
        }
        #expect(head.status == 200)
        #expect(head["icy-name"] == "Radio Ä")
        #expect(head["content-type"] == "audio/mpeg")
        #expect(head["icy-metaint"] == "8192")
        let notFound = try Array("HTTP/1.1 404 Not Found\n\n".utf8).withUnsafeBytes { try HTTPResponseHead.parse($0) }
        #expect(notFound.statusText == "404 Not Found")
        #expect(throws: HTTPResponseHead.ParseError.self) {
            try Array("<html>\r\n\r\n".utf8).withUnsafeBytes { try HTTPResponseHead.parse($0) }
        }
        #expect(Array("HTTP/1.1 200 OK\r\nA: b\r\n".utf8).withUnsafeBytes { HTTPResponseHead.end(in: $0) } == nil)
        // One field in Latin-1, another in UTF-8: each decoded by itself.
        let mixed = Array("ICY 200 OK\r\nicy-name: Caf".utf8) + [0xE9] + Array("\r\nicy-genre: Café\r\n\r\n".utf8)
        let mixedHead = try mixed.withUnsafeBytes { try HTTPResponseHead.parse($0) }
        #expect(mixedHead["icy-name"] == "Café")
        #expect(mixedHead["icy-genre"] == "Café")
    }
}

extension String {
    fileprivate func replacingCRLF() -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
    }
}
