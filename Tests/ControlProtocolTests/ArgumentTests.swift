import ControlProtocol
import Testing

/// The message of the ACK `parse` throws, or `nil` if it succeeds; asserts the code is 2 and nothing
/// is attributed yet.
func refusal<T>(_ parse: () throws(Ack) -> T) -> String? {
    do {
        _ = try parse()
        return nil
    } catch {
        #expect(error.code == .argument)
        #expect(error.command == "")
        #expect(error.listIndex == 0)
        return error.message
    }
}

@Suite("Argument parsers, with the texts mpd 0.23.12 answers")
struct ArgumentTests {
    @Test(
        "unsigned", arguments: [("0", 0), ("42", 42), ("+5", 5), (" 5", 5), ("-0", 0), ("4294967295", 4_294_967_295)])
    func unsigned(_ text: String, _ value: Int) throws {
        #expect(try Argument.unsigned(text) == value)
    }

    @Test(
        "unsigned refusals",
        arguments: [
            ("abc", "Integer expected: abc"), ("5x", "Integer expected: 5x"), ("", "Integer expected: "),
            ("5 ", "Integer expected: 5 "), ("1.5", "Integer expected: 1.5"), ("-1", "Number too large: -1"),
            ("4294967296", "Number too large: 4294967296"),
            ("99999999999999999999", "Number too large: 99999999999999999999"),
        ])
    func unsignedRefusals(_ text: String, _ message: String) {
        #expect(refusal { () throws(Ack) in try Argument.unsigned(text) } == message)
    }

    @Test("volume is 0 to 100")
    func volume() throws {
        #expect(try Argument.volume("0") == 0)
        #expect(try Argument.volume("100") == 100)
        #expect(refusal { () throws(Ack) in try Argument.volume("101") } == "Number too large: 101")
        #expect(refusal { () throws(Ack) in try Argument.volume("-1") } == "Number too large: -1")
        #expect(refusal { () throws(Ack) in try Argument.volume("loud") } == "Integer expected: loud")
    }

    @Test("a volume change is -100 to +100, and below is also \"too large\"")
    func volumeChange() throws {
        #expect(try Argument.volumeChange("-100") == -100)
        #expect(try Argument.volumeChange("+5") == 5)
        #expect(refusal { () throws(Ack) in try Argument.volumeChange("101") } == "Number too large: 101")
        #expect(refusal { () throws(Ack) in try Argument.volumeChange("-101") } == "Number too large: -101")
        #expect(refusal { () throws(Ack) in try Argument.volumeChange("x") } == "Integer expected: x")
    }

    @Test("integer", arguments: [("-1", -1), ("0", 0), ("2147483647", 2_147_483_647), ("-2147483648", -2_147_483_648)])
    func integer(_ text: String, _ value: Int) throws {
        #expect(try Argument.integer(text) == value)
    }

    @Test(
        "integer refusals",
        arguments: [
            ("2147483648", "Number too large: 2147483648"), ("-2147483649", "Number too large: -2147483649"),
            ("-99999999999999999999", "Number too large: -99999999999999999999"), ("-", "Integer expected: -"),
            ("x1", "Integer expected: x1"),
        ])
    func integerRefusals(_ text: String, _ message: String) {
        #expect(refusal { () throws(Ack) in try Argument.integer(text) } == message)
    }

    @Test(
        "bool reads what strtol reads",
        arguments: [("0", false), ("1", true), ("-0", false), ("+1", true), ("01", true), (" 1", true)])
    func bool(_ text: String, _ value: Bool) throws {
        #expect(try Argument.bool(text) == value)
    }

    @Test("bool refusals", arguments: ["2", "x", "-1", "", "1x", "oneshot", "true"])
    func boolRefusals(_ text: String) {
        #expect(refusal { () throws(Ack) in try Argument.bool(text) } == "Boolean (0/1) expected: \(text)")
    }

    @Test(
        "ranges",
        arguments: [
            ("5", PositionRange(start: 5, end: 6)), ("2:", PositionRange(start: 2, end: nil)),
            ("0:0", PositionRange(start: 0, end: 0)), ("1:3", PositionRange(start: 1, end: 3)), ("-1", .all),
            (" 0", PositionRange(start: 0, end: 1)), ("+0:+1", PositionRange(start: 0, end: 1)),
            ("0: 1", PositionRange(start: 0, end: 1)), ("2147483647:", PositionRange(start: 2_147_483_647, end: nil)),
        ])
    func range(_ text: String, _ range: PositionRange) throws {
        #expect(try Argument.range(text) == range)
    }

    @Test(
        "range refusals",
        arguments: [
            ("5:2", "Malformed range: 5:2"), ("-3", "Number is negative: -3"), ("1:-3", "Number is negative: 1:-3"),
            ("-1:", "Number is negative: -1:"), ("-1:2", "Number is negative: -1:2"),
            ("1:x", "Integer or range expected: 1:x"), (":3", "Integer or range expected: :3"),
            ("x", "Integer or range expected: x"), ("0x", "Integer or range expected: 0x"),
            ("", "Integer or range expected: "), ("0: ", "Integer or range expected: 0: "),
            ("1:2:3", "Integer or range expected: 1:2:3"), ("2147483648", "Number too large: 2147483648"),
            ("1:2147483648", "Number too large: 1:2147483648"),
        ])
    func rangeRefusals(_ text: String, _ message: String) {
        #expect(refusal { () throws(Ack) in try Argument.range(text) } == message)
    }

