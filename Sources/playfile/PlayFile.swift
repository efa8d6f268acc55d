import ArgumentParser
import Audio

#if canImport(Glibc)
    import Glibc
#endif

/// Plays songs (MP3, FLAC, Ogg Vorbis, Opus) through one output, in order, the way `mpg123 FILE...` does: no daemon, no queue.
/// Consecutive files of one format share the open output, so they join without a gap.
@main
struct PlayFile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playfile",
        abstract: "Play MP3, FLAC, Ogg Vorbis and Opus files through ALSA, the null output or a WAV file.",
        discussion: """
            Without --output, plays on ALSA's default device, or on the paced null output (with a \
            warning) where there is no sound card. Output specs: \(OutputSpec.validForms).
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to play.", valueName: "spec"))
    var output: String?

    @Flag(help: "Decode to 32-bit float instead of signed 16-bit.")
    var float = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Argument(help: "Song files (MP3, FLAC, Ogg Vorbis, Opus) to play, in order.")
    var files: [String]

    func validate() throws {
        if let output {
            do {
                _ = try OutputSpec(parsing: output)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    func run() throws {
        let explicit = try self.output.map { text throws(OutputSpecError) in try OutputSpec(parsing: text) }
        var player = FilePlayer(
            output: (explicit ?? .alsa(device: "default")).makeOutput(),
            fallsBackToNull: explicit == nil,
            sampleFormat: self.float ? .float32 : .signed16,
            progress: self.quiet ? nil : ProgressLine(isTerminal: isatty(STDOUT_FILENO) == 1)
        )
        var failures = 0
        for file in self.files {
            do {
                try player.play(file)
            } catch let error as DecoderError {
                printError(error.description)
                failures += 1
            } catch let error as OutputError {
                printError(error.description)
                throw ExitCode(1)
            }
        }
        player.finish()
        if failures > 0 {
            throw ExitCode(1)
        }
    }
}

/// Writes one line to standard error, prefixed with the program's name.
func printError(_ message: String) {
    var line = "playfile: \(message)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
