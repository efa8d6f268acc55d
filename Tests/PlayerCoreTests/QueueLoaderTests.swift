import Foundation
import PlayerCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A directory tree in the temporary directory, removed when the test is done.
private final class TemporaryTree {
    let root: String

    init() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queueloader-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // The loader resolves `..` by name, so compare against the path without symlinks in it.
        self.root = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    deinit {
        // Locked directories must be opened again before they can be removed.
        if let walker = FileManager.default.enumerator(atPath: self.root) {
            chmod(self.root, 0o755)
            while let relative = walker.nextObject() as? String {
                chmod(self.root + "/" + relative, 0o755)
            }
        }
        try? FileManager.default.removeItem(atPath: self.root)
    }

    func path(_ relative: String) -> String {
        self.root + "/" + relative
    }

    /// Creates a file (and its directories) holding `bytes`.
    @discardableResult
    func file(_ relative: String, _ bytes: [UInt8] = []) throws -> String {
        let path = self.path(relative)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    @discardableResult
    func file(_ relative: String, text: String) throws -> String {
        try self.file(relative, Array(text.utf8))
    }

    func directory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: self.path(relative), withIntermediateDirectories: true)
    }

    func link(_ relative: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: self.path(relative), withDestinationPath: destination)
    }
}

private let isRoot = getuid() == 0

