// Fuzzes every argument parser of the protocol (`Argument.*`). The first byte of the input picks the
// parser, the rest is the argument's text. Besides the sanitizers' crashes, it checks what each parser
// promises: values in their range, refusals as ACK code 2, and, for the numbers MPD reads with C's
// `strtol`, `strtoul` and `strtod`, the same verdict and value as the C library gives.

import ControlProtocol
import FuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: a parser number, then an argument.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else {
        return 0
    }
    // The daemon only ever hands parsers valid UTF-8 (the framer refuses the rest), so invalid bytes
    // are repaired here rather than skipped: the fuzzer's mutations still count.
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    // Nor does an argument ever hold a newline: the framer cuts lines there.
    guard !text.utf8.contains(0x0A) else {
        return 0
    }
    let parsers = ArgumentParser.allCases
    parsers[Int(data[0]) % parsers.count].check(text)
    return 0
}

/// The parsers, in the order the first input byte selects them.
enum ArgumentParser: CaseIterable {
    case unsigned, volume, integer, volumeChange, bool, range, float, songTime, seekTarget, singleMode
    case idleSubsystem, idleSubsystems, queueVersion

    /// Parses `text` and checks the outcome.
    func check(_ text: String) {
        switch self {
        case .unsigned:
            checkUnsigned(text, maximum: Int(UInt32.max), Result { () throws(Ack) in try Argument.unsigned(text) })
        case .volume:
            checkUnsigned(text, maximum: 100, Result { () throws(Ack) in try Argument.volume(text) })
        case .integer:
            checkInteger(
                text, in: Int(Int32.min)...Int(Int32.max), Result { () throws(Ack) in try Argument.integer(text) })
        case .volumeChange:
            checkInteger(text, in: -100...100, Result { () throws(Ack) in try Argument.volumeChange(text) })
        case .bool:
            let value = Result { () throws(Ack) in try Argument.bool(text) }
            let asInteger = Result { () throws(Ack) in try Argument.integer(text, in: 0...1) }
            require(value.success == asInteger.success.map { $0 == 1 }, "bool disagrees with integer 0...1")
            checkRefusal(value)
        case .range:
            checkRange(text)
        case .float:
            checkFloat(text, Result { () throws(Ack) in try Argument.float(text) })
        case .songTime:
            let time = Result { () throws(Ack) in try Argument.songTime(text) }
            if case .success(let duration) = time {
                require(duration >= .zero, "a negative song time")
            }
            checkRefusal(time)
        case .seekTarget:
            let target = Result { () throws(Ack) in try Argument.seekTarget(text) }
            if case .success(.absolute(let duration)) = target {
                require(duration >= .zero, "a negative absolute seek")
            }
            checkRefusal(target)
        case .singleMode:
            let mode = Result { () throws(Ack) in try Argument.singleMode(text) }
            require(mode.success?.rawValue ?? text == text, "single mode spelled differently")
            checkRefusal(mode)
        case .idleSubsystem:
            let subsystem = Result { () throws(Ack) in try Argument.idleSubsystem(text) }
            if let subsystem = subsystem.success {
                require(subsystem.rawValue == text.lowercased(), "\(text) is not \(subsystem.rawValue)")
            }
            checkRefusal(subsystem)
        case .idleSubsystems:
            let words = text.split(separator: " ").map(String.init)
            let subsystems = Result { () throws(Ack) in try Argument.idleSubsystems(words) }
            if let subsystems = subsystems.success {
                require(!subsystems.isEmpty && subsystems.count <= max(words.count, 14), "wrong subsystem count")
            }
            checkRefusal(subsystems)
        case .queueVersion:
            checkQueueVersion(text, Result { () throws(Ack) in try Argument.queueVersion(text) })
        }
    }
}

/// `queueVersion` reads what `strtoul` reads, out of range or not, cut to its low 32 bits (MPD's cast),
/// and refuses only what strtoul does not read.
func checkQueueVersion(_ text: String, _ result: Result<Int, Ack>) {
    checkRefusal(result)
    guard !text.utf8.contains(0) else {
        return
    }
    let c = cRead(text) { strtoul($0, &$1, 10) }
    switch (result, c) {
    case (.success(let value), let c?):
        require(value == Int(UInt32(truncatingIfNeeded: c.value)), "\(text) read as \(value), strtoul says \(c)")
    case (.success(let value), nil):
        fatalError("\(text) read as \(value), strtoul does not read it")
    case (.failure(let ack), nil):
        require(ack.message == "Integer expected: \(text)", "\(text) refused with \(ack.message)")
    case (.failure(let ack), let c?):
        fatalError("\(text) refused with \(ack.message), strtoul reads \(c)")
    }
}

