import ControlProtocol
import Logging
import NIOCore
import PlayerCore

#if canImport(Glibc)
    import Glibc
#endif

/// One connected client. Lives on its channel's event loop: it frames the bytes into lines, follows
/// command lists, runs one command at a time (later lines wait their turn), answers `idle` when a
/// change it waits for arrives, and never lets one client's bad input reach another.
final class ClientSession: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The client's partition's player (what `partition NAME` chose; `default` at first).
    private var service: PlayerService
    private let server: ServerState
    private let origin: ClientOrigin
    private let logger: Logger
    private var framer: LineFramer
    private var lists = CommandListParser()
    private var settings = SessionSettings() {
        didSet {
            if self.settings.partition != oldValue.partition {
                self.enterPartition()
            }
        }
    }
    /// Lines (and framing errors) waiting for the command before them to finish.
    private var pending: [LineFramer.Frame] = []
    private var pendingHead = 0
    /// True while a command runs on the audio thread; the next waits.
    private var busy = false
    /// The task running the client's deferred command, cancelled if the client goes (ending its walk).
    private var running: Task<Void, Never>?
    /// What stops the client's library query, fired if the client goes.
    private var runningQuery: WalkCancellation?
    /// Set while a pump waits for this client's next turn.
    private var pumpScheduled = false
    /// A command list waiting for its client's next turn, or for its client to read: where it goes on.
    private var pausedList: (entries: [CommandListParser.Entry], okMode: Bool, isList: Bool, index: Int)?
    /// Set by `idle`: the subsystems the client waits for.
    private var idling: Set<IdleSubsystem>?
    /// Changes since the client last heard of them (MPD keeps them for the next `idle`).
    private var unseen: Set<IdleSubsystem> = []
    private var inputClosed = false
    private var closing = false
    private var isReading = true
    /// True once the client holds one of the server's places (released when it goes).
    private var admitted = false
    private var context: ChannelHandlerContext?
    /// What the client has been answered and not yet sent. Immediate commands write into it directly;
    /// it keeps its buffer from one answer to the next (see `flush`).
    private var answer = ResponseWriter(capacity: 0)
    /// The connection's socket, to which answers are written straight when the channel has none of
    /// them queued (see `flush`); nil when the channel does not expose one.
    private var socket: NIOBSDSocket.Handle?
    /// Answers handed to the channel that it has not finished writing: until it has, later answers go
    /// the same way, behind them.
    private var writesInChannel = 0
    /// The last line run outside a list, and the request it was read as.
    private var lastLine: (line: String, request: Request)?
    /// Longer lines are not remembered: they are rarely sent twice in a row, and would hold memory.
    static let longestRememberedLine = 64
    /// The command the client ran last: a request naming it again is checked against its spec without
    /// looking its name up (a client polling `status`).
    private var lastCommand: RememberedCommand?
    /// Wrong passwords this connection has sent.
    private var wrongPasswords = 0
    /// Whether an unreadable request of this client has been logged.
    private var loggedUnreadable = false
    /// When a network client last sent anything; it is disconnected after a silence outside `idle`.
    private var lastInput = NIODeadline.now()
    private var silenceCheck: Scheduled<Void>?

    init(service: PlayerService, server: ServerState, origin: ClientOrigin, logger: Logger) {
        self.service = service
        self.server = server
        self.origin = origin
        self.logger = logger
        self.framer = LineFramer(maximumLineLength: service.configuration.maximumLineLength)
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        if let refusal = self.server.admit(self.origin) {
            self.server.logRefusal(refusal, logger: self.logger)
            self.send(Ack(.system, refusal).line, context: context)
            context.close(promise: nil)
            self.closing = true
            return
        }
        self.admitted = true
        self.socket = try? context.pipeline.syncOperations.withUnsafeTransportIfAvailable(
            of: NIOBSDSocket.Handle.self
        ) { $0 }
        if let host = self.origin.remoteHost {
            // SO_PEERCRED on a TCP socket answers the overflow uid, which is nobody's.
            self.settings.remoteHost = host
            self.watchSilence(context: context)
        } else {
            self.settings.uid = peerUID(of: context.channel)
        }
        self.settings.permission = self.origin.initialPermission(
            uid: self.settings.uid, configuration: self.service.configuration)
        let eventLoop = context.eventLoop
        let session = NIOLoopBound(self, eventLoop: eventLoop)
        self.service.hub.register(ObjectIdentifier(self), on: eventLoop) { changes in
            session.value.noteChanges(changes)
        }
        self.settings.channelClient = self.service.channels.join {
            eventLoop.execute { session.value.noteChanges([.message]) }
        }
        self.send(ResponseWriter.greeting, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if self.admitted {
            self.admitted = false
            self.server.leave(self.origin)
        }
        self.silenceCheck?.cancel()
        self.silenceCheck = nil
        self.service.hub.unregister(ObjectIdentifier(self))
        if let channelClient = self.settings.channelClient {
            self.service.channels.leave(channelClient)
        }
        self.closing = true
        self.pending.removeAll()
        self.running?.cancel()
        self.running = nil
        self.runningQuery?.cancel()
        self.runningQuery = nil
        self.pausedList = nil
        self.context = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The client half-closed (`printf 'status\n' | socat - UNIX:...`): answer what it sent, then close.
            self.inputClosed = true
            self.pump()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.logger.debug("client connection failed: \(error)")
        context.close(promise: nil)
    }

    // MARK: - Input

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.closing else { return }
        if self.origin.remoteHost != nil {
            // Only network clients are disconnected after a silence (`watchSilence`).
            self.lastInput = .now()
        }
        self.server.noteActivity()
        let buffer = self.unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { bytes in
            self.framer.feed(bytes, into: &self.pending)
        }
        self.pump()
    }

    /// Nothing to pass on: the session is the pipeline's last handler (the tail would do nothing with it).
    func channelReadComplete(context: ChannelHandlerContext) {}

    /// A client that sends faster than it reads its answers is not read from while this many of its
    /// lines wait (and not served while its unread answers pass the channel's high-water mark), so its
    /// memory stays bounded whatever it does.
    static let maximumPendingLines = 1024

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if self.pausedList != nil {
                self.resumeList()
            } else {
                self.pump()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Runs waiting lines until one must wait for the audio thread, or none is left, or this turn's
    /// share is used up: then the rest runs at the client's next turn (`TurnTaker`), after the other
    /// clients (a client sending a megabyte of `ping`s held everyone for half a second per 64 KiB read).
    private func pump() {
        guard let context = self.context else { return }
        let channel = context.channel
        var handled = 0
        while !self.busy && !self.closing && self.pendingHead < self.pending.count && channel.isWritable {
            if handled == Self.commandsPerTurn {
                self.pumpLater()
                break
            }
            handled += 1
            let frame = self.pending[self.pendingHead]
            self.pendingHead += 1
            self.handle(frame, context: context)
            if self.answer.count >= 64 * 1024 {
                // Hand big answers to the channel as they grow, so that its writability reflects them.
                self.flush(context: context)
            }
        }
        if self.pendingHead == self.pending.count {
            if self.pending.count == 1 {
                // The usual read, one line: cheaper than removing all, and the capacity stays too.
                self.pending.removeLast()
            } else {
                self.pending.removeAll(keepingCapacity: true)
            }
            self.pendingHead = 0
        }
        self.flush(context: context)
        let waiting = self.pending.count - self.pendingHead
        let reading = channel.isActive && waiting < Self.maximumPendingLines
        if reading != self.isReading {
            self.isReading = reading
            channel.setOption(ChannelOptions.autoRead, value: reading).whenComplete { _ in }
            if reading {
                context.read()
            }
        }
        if self.inputClosed && !self.busy && self.idling == nil && self.pending.isEmpty && !self.closing {
            self.closing = true
            context.close(promise: nil)
        }
    }

    /// Pumps again at this client's next turn (once, however often asked).
    private func pumpLater() {
        guard !self.pumpScheduled else { return }
        self.pumpScheduled = true
        self.server.turns.value.enqueue {
            self.pumpScheduled = false
            self.pump()
        }
    }

    private func handle(_ frame: LineFramer.Frame, context: ChannelHandlerContext) {
        if self.idling != nil {
            // While idling only `noidle` is allowed; MPD closes the connection on anything else.
            if frame == .line("noidle") {
                self.finishIdle(force: true)
            } else {
                self.closing = true
                context.close(promise: nil)
            }
            return
        }
        let action: CommandListParser.Action
        if case .line(let line) = frame {
            if let last = self.lastLine, last.line == line, !self.lists.isCollecting {
                // The same line as the last one run outside a list (a client polling `status`): outside a
                // list the parser's answer depends on the line alone, so it is the same request.
                action = .execute(last.request)
            } else {
                action = self.lists.consume(line)
                if case .execute(let request) = action, line.utf8.count <= Self.longestRememberedLine {
                    self.lastLine = (line, request)
                }
            }
        } else if let ack = self.framer.ack(for: frame) {
            // Inside a command list the line takes its slot and fails there: the list keeps one answer.
            // Logged once a connection: a client sending noise would otherwise write a line per line.
            if !self.loggedUnreadable {
                self.loggedUnreadable = true
                self.logger.info("refused a request: \(ack.message) (further ones from this client are not logged)")
            }
            action = self.lists.consumeUnreadable(ack)
        } else {
            return
        }
        switch action {
        case .collect:
            break
        case .execute(let request):
            if self.execute(request, at: 0, okMode: false, isList: false, in: nil) {
                self.answer.ok()
            }
        case .executeList(let entries, let okMode):
            self.run(entries, okMode: okMode, isList: true)
        case .reject(let error):
            if let reply = error.reply {
                self.write(reply.line)
            }
            if error.endsConnection {
                self.flush(context: context)
                self.closing = true
                context.close(promise: nil)
            }
        }
    }

    // MARK: - Running commands

    /// Runs a command list from `index` on: immediate commands at once, deferred ones on the audio
    /// thread, resuming here when they answer.
    private func run(_ entries: [CommandListParser.Entry], okMode: Bool, isList: Bool, from index: Int = 0) {
        var index = index
        var ranThisTurn = 0
        while index < entries.count {
            if index > 0 && self.mustPause(afterRunning: ranThisTurn) {
                self.pauseList(entries, okMode: okMode, isList: isList, at: index)
                return
            }
            ranThisTurn += 1
            let request: Request
            switch entries[index] {
            case .success(let value):
                request = value
            case .failure(let error):
                self.fail(
                    error.reply ?? Ack(.unknown, "malformed request", listIndex: index),
                    endsConnection: error.endsConnection)
                return
            }
            guard self.execute(request, at: index, okMode: okMode, isList: isList, in: entries) else { return }
            index += 1
        }
        self.answer.ok()
    }

    /// Runs one command, at `index` of `entries` (nil for a single command outside a list, which then
    /// needs no array). True when it has answered and the next may run; false when it failed, or answers
    /// later (then its list goes on from `finishDeferred`).
    private func execute(
        _ request: Request, at index: Int, okMode: Bool, isList: Bool, in entries: [CommandListParser.Entry]?
    ) -> Bool {
        let command: RememberedCommand
        do {
            if let last = self.lastCommand, last.spec.name == request.name {
                try last.spec.check(request, permission: self.settings.permission, listIndex: index)
                command = last
            } else {
                let entry = try Commands.table.lookup(
                    request, permission: self.settings.permission, listIndex: index)
                command = RememberedCommand(spec: entry.spec, handler: entry.handler)
                self.lastCommand = command
            }
        } catch {
            self.fail(error)
            return false
        }
        switch command.handler {
        case .session:
            // MPD runs `kill` in a list too (and answers nothing of the list).
            if isList && request.name != "kill" {
                self.fail(
                    Ack(
                        .argument, "\(request.name) is not allowed in a command list", command: request.name,
                        listIndex: index))
            } else {
                self.runSessionCommand(request)
            }
            return false
        case .answer(let write):
            write(self.service, &self.answer)
            if okMode { self.answer.listOK() }
            return true
        case .immediate(let handler):
            // The handler writes straight into the client's answer, which it borrows for the call; what a
            // failing handler wrote is taken back out.
            let mark = self.answer.count
            var call = CommandCall(
                name: request.name, arguments: request.arguments, session: self.settings,
                response: ResponseWriter(capacity: 0))
            swap(&call.response, &self.answer)
            do {
                try handler(self.service, &call)
            } catch {
                swap(&call.response, &self.answer)
                self.answer.removeAll(after: mark)
                if error.code == .password && self.origin != .socketFile {
                    self.refusePassword(Self.named(error, request, index))
                } else {
                    self.fail(Self.named(error, request, index))
                }
                return false
            }
            swap(&call.response, &self.answer)
            self.settings = call.session
            if okMode { self.answer.listOK() }
            return true
        case .deferred where isList && request.name == "add":
            self.runAdds(entries ?? [.success(request)], okMode: okMode, from: index)
            return false
        case .deferred(let handler):
            var call = CommandCall(name: request.name, arguments: request.arguments, session: self.settings)
            guard let promise = self.startDeferred(&call) else { return false }
            let service = self.service
            let sentCall = call
            self.running = Task {
                do throws(Ack) {
                    promise.succeed(.success(try await handler(service, sentCall)))
                } catch {
                    promise.succeed(.failure(error))
                }
            }
            self.finishDeferred(
                promise, entries ?? [.success(request)], okMode: okMode, isList: isList, at: index, request)
            return false
        case .library(let handler, let quick):
            var call = CommandCall(name: request.name, arguments: request.arguments, session: self.settings)
            let changeCount = self.service.library?.changeCount ?? 0
            let key = quick ? QueryAnswerCache.key(call) : nil
            if quick, let library = self.service.library {
                if let key, let kept = self.service.answers.answer(key, changeCount: changeCount) {
                    self.answer.appendRaw(bytes: kept)
                    if okMode { self.answer.listOK() }
                    return true
                }
                let service = self.service
                let attempt = call
                let answered: CommandCall?
                do {
                    answered = try library.quickly { () throws(Ack) -> CommandCall in
                        var call = attempt
                        try handler(service, &call, WalkCancellation())
                        return call
                    }
                } catch {
                    self.fail(Self.named(error, request, index))
                    return false
                }
                if let answered {
                    if let key {
                        self.service.answers.keep(answered.response, for: key, changeCount: changeCount)
                    }
                    self.settings = answered.session
                    self.answer.append(answered.response)
                    if okMode { self.answer.listOK() }
                    return true
                }
            }
            guard let promise = self.startDeferred(&call) else { return false }
            let service = self.service
            let sentCall = call
            let cancellation = WalkCancellation()
            self.runningQuery = cancellation
            FileSystemWork.submit(on: .library) {
                var call = sentCall
                do throws(Ack) {
                    try handler(service, &call, cancellation)
                    promise.succeed(.success(call))
                } catch {
                    promise.succeed(.failure(error))
                }
            }
            self.finishDeferred(
                promise, entries ?? [.success(request)], okMode: okMode, isList: isList, at: index, request
            ) { done in
                // A whole answer that was too slow to be quick (`list Artist` of 20,000 songs) is kept too.
                if let key, let stream = done.stream, !stream.hasSent {
                    service.answers.keep(done.response, for: key, changeCount: changeCount)
                }
            }
            return false
        }
    }

    /// Readies a command that answers later: what earlier commands answered goes first (a long answer
    /// is streamed past this buffer), the session waits, and the answer's stream is set. Nil when
    /// writing found the client gone and closed the channel there and then (the soak found this): then
    /// nothing more runs for it.
    private func startDeferred(_ call: inout CommandCall) -> EventLoopPromise<Result<CommandCall, Ack>>? {
        if let context = self.context {
            self.flush(context: context)
        }
        guard let context = self.context, !self.closing else { return nil }
        self.busy = true
        call.stream = ResponseStream(channel: context.channel)
        return context.eventLoop.makePromise(of: Result<CommandCall, Ack>.self)
    }

    /// Once a command that answers later has answered (on the event loop): its answer, and the rest of
    /// its list.
    private func finishDeferred(
        _ promise: EventLoopPromise<Result<CommandCall, Ack>>, _ entries: [CommandListParser.Entry], okMode: Bool,
        isList: Bool, at index: Int, _ request: Request, answered: ((CommandCall) -> Void)? = nil
    ) {
        promise.futureResult.assumeIsolated().whenSuccess { [self] result in
            self.busy = false
            self.running = nil
            self.runningQuery = nil
            guard !self.closing else { return }
            switch result {
            case .success(let done):
                answered?(done)
                self.settings = done.session
                self.answer.append(done.response)
                if okMode { self.answer.listOK() }
                self.run(entries, okMode: okMode, isList: isList, from: index + 1)
            case .failure(let ack):
                self.fail(Self.named(ack, request, index))
            }
            self.pump()
        }
    }

    /// Lines, or commands of one list, that a client runs in a row before the event loop serves the
    /// other clients.
    static let commandsPerTurn = 64

    /// Whether a list must stop for now: its turn is used up, its answer so far is large, or its client
    /// does not read (a list of 65,536 commands ran in one turn of the event loop, seconds long, and
    /// kept every answer in memory).
    private func mustPause(afterRunning count: Int) -> Bool {
        guard let context = self.context else { return false }
        return count >= Self.commandsPerTurn || self.answer.count >= 64 * 1024 || !context.channel.isWritable
    }

    /// Stops a list before `index`, sends what it has answered so far, and goes on at the client's next
    /// turn, once the client reads if it must. Lines after the list wait (`busy`).
    private func pauseList(_ entries: [CommandListParser.Entry], okMode: Bool, isList: Bool, at index: Int) {
        guard let context = self.context else { return }
        self.busy = true
        self.pausedList = (entries, okMode, isList, index)
        self.flush(context: context)
        if context.channel.isWritable {
            self.server.turns.value.enqueue { self.resumeList() }
        }
        // Otherwise channelWritabilityChanged resumes it.
    }

    /// Goes on with a paused list, if its client has room for more answers.
    private func resumeList() {
        guard let context = self.context, !self.closing, context.channel.isWritable,
            let paused = self.pausedList
        else { return }
        self.pausedList = nil
        self.busy = false
        self.run(paused.entries, okMode: paused.okMode, isList: paused.isList, from: paused.index)
        self.pump()
    }

    /// Runs the `add`s of a command list from `index` up to the next other command in one go (see
    /// `Commands.addAll`), then the rest of the list.
    private func runAdds(_ entries: [CommandListParser.Entry], okMode: Bool, from index: Int) {
        var calls: [CommandCall] = []
        var requests: [Request] = []
        for entry in entries[index...] {
            guard case .success(let request) = entry, request.name == "add",
                (try? Commands.table.lookup(
                    request, permission: self.settings.permission, listIndex: index + calls.count)) != nil
            else { break }
            calls.append(CommandCall(name: request.name, arguments: request.arguments, session: self.settings))
            requests.append(request)
        }
        guard let context = self.context else { return }
        self.busy = true
        let service = self.service
        let sentCalls = calls
        let promise = context.eventLoop.makePromise(of: (added: Int, failure: Ack?).self)
        self.running = Task { promise.succeed(await Commands.addAll(service, sentCalls)) }
        promise.futureResult.assumeIsolated().whenSuccess { [self] result in
            self.busy = false
            self.running = nil
            guard !self.closing else { return }
            if okMode {
                for _ in 0..<result.added { self.answer.listOK() }
            }
            if let failure = result.failure {
                self.fail(Self.named(failure, requests[result.added], index + result.added))
            } else {
                self.run(entries, okMode: okMode, isList: true, from: index + calls.count)
            }
            self.pump()
        }
    }

    /// An ACK from a handler, naming its command (argument parsers do not know it) at its list index.
    private static func named(_ ack: Ack, _ request: Request, _ index: Int) -> Ack {
        if ack.isUnnamed {
            return Ack(ack.code, ack.message)
        }
        return ack.command.isEmpty ? ack.attributed(to: request.name, listIndex: index) : ack.at(listIndex: index)
    }

    private func fail(_ ack: Ack, endsConnection: Bool = false) {
        self.write(ack.line)
        if endsConnection, let context = self.context {
            self.flush(context: context)
            self.closing = true
            context.close(promise: nil)
        }
    }

    /// Answers a wrong password after a wait that grows with each one from the same source (see
    /// `PasswordGuard`), reading nothing more from the client meanwhile; the connection's last allowed
    /// one is answered and the connection closed. Only for clients a socket file does not vouch for
    /// (network, abstract socket): a socket file's clients may do everything without a password, so
    /// guessing gains them nothing, and they are answered at once.
    private func refusePassword(_ ack: Ack) {
        guard let context = self.context else { return }
        let source = self.origin.remoteHost ?? "local user \(self.settings.uid.map(String.init) ?? "unknown")"
        let delay = self.server.passwordRefused(by: source, logger: self.logger)
        self.wrongPasswords += 1
        let endsConnection = self.wrongPasswords >= PasswordGuard.perConnection
        self.busy = true
        let session = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
            let session = session.value
            session.busy = false
            guard !session.closing else { return }
            session.fail(ack, endsConnection: endsConnection)
            session.pump()
        }
    }

    /// Disconnects a network client that has sent nothing for `networkTimeout`, unless it waits in
    /// `idle` (MPD's `connection_timeout`): a client that connects and goes silent holds no place.
    private func watchSilence(context: ChannelHandlerContext) {
        let timeout = self.service.configuration.networkTimeout
        let amount = TimeAmount(timeout)
        let session = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.silenceCheck = context.eventLoop.scheduleTask(deadline: self.lastInput + amount) {
            let session = session.value
            guard let context = session.context, !session.closing else { return }
            if session.idling == nil && !session.busy && NIODeadline.now() - session.lastInput >= amount {
                session.logger.info("closed a network client silent for \(timeout)")
                session.closing = true
                context.close(promise: nil)
                return
            }
            if session.idling != nil || session.busy {
                session.lastInput = .now()
            }
            session.watchSilence(context: context)
        }
    }

    private func runSessionCommand(_ request: Request) {
        switch request.name {
        case "close":
            self.closing = true
            if let context = self.context {
                self.flush(context: context)
                context.close(promise: nil)
            }
        case "noidle":
            // Not idling: MPD ignores it and answers nothing.
            break
        case "kill":
            // MPD closes the connection at once, without answering what is unsent (the list's answers,
            // earlier lines of the same read), and stops.
            self.logger.info("stopping: a client sent kill")
            self.answer.removeAll()
            self.closing = true
            self.context?.close(promise: nil)
            DaemonStop.request()
        default:
            do {
                self.idling = try Argument.idleSubsystems(request.arguments)
            } catch {
                self.write(error.attributed(to: "idle", listIndex: 0).line)
                return
            }
            self.finishIdle(force: false)
        }
    }

    // MARK: - Partitions

    /// Moves the client into the partition its settings name (a handler of `partition` checked that it
    /// exists): its commands act on that partition's player from the next one on, it hears of that
    /// partition's changes and sees its channels, and its next `idle` reports everything a partition
    /// has, as MPD's does, so that it reads the new partition's state.
    private func enterPartition() {
        guard let partition = self.service.partitions.find(self.settings.partition) else {
            self.settings.partition = self.service.name
            return
        }
        self.service = partition
        self.service.hub.move(ObjectIdentifier(self), to: partition.name)
        if let channelClient = self.settings.channelClient {
            // Channels are a partition's, as in MPD: its subscriptions go with it.
            self.service.channels.move(channelClient, toPartition: partition.name)
        }
        self.unseen.formUnion([.playlist, .player, .mixer, .output, .options])
    }

    // MARK: - Idle

    private func noteChanges(_ changes: Set<IdleSubsystem>) {
        guard !self.closing else { return }
        self.unseen.formUnion(changes)
        if self.idling != nil {
            self.finishIdle(force: false)
            if let context = self.context {
                self.flush(context: context)
            }
        }
    }

    /// Answers the running `idle` if a change it waits for has happened (or `noidle` forces it).
    private func finishIdle(force: Bool) {
        guard let wanted = self.idling else { return }
        let relevant = wanted.isEmpty ? self.unseen : self.unseen.intersection(wanted)
        guard force || !relevant.isEmpty else { return }
        for subsystem in IdleSubsystem.allCases where relevant.contains(subsystem) {
            self.write("changed: \(subsystem.rawValue)\n")
        }
        // An idle that answers forgets every change, those it was not asked for too, as MPD's
        // Client::IdleNotify does; `noidle` (answered with nothing) forgets none.
        if force {
            self.unseen.subtract(relevant)
        } else {
            self.unseen.removeAll()
        }
        self.idling = nil
        self.answer.ok()
        self.pump()
    }

    // MARK: - Output

    private func write(_ text: String) {
        self.answer.appendRaw(text)
    }

    private func send(_ text: String, context: ChannelHandlerContext) {
        self.write(text)
        self.flush(context: context)
    }

    /// An answer buffer that has grown past this (a long listing's) is let go once sent, so that an
    /// idle client holds little memory.
    static let keptAnswerCapacity = 4096

    /// Sends what the client has been answered. Written straight to the socket when the channel has
    /// nothing of this client's queued and the socket takes it all at once, as it nearly always does:
    /// the channel's write path cost more than the rest of a `status` request. What the socket does not
    /// take (a client slow to read, an error) goes through the channel, which waits for room, counts it
    /// against the high-water mark and meets the error, as it did for every answer before.
    private func flush(context: ChannelHandlerContext) {
        guard !self.answer.isEmpty else { return }
        var sent = 0
        if let socket = self.socket, self.writesInChannel == 0, self.context != nil, !self.closing {
            sent = self.answer.withUnsafeBytes { Self.send($0, to: socket) }
        }
        if sent < self.answer.count {
            var buffer = context.channel.allocator.buffer(capacity: self.answer.count - sent)
            self.answer.withUnsafeBytes { _ = buffer.writeBytes(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            self.writesInChannel += 1
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { [self] _ in
                // Only counts: this may run inside the channel's close, after its socket is gone.
                self.writesInChannel -= 1
            }
            context.writeAndFlush(self.wrapOutboundOut(buffer), promise: written)
        }
        if self.answer.capacity > Self.keptAnswerCapacity {
            self.answer = ResponseWriter(capacity: 0)
        } else {
            self.answer.removeAll()
        }
    }

    /// Writes what `bytes` the socket takes now, without waiting; returns how many (0 on an error, which
    /// the channel then meets itself).
    private static func send(_ bytes: UnsafeRawBufferPointer, to socket: NIOBSDSocket.Handle) -> Int {
        while true {
            let sent = Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if sent >= 0 {
                return sent
            }
            if errno != EINTR {
                return 0
            }
        }
    }
}

/// A command's table entry, kept by a session for its next request (one reference to copy, not a spec
/// and a handler).
private final class RememberedCommand {
    let spec: CommandSpec
    let handler: CommandHandler

    init(spec: CommandSpec, handler: CommandHandler) {
        self.spec = spec
        self.handler = handler
    }
}
