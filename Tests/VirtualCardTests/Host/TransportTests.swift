import ISO7816
import Testing
import VirtualCard

@Suite("APDUTransport over an emulated card")
struct TransportTests {
    let selectCommand = CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: DemoApplication.defaultAID, ne: 256)

    func transport(_ configure: (inout HostBehaviour) -> Void = { _ in }, extended: Bool = true,
                   policy: TransmissionPolicy = .standard) -> (APDUTransport, ApplicationHost, Locked<[Exchange]>) {
        var b = HostBehaviour()
        configure(&b)
        let host = ApplicationHost(applications: [DemoApplication()], behaviour: b)
        let seen = Locked([Exchange]())
        let t = APDUTransport(channel: EmulatedChannel(card: host, supportsExtendedLength: extended), policy: policy) { e in
            seen.withLock { $0.append(e) }
        }
        return (t, host, seen)
    }

    @Test("61xx: GET RESPONSE with the original CLA until done; a 1000-byte answer arrives whole")
    func getResponse() throws {
        let (t, host, seen) = transport { $0.usesGetResponse = true; $0.requiresGetResponseCLA = true }
        _ = try t.send(selectCommand)
        let long = try t.send(CommandAPDU(cla: 0x80, ins: 0xEE, p1: 0x03, p2: 0xE8, ne: 256))
        #expect(long.statusWord == .success)
        #expect(long.data.count == 1000)
        #expect(long.data == (0..<1000).map { UInt8($0 & 0xFF) })
        let getResponses = seen.current.filter { $0.purpose == .getResponse }
        // One GET RESPONSE for the SELECT's FCI, then 1000 bytes in 256-byte pieces: 4 more,
        // each with the long command's CLA 80.
        #expect(getResponses.count == 5)
        #expect(getResponses.suffix(4).allSatisfy { $0.command == [0x80, 0xC0, 0x00, 0x00, getResponses.last == $0 ? 0xE8 : 0x00] })
        #expect(host.log.last?.count == 5)
    }

    @Test("raw mode returns 61xx untouched")
    func raw() throws {
        let (t, _, seen) = transport({ $0.usesGetResponse = true }, policy: TransmissionPolicy(raw: true))
        let r = try t.send(selectCommand)
        #expect(r.statusWord.sw1 == 0x61)
        #expect(seen.current.count == 1)
    }

    @Test("6Cxx: re-sent once with the exact Le")
    func wrongLe() throws {
        let (t, _, seen) = transport { $0.answersWrongLe = true }
        _ = try t.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0x0C, data: DemoApplication.defaultAID))
        let r = try t.send(CommandAPDU(cla: 0, ins: 0xCA, p1: 0, p2: 0, ne: 256))
        #expect(r.statusWord == .success)
        #expect(r.data == Array("SN-0001".utf8))
        #expect(seen.current.last?.purpose == .resendWithLe)
        #expect(seen.current.last?.command.last == 7)
    }

    @Test("long data without extended length goes as a command chain")
    func chaining() throws {
        let (t, _, seen) = transport({ $0.acceptsExtendedLength = false }, extended: false)
        _ = try t.send(selectCommand)
        let data = (0..<600).map { UInt8($0 % 251) }
        let r = try t.send(CommandAPDU(cla: 0, ins: 0xEE, p1: 0, p2: 0, data: data, ne: 256))
        #expect(r.data.count == 600 || r.statusWord.sw1 == 0x6C || r.statusWord == .success)
        #expect(r.data == data)
        let chained = seen.current.filter { $0.purpose == .chained }
        #expect(chained.count == 2)
        #expect(chained.allSatisfy { $0.command[0] == 0x10 })
    }

    @Test("extended Ne without extended support is a clear error, nothing sent")
    func extendedUnsupported() throws {
        let (t, host, _) = transport({ _ in }, extended: false)
        #expect(throws: TransmitError.extendedLengthUnsupported(dataLength: 0, ne: 1000)) {
            try t.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 1000))
        }
        #expect(host.log.isEmpty)
    }

    @Test("a card answering 61xx forever is bounded")
    func endless61() throws {
        let card = ScriptedCard(rules: [ScriptedCard.Rule(pattern: [], matchesAnyTail: true, response: [0x00, 0x61, 0x10])])
        var policy = TransmissionPolicy.standard
        policy.maxGetResponseRounds = 50
        let t = APDUTransport(channel: EmulatedChannel(card: card), policy: policy)
        #expect(throws: TransmitError.getResponseLimit(rounds: 50)) { try t.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 16)) }
        #expect(card.log.count == 51)
    }

    @Test("a one-byte answer is a malformed response, not a crash")
    func oneByte() {
        let card = ScriptedCard(rules: [ScriptedCard.Rule(pattern: [], matchesAnyTail: true, response: [0x90])])
        let t = APDUTransport(channel: EmulatedChannel(card: card))
        #expect(throws: TransmitError.malformedResponse([0x90])) { try t.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0)) }
    }

    @Test("the SELECT policy refuses before anything reaches the card")
    func allowlist() throws {
        let (t, host, _) = transport()
        t.selectPolicy = try SelectPolicy(list: "F0 61 70 64 75 01 # the demo\nA000000003*")
        _ = try t.send(selectCommand)
        #expect(throws: TransmitError.refusedSelect(aid: [0xA0, 0, 0, 0, 4, 0x10, 0x10])) {
            try t.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0, data: [0xA0, 0, 0, 0, 4, 0x10, 0x10]))
        }
        _ = try t.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0, data: [0xA0, 0, 0, 0, 3, 0x10, 0x10]))
        #expect(host.log.count == 2)
        #expect(!host.log.contains { $0.contains(0x04) && $0.count == 12 && $0[9] == 0x04 })
    }

    @Test("an encoding sent as it is (apdu script, send) makes the same exchanges and answer as its command")
    func encodedMatchesCommand() throws {
        let demo = DemoApplication.defaultAID
        let commands: [CommandAPDU] = [
            selectCommand,
            CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0x0C, data: demo),
            CommandAPDU(cla: 0, ins: 0xCA, p1: 0, p2: 0, ne: 256),
            CommandAPDU(cla: 0, ins: 0xCA, p1: 0, p2: 0, ne: 3),
            CommandAPDU(cla: 0x80, ins: 0xEE, p1: 0x03, p2: 0xE8, ne: 256),
            CommandAPDU(cla: 0, ins: 0xEE, p1: 0, p2: 0, data: [0xCA, 0xFE]),
            CommandAPDU(cla: 0, ins: 0xEE, p1: 0, p2: 0, data: [0xCA, 0xFE], ne: 2, forceExtended: true),
            CommandAPDU(cla: 0, ins: 0xEE, p1: 0, p2: 0, data: (0..<600).map { UInt8($0 % 251) }, ne: 256),
            CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 1000),
            CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0, data: [0xA0, 0, 0, 0, 4, 0x10, 0x10]),
            CommandAPDU(cla: 0, ins: 0x20, p1: 0, p2: 0),
        ]
        let behaviours: [(String, (inout HostBehaviour) -> Void, Bool, TransmissionPolicy, Bool)] = [
            ("plain", { _ in }, true, .standard, false),
            ("GET RESPONSE", { $0.usesGetResponse = true; $0.requiresGetResponseCLA = true; $0.getResponseChunk = 100 }, true, .standard, false),
            ("wrong Le", { $0.answersWrongLe = true }, true, .standard, false),
            ("no extended length", { $0.acceptsExtendedLength = false }, false, .standard, false),
            ("reader refuses extended", { $0.acceptsExtendedLength = false }, true, .standard, false),
            ("raw", { $0.usesGetResponse = true }, true, TransmissionPolicy(raw: true), false),
            ("SELECT policy", { $0.usesGetResponse = true }, true, .standard, true),
        ]
        func outcome(_ send: () throws -> ResponseAPDU) -> String {
            do { let r = try send(); return "\(r.data.hexString) \(r.statusWord)" } catch { return "error \(error)" }
        }
        for (name, configure, extended, policy, allowlist) in behaviours {
            let (byCommand, _, seenByCommand) = transport(configure, extended: extended, policy: policy)
            let (byEncoding, _, seenByEncoding) = transport(configure, extended: extended, policy: policy)
            if allowlist {
                byCommand.selectPolicy = try SelectPolicy(list: "F0 61 70 64 75 01")
                byEncoding.selectPolicy = try SelectPolicy(list: "F0 61 70 64 75 01")
            }
            for command in commands {
                let expected = outcome { try byCommand.send(command) }
                let got = outcome { try byEncoding.send(encoded: command.bytes) }
                #expect(got == expected, "\(name): \(command)")
            }
            let exchanges = { (seen: Locked<[Exchange]>) in seen.current.map { "\($0.purpose) \($0.command.hexString) \($0.response.hexString)" } }
            #expect(exchanges(seenByEncoding) == exchanges(seenByCommand), "\(name)")
            #expect(byEncoding.forms == byCommand.forms && byEncoding.leCorrections == byCommand.leCorrections, "\(name)")
        }
    }
}

