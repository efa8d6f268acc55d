import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines for journald: when systemd connects stderr to the journal (`JOURNAL_STREAM` is set),
/// each line starts with its syslog priority (`<3>` error ... `<7>` debug) so the journal files it
/// at the right level; the journal adds the time and the unit itself.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    /// A handler logging at `level` and above.
    public init(level: Logger.Level) {
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    /// The syslog priority journald reads from a `<N>` prefix.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let extra = event.metadata {
            merged.merge(extra) { _, new in new }
        }
        let details =
            merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        // One write per line, so that lines from several threads never interleave.
        var line = "<\(Self.priority(event.level))>\(event.message)\(details)\n"
        line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
