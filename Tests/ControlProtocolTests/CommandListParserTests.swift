import ControlProtocol
import Testing

@Suite("Command lists")
struct CommandListParserTests {
    @Test("an ordinary command outside a list runs at once")
    func single() {
        var parser = CommandListParser()
        #expect(parser.consume("play 3") == .execute(Request(name: "play", arguments: ["3"])))
        #expect(!parser.isCollecting)
    }

    @Test(
        "collects until command_list_end, in both modes",
        arguments: [("command_list_begin", false), ("command_list_ok_begin", true)])
    func collects(_ begin: String, _ okMode: Bool) {
        var parser = CommandListParser()
        #expect(parser.consume(begin) == .collect)
        #expect(parser.isCollecting)
        #expect(parser.consume("status") == .collect)
        #expect(parser.consume("currentsong") == .collect)
        #expect(
            parser.consume("command_list_end")
                == .executeList(
                    [.success(Request(name: "status")), .success(Request(name: "currentsong"))], okMode: okMode))
        #expect(!parser.isCollecting)
        #expect(parser.consume("ping") == .execute(Request(name: "ping")))
    }

    @Test("what mpc sends after every command")
    func mpcStatusPoll() {
        var parser = CommandListParser()
        let actions = "command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end".split(separator: "\n").map {
            parser.consume(String($0))
        }
        #expect(
            actions.last
                == .executeList(
                    [.success(Request(name: "status")), .success(Request(name: "currentsong"))], okMode: true))
    }

    @Test("an empty list is fine and runs nothing")
    func emptyList() {
        var parser = CommandListParser()
        _ = parser.consume("command_list_ok_begin")
        #expect(parser.consume("command_list_end") == .executeList([], okMode: true))
    }

    @Test("the list lines may carry trailing whitespace, as MPD strips it")
    func trailingWhitespace() {
        var parser = CommandListParser()
        #expect(parser.consume("command_list_begin \t") == .collect)
        #expect(parser.consume("ping") == .collect)
        #expect(parser.consume("command_list_end\r") == .executeList([.success(Request(name: "ping"))], okMode: false))
    }

    @Test("a nested begin is stored and fails at its own index, after the commands before it")
    func nested() {
        var parser = CommandListParser()
        _ = parser.consume("command_list_begin")
        _ = parser.consume("ping")
        _ = parser.consume("command_list_ok_begin")
        _ = parser.consume("ping")
        guard case .executeList(let entries, okMode: false) = parser.consume("command_list_end") else {
            Issue.record("the list did not run")
            return
        }
        #expect(entries.count == 3)
        #expect(entries[0] == .success(Request(name: "ping")))
        #expect(entries[1].failure?.reply?.line == "ACK [5@1] {} unknown command \"command_list_ok_begin\"\n")
        #expect(entries[1].failure?.endsConnection == false)
        #expect(entries[2] == .success(Request(name: "ping")))
    }

    @Test(
        "command_list_end outside a list, or a list command with arguments, is an unknown command",
        arguments: ["command_list_end", "command_list_begin x", "command_list_ok_begin \"\"", "command_list_end 1"])
    func outsideList(_ line: String) {
        var parser = CommandListParser()
        let name = String(line.prefix { $0 != " " })
        #expect(parser.consume(line) == .reject(.rejected(Ack(.unknown, "unknown command \"\(name)\""))))
        #expect(!parser.isCollecting)
    }

    @Test("a malformed line in a list fails when reached, at its index, as MPD tokenizes lazily")
    func lazyErrors() {
        var parser = CommandListParser()
        _ = parser.consume("command_list_ok_begin")
        _ = parser.consume("ping")
        _ = parser.consume("find \"x")
        _ = parser.consume("pl@y")
        let action = parser.consume("command_list_end")
        #expect(
            action
                == .executeList(
                    [
                        .success(Request(name: "ping")),
                        .failure(.rejected(Ack(.unknown, "Missing closing '\"'", listIndex: 1))),
                        .failure(.malformedName(Ack(.unknown, "Invalid word character", listIndex: 2))),
                    ], okMode: true))
    }

    @Test("a line that could not be read (too long, not UTF-8) takes its slot in a list and fails there")
    func unreadableLineInList() {
        let tooLong = Ack(.argument, "line too long: more than 65536 bytes")
        var parser = CommandListParser()
        #expect(parser.consumeUnreadable(tooLong) == .reject(.rejected(tooLong)))
        _ = parser.consume("command_list_ok_begin")
        _ = parser.consume("ping")
        #expect(parser.consumeUnreadable(tooLong) == .collect)
        _ = parser.consume("ping")
        #expect(
            parser.consume("command_list_end")
                == .executeList(
                    [
                        .success(Request(name: "ping")),
                        .failure(.rejected(Ack(.argument, "line too long: more than 65536 bytes", listIndex: 1))),
                        .success(Request(name: "ping")),
                    ], okMode: true))
    }

    @Test("a line that is not MPD hangs up at once, even inside a list")
    func notMPDInList() {
        var parser = CommandListParser()
        _ = parser.consume("command_list_begin")
        #expect(parser.consume("Status") == .reject(.notMPD))
        #expect(!parser.isCollecting)
        #expect(parser.consume("") == .reject(.notMPD))
    }

    @Test("a list over the command limit is dropped and answered with one ACK at its end")
    func commandLimit() {
        var parser = CommandListParser(maximumCommands: 3)
        _ = parser.consume("command_list_begin")
        for _ in 0..<5 {
            #expect(parser.consume("add x") == .collect)
        }
        #expect(parser.isCollecting)
        let action = parser.consume("command_list_end")
        #expect(
            action == .reject(.rejected(Ack(.argument, "command list too long: more than 3 commands", listIndex: 3))))
        if case .reject(let error) = action {
            #expect(error.reply?.line == "ACK [2@3] {} command list too long: more than 3 commands\n")
            #expect(!error.endsConnection)
        }
        #expect(!parser.isCollecting)
        #expect(parser.consume("ping") == .execute(Request(name: "ping")))
    }

    @Test("a list of exactly the limit runs")
    func exactLimit() {
        var parser = CommandListParser(maximumCommands: 3)
        _ = parser.consume("command_list_begin")
        for _ in 0..<3 {
            _ = parser.consume("ping")
        }
        #expect(
            parser.consume("command_list_end")
                == .executeList(Array(repeating: .success(Request(name: "ping")), count: 3), okMode: false))
    }

    @Test("a list over the byte budget, counted as MPD does (each line plus one)")
    func byteLimit() {
        var parser = CommandListParser(maximumBytes: 10)
        _ = parser.consume("command_list_begin")
        _ = parser.consume("ping")  // 5
        _ = parser.consume("ping")  // 10
        #expect(
            parser.consume("command_list_end")
                == .executeList(Array(repeating: .success(Request(name: "ping")), count: 2), okMode: false))
        _ = parser.consume("command_list_begin")
        _ = parser.consume("ping")
        _ = parser.consume("ping")
        _ = parser.consume("p")
        #expect(
            parser.consume("command_list_end")
                == .reject(.rejected(Ack(.argument, "command list too long: more than 10 bytes", listIndex: 2))))
    }
}
