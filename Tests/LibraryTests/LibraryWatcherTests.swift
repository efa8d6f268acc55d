import Foundation
import Synchronization
import Testing

@testable import Library

@Suite struct LibraryWatcherTests {
    /// Polls `condition` every 50 ms for up to `seconds`, sleeping as a task: a blocked thread of the
    /// test pool (two on two cores) would stall the real-time engine tests running beside these.
    func eventually(within seconds: Double = 10, _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try condition()
    }

    func library(in tree: String, watchLimit: Int? = nil, rescanInterval: Int64 = 60_000, notices: Notices)
        throws -> MusicLibrary
    {
        let library = try MusicLibrary(
            musicDirectory: tree + "/music", databasePath: tree + "/watched.db", rescanInterval: rescanInterval,
            watchLimit: watchLimit
        ) { event in
            if case .notice(let text) = event { notices.texts.withLock { $0.append(text) } }
        }
        return library
    }

    final class Notices: Sendable {
        let texts = Mutex<[String]>([])
    }

    @Test func newAndRemovedFilesReachTheLibraryWithoutAnUpdate() async throws {
        let tree = try ScannedTree()
        let notices = Notices()
        let library = try self.library(in: tree.root, notices: notices)
        defer { library.shutdown() }
        _ = try library.update("")
        #expect(await eventually { library.stats.songs == 4 })
        // A new album, copied in file by file: one update once things are quiet.
        let album = tree.music + "/New/Album"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for index in 1...3 {
            try FileManager.default.copyItem(
                atPath: ScannedTree.fixtures + "/one-second.mp3", toPath: tree.root + "/0\(index).mp3")
            try FileManager.default.moveItem(atPath: tree.root + "/0\(index).mp3", toPath: album + "/0\(index).mp3")
        }
        #expect(await eventually { library.stats.songs == 7 })
        try FileManager.default.removeItem(atPath: tree.music + "/A/B/y.mp3")
        #expect(await eventually { library.stats.songs == 6 })
        // The only thing said is the skipped empty file: nothing about watching.
        let said = notices.texts.withLock { $0 }
        #expect(said.count == 1 && said[0].contains("empty.mp3"), "\(said)")
    }

    @Test func aDirectoryWhoseNameIsNotUTF8IsWatchedToo() async throws {
        let tree = try ScannedTree()
        let notices = Notices()
        let library = try self.library(in: tree.root, notices: notices)
        defer { library.shutdown() }
        _ = try library.update("")
        #expect(await eventually { library.stats.songs == 4 })
        // "Été" in Latin-1, made with a song in it: the watch on the music directory sees it come.
        let ete = Array(tree.music.utf8) + [0x2F, 0xC9, 0x74, 0xE9]
        try RawNames.makeDirectory(ete)
        try RawNames.copy("one-second.mp3", to: ete + Array("/one.mp3".utf8))
        #expect(await eventually { library.stats.songs == 5 })
        // The new directory is watched by its real name: a file added inside it arrives, and leaves.
        try RawNames.copy("one-second.mp3", to: ete + Array("/caf".utf8) + [0xE9] + Array(".mp3".utf8))
        #expect(await eventually { library.stats.songs == 6 })
        #expect(try library.songURIs(under: "\\xC9t\\xE9") == ["\\xC9t\\xE9/caf\\xE9.mp3", "\\xC9t\\xE9/one.mp3"])
        try RawNames.remove(ete + Array("/one.mp3".utf8))
        #expect(await eventually { library.stats.songs == 5 })
        let said = notices.texts.withLock { $0 }
        #expect(said.count == 1 && said[0].contains("empty.mp3"), "\(said)")
    }

    @Test func theWatchLimitIsSaidOnceAndPeriodicRescansTakeOver() async throws {
        let tree = try ScannedTree()
        let notices = Notices()
        // Four directories (root, A, A/B, C) and room for two watches; rescans every half second.
        let library = try self.library(in: tree.root, watchLimit: 2, rescanInterval: 500, notices: notices)
        defer { library.shutdown() }
        _ = try library.update("")
        #expect(await eventually { library.stats.songs == 4 })
        #expect(await eventually { notices.texts.withLock { $0.contains { $0.contains("watch limit") } } })
        try FileManager.default.copyItem(
            atPath: ScannedTree.fixtures + "/one-second.mp3", toPath: tree.music + "/C/new.mp3")
        #expect(await eventually { library.stats.songs == 5 })
        let said = notices.texts.withLock { $0.filter { $0.contains("watch limit") } }
        #expect(said.count == 1)
        #expect(said.first?.contains("rescanned every 500 ms instead of watched") == true)
        // It says what to do: rescan now, or raise the limit.
        #expect(said.first?.contains("run `update` to rescan at once") == true)
        #expect(said.first?.contains("raise the limit (sysctl fs.inotify.max_user_watches)") == true)
    }

    @Test func damageFoundAfterOpeningIsMovedAsideAndRebuilt() async throws {
        let tree = try ScannedTree()
        let path = tree.root + "/watched.db"
        let first = try self.library(in: tree.root, notices: Notices())
        _ = try first.update("")
        #expect(await eventually { first.stats.songs == 4 })
        // Everything in the main file, then the pages of the tag table and its indexes overwritten: the
        // file still opens (its first pages are whole), and only a check of every page finds the damage.
        let pages = try await first.database.pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return try Int.fetchAll(
                db, sql: "SELECT rootpage FROM sqlite_master WHERE name IN ('tag', 'tag_by_value', 'tag_by_song')")
        }
        first.shutdown()
        #expect(pages.count == 3)
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        for page in pages {
            try file.seek(toOffset: UInt64((page - 1) * 4096))
            try file.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        }
        try file.close()

        let notices = Notices()
        let second = try self.library(in: tree.root, notices: notices)
        defer { second.shutdown() }
        #expect(
            await eventually {
                notices.texts.withLock { $0.contains { $0.contains("moved aside to \(path).broken-") } }
            })
        #expect(await eventually { second.stats.songs == 4 })
        #expect(second.stats.artists == first.stats.artists)
        #expect(try second.songURIs(under: "A") == ["A/x.mp3", "A/B/y.mp3"])
        let kept = try FileManager.default.contentsOfDirectory(atPath: tree.root).filter { $0.contains(".broken-") }
        #expect(!kept.isEmpty)
    }
}