extension Result {
    /// The value, if parsing succeeded.
    var success: Success? {
        if case .success(let value) = self {
            return value
        }
        return nil
    }
}

/// Every parser refuses with ACK code 2 (bad argument), to be attributed to the command later.
func checkRefusal<Value>(_ result: Result<Value, Ack>) {
    if case .failure(let ack) = result {
        require(ack.code == .argument, "refused with code \(ack.code), not 2: \(ack)")
        require(ack.command.isEmpty && ack.listIndex == 0, "a parser attributed its ACK: \(ack)")
        require(!ack.message.contains("\n"), "an ACK message spans lines: \(ack)")
    }
}

/// What the C library reads from `text` as MPD's parsers see it: nil when `text` holds a NUL (C stops
/// there, so the verdicts cannot be compared) or when the C function did not read it all.
func cRead<Value>(_ text: String, _ read: (UnsafePointer<CChar>, inout UnsafeMutablePointer<CChar>?) -> Value) -> (
    value: Value, outOfRange: Bool
)? {
    guard !text.utf8.contains(0) else {
        return nil
    }
    return text.withCString { start in
        var end: UnsafeMutablePointer<CChar>?
        errno = 0
        let value = read(start, &end)
        let outOfRange = errno == ERANGE
        guard let end, UnsafePointer(end) != start, end.pointee == 0 else {
            return nil
        }
        return (value, outOfRange)
    }
}

/// `unsigned` must read what `strtoul` reads; a negative number is "too large", as the wrap-around of
/// strtoul makes it in MPD.
func checkUnsigned(_ text: String, maximum: Int, _ result: Result<Int, Ack>) {
    checkRefusal(result)
    if let value = result.success {
        require((0...maximum).contains(value), "\(text) read as \(value), outside 0...\(maximum)")
    }
    guard !text.utf8.contains(0) else {
        return
    }
    let c = cRead(text) { strtoul($0, &$1, 10) }
    switch (result, c) {
    case (.success(let value), let c?):
        require(!c.outOfRange && UInt(value) == c.value, "\(text) read as \(value), strtoul says \(c)")
    case (.success(let value), nil):
        fatalError("\(text) read as \(value), strtoul does not read it")
    case (.failure(let ack), nil):
        require(ack.message.hasPrefix("Integer expected"), "\(text) refused with \(ack.message)")
    case (.failure(let ack), let c?):
        // strtoul reads it, so it is a number: too large, or negative.
        require(ack.message.hasPrefix("Number too large"), "\(text) refused with \(ack.message)")
        let negative = text.utf8.first { !(0x09...0x0D).contains($0) && $0 != 0x20 } == UInt8(ascii: "-")
        require(c.outOfRange || c.value > UInt(maximum) || negative, "\(text) refused, strtoul says \(c)")
    }
}

/// `integer` must read what `strtol` reads.
func checkInteger(_ text: String, in range: ClosedRange<Int>, _ result: Result<Int, Ack>) {
    checkRefusal(result)
    guard !text.utf8.contains(0) else {
        return
    }
    let c = cRead(text) { strtol($0, &$1, 10) }
    switch (result, c) {
    case (.success(let value), let c?):
        require(range.contains(value) && !c.outOfRange && value == c.value, "\(text) read as \(value), not \(c)")
    case (.success(let value), nil):
        fatalError("\(text) read as \(value), strtol does not read it")
    case (.failure(let ack), nil):
        require(ack.message.hasPrefix("Integer expected"), "\(text) refused with \(ack.message)")
    case (.failure(let ack), let c?):
        require(ack.message.hasPrefix("Number too large"), "\(text) refused with \(ack.message)")
        require(c.outOfRange || !range.contains(c.value), "\(text) refused, strtol says \(c)")
    }
}

/// `float` must read what `strtod` reads, wherever strtod gives an ordinary finite number.
func checkFloat(_ text: String, _ result: Result<Double, Ack>) {
    checkRefusal(result)
    guard let c = cRead(text, { strtod($0, &$1) }), c.value.isFinite, !c.outOfRange else {
        return
    }
    require(result.success == c.value, "\(text) read as \(String(describing: result)), strtod says \(c.value)")
}

/// `range` gives START:END with END not before START, and clipping to any queue length stays valid.
func checkRange(_ text: String) {
    let result = Result { () throws(Ack) in try Argument.range(text) }
    checkRefusal(result)
    guard let range = result.success else {
        return
    }
    require(range.start >= 0 && range.end.map { $0 >= range.start } ?? true, "\(text) gave \(range)")
    for count in [0, 1, 2, 10_000] {
        if let positions = range.clipped(to: count) {
            require(positions.lowerBound >= 0 && positions.upperBound <= count, "\(range) clipped to \(count)")
        }
    }
}
