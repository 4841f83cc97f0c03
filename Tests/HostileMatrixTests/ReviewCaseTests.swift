import GlobalPlatform
import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

private typealias DESFireModel = VirtualCard.DESFireCard

/// A man in the middle who changes several answers of one run, by a rule over (command, answer):
/// the cases the adversarial review of issue 49 confirmed through pcscd, which the one-mutation
/// matrix cannot play. `nil` from the rule passes the card's answer on.
final class ScriptedMiddle: CardChannel {
    let card: any EmulatedCard
    let rule: ([UInt8], [UInt8]) -> [UInt8]?
    var supportsExtendedLength: Bool { true }
    init(card: any EmulatedCard, rule: @escaping ([UInt8], [UInt8]) -> [UInt8]?) {
        self.card = card
        self.rule = rule
        card.reset()
    }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        let answer = card.process(command)
        return rule(command, answer) ?? answer
    }
}

@Suite("Review of issue 49: several answers changed in one run")
struct ReviewCaseTests {
    static let zero = [UInt8](repeating: 0, count: 16)
    static let new: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 23 + 5) }

    @Test("gp card-lock under SCP03 with R-MAC: SET STATUS answered 69 85 and every GET STATUS 6A 88 by the middle; the card locked itself: never 'refused'")
    func cardLockSettledByUnprovenRegistry() throws {
        let card = CardManagerModel(.scp03, i: 0x70)
        var setStatusSeen = false
        let middle = ScriptedMiddle(card: card) { command, _ in
            guard command.count > 1 else { return nil }
            if command[1] == 0xF0 { setStatusSeen = true; return [0x69, 0x85] }
            if command[1] == 0xF2, setStatusSeen { return [0x6A, 0x88] }
            return nil
        }
        let manager = CardManager(transport: APDUTransport(channel: middle))
        try manager.authenticate(keys: .testKeys, level: [.cMAC, .cDecryption, .rMAC, .rEncryption])
        #expect(manager.answersAuthenticated)
        do {
            try manager.lockCard()
            Issue.record("card-lock reported done")
        } catch let e as GlobalPlatformError {
            #expect(e.kind != .refused && e.statusWord == nil, "\(e)")
            #expect(e.message.contains("not confirmed"), "\(e)")
        }
        #expect(card.current.cardLifeCycle == 0x7F, "the card locked itself, CARD_LOCKED (the case is real)")
    }

    @Test("gp delete under SCP03: the DELETE withheld and answered 69 85, every GET STATUS 6A 88: never 'done'")
    func withheldDeleteNotDone() throws {
        let card = CardManagerModel(.scp03, i: 0x70)
        let package: [UInt8] = [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01], instance = package + [0x01]
        card.preinstall(package: package, modules: [instance], instances: [instance])
        var deleteSeen = false
        final class Withholding: CardChannel {
            let inner: ScriptedMiddle
            let withhold: ([UInt8]) -> [UInt8]?
            var supportsExtendedLength: Bool { true }
            init(_ inner: ScriptedMiddle, withhold: @escaping ([UInt8]) -> [UInt8]?) { self.inner = inner; self.withhold = withhold }
            func transmit(_ command: [UInt8]) throws -> [UInt8] { try withhold(command) ?? inner.transmit(command) }
        }
        let middle = Withholding(ScriptedMiddle(card: card) { _, _ in nil }) { command in
            guard command.count > 1 else { return nil }
            if command[1] == 0xE4 { deleteSeen = true; return [0x69, 0x85] }
            if command[1] == 0xF2, deleteSeen { return [0x6A, 0x88] }
            return nil
        }
        let manager = CardManager(transport: APDUTransport(channel: middle))
        try manager.authenticate(keys: .testKeys, level: [.cMAC, .cDecryption, .rMAC, .rEncryption])
        do {
            try manager.delete(aid: instance)
            Issue.record("delete reported done")
        } catch let e as GlobalPlatformError {
            #expect(!e.message.contains("done, and"), "\(e)")
            #expect(e.message.contains("not confirmed"), "\(e)")
        }
        #expect(card.current.entries.contains { $0.aid == instance }, "the card never saw the DELETE")
    }

    @Test("desfire change-key: ChangeKey answered 91 1E and the new key's authentication 91 AE by the middle; the card holds the new key: never 'refused'")
    func desfireFakedProofFailure() throws {
        let app = DESFireModel.Application(aid: 0x00F001, keyType: .aes, keyCount: 2, files: [])
        let model = DESFireModel(image: DESFireModel.Image(chip: DESFireModel.Chip(generation: .ev1), applications: [app]))
        var changed = false
        let middle = ScriptedMiddle(card: model) { command, _ in
            guard command.count > 1, command[0] == 0x90 else { return nil }
            if command[1] == 0xC4 { changed = true; return [0x91, 0x1E] }
            if changed, command[1] == 0xAA || command[1] == 0x1A || command[1] == 0x0A || command[1] == 0x71 { return [0x91, 0xAE] }
            return nil
        }
        let card = try #require(try NFCTags.DESFireCard.detect(APDUTransport(channel: middle)))
        try card.selectApplication(DESFireApplicationID(rawValue: 0x00F001)!)
        try card.authenticate(keyNumber: 0, key: .zero(.aes))
        do {
            _ = try card.changeKey(1, to: try DESFireKey(.aes, Self.new, version: 4), from: .zero(.aes), confirmed: true)
            Issue.record("change reported done")
        } catch let e as DESFireError {
            // The CLI's "nothing changed" is for an error with the card's status: not this one.
            #expect(e.status == nil && e.statusWord == nil, "\(e)")
            #expect(e.message.contains("not confirmed"), "\(e)")
        }
        #expect(model.image.application(0x00F001)?.keys[1].bytes == Self.new, "the card changed the key (the case is real)")
    }

    @Test("ntag424 change-key: ChangeKey answered 91 1E and the new key's authentication 91 AE by the middle; the tag holds the new key: never 'refused'")
    func ntag424FakedProofFailure() throws {
        let model = NTAG424TagModel()
        var changed = false
        let middle = ScriptedMiddle(card: ApplicationHost(applications: [model], uid: model.uid)) { command, _ in
            guard command.count > 1, command[0] == 0x90 else { return nil }
            if command[1] == 0xC4 { changed = true; return [0x91, 0x1E] }
            if changed, command[1] == 0x71 { return [0x91, 0xAE] }
            return nil
        }
        let tag = try #require(try NTAG424Tag.detect(APDUTransport(channel: middle)))
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        do {
            try tag.changeKey(1, to: Self.new, from: Self.zero, version: 1)
            Issue.record("change reported done")
        } catch let e as NTAG424Error {
            #expect(e.statusWord == nil && e.message.contains("not confirmed"), "\(e)")
        }
        #expect(model.keys[1] == Self.new, "the tag changed the key (the case is real)")
    }

    @Test("a refusal the old key proves stays a refusal: ChangeKey withheld from the tag and answered 91 1E; the old key authenticates, so 'refused' with its status")
    func ntag424ProvedRefusal() throws {
        let model = NTAG424TagModel()
        final class Withholding: CardChannel {
            let card: any EmulatedCard
            var supportsExtendedLength: Bool { true }
            init(_ card: any EmulatedCard) { self.card = card }
            func transmit(_ command: [UInt8]) throws -> [UInt8] {
                command.count > 1 && command[0] == 0x90 && command[1] == 0xC4 ? [0x91, 0x1E] : card.process(command)
            }
        }
        let tag = try #require(try NTAG424Tag.detect(APDUTransport(channel: Withholding(ApplicationHost(applications: [model], uid: model.uid)))))
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        do {
            try tag.changeKey(1, to: Self.new, from: Self.zero, version: 1)
            Issue.record("change reported done")
        } catch let e as NTAG424Error {
            #expect(e.statusWord == StatusWord(rawValue: 0x911E), "\(e)")
        }
        #expect(model.keys[1] == Self.zero)
    }
}
