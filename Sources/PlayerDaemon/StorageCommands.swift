import ControlProtocol

/// MPD's storage commands, `listmounts`, `mount` and `unmount`, answered as Debian's mpd 0.23.12
/// answers them with a local music directory and no `cache_directory`: the music directory is the one
/// mount, at the root, and nothing else can be mounted. playerd has no storage plugins; it refuses a
/// mount in mpd's words, after the same checks in mpd's order (src/command/StorageCommands.cxx).
extension Commands {
    static func registerStorageCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("listmounts", .immediate(listMounts))
        add("mount", .immediate(mount))
        add("unmount", .immediate(unmount))
        // Debian's mpd is built with neighbor plugins, none of which is configured: it answers
        // `listneighbors` with this refusal and leaves it out of `commands` (AllCommands.cxx); so does
        // playerd, which has none.
        table.register(
            CommandSpec("listneighbors", arguments: 0, .read),
            .immediate { _, call throws(Ack) in
                throw Ack(.unknown, "No neighbor plugin configured", command: call.name)
            })
    }

    /// The music directory, MPD's root storage; MPD's refusal when there is none.
    private static func rootStorage(_ service: PlayerService, _ call: CommandCall) throws(Ack) -> String {
        guard let musicDirectory = service.configuration.musicDirectory else {
            throw Ack(.noExist, "No database", command: call.name)
        }
        return musicDirectory
    }

    /// `listmounts`: the root mount; its place on disk only for clients on this machine (MPD's rule, as
    /// for `config`).
    private static func listMounts(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let musicDirectory = try rootStorage(service, call)
        call.response.field("mount", "")
        if call.session.isLocal {
            call.response.field("storage", musicDirectory)
        }
    }

    /// What mpd's storage plugins (Debian's build: smbclient, nfs, curl) make of a URI it would mount.
    enum StorageURI: Equatable {
        /// A plugin takes it; mounting it then fails for want of a `cache_directory`.
        case remote
        /// `nfs://` without a path after the server.
        case malformedNFS
        /// No plugin takes it.
        case unrecognized

        init(_ uri: String) {
            let lowered = uri.lowercased()
            if lowered.hasPrefix("nfs://") {
                self = lowered.dropFirst("nfs://".count).contains("/") ? .remote : .malformedNFS
            } else if ["smb://", "http://", "https://"].contains(where: { lowered.hasPrefix($0) }) {
                self = .remote
            } else {
                // Local paths (mpd's local plugin mounts none by URI), `udisks://` (which needs the
                // system bus) and every other scheme.
                self = .unrecognized
            }
        }
    }

    /// `mount LOCAL REMOTE`: refused as mpd refuses it. A URI one of mpd's plugins takes is mounted for a
    /// moment there (clients idling on `mount` hear of it) before its database refuses it; playerd says
    /// the same.
    private static func mount(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let musicDirectory = try rootStorage(service, call)
        let local = call.argument(0)
        let remote = call.argument(1)
        guard !local.isEmpty, !local.contains("/") else {
            throw Ack(.argument, "Bad mount point", command: call.name)
        }
        guard remote != musicDirectory else {
            throw Ack(.argument, "This storage is already mounted", command: call.name)
        }
        switch StorageURI(remote) {
        case .remote:
            service.hub.broadcast([.mount])
            throw Ack(.noExist, "No 'cache_directory' configured", command: call.name)
        case .malformedNFS:
            throw Ack(.unknown, "Malformed nfs:// URI", command: call.name)
        case .unrecognized:
            throw Ack(.argument, "Unrecognized storage URI", command: call.name)
        }
    }

    /// `unmount LOCAL`: nothing but the root is mounted, and the root cannot be unmounted.
    private static func unmount(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        _ = try rootStorage(service, call)
        guard !call.argument(0).isEmpty else {
            throw Ack(.argument, "Bad mount point", command: call.name)
        }
        throw Ack(.argument, "Not a mount point", command: call.name)
    }
}
