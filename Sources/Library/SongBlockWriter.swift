import ControlProtocol
import GRDB
import GRDBSQLite
import MusicTags

/// Writes song blocks straight from SQLite's result rows into the answer: `listallinfo` of 100,000
/// songs reads 100,000 rows, and going through GRDB's `Row` for each cost more than the rest together.
struct SongBlockWriter {
    /// The columns a song statement must select, in this order.
    static let columns = "s.uri, s.mtime, s.duration, s.sample_rate, s.channels, s.block, s.bits"

    let tagTypes: Set<TagName>
    /// Whether blocks carry `Format`: MPD 0.23 leaves it out of a sorted `find`/`search` (it sorts
    /// copies of the songs that hold no audio format).
    var showsFormat = true
    private let allTags: Bool
    /// Songs of one directory mostly share a modification second: its text is kept.
    private var lastTime: (seconds: Int64, text: String)?

    init(tagTypes: Set<TagName>) {
        self.tagTypes = tagTypes
        self.allTags = tagTypes.isSuperset(of: TagName.announced)
    }

    /// Runs `statement` with `arguments` and writes one block per row; `flush` is offered the answer
    /// whenever it passes a chunk. Returns false when `flush` said the client has gone.
    mutating func write(
        _ statement: Statement, arguments: StatementArguments, to response: inout ResponseWriter,
        flush: ResponseFlush
    ) throws -> Bool {
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            guard code == SQLITE_ROW else {
                guard code == SQLITE_DONE else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code))
                }
                return true
            }
            self.writeRow(handle, to: &response)
            if !MusicLibrary.goesOn(&response, flush) {
                return false
            }
        }
    }

    private static func text(_ handle: OpaquePointer, _ column: Int32) -> UnsafeRawBufferPointer {
        guard let pointer = sqlite3_column_text(handle, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }

    private mutating func writeRow(_ handle: OpaquePointer, to response: inout ResponseWriter) {
        response.appendRaw("file: ")
        response.appendRaw(bytes: Self.text(handle, 0))
        response.appendRaw("\n")
        let seconds = sqlite3_column_int64(handle, 1)
        if self.lastTime?.seconds != seconds {
            self.lastTime = (seconds, MusicLibrary.timestamp(seconds))
        }
        response.field("Last-Modified", self.lastTime!.text)
        if self.showsFormat, sqlite3_column_type(handle, 3) != SQLITE_NULL {
            response.field(
                "Format",
                SongRecord.format(
                    sampleRate: sqlite3_column_int64(handle, 3), bits: sqlite3_column_int64(handle, 6),
                    channels: sqlite3_column_int64(handle, 4)))
        }
        let block = Self.text(handle, 5)
        if self.allTags {
            response.appendRaw(bytes: block)
        } else {
            for line in String(decoding: block, as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":"), let tag = TagName(name: String(line[..<colon])),
                    self.tagTypes.contains(tag)
                else { continue }
                response.appendRaw(line + "\n")
            }
        }
        if sqlite3_column_type(handle, 2) != SQLITE_NULL {
            let duration = sqlite3_column_double(handle, 2)
            response.field("Time", ResponseWriter.wholeSeconds(duration))
            response.field("duration", seconds: duration)
        }
    }
}