@Suite("Queue loader")
struct QueueLoaderTests {
    @Test func aDirectoryGivesItsMP3sDepthFirstInByteOrder() throws {
        let tree = try TemporaryTree()
        for name in [
            "b.mp3", "a.mp3", "B.MP3", "cover.jpg", "notes.txt", ".hidden.mp3", ".git/x.mp3", "sub/c.mp3",
            "sub/deeper/d.mp3", "sub/deeper/readme.md", "sub-two/e.mp3", "sub.mp3", "zz.MP3",
        ] {
            try tree.file(name)
        }
        try tree.directory("empty")

        let result = try QueueLoader.expand(tree.root)

        // Per directory by bytes: "B" < "a", and "sub" < "sub-two" < "sub.mp3".
        #expect(
            result.paths
                == [
                    "B.MP3", "a.mp3", "b.mp3", "sub/c.mp3", "sub/deeper/d.mp3", "sub-two/e.mp3", "sub.mp3", "zz.MP3",
                ].map(tree.path))
        #expect(result.skipped.isEmpty)
    }

    @Test func namesThatAreNotUTF8ComeBackEscapedAndCanBeExpandedAgain() throws {
        let tree = try TemporaryTree()
        // "Été/café.mp3" in Latin-1, and a genuine name with a backslash that reads as an escape.
        let ete = Array(tree.root.utf8) + [0x2F, 0xC9, 0x74, 0xE9]
        #expect(mkdir(ete.map { CChar(bitPattern: $0) } + [0], 0o755) == 0)
        let cafe = ete + Array("/caf".utf8) + [0xE9] + Array(".mp3".utf8)
        let descriptor = open(cafe.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        close(descriptor)
        try tree.file("a\\x41.mp3")

        let result = try QueueLoader.expand(tree.root)
        #expect(result.paths == [tree.path("\\xC9t\\xE9/caf\\xE9.mp3"), tree.path("a\\x5Cx41.mp3")])
        #expect(result.skipped.isEmpty)
        // What the walk gave is a path the loader (and the decoder) can open again.
        for path in result.paths {
            #expect(try QueueLoader.expand(path).paths == [path])
        }
        #expect(try QueueLoader.expand(tree.path("\\xC9t\\xE9")).paths == [result.paths[0]])
    }

    @Test func aRegularFileIsItselfWhateverItsExtension() throws {
        let tree = try TemporaryTree()
        let path = try tree.file("notes.txt")
        #expect(try QueueLoader.expand(path) == QueueLoader.Result(paths: [path]))
    }

    @Test func relativePathsAreResolvedAndNormalized() throws {
        let tree = try TemporaryTree()
        let path = try tree.file("music/a.mp3")
        try tree.directory("other")
        #expect(try QueueLoader.expand("music/a.mp3", relativeTo: tree.root).paths == [path])
        #expect(try QueueLoader.expand("./other/../music//a.mp3", relativeTo: tree.root).paths == [path])
        #expect(try QueueLoader.expand(tree.root + "/other/./../music/a.mp3").paths == [path])
    }

    @Test func emptyDirectoriesAndPlaylistsAreEmptyNotErrors() throws {
        let tree = try TemporaryTree()
        try tree.directory("empty")
        try tree.file("only-comments.m3u", text: "#EXTM3U\n\n# nothing here\n")
        try tree.file("empty.m3u8")
        #expect(try QueueLoader.expand(tree.path("empty")) == QueueLoader.Result())
        #expect(try QueueLoader.expand(tree.path("only-comments.m3u")) == QueueLoader.Result())
        #expect(try QueueLoader.expand(tree.path("empty.m3u8")) == QueueLoader.Result())
    }

    @Test func aMissingPathIsAnError() throws {
        let tree = try TemporaryTree()
        let missing = tree.path("nope.mp3")
        let error = #expect(throws: QueueLoaderError.self) { try QueueLoader.expand(missing) }
        #expect(error == QueueLoaderError(path: missing, reason: .fileNotFound))
        #expect(error?.description == "\(missing): file not found")
    }

    @Test func aPlaylistGivesItsEntries() throws {
        let tree = try TemporaryTree()
        for name in [
            "list/local.mp3", "list/spaced.mp3", "list/notes.txt", "list/subdir/1.mp3", "list/subdir/2.mp3",
            "list/subdir/skip.txt", "other/abs.mp3", "other/with space.mp3", "other/x.mp3", "other/rel.mp3",
        ] {
            try tree.file(name)
        }
        let lines = [
            "#EXTM3U",
            "#EXTINF:123,Artist - Title",
            "local.mp3",
            "",
            "  spaced.mp3  ",
            tree.path("other/abs.mp3"),
            "file://" + tree.path("other/with%20space.mp3"),
            "file://localhost" + tree.path("other/x.mp3"),
            "../other/rel.mp3",
            "missing.mp3",
            "http://radio.example/stream",
            "notes.txt",
            "subdir",
            "nested.m3u8",
        ]
        let playlist = try tree.file("list/mix.m3u", [0xEF, 0xBB, 0xBF] + Array(lines.joined(separator: "\r\n").utf8))
        try tree.file("list/nested.m3u8", text: "# a playlist naming its parent\nlocal.mp3\nmix.m3u\n")

        let result = try QueueLoader.expand(playlist)

        #expect(
            result.paths
                == [
                    "list/local.mp3", "list/spaced.mp3", "other/abs.mp3", "other/with space.mp3", "other/x.mp3",
                    "other/rel.mp3", "list/notes.txt", "list/subdir/1.mp3", "list/subdir/2.mp3", "list/local.mp3",
                ].map(tree.path))
        #expect(
            result.skipped == [
                QueueLoader.Skipped(path: tree.path("list/missing.mp3"), reason: .fileNotFound),
                QueueLoader.Skipped(path: "http://radio.example/stream", reason: .unsupportedURL),
                QueueLoader.Skipped(path: playlist, reason: .playlistLoop),
            ])
        #expect(result.skipped[0].description == tree.path("list/missing.mp3") + ": file not found")
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func playlistLineEndings(separator: String) throws {
        let tree = try TemporaryTree()
        let first = try tree.file("1.mp3")
        let second = try tree.file("2.mp3")
        let playlist = try tree.file(
            "list.m3u", text: "#EXTM3U" + separator + "1.mp3" + separator + "2.mp3" + separator)
        #expect(try QueueLoader.expand(playlist).paths == [first, second])
    }

    @Test func aLatin1PlaylistStillLoads() throws {
        let tree = try TemporaryTree()
        let song = try tree.file("café.mp3")
        let playlist = try tree.file("old.m3u", Array("caf".utf8) + [0xE9] + Array(".mp3\n".utf8))
        #expect(try QueueLoader.expand(playlist).paths == [song])
    }

    @Test func symlinksAreFollowedLoopsReportedAndNoDirectoryEnteredTwice() throws {
        let tree = try TemporaryTree()
        try tree.file("music/a.mp3")
        try tree.file("music/dir/b.mp3")
        try tree.link("music/dir/back", to: "..")
        try tree.link("music/alias", to: "dir")
        try tree.link("music/link.mp3", to: "a.mp3")
        try tree.link("music/dangling.mp3", to: "missing.mp3")
        try tree.link("music/self", to: "self")

        let result = try QueueLoader.expand(tree.path("music"))

        // `alias` comes first in byte order: `dir` is the same directory, so it is not walked again.
        #expect(result.paths == ["music/a.mp3", "music/alias/b.mp3", "music/link.mp3"].map(tree.path))
        #expect(
            result.skipped == [
                QueueLoader.Skipped(path: tree.path("music/alias/back"), reason: .symlinkLoop),
                QueueLoader.Skipped(path: tree.path("music/dangling.mp3"), reason: .fileNotFound),
                QueueLoader.Skipped(path: tree.path("music/dir"), reason: .alreadyVisited),
                QueueLoader.Skipped(path: tree.path("music/self"), reason: .symlinkLoop),
            ])
    }

    @Test func twoPathsToOneDirectoryAndOnePlaylistTwiceAreExpandedOnce() throws {
        let tree = try TemporaryTree()
        try tree.file("music/album/a.mp3")
        try tree.link("music/one", to: "album")
        try tree.link("music/two", to: "album")
        try tree.file("lists/inner.m3u", text: "../music/album/a.mp3\n")
        let outer = try tree.file("lists/outer.m3u", text: "inner.m3u\ninner.m3u\n")

        let walked = try QueueLoader.expand(tree.path("music"))
        #expect(walked.paths == [tree.path("music/album/a.mp3")])
        #expect(
            walked.skipped == [
                QueueLoader.Skipped(path: tree.path("music/one"), reason: .alreadyVisited),
                QueueLoader.Skipped(path: tree.path("music/two"), reason: .alreadyVisited),
            ])
        let listed = try QueueLoader.expand(outer)
        #expect(listed.paths == [tree.path("music/album/a.mp3")])
        #expect(listed.skipped == [QueueLoader.Skipped(path: tree.path("lists/inner.m3u"), reason: .alreadyVisited)])
    }

    @Test func kernelFileSystemsAreNotEntered() throws {
        let tree = try TemporaryTree()
        let song = try tree.file("music/a.mp3")
        try tree.link("music/proc", to: "/proc")
        try tree.link("music/sys", to: "/sys")
        try tree.link("music/self", to: "/proc/self/fd")

        let result = try QueueLoader.expand(tree.path("music"))
        #expect(result.paths == [song])
        #expect(
            result.skipped == [
                QueueLoader.Skipped(path: tree.path("music/proc"), reason: .kernelFileSystem("proc")),
                QueueLoader.Skipped(path: tree.path("music/self"), reason: .kernelFileSystem("proc")),
                QueueLoader.Skipped(path: tree.path("music/sys"), reason: .kernelFileSystem("sysfs")),
            ])
        #expect(throws: QueueLoaderError(path: "/proc/self", reason: .kernelFileSystem("proc"))) {
            try QueueLoader.expand("/proc/self")
        }
        #expect(
            QueueLoaderError(path: "/sys", reason: .kernelFileSystem("sysfs")).description
                == "/sys: a kernel file system (sysfs), which holds no music")
    }

    @Test func aWalkStopsAtTheSongLimitNamingIt() throws {
        let tree = try TemporaryTree()
        for name in ["a", "b", "c", "d"] {
            try tree.file("music/\(name)/song.mp3")
        }
        let limit = QueueLoader.Limits(maximumSongs: 3)
        #expect(throws: QueueLoaderError(path: tree.path("music"), reason: .tooManySongs(limit: 3))) {
            try QueueLoader.expand(tree.path("music"), limits: limit)
        }
        #expect(
            QueueLoaderError(path: "/m", reason: .tooManySongs(limit: 3)).description
                == "/m: more than 3 songs, the queue's limit")
        #expect(
            try QueueLoader.expand(tree.path("music"), limits: QueueLoader.Limits(maximumSongs: 4)).paths.count == 4)
    }

    @Test func aPlaylistLargerThanAnyRealOneIsRefused() throws {
        let tree = try TemporaryTree()
        let path = try tree.file("huge.m3u")
        #expect(truncate(path, off_t(QueueLoader.maximumPlaylistBytes + 1)) == 0)
        #expect(throws: QueueLoaderError(path: path, reason: .playlistTooLarge)) { try QueueLoader.expand(path) }
    }

    @Test func aCancelledWalkEndsAndSaysSo() throws {
        let tree = try TemporaryTree()
        try tree.file("music/a.mp3")
        let cancellation = WalkCancellation()
        cancellation.cancel()
        #expect(throws: QueueLoaderError(path: tree.path("music"), reason: .cancelled)) {
            try QueueLoader.expand(tree.path("music"), cancellation: cancellation)
        }
    }

    @Test func skippedEntriesAreCountedPastTheirLimit() throws {
        let tree = try TemporaryTree()
        try tree.directory("music")
        for index in 0..<5 {
            try tree.link("music/missing\(index).mp3", to: "nowhere")
        }
        let result = try QueueLoader.expand(tree.path("music"), limits: QueueLoader.Limits(maximumSkipped: 2))
        #expect(result.skipped.count == 2)
        #expect(result.moreSkipped == 3)
    }

    @Test func anUnreadableDirectoryBelowIsSkippedAndOnTopIsAnError() throws {
        let tree = try TemporaryTree()
        let open = try tree.file("music/a.mp3")
        let hidden = try tree.file("music/locked/b.mp3")
        let locked = tree.path("music/locked")
        #expect(chmod(locked, 0) == 0)

        let result = try QueueLoader.expand(tree.path("music"))
        let direct = Result { () throws(QueueLoaderError) in try QueueLoader.expand(locked) }

        if isRoot {
            // Root reads anything, as MPD's own permission check grants it.
            #expect(result.paths == [open, hidden])
            #expect(try direct.get().paths == [hidden])
        } else {
            #expect(result.paths == [open])
            #expect(result.skipped == [QueueLoader.Skipped(path: locked, reason: .permissionDenied)])
            #expect(throws: QueueLoaderError(path: locked, reason: .permissionDenied)) { try direct.get() }
            #expect(
                QueueLoaderError(path: locked, reason: .permissionDenied).description == "\(locked): permission denied")
        }
    }

    @Test func anUnreadableFileOrPlaylistIsAnError() throws {
        let tree = try TemporaryTree()
        let song = try tree.file("song.mp3")
        let playlist = try tree.file("list.m3u", text: "song.mp3\n")
        #expect(chmod(song, 0) == 0)
        #expect(chmod(playlist, 0) == 0)

        for path in [song, playlist] {
            if isRoot {
                #expect(try QueueLoader.expand(path).paths == [song])
            } else {
                #expect(throws: QueueLoaderError(path: path, reason: .permissionDenied)) {
                    try QueueLoader.expand(path)
                }
            }
        }
    }

    @Test func aFIFOIsNotPlayable() throws {
        let tree = try TemporaryTree()
        let fifo = tree.path("pipe.mp3")
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(throws: QueueLoaderError(path: fifo, reason: .notRegularFile)) { try QueueLoader.expand(fifo) }
        #expect(
            try QueueLoader.expand(tree.root).skipped == [QueueLoader.Skipped(path: fifo, reason: .notRegularFile)])
    }
}
