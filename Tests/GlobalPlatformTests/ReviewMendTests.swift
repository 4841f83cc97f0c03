import ISO7816
import Testing
import VirtualCard
@testable import GlobalPlatform

/// A keyless man in the middle between the library and the emulated card manager: the card
/// answers, then the answer to one instruction is replaced on its way back.
final class ReplacingChannel: CardChannel {
    let inner: EmulatedChannel
    let instruction: UInt8
    let replacement: [UInt8]
    private(set) var sent: [[UInt8]] = []

    init(_ card: CardManagerModel, replacing instruction: UInt8, with replacement: [UInt8]) {
        inner = EmulatedChannel(card: card)
        self.instruction = instruction
        self.replacement = replacement
    }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        sent.append(command)
        let answer = try inner.transmit(command)
        return command.count > 1 && command[1] == instruction ? replacement : answer
    }

    var supportsExtendedLength: Bool { inner.supportsExtendedLength }
    func count(_ ins: UInt8) -> Int { sent.filter { $0.count > 1 && $0[1] == ins }.count }
}

/// A keyless man in the middle who answers one instruction himself: the card never sees it.
final class SwallowingChannel: CardChannel {
    let inner: EmulatedChannel
    let instruction: UInt8
    init(_ card: CardManagerModel, swallowing instruction: UInt8) {
        inner = EmulatedChannel(card: card)
        self.instruction = instruction
    }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        command.count > 1 && command[1] == instruction ? [0x90, 0x00] : try inner.transmit(command)
    }
    var supportsExtendedLength: Bool { inner.supportsExtendedLength }
}

@Suite("GlobalPlatform review mends (issue 52)")
struct ReviewMendTests {
    @Test("DELETE and SET STATUS answered 90 00 by a middle who never passed them on: not reported done, the card unchanged", arguments: [UInt8(0xE4), 0xF0])
    func changeNotPassedOnIsNotDone(_ ins: UInt8) throws {
        let card = CardManagerModel(.scp03)
        let installer = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try installer.authenticate(keys: .testKeys)
        try installer.install(try CAPFileTests.fixture("kaoh-helloworld.cap"))
        let manager = CardManager(transport: APDUTransport(channel: SwallowingChannel(card, swallowing: ins)))
        try manager.authenticate(keys: .testKeys, level: .cMAC)
        let before = try manager.registry()
        let target = try #require(before.first { $0.kind == .application && !$0.isLocked })
        #expect(throws: GlobalPlatformError.self) {
            if ins == 0xE4 { try manager.delete(aid: target.aid) } else { try manager.setLocked(aid: target.aid, true) }
        }
        let honest = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try honest.authenticate(keys: .testKeys)
        #expect(try honest.registry().first { $0.aid == target.aid }?.isLocked == false, "the card still holds it, unlocked")
    }

    @Test("a 6C00 in place of the answer: EXTERNAL AUTHENTICATE, PUT KEY and DELETE reach the card once", arguments: [UInt8(0x82), 0xD8, 0xE4])
    func sixCeeNeverResends(_ ins: UInt8) throws {
        let card = CardManagerModel(.scp03)
        let channel = ReplacingChannel(card, replacing: ins, with: [0x6C, 0x00])
        let manager = CardManager(transport: APDUTransport(channel: channel))
        do {
            try manager.authenticate(keys: .testKeys)
            if ins == 0xD8 { try manager.putKey(StaticKeys(master: Array(0x10...0x1F), version: 0x31)) }
            if ins == 0xE4 { try manager.deleteUnchecked(aid: [0xA0, 0x00, 0x00, 0x00, 0x62, 0x03, 0x01], related: false) }
        } catch {}
        #expect(channel.count(ins) == 1, "INS \(ins): sent \(channel.count(ins)) times")
    }

    @Test("PUT KEY answered 6A 80 by the man in the middle after the card wrote the set: the new keys' cryptogram says written")
    func putKeyRefusalSettledByCryptogram() throws {
        let card = CardManagerModel(.scp03)
        let manager = CardManager(transport: APDUTransport(channel: ReplacingChannel(card, replacing: 0xD8, with: [0x6A, 0x80])))
        try manager.authenticate(keys: .testKeys)
        let fresh = StaticKeys(master: Array(0x10...0x1F), version: 0x31)
        do {
            try manager.putKey(fresh)
            Issue.record("PUT KEY's refusal was not reported")
        } catch let e as GlobalPlatformError {
            #expect(card.current.keySets.contains { $0.version == 0x31 })
            #expect(e.message.contains("matches the new keys") && !e.message.contains("keeps its old keys"), "\(e.message)")
        }
    }

    @Test("the card's SCP03 i lowered on the way (70 to 00): stopped before EXTERNAL AUTHENTICATE")
    func downgradeRefused() throws {
        let card = CardManagerModel(.scp03)
        final class Lowering: CardChannel {
            let inner: EmulatedChannel
            init(_ card: CardManagerModel) { inner = EmulatedChannel(card: card) }
            func transmit(_ command: [UInt8]) throws -> [UInt8] {
                var answer = try inner.transmit(command)
                if command.count > 1, command[1] == 0x50, answer.count > 14, answer[11] == 3 { answer[12] = 0x00 }
                return answer
            }
            var supportsExtendedLength: Bool { true }
        }
        let manager = CardManager(transport: APDUTransport(channel: Lowering(card)))
        #expect(throws: GlobalPlatformError.self) { try manager.authenticate(keys: .testKeys) }
        #expect(card.current.externalAuthenticates == 0)
    }
}
