import Testing

@testable import PlayerDaemon

/// Songs the library does not hold (queued by absolute path) get their tags and length from the files,
/// read as the library reads its own.
@Suite("SongInfoCache: songs outside the library")
struct SongInfoCacheTests {
    @Test("tags (ID3v2, ID3v1 filling in) and the length libmpg123 decodes")
    func readsTheFile() {
        let cache = SongInfoCache()
        let v24 = cache.info(for: Paths.fixture("tagged-id3v24.mp3"))
        #expect(v24.tags.title == "Ζωή σε 4/4 — Ελληνικά")
        #expect(v24.tags.artist == "Мумий Тролль")
        #expect(v24.duration == 2.0)
        let v1 = cache.info(for: Paths.fixture("tagged-id3v1.mp3"))
        #expect(v1.tags.album == "Ágætis byrjun")
        #expect(v1.duration == 2.0)
        // No Info frame: 14 whole MPEG frames of 576 samples at 22050 Hz.
        let short = cache.info(for: Paths.fixture("short-22k-no-info.mp3"))
        #expect(short.tags.title == "Short")
        #expect(short.duration == 8064.0 / 22050)
    }

    @Test("a file that cannot be read has neither tags nor length, and one reader serves on after it")
    func unreadable() {
        let cache = SongInfoCache()
        for name in ["no-such-file.mp3", "random.mp3", "empty.mp3"] {
            #expect(cache.info(for: Paths.fixture(name)) == SongInfo())
        }
        #expect(cache.info(for: Paths.fixture("vbr-no-xing.mp3")).duration == 133_632.0 / 44100)
    }

    @Test("the library's answer wins over the file")
    func libraryFirst() {
        let cache = SongInfoCache()
        cache.setSource { path in path.hasSuffix("one-second.mp3") ? SongInfo(duration: 9) : nil }
        #expect(cache.info(for: Paths.fixture("one-second.mp3")).duration == 9)
        #expect(cache.info(for: Paths.fixture("stereo-44k-cbr.mp3")).duration == 3)
    }
}
