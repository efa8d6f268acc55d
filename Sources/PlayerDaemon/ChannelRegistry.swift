import Synchronization

/// MPD's client-to-client channels: which channels each connected client is subscribed to, and the
/// messages waiting for it (`subscribe`, `unsubscribe`, `channels`, `sendmessage`, `readmessages`).
///
/// Its rules are MPD 0.23's (src/client/Subscribe.cxx, Message.cxx): a channel's name is one or more of
/// ASCII letters, digits, `_`, `-`, `.` and `:`; a client holds 16 subscriptions at most; a client keeps
/// 64 unread messages at most, and a message sent to a client whose queue is full is dropped for that
/// client only (the sender hears "nobody is subscribed" only when no subscriber took it). A client is
/// told of messages (idle `message`) when the first one lands in its empty queue. A client that goes
/// leaves with its subscriptions and messages, without an idle `subscription`, as in MPD.
///
/// As in MPD, a client hears only the clients of its partition: `channels` lists their subscriptions and
/// `sendmessage` reaches them alone (MPD walks `client.GetPartition().clients`). Every client starts in
/// `default`; `move(_:toPartition:)` follows a client's `partition` command.
///
/// Nobody waits on anybody: a send appends to each subscriber's queue under one short lock and wakes
/// those whose queue was empty on their own event loops, so a client that floods or never reads holds
/// up no one, and what it can make the daemon hold is bounded (see `maximumQueuedBytes`).
final class ChannelRegistry: Sendable {
    /// A connected client, as the registry knows it: a number never given twice.
    struct ClientID: Sendable, Hashable {
        fileprivate let value: UInt64
    }

    /// One message as a subscriber reads it.
    struct Message: Sendable, Hashable {
        var channel: String
        var text: String
    }

    /// What `subscribe` comes to.
    enum SubscribeResult: Sendable, Hashable {
        case subscribed
        case invalidName
        case alreadySubscribed
        case full
    }

    /// MPD's `Client::MAX_SUBSCRIPTIONS`.
    static let maximumSubscriptions = 16
    /// MPD's `Client::MAX_MESSAGES`.
    static let maximumMessages = 64
    /// The most bytes of channel names and texts one client's unread messages may hold. MPD reads lines
    /// of at most 8 KiB, so its 64 messages hold at most 512 KiB and never reach this; playerd reads
    /// lines of 64 KiB, and without this 64 clients that never read could be made to hold 256 MiB.
    static let maximumQueuedBytes = 1 << 20

    private struct Client {
        /// The partition the client is in.
        var partition = "default"
        var subscriptions: Set<String> = []
        var messages: [Message] = []
        var queuedBytes = 0
        /// Tells the client's session that messages wait (on the session's event loop).
        let notify: @Sendable () -> Void
    }

    private struct State {
        var clients: [UInt64: Client] = [:]
        var nextID: UInt64 = 1
    }

    private let state = Mutex(State())

    init() {}

    /// Whether `name` may name a channel (MPD's `client_message_valid_channel_name`).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
                    UInt8(ascii: ":"):
                    true
                default:
                    false
                }
            }
    }

    /// Registers a client that has connected; `notify` runs (from any thread) when a message lands in
    /// its empty queue.
    func join(notify: @escaping @Sendable () -> Void) -> ClientID {
        self.state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.clients[id] = Client(notify: notify)
            return ClientID(value: id)
        }
    }

    /// Forgets a client that has gone: its subscriptions and unread messages with it.
    func leave(_ client: ClientID) {
        _ = self.state.withLock { $0.clients.removeValue(forKey: client.value) }
    }

    /// The number of clients registered.
    var clientCount: Int { self.state.withLock { $0.clients.count } }

    /// Subscribes `client` to `channel`, checked in MPD's order: the name, the limit, then a repeat.
    func subscribe(_ client: ClientID, to channel: String) -> SubscribeResult {
        guard Self.isValidName(channel) else { return .invalidName }
        return self.state.withLock { state in
            // A client that has left runs no more commands; it is refused as one with no room would be.
            guard let entry = state.clients[client.value], entry.subscriptions.count < Self.maximumSubscriptions
            else { return .full }
            guard state.clients[client.value]?.subscriptions.insert(channel).inserted == true else {
                return .alreadySubscribed
            }
            return .subscribed
        }
    }

    /// Puts `client` in the partition `name`, with its subscriptions and unread messages.
    func move(_ client: ClientID, toPartition name: String) {
        self.state.withLock { $0.clients[client.value]?.partition = name }
    }

    /// Ends `client`'s subscription to `channel`; false when it had none.
    func unsubscribe(_ client: ClientID, from channel: String) -> Bool {
        self.state.withLock { state in
            state.clients[client.value]?.subscriptions.remove(channel) != nil
        }
    }

    /// Every channel some client of `client`'s partition is subscribed to, each once, in byte order
    /// (MPD's `std::set`).
    func channels(seenBy client: ClientID) -> [String] {
        let names = self.state.withLock { state in
            let partition = state.clients[client.value]?.partition
            return state.clients.values.reduce(into: Set<String>()) { names, other in
                if other.partition == partition {
                    names.formUnion(other.subscriptions)
                }
            }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Puts a message from `sender` into the queue of every client of its partition subscribed to
    /// `channel` that has room for it, and wakes those whose queue was empty. False when no client took
    /// it (nobody subscribed, or every subscriber's queue full). The name must be valid (see
    /// `isValidName`).
    func send(_ text: String, to channel: String, from sender: ClientID) -> Bool {
        let message = Message(channel: channel, text: text)
        let size = channel.utf8.count + text.utf8.count
        let (taken, woken) = self.state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            let partition = state.clients[sender.value]?.partition
            let subscribers = state.clients.compactMap { id, client in
                client.partition == partition && client.subscriptions.contains(channel) ? id : nil
            }
            var taken = false
            var woken: [@Sendable () -> Void] = []
            for id in subscribers {
                // Only the figures are read out: a copy of the client would make the append copy its queue.
                guard
                    let (count, bytes, notify) = state.clients[id].map({
                        ($0.messages.count, $0.queuedBytes, $0.notify)
                    }),
                    count < Self.maximumMessages, bytes + size <= Self.maximumQueuedBytes
                else { continue }
                taken = true
                if count == 0 {
                    woken.append(notify)
                }
                state.clients[id]?.messages.append(message)
                state.clients[id]?.queuedBytes += size
            }
            return (taken, woken)
        }
        for notify in woken {
            notify()
        }
        return taken
    }

    /// Takes `client`'s unread messages, oldest first, and empties its queue.
    func takeMessages(_ client: ClientID) -> [Message] {
        self.state.withLock { state in
            let messages = state.clients[client.value]?.messages ?? []
            state.clients[client.value]?.messages = []
            state.clients[client.value]?.queuedBytes = 0
            return messages
        }
    }
}
