import Testing

@testable import Audio

@Suite struct PathEscapingTests {
    @Test func bytesThatAreNotUTF8AreEscapedAndComeBack() {
        let latin1 = Array("caf".utf8) + [0xE9] + Array(".mp3".utf8)
        #expect(PathEscaping.escaped(latin1) == "caf\\xE9.mp3")
        #expect(PathEscaping.bytes(of: "caf\\xE9.mp3") == latin1)
        #expect(
            PathEscaping.systemPath("/m/caf\\xE9.mp3").map { UInt8(bitPattern: $0) } == Array("/m/".utf8) + latin1 + [0]
        )
        // A lead byte cut short, a surrogate, an overlong form and a code point past U+10FFFF are each
        // escaped byte by byte; the good bytes around them are kept.
        let mixed: [UInt8] = [0xC3, 0x41, 0xED, 0xA0, 0x80, 0xC0, 0xAF, 0xF4, 0x90, 0x80, 0x80, 0xC3, 0xA9]
        #expect(PathEscaping.escaped(mixed) == "\\xC3A\\xED\\xA0\\x80\\xC0\\xAF\\xF4\\x90\\x80\\x80é")
        #expect(PathEscaping.bytes(of: PathEscaping.escaped(mixed)) == mixed)
    }

    @Test(arguments: [
        "café.mp3", "AC\\DC.mp3", "a\\b", "\\", "trailing\\", "\\x", "\\x4", "\\xg0", "\\xe9 lowercase", "日本語",
        "Мумий Тролль", "100% Hits",
    ])
    func genuineNamesAreShownAsTheyAre(_ name: String) {
        #expect(PathEscaping.escaped(Array(name.utf8)) == name)
        #expect(PathEscaping.bytes(of: name) == Array(name.utf8))
    }

    @Test(arguments: ["a\\x41.mp3", "\\xE9", "\\x00", "x\\x5Cy", "\\\\xE9"])
    func aGenuineBackslashThatLooksLikeAnEscapeIsEscapedItself(_ name: String) {
        let escaped = PathEscaping.escaped(Array(name.utf8))
        #expect(escaped != name)
        #expect(escaped.contains("\\x5C"))
        #expect(PathEscaping.bytes(of: escaped) == Array(name.utf8))
    }

    @Test func everyByteStringRoundTrips() {
        // Names built from the bytes that matter most (backslash, x, hex digits, lead and continuation
        // bytes), seeded so that a failure repeats.
        let alphabet: [UInt8] = [
            0x5C, 0x78, 0x30, 0x41, 0x45, 0x39, 0x43, 0x61, 0x2F, 0xC3, 0xA9, 0xE9, 0x80, 0xBF, 0xE2, 0xF0, 0x9F, 0xFF,
        ]
        var state: UInt64 = 0x1234_5678
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<20_000 {
            let bytes = (0..<next(12)).map { _ in alphabet[next(alphabet.count)] }
            let escaped = PathEscaping.escaped(bytes)
            #expect(PathEscaping.bytes(of: escaped) == bytes, "\(bytes) → \(escaped)")
            // Escaping is a function of the bytes: what is shown once is shown again.
            #expect(PathEscaping.escaped(PathEscaping.bytes(of: escaped)) == escaped)
        }
    }
}
