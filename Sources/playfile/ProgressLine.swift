import Audio
import MusicTags

#if canImport(Glibc)
    import Glibc
#endif

/// Shows what is playing and how far it has got: one redrawn line on a terminal, a line a second
/// elsewhere (logs).
final class ProgressLine {
    let isTerminal: Bool
    private var format: AudioFormat?
    private var length: Int?
    private var lastShownTenth = -1
    private var lastLine = ""

    init(isTerminal: Bool) {
        self.isTerminal = isTerminal
    }

    func start(path: String, decoder: any AudioDecoder, output: String) {
        self.format = decoder.format
        self.length = decoder.lengthFrames
        self.lastShownTenth = -1
        self.lastLine = ""
        let tags = decoder.tags
        var heading = "Playing \(path)"
        if let title = tags.title {
            heading += " — \(title)"
            if let artist = tags.artist { heading += " by \(artist)" }
        }
        let rate =
            (decoder as? MP3Decoder)?.isVariableBitrate == true
            ? "VBR, " : decoder.bitrate > 0 ? "\(decoder.bitrate) kbps, " : ""
        let length = self.length.map { Self.clock($0, decoder.format) + " " } ?? ""
        self.emit("\(heading)\n  \(decoder.format.readableDescription), \(rate)\(length)on \(output)\n")
    }

    func update(played: Int) {
        guard let format else { return }
        let tenth = max(0, played) * 10 / format.sampleRate
        let step = self.isTerminal ? 1 : 10
        guard tenth / step != self.lastShownTenth / step else { return }
        self.lastShownTenth = tenth
        self.lastLine = self.line(played: max(0, played), format)
        self.emit(self.lastLine)
    }

    func end() {
        guard let format else { return }
        if let length {
            let last = self.line(played: length, format)
            if last != self.lastLine { self.emit(last) }
        }
        if self.isTerminal { self.emit("\n") }
        self.format = nil
    }

    private func line(played: Int, _ format: AudioFormat) -> String {
        let elapsed = Self.clock(played, format)
        guard let length, length > 0 else {
            return self.isTerminal ? "\r  \(elapsed)" : "  \(elapsed)\n"
        }
        let width = 30
        let filled = min(width, played * width / length)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let text = "  \(elapsed) / \(Self.clock(length, format)) [\(bar)]"
        return self.isTerminal ? "\r\(text)" : "\(text)\n"
    }

    private static func clock(_ frames: Int, _ format: AudioFormat) -> String {
        let seconds = frames / format.sampleRate
        let remainder = seconds % 60
        return "\(seconds / 60):\(remainder < 10 ? "0" : "")\(remainder)"
    }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
}
