import Audio
import ControlProtocol
import Library
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// MPD's commands that read a song file itself: `readcomments` (its name-value comments) and
/// `getfingerprint` (its Chromaprint fingerprint). Both find the file as MPD's `LocateUri` does and
/// answer MPD's errors in MPD's order (src/command/FileCommands.cxx, FingerprintCommands.cxx,
/// src/TagAny.cxx); both read the file off the event loop, and a fingerprint stops when its client goes.
extension Commands {
    static func registerSongDataCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("readcomments", .deferred(readComments))
        add("getfingerprint", .deferred(getFingerprint))
    }

    /// Where a client's URI points, as MPD's `LocateUri` sorts it (without a storage: an absolute path
    /// inside the music directory stays a path).
    enum LocatedFile: Equatable {
        /// A file by absolute path, which the client may read.
        case path(String)
        /// A URI relative to the music directory.
        case relative(String)
    }

    /// Sorts `uri`: `file://` and absolute paths must be the client's to read (MPD's `AllowFile`); a URI
    /// with another scheme is refused, as playerd reads no streams.
    static func locateFile(_ uri: String, _ call: CommandCall) throws(Ack) -> LocatedFile {
        if uri.utf8.count >= 7, uri.prefix(7).lowercased() == "file://" {
            let path = String(uri.dropFirst(7))
            guard path.hasPrefix("/") else {
                throw Ack(.argument, "Malformed file:// URI", command: call.name)
            }
            try allowFile(path, call)
            return .path(path)
        }
        if uri.hasPrefix("/") {
            try allowFile(uri, call)
            return .path(uri)
        }
        if let scheme = uri.range(of: "://"), scheme.lowerBound > uri.startIndex {
            throw Ack(.argument, "Unsupported URI scheme", command: call.name)
        }
        return .relative(uri)
    }

    /// MPD's rule for a file named by path: a local client whose uid is the daemon's, owns the file, or
    /// may read it because everyone may (all three read bits); never a network client.
    private static func allowFile(_ path: String, _ call: CommandCall) throws(Ack) {
        guard call.session.isLocal, let uid = call.session.uid else {
            throw Ack(.permission, "Access denied", command: call.name)
        }
        if uid == geteuid() {
            return
        }
        var info = stat()
        guard stat(PathEscaping.systemPath(path), &info) == 0 else {
            throw Ack(.system, "Failed to access \(path): \(String(cString: strerror(errno)))", command: call.name)
        }
        guard info.st_uid == uid || info.st_mode & 0o444 == 0o444 else {
            throw Ack(.permission, "Access denied", command: call.name)
        }
    }

    /// MPD's words when a file cannot be opened: the path it tried, as a client on this machine may see it
    /// (a network client is shown the URI it gave, not where the music directory lies).
    private static func openFailure(
        _ error: DecoderError, shown: String, _ call: CommandCall
    ) -> Ack? {
        let reason: String
        switch error {
        case .fileNotFound: reason = String(cString: strerror(ENOENT))
        case .permissionDenied: reason = String(cString: strerror(EACCES))
        case .readFailed(_, let text): reason = text
        default: return nil
        }
        return Ack(.system, "Failed to open '\(shown)': \(reason)", command: call.name)
    }

    /// The file's path on disk and the name its errors show, for a located URI.
    private static func diskPath(
        _ located: LocatedFile, _ service: PlayerService, _ call: CommandCall, missing: Ack
    ) throws(Ack) -> (path: String, shown: String) {
        switch located {
        case .path(let path):
            return (path, path)
        case .relative(let uri):
            guard let musicDirectory = service.configuration.musicDirectory else {
                throw Ack(.noExist, "No database", command: call.name)
            }
            // `..` would leave the music directory, where absolute paths get an access check.
            guard !QueueLoader.climbsUp(uri) else { throw missing }
            let path = uri.isEmpty ? musicDirectory : musicDirectory + "/" + uri
            return (path, call.session.isLocal ? path : uri)
        }
    }

    /// The suffix MPD chooses a decoder by: after the last `.` of `name`, not at its start, not empty.
    static func suffix(_ name: String) -> Substring? {
        guard let dot = name.lastIndex(of: "."), dot > name.startIndex else { return nil }
        let suffix = name[name.index(after: dot)...]
        return suffix.isEmpty ? nil : suffix
    }

    // MARK: - readcomments

    /// `readcomments URI`: the file's own comments, `NAME: value`, in the file's order: a FLAC, Ogg
    /// Vorbis or Opus file's Vorbis comments, an MP3's APEv2 items and ID3v2 `TXXX` frames (see
    /// `SongReader.comments`), read by the decoder the content calls for; MPD prints those whose name is
    /// ASCII letters, `_` and `-` (a letter first) and whose value holds no control character. A relative
    /// URI must name a song of the library.
    private static func readComments(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let located = try locateFile(call.argument(0), call)
        let name = call.name
        return try await FileSystemWork.run(on: .songInfo) { _ throws(Ack) in
            var call = call
            if case .relative(let uri) = located {
                guard let library = service.library else {
                    throw Ack(.noExist, "No database", command: name)
                }
                guard library.songFacts(uri) != nil else {
                    throw Ack(.noExist, "No such song", command: name)
                }
            }
            let (path, shown) = try diskPath(
                located, service, call, missing: Ack(.noExist, "No such song", command: name))
            let failed = Ack(.noExist, "Failed to load file", command: name)
            let base = path.split(separator: "/").last.map(String.init) ?? path
            guard suffix(base) != nil else { throw failed }
            // Only a regular file is opened: a FIFO named `x.flac` would block the thread in open.
            var info = stat()
            if stat(PathEscaping.systemPath(path), &info) == 0, info.st_mode & S_IFMT != S_IFREG {
                throw failed
            }
            let comments: [(name: String, value: String)]
            do throws(DecoderError) {
                comments = try AudioDecoders.comments(path: path)
            } catch {
                throw openFailure(error, shown: shown, call) ?? failed
            }
            for comment in comments where isCommentName(comment.name) && isCommentValue(comment.value) {
                call.response.field(comment.name, comment.value)
            }
            return call
        }
    }

    /// MPD's `IsValidName` for a comment: ASCII letters, `_` and `-`, a letter first.
    static func isCommentName(_ name: String) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        guard let first = name.utf8.first, isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// MPD's `IsValidValue` for a comment: no control character (below 0x20).
    static func isCommentValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 < 0x20 }
    }

    // MARK: - getfingerprint

    /// `getfingerprint URI`: `chromaprint: FINGERPRINT`, from the first two minutes of the song (see
    /// `Fingerprint`), whatever its format. As in MPD a relative URI names any file in the music
    /// directory, in the library or not, with a song's suffix (the decoder is then chosen by the
    /// content). Decoding runs on the walks' threads and stops when the client goes.
    private static func getFingerprint(_ service: PlayerService, _ call: CommandCall) async throws(Ack) -> CommandCall {
        let located = try locateFile(call.argument(0), call)
        let (path, shown) = try diskPath(
            located, service, call, missing: Ack(.noExist, "No such song", command: call.name))
        let name = call.name
        return try await FileSystemWork.run(on: .walks) { cancellation throws(Ack) in
            // Failures from here on are MPD's background command's: unnamed.
            let failed = Ack.unnamed(.unknown, "Decoding failed")
            // MPD takes the suffix from the URI as given; a URI without one decodes nothing.
            let uri: String
            switch located {
            case .path(let path): uri = path
            case .relative(let relative): uri = relative
            }
            guard let suffix = suffix(uri) else { throw failed }
            // The file is looked at before its suffix picks a decoder: a missing file says so whatever it
            // is. Only a regular file is opened (a FIFO named `x.flac` would block the thread in open).
            var info = stat()
            guard stat(PathEscaping.systemPath(path), &info) == 0 else {
                let reason = String(cString: strerror(errno))
                throw Ack.unnamed(.system, "Failed to open '\(shown)': \(reason)")
            }
            guard AudioFileKind.hasSongSuffix("." + suffix), info.st_mode & S_IFMT == S_IFREG else { throw failed }
            do throws(Fingerprint.Failure) {
                let fingerprint = try Fingerprint.compute(path: path) { cancellation.isCancelled }
                var call = call
                call.response.field("chromaprint", fingerprint)
                return call
            } catch {
                switch error {
                case .decoder(let error):
                    throw openFailure(error, shown: shown, call).map { Ack.unnamed($0.code, $0.message) } ?? failed
                case .chromaprint(let reason): throw Ack.unnamed(.unknown, reason)
                case .cancelled: throw Ack(.system, "cancelled", command: name)
                }
            }
        }
    }
}

extension Ack {
    /// The refusal of a command MPD runs in the background (`getfingerprint` once its file is found),
    /// which MPD sends without the command's name and at index 0: `ACK [52@0] {} Failed to open ...`.
    static func unnamed(_ code: AckCode, _ message: String) -> Ack {
        Ack(code, message, command: Self.unnamedMark)
    }

    /// What marks such an ACK until the session writes it: no command has this name.
    private static let unnamedMark = "\u{0}"

    /// Whether the ACK goes out without its command's name (see `unnamed`).
    var isUnnamed: Bool { self.command == Self.unnamedMark }
}
