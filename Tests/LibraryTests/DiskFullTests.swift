import Foundation
import GRDB
import Synchronization
import Testing

@testable import Library

/// The disk holding the library file fills during a scan: the update fails with a message naming the
/// file and the full disk, nothing is corrupt or rebuilt, what was committed stays, and the next update
/// after space is freed completes.
///
/// Two ways to a full disk: SQLite's own page limit (`PRAGMA max_page_count`, the same SQLITE_FULL,
/// needing no privileges, so it runs everywhere), and a real small file system (a tmpfs, where SQLite
/// meets ENOSPC from the kernel), run where mounting is permitted.
@Suite(.serialized) struct DiskFullTests {
    /// Whether this process may mount a tmpfs (root in CI; not in a container without CAP_SYS_ADMIN).
    static let canMountTmpfs: Bool = {
        let directory = NSTemporaryDirectory() + "tmpfs-probe-" + UUID().uuidString
        guard mkdir(directory, 0o700) == 0 else { return false }
        defer { rmdir(directory) }
        guard mount("tmpfs", directory, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount(directory)
        return true
    }()

    /// What the library told, as it happened.
    final class Events: Sendable {
        let notices = Mutex<[String]>([])
        let finished = Mutex<[Int: UpdateReport]>([:])

        @discardableResult
        func waitForJob(_ id: Int) async throws -> UpdateReport {
            let deadline = Date(timeIntervalSinceNow: 60)
            while true {
                if let report = self.finished.withLock({ $0[id] }) { return report }
                guard Date() < deadline else { throw JobNeverEnded(id: id) }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    struct JobNeverEnded: Error {
        let id: Int
    }

    enum Space {
        /// `PRAGMA max_page_count` on the library's writing connection.
        case pageLimit
        /// A 16 MiB tmpfs holding the library file, nearly filled by another file.
        case tmpfs
    }

    @Test func aPageLimitFullDuringAScan() async throws {
        try await self.scanFillingTheDisk(.pageLimit)
    }

    @Test(.enabled(if: Self.canMountTmpfs, "mounting a tmpfs is not permitted here"))
    func aSmallFileSystemFullDuringAScan() async throws {
        try await self.scanFillingTheDisk(.tmpfs)
    }

    /// An update that committed its songs and then failed to recompute what derives from them (the
    /// `stats` figures, the listing order) leaves a note: the next update recomputes it, though it finds
    /// no file to read.
    @Test func aFailureAfterSongsWereCommittedLeavesNothingStale() throws {
        let tree = try ScannedTree()
        // The recomputation fails on the updating connection, as a full disk would make it fail.
        try tree.database.pool.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER refresh_fails BEFORE INSERT ON meta WHEN NEW.key = 'db_update'
                    BEGIN SELECT RAISE(ABORT, 'no room'); END
                    """)
        }
        #expect(throws: DatabaseError.self) { try tree.update() }
        #expect(try tree.database.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM song") } == 4)
        #expect(try tree.library.readStats().songs == 0)
        try tree.database.pool.writeWithoutTransaction { db in
            try db.execute(sql: "DROP TRIGGER temp.refresh_fails")
        }
        // Nothing to read, but the changes the failed update committed are announced now.
        let next = try tree.update()
        #expect(next.added + next.updated + next.removed == 0)
        #expect(next.unannounced && next.changed)
        #expect(try tree.library.readStats().songs == 4)
        #expect(try tree.library.readStats().artists == 3)
        #expect(
            try tree.database.pool.read { try Bool.fetchOne($0, sql: "SELECT 1 FROM meta WHERE key = 'derived_stale'") }
                == nil)
    }

    private func scanFillingTheDisk(_ space: Space) async throws {
        let tree = try ScannedTree()
        let directory = tree.root + "/small"
        #expect(mkdir(directory, 0o755) == 0)
        if space == .tmpfs {
            #expect(mount("tmpfs", directory, "tmpfs", 0, "size=16m") == 0)
        }
        let databasePath = directory + "/library.db"
        let filler = directory + "/filler"
        let events = Events()
        let library = try MusicLibrary(musicDirectory: tree.music, databasePath: databasePath, watches: false) {
            event in
            switch event {
            case .notice(let text): events.notices.withLock { $0.append(text) }
            case .updateFinished(let id, let report): events.finished.withLock { $0[id] = report }
            case .updateStarted: break
            }
        }
        defer {
            library.shutdown()
            try? library.database.pool.close()
            if space == .tmpfs { umount2(directory, Int32(MNT_DETACH)) }
        }
        try await events.waitForJob(try library.update(""))
        #expect(library.stats.songs == 4)

        // Little room left, then 600 more songs to scan.
        switch space {
        case .pageLimit:
            try await library.database.pool.writeWithoutTransaction { db in
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                try db.execute(sql: "PRAGMA max_page_count = \(pages + 16)")
            }
        case .tmpfs:
            var info = statvfs()
            #expect(statvfs(directory, &info) == 0)
            let free = Int(info.f_bavail) * Int(info.f_frsize)
            #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: free - 64 * 1024)))
        }
        for album in 0..<6 {
            let albumDirectory = tree.music + "/Many/Album \(album)"
            try FileManager.default.createDirectory(atPath: albumDirectory, withIntermediateDirectories: true)
            for track in 0..<100 {
                #expect(link(ScannedTree.fixtures + "/tagged-id3v24.mp3", albumDirectory + "/\(track).mp3") == 0)
            }
        }
        let failed = try await events.waitForJob(try library.update(""))
        // Songs of batches before the failure may be in: clients are told the database changed.
        #expect(failed.changed)

        // A clear error, naming the file and the full disk; no rebuild.
        let said = events.notices.withLock { $0 }
        let failure = said.first { $0.hasPrefix("library update of \"\" failed") }
        #expect(
            failure == "library update of \"\" failed: the disk holding \(databasePath) is full "
                + "(SQLite error 13: database or disk is full); what was committed is kept, and the next update "
                + "goes on from there",
            "\(said)")
        #expect(!said.contains { $0.contains("moved aside") }, "\(said)")
        #expect(try !FileManager.default.contentsOfDirectory(atPath: directory).contains { $0.contains(".broken-") })

        // Not corrupt: a fresh connection opens the file, every page checks, the songs from before are in.
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: databasePath, configuration: configuration)
        let (check, uris) = try await reader.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA quick_check"),
                try String.fetchAll(db, sql: "SELECT uri FROM song")
            )
        }
        try reader.close()
        #expect(check == "ok")
        #expect(Set(["root.mp3", "A/x.mp3", "A/B/y.mp3", "C/z.mp3"]).isSubset(of: Set(uris)))
        #expect(uris.count < 604)
        #expect(try library.songURIs(under: "A") == ["A/x.mp3", "A/B/y.mp3"])

        // Room again: the next update finishes the job.
        switch space {
        case .pageLimit:
            try await library.database.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA max_page_count = 1073741823")
            }
        case .tmpfs:
            #expect(unlink(filler) == 0)
        }
        let before = events.notices.withLock { $0.count }
        try await events.waitForJob(try library.update(""))
        let after = events.notices.withLock { Array($0[before...]) }
        #expect(!after.contains { $0.contains("failed") }, "\(after)")
        #expect(library.stats.songs == 604)
        #expect(try library.songURIs(under: "Many")?.count == 600)
        #expect(try await library.database.pool.read { try String.fetchOne($0, sql: "PRAGMA quick_check") } == "ok")
    }
}
