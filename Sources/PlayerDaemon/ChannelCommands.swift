import ControlProtocol

/// MPD's client-to-client channels: `subscribe`, `unsubscribe`, `channels`, `sendmessage` and
/// `readmessages`, with MPD 0.23's answers, limits and idle events (see `ChannelRegistry`).
extension Commands {
    static func registerChannelCommands(in table: inout CommandTable<CommandHandler>) {
        func add(_ name: String, _ handler: CommandHandler) {
            guard let spec = CommandSpec.standard(name) else {
                preconditionFailure("no MPD spec for \(name)")
            }
            table.register(spec, handler)
        }
        add("subscribe", .immediate(subscribe))
        add("unsubscribe", .immediate(unsubscribe))
        add("channels", .immediate(listChannels))
        add("sendmessage", .immediate(sendMessage))
        add("readmessages", .immediate(readMessages))
    }

    /// The calling client in the registry; every client's session has one.
    private static func channelClient(_ call: CommandCall) throws(Ack) -> ChannelRegistry.ClientID {
        guard let client = call.session.channelClient else {
            throw Ack(.system, "channels are only for connected clients", command: call.name)
        }
        return client
    }

    private static func subscribe(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        switch service.channels.subscribe(try channelClient(call), to: call.argument(0)) {
        case .subscribed:
            service.hub.broadcast([.subscription], partition: service.name)
        case .invalidName:
            throw Ack(.argument, "invalid channel name", command: call.name)
        case .alreadySubscribed:
            throw Ack(.exist, "already subscribed to this channel", command: call.name)
        case .full:
            throw Ack(.exist, "subscription list is full", command: call.name)
        }
    }

    private static func unsubscribe(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        guard service.channels.unsubscribe(try channelClient(call), from: call.argument(0)) else {
            throw Ack(.noExist, "not subscribed to this channel", command: call.name)
        }
        service.hub.broadcast([.subscription], partition: service.name)
    }

    private static func listChannels(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        for channel in service.channels.channels(seenBy: try channelClient(call)) {
            call.response.field("channel", channel)
        }
    }

    private static func sendMessage(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        let channel = call.argument(0)
        guard ChannelRegistry.isValidName(channel) else {
            throw Ack(.argument, "invalid channel name", command: call.name)
        }
        guard service.channels.send(call.argument(1), to: channel, from: try channelClient(call)) else {
            throw Ack(.noExist, "nobody is subscribed to this channel", command: call.name)
        }
    }

    private static func readMessages(_ service: PlayerService, _ call: inout CommandCall) throws(Ack) {
        for message in service.channels.takeMessages(try channelClient(call)) {
            call.response.field("channel", message.channel)
            call.response.field("message", message.text)
        }
    }
}
