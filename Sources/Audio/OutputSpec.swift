/// One string that chooses an output, the same in flags, configuration and tests:
/// `alsa`, `alsa:DEVICE`, `null`, `null:unpaced`, `wav:PATH`.
public enum OutputSpec: Sendable, Hashable, CustomStringConvertible {
    /// ALSA through alsa-lib on the named PCM device (`default` when the spec is plain `alsa`).
    case alsa(device: String)
    /// The null output, paced in real time or not.
    case null(paced: Bool)
    /// A WAV file at the path.
    case wav(path: String)
    /// A named pipe at the path, written in a fixed format (snapserver's pipe source).
    case fifo(path: String, format: FIFOFormat)

    /// The valid forms, for messages and help text.
    public static let validForms = "alsa, alsa:DEVICE (e.g. alsa:hw:0,0), null, null:unpaced, wav:PATH, fifo:PATH"

    /// Parses a spec string.
    /// - Throws: `OutputSpecError` quoting the string and listing the valid forms.
    public init(parsing text: String) throws(OutputSpecError) {
        let colon = text.firstIndex(of: ":")
        let kind = colon.map { String(text[..<$0]) } ?? text
        let argument = colon.map { String(text[text.index(after: $0)...]) }
        switch (kind, argument) {
        case ("alsa", nil): self = .alsa(device: "default")
        case ("alsa", let device?) where !device.isEmpty: self = .alsa(device: device)
        case ("null", nil), ("null", "paced"): self = .null(paced: true)
        case ("null", "unpaced"): self = .null(paced: false)
        case ("wav", let path?) where !path.isEmpty: self = .wav(path: path)
        case ("fifo", let path?) where !path.isEmpty: self = .fifo(path: path, format: .standard)
        default: throw OutputSpecError(text: text)
        }
    }

    /// The plugin's name, as MPD's `outputs` gives it.
    public var plugin: String {
        switch self {
        case .alsa: "alsa"
        case .null: "null"
        case .wav: "wav"
        case .fifo: "fifo"
        }
    }

    /// The canonical string for this spec; parsing it gives the spec back.
    public var description: String {
        switch self {
        case .alsa(let device): device == "default" ? "alsa" : "alsa:\(device)"
        case .null(let paced): paced ? "null" : "null:unpaced"
        case .wav(let path): "wav:\(path)"
        case .fifo(let path, _): "fifo:\(path)"
        }
    }

    /// A new, closed output for this spec.
    /// Checks that the output can be opened now, where that can be known without playing: an ALSA
    /// device is opened and closed; the null and WAV outputs always can.
    /// - Throws: `OutputError` with the device's reason.
    public func checkAvailable() throws(OutputError) {
        if case .alsa(let device) = self {
            try ALSAOutput.checkDevice(device)
        }
    }

    public func makeOutput() -> any AudioOutput {
        switch self {
        case .alsa(let device): ALSAOutput(device: device)
        case .null(let paced): NullOutput(paced: paced)
        case .wav(let path): WAVOutput(path: path)
        case .fifo(let path, let format): FIFOOutput(path: path, format: format)
        }
    }
}

/// An output spec string that is none of the valid forms.
public struct OutputSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The string as given.
    public let text: String
    /// What is wrong, when it is more than an unknown form.
    public let reason: String?

    /// An error about `text`; without a reason, the valid forms are listed.
    public init(text: String, reason: String? = nil) {
        self.text = text
        self.reason = reason
    }

    public var description: String {
        if let reason {
            return "invalid output \"\(self.text)\": \(reason)"
        }
        return "invalid output \"\(self.text)\": expected one of \(OutputSpec.validForms)"
    }
}
