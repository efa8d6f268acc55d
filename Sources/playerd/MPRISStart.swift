import Logging
import MPRIS
import PlayerClient
import PlayerDaemon

extension Playerd {
    /// `--mpris on|off` (default on).
    static func mprisEnabled(_ value: String?) throws(UsageError) -> Bool {
        switch value?.lowercased() ?? "on" {
        case "on", "1", "yes": return true
        case "off", "0", "no": return false
        case let other: throw UsageError("invalid --mpris \"\(other)\": expected on or off")
        }
    }

    /// Exports MPRIS for this daemon on the session bus, through a client of its own inside the
    /// process. No session bus (the system service, a console login) is normal: one line, and playerd
    /// goes on without it.
    static func startMPRIS(daemon: Daemon, logger: Logger) -> MPRISBridge? {
        let bridge = MPRISBridge(
            configuration: .init(serverName: "playerd") {
                try MPDConnection(descriptor: try daemon.connectInternalClient(), socketPath: "playerd (in-process)")
            }, logger: logger)
        do {
            let name = try bridge.start()
            logger.info("MPRIS: \(name) on the session bus")
            return bridge
        } catch .noSessionBus(let reason) {
            logger.notice(
                "MPRIS: not exported, no session bus (\(reason)); media keys and desktop widgets will not see playerd")
        } catch {
            logger.warning("MPRIS: not exported: \(error)")
        }
        return nil
    }
}
