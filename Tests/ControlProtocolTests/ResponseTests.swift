import ControlProtocol
import Testing

@Suite("ACK lines")
struct AckTests {
    @Test("the ACK codes are MPD's numbers")
    func codes() {
        let expected: [(AckCode, Int)] = [
            (.notList, 1), (.argument, 2), (.password, 3), (.permission, 4), (.unknown, 5), (.noExist, 50),
            (.playlistMax, 51), (.system, 52), (.playlistLoad, 53), (.updateAlready, 54), (.playerSync, 55),
            (.exist, 56),
        ]
        for (code, number) in expected {
            #expect(code.rawValue == number)
        }
        #expect(AckCode.allCases.count == expected.count)
    }

    @Test(
        "renders exactly MPD's format",
        arguments: [
            (Ack(.unknown, "unknown command \"foo\""), "ACK [5@0] {} unknown command \"foo\"\n"),
            (Ack(.argument, "Bad song index", command: "play"), "ACK [2@0] {play} Bad song index\n"),
            (
                Ack(.noExist, "No such song", command: "deleteid", listIndex: 12),
                "ACK [50@12] {deleteid} No such song\n"
            ),
            (Ack(.playerSync, "Not playing", command: "seekcur", listIndex: 1), "ACK [55@1] {seekcur} Not playing\n"),
        ])
    func renders(_ ack: Ack, _ line: String) {
        #expect(ack.line == line)
        #expect(ack.description == String(line.dropLast()))
    }

    @Test("a newline in a message cannot end the ACK line early")
    func newlineInMessage() {
        #expect(Ack(.system, "disk\nfull\r", command: "add").line == "ACK [52@0] {add} disk full \n")
    }

    @Test("the dispatcher attributes a parser's ACK to its command and list position")
    func attribution() {
        let ack = Ack(.argument, "Integer expected: x")
        #expect(ack.attributed(to: "setvol", listIndex: 2).line == "ACK [2@2] {setvol} Integer expected: x\n")
        #expect(ack.attributed(to: "setvol", listIndex: 2).at(listIndex: 0).command == "setvol")
    }
}

