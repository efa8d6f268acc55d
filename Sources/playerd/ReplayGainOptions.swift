import Audio

extension Playerd {
    /// MPD's `replaygain_preamp`, `replaygain_missing_preamp` and `replaygain_limit`, from
    /// `--replaygain-preamp DB`, `--replaygain-missing-preamp DB` and `--replaygain-limit yes|no`.
    static func replayGainSettings(_ options: CommandLineOptions) throws(UsageError) -> ReplayGain {
        func decibels(_ name: String) throws(UsageError) -> Double {
            guard let text = options[name] else { return 0 }
            // MPD accepts -15 to 15 dB.
            guard let value = Double(text), (-15...15).contains(value) else {
                throw UsageError("invalid --\(name) \"\(text)\": expected a number of dB from -15 to 15")
            }
            return value
        }
        let limits: Bool
        switch options["replaygain-limit"]?.lowercased() ?? "yes" {
        case "yes", "on", "1": limits = true
        case "no", "off", "0": limits = false
        case let other: throw UsageError("invalid --replaygain-limit \"\(other)\": expected yes or no")
        }
        return ReplayGain(
            source: .off, preampDB: try decibels("replaygain-preamp"),
            missingPreampDB: try decibels("replaygain-missing-preamp"), limitsToPeak: limits)
    }
}
