import ArgumentParser
import PlayerClient

/// `queue add|list|clear|remove|move`.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "Show or change the play queue (positions count from 1).",
        subcommands: [List.self, Add.self, Clear.self, Remove.self, Move.self], defaultSubcommand: List.self)

    /// `queue add PATH...`, or `queue add --search TEXT...` / `--album NAME [--artist X]`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add files, directories or .m3u playlists to the end of the queue; or songs of the library.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "What to add: paths (relative to the current directory) or URLs.", completion: .file())
        var files: [String] = []

        @OptionGroup var library: LibraryChoice

        func validate() throws {
            try self.library.validate(withFiles: !self.files.isEmpty)
            if self.files.isEmpty && !self.library.isChosen {
                throw ValidationError("queue add needs paths, --search or --album")
            }
        }

        func run() throws {
            if self.library.isChosen {
                let connection = try self.global.connect()
                guard let uris = try self.library.songs(connection) else { return }
                try appendSongs(connection, uris)
                print("added \(counted(uris.count, "song")) to the queue")
                return
            }
            let directory = currentDirectory()
            _ = try self.global.connect().commandList(
                self.files.map { file in ("add", [absolutePath(file, currentDirectory: directory)]) })
        }
    }

    /// `queue list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the queue, one song a line; > marks the current song.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            let answers = try self.global.connect().commandList([("playlistinfo", []), ("status", [])])
            let songs = try Song.list(from: answers[0])
            let current = try Status(fields: answers[1]).song
            let width = "\(songs.count)".count
            for (index, song) in songs.enumerated() {
                let position = song.position ?? index
                let number = "\(position + 1)"
                let marker = position == current ? ">" : " "
                var line = "\(marker) \(String(repeating: " ", count: width - number.count))\(number). "
                if let title = song.title {
                    line += song.artist.map { "\($0) - \(title)" } ?? title
                } else {
                    line += song.file
                }
                if let duration = song.duration {
                    line += " (\(formatDuration(duration)))"
                }
                print(line)
            }
        }
    }

    /// `queue clear`.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Empty the queue (playback stops).")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            _ = try self.global.connect().command("clear")
        }
    }

    /// `queue remove POS...`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove songs by their positions.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "Positions, from 1.")
        var positions: [Int]

        func validate() throws {
            if let bad = self.positions.first(where: { $0 < 1 }) {
                throw ValidationError("queue positions count from 1: \(bad)")
            }
        }

        func run() throws {
            // Highest first, so that each delete leaves the positions still to go where they were.
            let commands = Set(self.positions).sorted(by: >).map { position in ("delete", [String(position - 1)]) }
            _ = try self.global.connect().commandList(commands)
        }
    }

    /// `queue move FROM TO`.
    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the song at FROM to position TO.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The song's position, from 1.")
        var from: Int

        @Argument(help: "Where it goes, from 1.")
        var to: Int

        func validate() throws {
            if self.from < 1 || self.to < 1 {
                throw ValidationError("queue positions count from 1")
            }
        }

        func run() throws {
            _ = try self.global.connect().command("move", [String(self.from - 1), String(self.to - 1)])
        }
    }
}
