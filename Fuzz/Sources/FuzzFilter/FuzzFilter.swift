// Fuzzes the song-filter grammar: `SongFilter.parse(expression:)`, `LibraryQuery.parse` over legacy
// argument lists, and `ListRequest.parse`; what parses is evaluated on a fixed song. Besides the
// sanitizers' crashes, hangs and leaks, it checks that refusals are one-line ACKs of code 2, that
// accepted trees respect the nesting and value limits, that an expression reads the same alone and
// inside a query, and that `!` inverts the evaluator's verdict.

import ControlProtocol
import FuzzSupport
import MusicTags

/// libFuzzer's entry point: a mode byte, then an expression or NUL-separated arguments.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else {
        return 0
    }
    let mode = data[0]
    let body = UnsafeBufferPointer(start: data + 1, count: size - 1)
    // Arguments come out of one request line: valid UTF-8 (the framer refuses the rest; repaired here
    // so that the mutations still count) and without newlines.
    guard !body.contains(0x0A) else {
        return 0
    }
    let ignoringCase = mode & 2 != 0
    if mode & 1 == 0 {
        checkExpression(String(decoding: body, as: UTF8.self), ignoringCase: ignoringCase)
    } else {
        let arguments = body.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        checkArguments(arguments, ignoringCase: ignoringCase)
    }
    return 0
}

func checkExpression(_ text: String, ignoringCase: Bool) {
    let result = Result { () throws(Ack) in try SongFilter.parse(expression: text, ignoringCase: ignoringCase) }
    checkRefusal(result)
    // As the one argument of a query it must read the same (a query only adds the AND of several).
    if text.utf8.first == UInt8(ascii: "(") {
        let inQuery = Result { () throws(Ack) in
            try LibraryQuery.parse([text], ignoringCase: ignoringCase, allowing: []).filter
        }
        require(inQuery.success.flatMap { $0 } == result.success, "an expression reads differently inside a query")
        require(inQuery.failure == result.failure, "an expression is refused differently inside a query")
    }
    if case .success(let filter) = result {
        checkTree(filter, depth: 1, fromExpression: true)
        checkEvaluation(filter)
    }
}

func checkArguments(_ arguments: [String], ignoringCase: Bool) {
    let all: LibraryQuery.Clauses = [.sort, .window, .group]
    for clauses in [all, [.sort, .window], []] as [LibraryQuery.Clauses] {
        let result = Result { () throws(Ack) in
            try LibraryQuery.parse(arguments[...], ignoringCase: ignoringCase, allowing: clauses)
        }
        checkRefusal(result)
        guard case .success(let query) = result else {
            continue
        }
        require(query.filter != nil || clauses.contains(.group), "no filter, yet the command needs one")
        require(clauses.contains(.group) || query.groups.isEmpty, "a group where none is allowed")
        require(clauses.contains(.sort) || query.sort == nil, "a sort where none is allowed")
        if let window = query.window {
            require(window.start >= 0 && (window.end ?? window.start) >= window.start, "a malformed window")
        }
        if let filter = query.filter {
            checkTree(filter, depth: 1, fromExpression: false)
            checkEvaluation(filter)
        }
    }
    let list = Result { () throws(Ack) in try ListRequest.parse(arguments) }
    checkRefusal(list)
    if case .success(let request) = list {
        if case .tag(let tag) = request.subject {
            require(!request.query.groups.contains(tag), "a list grouped by its own tag")
        }
        if let filter = request.query.filter {
            checkEvaluation(filter)
        }
    }
}

/// A refusal is ACK 2, unattributed, one line.
func checkRefusal<T>(_ result: Result<T, Ack>) {
    guard case .failure(let ack) = result else {
        return
    }
    require(ack.code == .argument, "a filter refusal with code \(ack.code)")
    require(!ack.message.isEmpty, "an ACK without a message")
    require(ack.command.isEmpty && ack.listIndex == 0, "the parser attributed its ACK")
    require(ack.line.utf8.filter { $0 == 0x0A }.count == 1, "an ACK must be one line")
}

/// Trees stay within the limits, and ANDs are flat with at least two parts.
func checkTree(_ filter: SongFilter, depth: Int, fromExpression: Bool) {
    require(depth <= SongFilter.maximumNestingDepth + 1, "a tree deeper than the nesting limit")
    switch filter {
    case .compare(_, _, let value, _):
        require(
            !fromExpression || value.utf8.count <= SongFilter.maximumQuotedValueBytes, "a quoted value past the limit")
    case .audioFormat(let pattern, let exact):
        require(
            !exact || (pattern.sampleRate != nil && pattern.bits != nil && pattern.channels != nil),
            "an exact audio format with a mask")
    case .not(let inner):
        checkTree(inner, depth: depth + 1, fromExpression: fromExpression)
    case .and(let parts):
        require(parts.count >= 2, "an AND of fewer than two parts")
        for part in parts {
            if case .and = part {
                fatalError("a nested AND was not flattened")
            }
            checkTree(part, depth: depth + 1, fromExpression: fromExpression)
        }
    case .base, .modifiedSince, .addedSince:
        break
    }
}

/// Evaluates on the fixed song, and checks that `!` inverts and that a prepared matcher agrees.
func checkEvaluation(_ filter: SongFilter) {
    let fold: (String) -> String = { $0.lowercased() }
    let verdict = filter.matches(FixedSong.shared, fold: fold)
    require(SongFilter.not(filter).matches(FixedSong.shared, fold: fold) == !verdict, "! does not invert")
    require(SongMatcher(filter, fold: fold).matches(FixedSong.shared) == verdict, "the matcher disagrees")
}

/// A song with multi-valued and missing tags, fallbacks to follow, and non-ASCII text.
struct FixedSong: FilterableSong {
    static let shared = FixedSong()

    let tags: [TagName: [String]] = [
        .artist: ["Artist", "Ärtïst Ωmega"], .title: ["Love Song (live)"], .album: ["L"], .date: ["2001"],
        .genre: ["Pop", "Rock", ""], .composer: ["C"], .track: ["3"],
    ]
    let uri = "Dir/Sub Dir/one.mp3"
    let lastModified: Int64 = 1_700_000_000
    let added: Int64 = 1_700_000_100
    let audioFormat: AudioFormatPattern? = AudioFormatPattern(sampleRate: 44100, bits: 16, channels: 2)

    func values(of tag: TagName) -> [String] { self.tags[tag] ?? [] }
}

extension Result {
    var success: Success? {
        if case .success(let value) = self { value } else { nil }
    }

    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
