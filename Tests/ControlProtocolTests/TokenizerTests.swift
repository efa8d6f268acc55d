import ControlProtocol
import Testing

/// Tokenizes `line`, or returns the error it throws.
func tokenizeResult(_ line: String) -> Result<Request, RequestError> {
    Result { () throws(RequestError) -> Request in try tokenize(line) }
}

@Suite("Tokenizing request lines as MPD does")
struct TokenizerTests {
    @Test(
        "splits a line into a name and arguments",
        arguments: [
            ("status", "status", []),
            ("play 3", "play", ["3"]),
            ("add \"my song.mp3\"", "add", ["my song.mp3"]),
            ("add \"\"", "add", [""]),
            ("find \"\" \"\"", "find", ["", ""]),
            ("find artist \"Sigur R\u{f3}s\"", "find", ["artist", "Sigur R\u{f3}s"]),
            ("add \u{97f3}\u{697d}/\u{66f2}.mp3", "add", ["\u{97f3}\u{697d}/\u{66f2}.mp3"]),
            ("add \"caf\u{e9} \u{1f3b5}\"", "add", ["caf\u{e9} \u{1f3b5}"]),
            ("seekcur\t+5", "seekcur", ["+5"]),
            ("find \t artist  \t x", "find", ["artist", "x"]),
            ("status \t\r", "status", []),
            ("ping\u{1}", "ping", []),
            ("ping\r", "ping", []),
            ("add a\\b", "add", ["a\\b"]),
            ("add C:\\music", "add", ["C:\\music"]),
            ("setvol \u{7f}", "setvol", ["\u{7f}"]),
            ("play_1x 2", "play_1x", ["2"]),
            ("pLAY", "pLAY", []),
            ("ping\0junk \"", "ping", []),
            ("a \"x\"\t\"y\"", "a", ["x", "y"]),
        ] as [(String, String, [String])])
    func splits(_ line: String, _ name: String, _ arguments: [String]) throws {
        let request = try tokenize(line)
        #expect(request == Request(name: name, arguments: arguments))
    }

    @Test(
        "takes backslash escapes in quotes literally, whatever follows",
        arguments: [
            (#"add "a\"b""#, #"a"b"#),
            (#"add "a\\b""#, #"a\b"#),
            (#"add "\\""#, #"\"#),
            (#"add "\"""#, #"""#),
            (#"add "\n\t\x""#, "ntx"),
            (#"add "it's""#, "it's"),
            (#"add "a b  c""#, "a b  c"),
            (#"add "\é""#, "é"),
            (#"add "x\\\"y""#, #"x\"y"#),
        ])
    func escapes(_ line: String, _ argument: String) throws {
        #expect(try tokenize(line).arguments == [argument])
    }

    @Test(
        "refuses malformed arguments with MPD's ACK (code 5, no command) and keeps the connection",
        arguments: [
            ("find \"abc", "Missing closing '\"'"),
            ("find \"abc\\\"", "Missing closing '\"'"),
            ("find \"abc\\", "Missing closing '\"'"),
            ("find \"", "Missing closing '\"'"),
            ("find \"abc\"x", "Space expected after closing '\"'"),
            ("find \"abc\"\"def\"", "Space expected after closing '\"'"),
            ("find abc'd", "Invalid unquoted character"),
            ("find 'abc'", "Invalid unquoted character"),
            ("find ab\"c\"", "Invalid unquoted character"),
        ])
    func refusesArguments(_ line: String, _ message: String) {
        let error = tokenizeResult(line)
        #expect(error == .failure(.rejected(Ack(.unknown, message))))
        #expect(error.failure?.reply?.line == "ACK [5@0] {} \(message)\n")
        #expect(error.failure?.endsConnection == false)
    }

    @Test(
        "a malformed command name gets MPD's ACK and ends the connection",
        arguments: ["pl@y", "play\"1\"", "pl-ay 1", "st\u{e4}tus"])
    func malformedName(_ line: String) {
        let error = tokenizeResult(line).failure
        #expect(error == .malformedName(Ack(.unknown, "Invalid word character")))
        #expect(error?.reply?.line == "ACK [5@0] {} Invalid word character\n")
        #expect(error?.endsConnection == true)
    }

    @Test(
        "an empty line, or one not starting with a lowercase letter, is not MPD: hang up without a reply",
        arguments: ["", "   ", "\t", "\r", " ping", "Play", "GET / HTTP/1.1", "1play", "\"ping\"", "\u{e9}"])
    func notMPD(_ line: String) {
        let error = tokenizeResult(line).failure
        #expect(error == .notMPD)
        #expect(error?.reply == nil)
        #expect(error?.endsConnection == true)
    }

    @Test("allows 63 arguments and refuses a 64th, as mpd 0.23 does")
    func argumentLimit() throws {
        let words = (0..<64).map { "x\($0)" }
        #expect(try tokenize("find " + words.prefix(63).joined(separator: " ")).arguments.count == 63)
        let error = tokenizeResult("find " + words.joined(separator: " ")).failure
        #expect(error?.reply?.line == "ACK [2@0] {} Too many arguments\n")
        #expect(error?.endsConnection == false)
        #expect(try tokenize("find a b c", maximumArguments: 3).arguments == ["a", "b", "c"])
        #expect(tokenizeResult("find a b c d").failure == nil)
        #expect(throws: RequestError.self) { try tokenize("find a b c d", maximumArguments: 3) }
    }
}

@Suite("Quoting arguments for the wire")
struct QuotingTests {
    @Test(
        "quoted arguments survive the trip through the tokenizer unchanged",
        arguments: [
            "", "plain", "two words", "  padded  ", "a\"b", "a\\b", "\\", "\"", "\\\"", "\"\\\"", "it's", "'",
            "tab\there", "caf\u{e9}", "\u{1f3b5} \u{97f3}\u{697d}", "C:\\Music\\\"Best\"\\", "trailing\\",
            "semi;colon", "x\u{7f}y", "\u{1}control",
        ])
    func roundTrip(_ argument: String) throws {
        let request = Request(name: "add", arguments: [argument, "second"])
        #expect(try tokenize(request.line) == request)
    }

    @Test(
        "quotes always, escaping only quotes and backslashes",
        arguments: [
            ("", "\"\""),
            ("a b", "\"a b\""),
            ("a\"b", "\"a\\\"b\""),
            ("a\\b", "\"a\\\\b\""),
            ("\u{e9}", "\"\u{e9}\""),
        ])
    func quoting(_ argument: String, _ wire: String) {
        #expect(quoted(argument) == wire)
    }

    @Test("a newline can never split one argument into two requests")
    func newline() throws {
        #expect(quoted("a\nb") == "\"a b\"")
        let request = Request(name: "add", arguments: ["x\nclear"])
        #expect(request.line == "add \"x clear\"\n")
        #expect(request.line.filter { $0 == "\n" }.count == 1)
    }

    @Test("a request without arguments is just its name")
    func bareLine() {
        #expect(Request(name: "status").line == "status\n")
        #expect(Request(name: "seekcur", arguments: ["+5"]).line == "seekcur \"+5\"\n")
    }
}

extension Result {
    /// The error, or `nil` on success.
    var failure: Failure? {
        if case .failure(let error) = self {
            return error
        }
        return nil
    }
}
