extension Int64 {
    /// The sum, held at Int64's bounds instead of overflowing (which traps): a deadline `now + duration`
    /// for a client's duration of centuries (`pausefor 1e11`) is merely never reached, and a position
    /// moved that far (`seekcur +1e11`) is clamped to the song.
    func clampedAdding(_ other: Int64) -> Int64 {
        let (sum, overflowed) = self.addingReportingOverflow(other)
        guard overflowed else { return sum }
        return other < 0 ? .min : .max
    }
}