@Suite("SELECT policy and BER-TLV")
struct PolicyAndTLVTests {
    @Test("allowlist entries: exact, prefix, comments; bad entries named")
    func entries() throws {
        let p = try SelectPolicy(list: "# list\nA0000000031010\nD2760000850101, A000000004*\n")
        #expect(p.allows([0xA0, 0, 0, 0, 3, 0x10, 0x10]))
        #expect(!p.allows([0xA0, 0, 0, 0, 3, 0x10]))
        #expect(p.allows([0xA0, 0, 0, 0, 4, 0x99]))
        #expect(p.refusal(for: CommandAPDU(cla: 0, ins: 0xA4, p1: 0, p2: 0x0C, data: [0xE1, 0x03])) == nil)
        #expect(throws: SelectPolicy.EntryError.self) { try SelectPolicy(list: "A0GG") }
        #expect(throws: SelectPolicy.EntryError.self) { try SelectPolicy(list: "A000") }
        #expect(throws: SelectPolicy.EntryError.self) { try SelectPolicy(list: String(repeating: "A0", count: 17)) }
    }

    @Test("BER-TLV: FCI tree, multi-byte tags and lengths, padding, lies refused")
    func tlv() throws {
        let fci: [UInt8] = [0x6F, 0x0E, 0x84, 0x02, 0xF0, 0x01, 0xA5, 0x08, 0x50, 0x03, 0x41, 0x42, 0x43, 0x9F, 0x11, 0x00]
        let objects = try BERTLV.decode(fci)
        #expect(objects.count == 1)
        let children = try #require(objects[0].children)
        #expect(children.map(\.tagHex) == ["84", "A5"])
        #expect(children[1].children?.map(\.tagHex) == ["50", "9F11"])
        #expect(BERTLV.tree(objects).contains("    50 (application label) 41 42 43  \"ABC\""))
        let long = try BERTLV.decode([0x00, 0xC0, 0x82, 0x01, 0x00] + [UInt8](repeating: 1, count: 256) + [0xFF])
        #expect(long.first?.value.count == 256)
        #expect(throws: TLVError.self) { try BERTLV.decode([0x6F, 0x05, 0x01]) }
        #expect(throws: TLVError.self) { try BERTLV.decode([0x5F]) }
        #expect(throws: TLVError.self) { try BERTLV.decode([0x5F, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00]) }
        #expect(throws: TLVError.self) { try BERTLV.decode([0x6F, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: TLVError.self) { try BERTLV.decode([0x6F, 0x80]) }
        // Deep nesting is bounded, not a stack overflow.
        var deep: [UInt8] = [0x04, 0x00]
        for _ in 0..<100 { deep = [0x62, UInt8(deep.count)] + deep; if deep.count > 120 { break } }
        #expect(throws: Never.self) { try BERTLV.decode(deep) }
    }
}
