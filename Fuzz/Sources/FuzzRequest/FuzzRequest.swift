// Fuzzes what a client's bytes go through before any command runs: LineFramer cuts them into lines,
// `tokenize` splits each line, CommandListParser follows command lists over the lines. Besides the
// sanitizers' crashes, hangs and leaks, it checks properties that must hold for every input:
// framing does not depend on how the bytes are split into reads, and a tokenized request written back
// with `Request.line` tokenizes to the same request.

import ControlProtocol
import FuzzSupport

/// libFuzzer's entry point: one input, a client's byte stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    // The default limit, as the daemon runs, and a small one so that short inputs reach the paths for
    // lines that are too long.
    for limit in [LineFramer.defaultMaximumLineLength, 16] {
        let frames = FramedStream(bytes, maximumLineLength: limit)
        var parsers = [
            CommandListParser(),
            // Tiny lists, so that the overflow paths are reached too.
            CommandListParser(maximumCommands: 3, maximumBytes: 64, maximumArguments: 4),
        ]
        for frame in frames.frames {
            guard case .line(let line) = frame else {
                require(frames.framer.ack(for: frame) != nil, "a frame that is not a line has no ACK")
                continue
            }
            checkTokenizing(line)
            for index in parsers.indices {
                checkAction(parsers[index].consume(line), parser: parsers[index])
            }
        }
    }
    return 0
}

/// The frames of one byte stream, read at once and read in small pieces; the two must agree.
struct FramedStream {
    /// The framer that read the whole stream in one go.
    var framer: LineFramer
    /// Its frames.
    var frames: [LineFramer.Frame]

    init(_ bytes: UnsafeRawBufferPointer, maximumLineLength: Int) {
        self.framer = LineFramer(maximumLineLength: maximumLineLength)
        self.frames = self.framer.feed(bytes)
        require(self.framer.bufferedByteCount <= maximumLineLength, "the framer holds more than its limit")

        // A socket hands bytes over in reads of any size; the piece size comes from the input so that
        // the fuzzer varies it.
        let pieceSize = 1 + bytes.count % 7
        var pieces = LineFramer(maximumLineLength: maximumLineLength)
        var pieceFrames: [LineFramer.Frame] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + pieceSize, bytes.count)
            pieces.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), into: &pieceFrames)
            require(pieces.bufferedByteCount <= maximumLineLength, "the framer holds more than its limit")
            start = end
        }
        require(pieceFrames == self.frames, "the frames depend on how the bytes were split into reads")
        require(pieces.bufferedByteCount == self.framer.bufferedByteCount, "the held bytes differ")
    }
}

/// Tokenizes `line` and checks that what came out survives being sent again.
func checkTokenizing(_ line: String) {
    let request: Request
    do {
        request = try tokenize(line)
    } catch {
        // Every refusal is either a silent hang-up or an ACK the client can read as one line.
        if let reply = error.reply {
            require(reply.line.utf8.filter { $0 == 0x0A }.count == 1, "an ACK must be one line")
        } else {
            require(error.endsConnection, "a refusal without a reply must end the connection")
        }
        return
    }
    require(!request.name.isEmpty, "a request without a name")
    require(request.arguments.count <= Request.maximumArguments, "more arguments than allowed")
    // `Request.line` quotes every argument; a client sending it must get the same request. The line
    // came out of the framer, so no argument holds the newline that quoting turns into a space.
    let resent = String(request.line.dropLast())
    do {
        let again = try tokenize(resent)
        require(again == request, "\(line.debugDescription) does not survive quoting: \(resent.debugDescription)")
    } catch {
        fatalError("\(line.debugDescription) quoted as \(resent.debugDescription) is refused: \(error)")
    }
}

/// Checks what a command list parser said to do after a line.
func checkAction(_ action: CommandListParser.Action, parser: CommandListParser) {
    switch action {
    case .collect:
        require(parser.isCollecting, "collecting a line outside a list")
    case .execute(let request):
        require(!parser.isCollecting, "running a command while a list is open")
        let listCommands = ["command_list_begin", "command_list_ok_begin", "command_list_end"]
        require(!listCommands.contains(request.name), "a list command ran as a command")
    case .executeList(let entries, _):
        require(!parser.isCollecting, "a list ran but is still open")
        require(entries.count <= parser.maximumCommands, "a list ran with more commands than allowed")
        for (index, entry) in entries.enumerated() {
            if case .failure(let error) = entry, let reply = error.reply {
                require(reply.listIndex == index, "a failed entry carries another entry's index")
            }
        }
    case .reject(let error):
        require(!parser.isCollecting, "a refused line left a list open")
        require(error.reply != nil || error.endsConnection, "a silent refusal must end the connection")
    }
}
