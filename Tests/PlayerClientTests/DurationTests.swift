import PlayerClient
import Testing

@Suite("durations typed by people")
struct DurationTests {
    @Test(
        "reads seconds, units and clocks",
        arguments: [
            ("90", 90.0), ("2.5", 2.5), ("0", 0), (".5", 0.5), ("30s", 30), ("1m30s", 90), ("20m", 1200),
            ("1h", 3600), ("1h2m3.5s", 3723.5), ("1.5m", 90), ("1:30", 90), ("1:02:03", 3723), ("0:05", 5),
            ("90:00", 5400), ("1:30.25", 90.25), ("1:5", 65),
        ] as [(String, Double)])
    func parses(text: String, seconds: Double) throws {
        #expect(try parseDuration(text) == seconds)
    }

    @Test(
        "refuses what is not a duration, saying what is accepted",
        arguments: [
            "abc", "-5", "+5", "1e3", " 5", "5 ", "s", "1x", "30s1m", "1m1m", "1h2", "1:2:3:4", ":30", "1:",
            "1.5:30", "1..5", ".", "inf", "nan",
        ])
    func refusesMalformed(text: String) {
        #expect(throws: DurationError.malformed(text)) {
            try parseDuration(text)
        }
        #expect(DurationError.malformed(text).description.contains("1m30s"))
    }

    @Test("refuses a clock field of 60 or more, and nothing at all", arguments: ["1:60", "1:75:00", "0:00:60"])
    func refusesLargeFields(text: String) {
        #expect(throws: DurationError.fieldTooLarge(text)) {
            try parseDuration(text)
        }
        #expect(throws: DurationError.empty) {
            try parseDuration("")
        }
    }

    @Test(
        "formats m:ss below an hour and h:mm:ss from an hour, cutting off fractions",
        arguments: [
            (0.0, "0:00"), (5.9, "0:05"), (59.99, "0:59"), (60, "1:00"), (190, "3:10"), (3599, "59:59"),
            (3600, "1:00:00"), (3723, "1:02:03"), (36000 + 61, "10:01:01"), (-3, "0:00"), (.nan, "0:00"),
            (.infinity, "0:00"),
        ] as [(Double, String)])
    func formats(seconds: Double, text: String) {
        #expect(formatDuration(seconds) == text)
    }

    @Test(
        "writes seconds for the protocol with at most three decimals",
        arguments: [
            (90.0, "90"), (2.5, "2.5"), (0.25, "0.25"), (1.0 / 3, "0.333"), (0.05, "0.05"), (0.001, "0.001"),
            (10.0005, "10.001"), (-10, "-10"), (-0.5, "-0.5"), (0, "0"),
        ] as [(Double, String)])
    func protocolText(seconds: Double, text: String) {
        #expect(protocolSeconds(seconds) == text)
    }
}