@Suite("Writing responses")
struct ResponseWriterTests {
    @Test("writes a status answer the way MPD does")
    func status() {
        var writer = ResponseWriter()
        writer.field("volume", 100)
        writer.field("repeat", false)
        writer.field("random", true)
        writer.field("single", SingleMode.oneshot.rawValue)
        writer.field("playlist", 2)
        writer.field("state", "play")
        writer.time(elapsed: 1.642, total: 200)
        writer.field("elapsed", seconds: 1.642)
        writer.field("bitrate", 0)
        writer.field("duration", seconds: 200)
        writer.audio(sampleRate: 44100, bits: 16, channels: 2)
        writer.ok()
        #expect(
            writer.text == """
                volume: 100
                repeat: 0
                random: 1
                single: oneshot
                playlist: 2
                state: play
                time: 2:200
                elapsed: 1.642
                bitrate: 0
                duration: 200.000
                audio: 44100:16:2
                OK

                """)
        #expect(writer.bytes == Array(writer.text.utf8))
    }

    @Test(
        "seconds have exactly three decimals, rounded",
        arguments: [
            (0, "0.000"), (12.345, "12.345"), (9.5, "9.500"), (0.0004, "0.000"), (0.0006, "0.001"),
            (59.9996, "60.000"), (200, "200.000"), (3723.25, "3723.250"), (-1.5, "-1.500"), (.nan, "0.000"),
            (.infinity, "0.000"),
        ] as [(Double, String)])
    func seconds(_ value: Double, _ text: String) {
        #expect(ResponseWriter.formatSeconds(value) == text)
        var writer = ResponseWriter()
        writer.field("elapsed", seconds: value)
        #expect(writer.text == "elapsed: \(text)\n")
    }

    @Test(
        "time: shows whole seconds rounded to the nearest, as MPD does",
        arguments: [
            (0, 0, "time: 0:0\n"), (1.642, 200, "time: 2:200\n"), (19.4, 180.5, "time: 19:181\n"),
            (9.5, -1, "time: 10:0\n"), (.nan, .infinity, "time: 0:0\n"),
        ] as [(Double, Double, String)])
    func time(_ elapsed: Double, _ total: Double, _ text: String) {
        var writer = ResponseWriter()
        writer.time(elapsed: elapsed, total: total)
        #expect(writer.text == text)
    }

    @Test("integers of every size and sign")
    func integers() {
        var writer = ResponseWriter()
        for value in [0, 7, -7, 10, 1_000_000, Int.max, Int.min] {
            writer.field("n", value)
        }
        #expect(writer.text == "n: 0\nn: 7\nn: -7\nn: 10\nn: 1000000\nn: \(Int.max)\nn: \(Int.min)\n")
    }

    @Test("a value's newlines become spaces, so it cannot forge another field")
    func newlines() {
        var writer = ResponseWriter()
        writer.field("Title", "Line one\nfile: /etc/passwd\r\n")
        writer.field("Artist", "Bj\u{f6}rk")
        #expect(writer.text == "Title: Line one file: /etc/passwd  \nArtist: Bj\u{f6}rk\n")
    }

    @Test("greeting, list_OK, OK and ACK lines")
    func protocolLines() {
        #expect(ResponseWriter.greeting == "OK MPD 0.23.5\n")
        var writer = ResponseWriter()
        writer.greet()
        writer.listOK()
        writer.ack(Ack(.unknown, "unknown command \"foo\"", listIndex: 1))
        writer.ok()
        #expect(writer.text == "OK MPD 0.23.5\nlist_OK\nACK [5@1] {} unknown command \"foo\"\nOK\n")
    }

    @Test("removeAll keeps the buffer, so the next answer does not allocate")
    func reuse() {
        var writer = ResponseWriter(capacity: 16)
        for _ in 0..<50 {
            writer.field("playlistlength", 12)
        }
        let capacity = writer.capacity
        writer.removeAll()
        #expect(writer.isEmpty)
        #expect(writer.capacity == capacity)
        writer.ok()
        #expect(writer.text == "OK\n")
    }

    @Test("a copy of a writer keeps its own answer when either goes on writing")
    func copies() {
        var first = ResponseWriter(capacity: 0)
        first.field("state", "stop")
        var second = first
        second.field("volume", 100)
        first.ok()
        #expect(first.text == "state: stop\nOK\n")
        #expect(second.text == "state: stop\nvolume: 100\n")
        let kept = second
        second.removeAll()
        #expect(second.isEmpty)
        #expect(kept.text == "state: stop\nvolume: 100\n")
        var empty = ResponseWriter(capacity: 0)
        #expect(empty.isEmpty && empty.bytes.isEmpty && empty.text.isEmpty)
        empty.removeAll()
        #expect(ResponseWriter(capacity: 0).isEmpty)
    }

    @Test("what a failing command wrote can be taken back; another answer can be appended")
    func takeBackAndAppend() {
        var writer = ResponseWriter(capacity: 8)
        writer.field("a", 1)
        let mark = writer.count
        writer.field("Title", String(repeating: "x", count: 300))
        let copy = writer
        writer.removeAll(after: mark)
        #expect(writer.text == "a: 1\n")
        #expect(copy.count == mark + 308)
        var other = ResponseWriter(capacity: 0)
        other.field("b", true)
        writer.append(other)
        writer.appendRaw("c: 2\n")
        writer.appendRaw("d: 3\ne: 4\n".split(separator: "\n")[1])
        writer.appendRaw(bytes: Array("\n".utf8))
        #expect(writer.text == "a: 1\nb: 1\nc: 2\ne: 4\n")
        #expect(writer.withUnsafeBytes { Array($0) } == writer.bytes)
    }
}
