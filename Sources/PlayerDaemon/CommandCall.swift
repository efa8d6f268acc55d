import ControlProtocol
import MusicTags
import PlayerCore

/// What one client has set for itself.
struct SessionSettings: Sendable {
    /// The client's uid, from SO_PEERCRED; nil when the kernel did not say, and for remote clients.
    var uid: UInt32?
    /// The address of a client connected over the network (`--listen HOST:PORT`); nil for a client on
    /// this machine (a Unix socket). Only local clients may name files by absolute path (MPD's rule).
    var remoteHost: String?
    /// The tags song blocks show (`tagtypes`).
    var tagTypes = TagName.announced
    /// The most bytes of a binary answer's chunk (`binarylimit`; `albumart`, `readpicture`).
    var binaryLimit = 8192
    /// What the client may do: set when it connects (see `ClientOrigin`), until a `password` grants
    /// what that password grants.
    var permission = Permission.all
    /// The client in the channel registry (`subscribe`, `readmessages` ...); nil outside a client's session.
    var channelClient: ChannelRegistry.ClientID?
    /// The partition the client's commands act on (`partition NAME`).
    var partition = PartitionRegistry.defaultName

    /// True for a client on this machine.
    var isLocal: Bool { self.remoteHost == nil }
}

/// One command being run: its arguments, the client's settings, the answer being written.
struct CommandCall: Sendable {
    /// The command's name.
    var name: String
    /// Its arguments, already counted against the table.
    var arguments: [String]
    /// The client's settings; a handler may change them (`tagtypes`).
    var session: SessionSettings
    /// The answer, before `OK`.
    var response = ResponseWriter(capacity: 512)
    /// Where a long answer goes while it is being written; nil outside a client's session (tests).
    var stream: ResponseStream?

    /// Hands the answer so far to the client if it has grown past a chunk; false when the client has
    /// gone. Without a stream the answer just grows.
    mutating func flushIfLarge() -> Bool {
        guard let stream = self.stream, self.response.count >= 64 * 1024 else { return true }
        return stream.send(&self.response)
    }

    /// The argument at `index`, which the table guarantees exists.
    func argument(_ index: Int) -> String { self.arguments[index] }

    /// The argument at `index`, if given.
    func optionalArgument(_ index: Int) -> String? {
        index < self.arguments.count ? self.arguments[index] : nil
    }
}

/// How a command runs: at once on the client's event loop (reads of the published status, the
/// client's own settings), or by asking the audio thread and answering when it has.
enum CommandHandler: Sendable {
    /// Runs synchronously; throws the ACK to send.
    case immediate(@Sendable (PlayerService, inout CommandCall) throws(Ack) -> Void)
    /// Runs synchronously and only writes an answer from what the service publishes (`status`): it takes
    /// no arguments, needs nothing of the client's settings and cannot fail, so it writes straight into
    /// the client's answer, without a `CommandCall`.
    case answer(@Sendable (PlayerService, inout ResponseWriter) -> Void)
    /// Runs asynchronously; returns the call with its answer written.
    case deferred(@Sendable (PlayerService, CommandCall) async throws(Ack) -> CommandCall)
    /// Runs synchronously on the library's threads (reads of the database, which may take long and
    /// stream); the cancellation fires when the client goes. With `quick`, it is first tried at once on
    /// the event loop as a quick query (see `MusicLibrary.quickly`), which most answers are.
    case library(@Sendable (PlayerService, inout CommandCall, WalkCancellation) throws(Ack) -> Void, quick: Bool)
    /// Handled by the session itself (idle, noidle, close): in the table only to be listed and counted.
    case session
}