    @Test("a range is clipped to the queue as MPD does, and refused past its end")
    func clipping() {
        #expect(PositionRange(start: 0, end: 5).clipped(to: 1) == 0..<1)
        #expect(PositionRange(start: 1, end: 5).clipped(to: 1) == 1..<1)
        #expect(PositionRange(start: 1, end: 2).clipped(to: 1) == 1..<1)
        #expect(PositionRange(start: 2, end: nil).clipped(to: 1) == nil)
        #expect(PositionRange.all.clipped(to: 7) == 0..<7)
        #expect(PositionRange.all.clipped(to: 0) == 0..<0)
    }

    @Test("float", arguments: [("1.5", 1.5), ("-2", -2), ("+3", 3), (".5", 0.5), ("5.", 5), ("1e2", 100), (" 5", 5)])
    func float(_ text: String, _ value: Double) throws {
        #expect(try Argument.float(text) == value)
    }

    @Test("float refusals", arguments: ["x", "", " ", "1.5x", "-x", "1,5", "5 "])
    func floatRefusals(_ text: String) {
        #expect(refusal { () throws(Ack) in try Argument.float(text) } == "Float expected: \(text)")
    }

    @Test(
        "a queue version is any integer, wrapped to 32 bits as strtoul and MPD's cast wrap it",
        arguments: [
            ("0", 0), ("7", 7), (" +7", 7), ("4294967295", 4_294_967_295), ("4294967296", 0), ("-1", 4_294_967_295),
            ("-4294967295", 1), ("9223372036854775807", 4_294_967_295), ("-9223372036854775808", 0),
            ("18446744073709551615", 4_294_967_295), ("18446744073709551616", 4_294_967_295),
            ("-18446744073709551615", 1), ("-18446744073709551616", 4_294_967_295),
        ])
    func queueVersion(_ text: String, _ version: Int) throws {
        #expect(try Argument.queueVersion(text) == version)
    }

    @Test("a queue version refuses what is no integer", arguments: ["", "x", "1e11", "nan", "1.5", "-0.000001"])
    func queueVersionRefusals(_ text: String) {
        #expect(refusal { () throws(Ack) in try Argument.queueVersion(text) } == "Integer expected: \(text)")
    }

    @Test("a song time is seconds, not negative, finite")
    func songTime() throws {
        #expect(try Argument.songTime("12.5") == .milliseconds(12500))
        #expect(try Argument.songTime("0") == .zero)
        #expect(refusal { () throws(Ack) in try Argument.songTime("-1") } == "Negative value not allowed: -1")
        #expect(refusal { () throws(Ack) in try Argument.songTime("1.5x") } == "Float expected: 1.5x")
        #expect(refusal { () throws(Ack) in try Argument.songTime("inf") } == "Float expected: inf")
        #expect(refusal { () throws(Ack) in try Argument.songTime("nan") } == "Float expected: nan")
    }

    @Test(
        "seekcur: a sign makes the time relative",
        arguments: [
            ("+5", SeekTarget.relative(.seconds(5))), ("-5", .relative(.seconds(-5))), ("-0", .relative(.zero)),
            ("+1e1", .relative(.seconds(10))), ("-2.5", .relative(.milliseconds(-2500))),
            ("12.5", .absolute(.milliseconds(12500))), ("0", .absolute(.zero)), (" 5", .absolute(.seconds(5))),
        ])
    func seekTarget(_ text: String, _ target: SeekTarget) throws {
        #expect(try Argument.seekTarget(text) == target)
    }

    @Test(
        "seekcur refusals",
        arguments: [
            ("abc", "Float expected: abc"), ("-x", "Float expected: -x"), ("", "Float expected: "),
            ("+", "Float expected: +"), (" -5", "Negative value not allowed:  -5"), ("+inf", "Float expected: +inf"),
        ])
    func seekTargetRefusals(_ text: String, _ message: String) {
        #expect(refusal { () throws(Ack) in try Argument.seekTarget(text) } == message)
    }

    @Test("single mode", arguments: [("0", SingleMode.off), ("1", .on), ("oneshot", .oneshot)])
    func singleMode(_ text: String, _ mode: SingleMode) throws {
        #expect(try Argument.singleMode(text) == mode)
        #expect(mode.rawValue == text)
    }

    @Test("single mode refusals", arguments: ["2", "ONESHOT", "", " 1", "true"])
    func singleModeRefusals(_ text: String) {
        #expect(
            refusal { () throws(Ack) in try Argument.singleMode(text) }
                == "Unrecognized single mode, expected 0, 1, or oneshot")
    }

    @Test(
        "idle subsystems, in any case",
        arguments: [
            ("player", IdleSubsystem.player), ("PLAYER", .player), ("Stored_Playlist", .storedPlaylist),
            ("mixer", .mixer), ("playlist", .playlist), ("options", .options), ("output", .output),
            ("database", .database), ("update", .update), ("sticker", .sticker), ("subscription", .subscription),
            ("message", .message), ("partition", .partition), ("neighbor", .neighbor), ("mount", .mount),
        ])
    func idleSubsystem(_ text: String, _ subsystem: IdleSubsystem) throws {
        #expect(try Argument.idleSubsystem(text) == subsystem)
    }

    @Test("idle refusals", arguments: ["foo", "", "players", "stored playlist", "stored-playlist"])
    func idleRefusals(_ text: String) {
        #expect(refusal { () throws(Ack) in try Argument.idleSubsystem(text) } == "Unrecognized idle event: \(text)")
        #expect(
            refusal { () throws(Ack) in try Argument.idleSubsystems(["player", text]) }
                == "Unrecognized idle event: \(text)")
    }

    @Test("idle with no subsystem waits for all of them")
    func idleSubsystems() throws {
        #expect(try Argument.idleSubsystems([]) == Set(IdleSubsystem.allCases))
        #expect(IdleSubsystem.allCases.count == 14)
        #expect(try Argument.idleSubsystems(["player", "mixer", "Player"]) == [.player, .mixer])
    }
}
