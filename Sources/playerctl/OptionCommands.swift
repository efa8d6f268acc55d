import ArgumentParser
import PlayerClient

/// `on` or `off`, for the playback options.
enum Switch: String, ExpressibleByArgument, CaseIterable {
    /// Turn the option on.
    case on
    /// Turn the option off.
    case off
}

/// `on`, `off` or `oneshot`, for `single`.
enum SingleSwitch: String, ExpressibleByArgument, CaseIterable {
    /// Stop (or repeat) after each song.
    case on
    /// Play on to the next song.
    case off
    /// Stop after the current song only, then turn off.
    case oneshot
}

/// `repeat [on|off]`.
struct RepeatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repeat", abstract: "Start the queue again after its end: on, off, or toggle.")

    @OptionGroup var global: GlobalOptions

    @Argument var value: Switch?

    func run() throws {
        try setOption("repeat", self.value, in: self.global) { $0.repeat }
    }
}

/// `random [on|off]`.
struct RandomCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "random", abstract: "Play the queue in a shuffled order: on, off, or toggle.")

    @OptionGroup var global: GlobalOptions

    @Argument var value: Switch?

    func run() throws {
        try setOption("random", self.value, in: self.global) { $0.random }
    }
}

/// `consume [on|off]`.
struct ConsumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume", abstract: "Remove each song from the queue once played: on, off, or toggle.")

    @OptionGroup var global: GlobalOptions

    @Argument var value: Switch?

    func run() throws {
        try setOption("consume", self.value, in: self.global) { $0.consume }
    }
}

/// `single [on|off|oneshot]`.
struct SingleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "single", abstract: "Stop after each song (or repeat it): on, off, oneshot, or toggle.")

    @OptionGroup var global: GlobalOptions

    @Argument var value: SingleSwitch?

    func run() throws {
        let connection = try self.global.connect()
        let wanted: Status.Single
        switch self.value {
        case .on: wanted = .on
        case .off: wanted = .off
        case .oneshot: wanted = .oneshot
        case nil: wanted = try connection.status().single == .off ? .on : .off
        }
        _ = try connection.command("single", [wanted.rawValue])
    }
}

/// Sends `repeat 1` and the like; with no value, reads the status and sends the opposite.
private func setOption(
    _ name: String, _ value: Switch?, in global: GlobalOptions, current: (Status) -> Bool
) throws {
    let connection = try global.connect()
    let on: Bool
    switch value {
    case .on: on = true
    case .off: on = false
    case nil: on = !current(try connection.status())
    }
    _ = try connection.command(name, [on ? "1" : "0"])
}
