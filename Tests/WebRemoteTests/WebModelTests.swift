import Testing

@testable import WebRemote

@Suite("The web remote's JSON and the daemon's answers as the API shows them")
struct WebModelTests {
    @Test("JSON: nulls are written, strings escaped (no </script>, no raw control characters), numbers kept short")
    func serialization() {
        let value = JSON.object([
            ("a", .null), ("b", .string("x\"y\\z\n</script>\u{01}\u{2028}")), ("c", .number(32.611000000000004)),
            ("d", .number(3)), ("e", .number(.nan)), ("f", .array([.bool(true), .int(-4)])),
        ])
        #expect(
            value.serialized
                == #"{"a":null,"b":"x\"y\\z\n\u003c/script>\u0001\u2028","c":32.611,"d":3,"e":null,"f":[true,-4]}"#)
    }

    @Test("a song added by absolute path shows no path: no uri, no cover, its file name as the title")
    func localSong() {
        let song = WebModel.song([("file", "/home/someone/Music/secret/a song.mp3"), ("Id", "7"), ("Pos", "0")])
        let text = song.serialized
        #expect(!text.contains("/home"))
        #expect(text.contains(#""uri":null"#))
        #expect(text.contains(#""title":"a song.mp3""#))
        #expect(text.contains(#""cover":null"#))
        #expect(text.contains(#""id":7"#))
    }

    @Test("a library song: its tags, and the cover URL percent-encoded")
    func librarySong() {
        let song = WebModel.song([
            ("file", "Björk/Post/01 Army of Me.mp3"), ("Title", "Army of Me"), ("Artist", "Björk"),
            ("duration", "234.5"),
        ])
        let text = song.serialized
        #expect(text.contains(#""cover":"/api/cover?uri=Bj%C3%B6rk/Post/01%20Army%20of%20Me.mp3""#))
        #expect(text.contains(#""title":"Army of Me""#))
        #expect(text.contains(#""duration":234.5"#))
        #expect(text.contains(#""album":null"#))
    }

    @Test("errors lose their local paths, keeping the file's name")
    func errorsWithoutPaths() {
        #expect(
            WebModel.withoutLocalPaths("cannot open /srv/music/a/b.flac: No such file")
                == "cannot open b.flac: No such file")
        #expect(WebModel.withoutLocalPaths("\"/x/y.mp3\" is damaged") == "\"y.mp3\" is damaged")
        #expect(WebModel.withoutLocalPaths("no path here") == "no path here")
    }

    @Test("filter values and protocol arguments are quoted so that no value escapes them")
    func quoting() {
        #expect(WebModel.filterString(#"it's a \ test"#) == #"'it\'s a \\ test'"#)
        #expect(DaemonClient.quoted("a \"b\" \\c\nd") == #""a \"b\" \\c d""#)
    }

    @Test("listings split into blocks at each file, directory or playlist")
    func blocks() {
        let fields: [(key: String, value: String)] = [
            ("directory", "A"), ("Last-Modified", "x"), ("file", "A/1.mp3"), ("Title", "One"), ("file", "A/2.mp3"),
            ("playlist", "p"),
        ]
        let blocks = WebModel.blocks(fields)
        #expect(blocks.map(\.count) == [2, 2, 1, 1])
        #expect(WebModel.songs(fields).serialized.components(separatedBy: "\"uri\"").count == 3)
    }

    @Test("image types come from the bytes' signature; the entity tag changes with the bytes")
    func images() {
        #expect(WebModel.imageType([0x89, 0x50, 0x4E, 0x47, 0x0D]) == "image/png")
        #expect(WebModel.imageType([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(WebModel.imageType([1, 2, 3]) == "application/octet-stream")
        #expect(WebModel.entityTag([1, 2, 3]) != WebModel.entityTag([1, 2, 4]))
    }
}
