/// Stops the run when a property of the code under test does not hold, naming it. Unlike
/// `precondition`, whose message an optimized build drops, the message reaches the fuzzer's report.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() {
        fatalError(message(), file: file, line: line)
    }
}
