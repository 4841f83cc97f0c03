import CardCrypto
import ISO7816
import Testing
import VirtualCard
@testable import GlobalPlatform

/// The library's secure channels against the emulated card manager, written apart from each
/// other: every protocol and level, and a wrong key that never reaches EXTERNAL AUTHENTICATE.
@Suite("GlobalPlatform library against the emulated card manager")
struct EmulatorInteropTests {
    static let test = Array<UInt8>(0x40...0x4F)

    static func manager(_ card: CardManagerModel) -> CardManager {
        CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
    }

    struct Setup: Sendable, CustomStringConvertible {
        var scp: CardManagerModel.SCP, i: UInt8, keyLength: Int, level: UInt8
        var description: String { "\(scp) i=\(String(i, radix: 16)) AES/3DES-\(keyLength * 8) level \(String(level, radix: 16))" }
    }

    static let setups: [Setup] = [
        Setup(scp: .scp02, i: 0x15, keyLength: 16, level: 0x01), Setup(scp: .scp02, i: 0x15, keyLength: 16, level: 0x03),
        Setup(scp: .scp02, i: 0x55, keyLength: 16, level: 0x03),
        Setup(scp: .scp03, i: 0x00, keyLength: 16, level: 0x01), Setup(scp: .scp03, i: 0x00, keyLength: 16, level: 0x03),
        Setup(scp: .scp03, i: 0x10, keyLength: 24, level: 0x03), Setup(scp: .scp03, i: 0x70, keyLength: 16, level: 0x13),
        Setup(scp: .scp03, i: 0x70, keyLength: 24, level: 0x33), Setup(scp: .scp03, i: 0x70, keyLength: 32, level: 0x33),
        Setup(scp: .scp03, i: 0x70, keyLength: 32, level: 0x11),
    ]

    @Test("authenticate and list the registry at every protocol and level", arguments: setups)
    func everyLevel(_ setup: Setup) throws {
        let key = Array((Self.test + Self.test).prefix(setup.keyLength))
        let card = CardManagerModel(setup.scp, keys: .init(version: 0x31, enc: key, mac: key, dek: key), i: setup.i, pageSize: 2)
        card.preinstall(package: [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01], modules: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01]],
                        instances: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01], [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x02],
                                    [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x03]])
        let manager = Self.manager(card)
        try manager.authenticate(keys: StaticKeys(master: key, version: 0x31), level: SecurityLevel(rawValue: setup.level))
        #expect(manager.secureChannel?.level.rawValue == setup.level)
        let registry = try manager.registry()
        #expect(registry.map(\.kind) == [.issuerSecurityDomain, .application, .application, .application, .loadFile], "\(registry)")
        #expect(registry.last?.modules.count == 1)
        // 1 ISD + 2 pages of apps + 1 load file.
        #expect(manager.getStatusCommands == 4)
        #expect(card.current.failedAuthentications == 0)
    }

    @Test("the highest level the card offers by default")
    func defaultLevel() throws {
        let card = CardManagerModel(.scp03)
        let manager = Self.manager(card)
        try manager.authenticate(keys: .testKeys)
        #expect(manager.secureChannel?.level == [.cMAC, .cDecryption, .rMAC, .rEncryption])
        let scp02 = Self.manager(CardManagerModel(.scp02))
        try scp02.authenticate(keys: .testKeys)
        #expect(scp02.secureChannel?.level == [.cMAC, .cDecryption])
    }

    @Test("a wrong key stops at the card's cryptogram: no EXTERNAL AUTHENTICATE, the counter untouched", arguments: CardManagerModel.SCP.allCases)
    func wrongKey(_ scp: CardManagerModel.SCP) throws {
        let card = CardManagerModel(scp)
        for _ in 0..<3 {
            let manager = Self.manager(card)
            let wrong = StaticKeys(master: [UInt8](repeating: 0x11, count: 16))
            #expect { try manager.authenticate(keys: wrong) } throws: { ($0 as? GlobalPlatformError)?.kind == .wrongKeys }
        }
        #expect(card.current.externalAuthenticates == 0 && card.current.failedAuthentications == 0 && !card.current.received.contains(0x82))
    }

    @Test("a card whose cryptogram is made with other keys is never sent EXTERNAL AUTHENTICATE")
    func hostileCryptogram() throws {
        let card = CardManagerModel(.scp03, hostile: .wrongCryptogram)
        #expect { try Self.manager(card).authenticate(keys: .testKeys) } throws: { ($0 as? GlobalPlatformError)?.kind == .wrongKeys }
        #expect(card.current.externalAuthenticates == 0)
    }

    @Test("a key version the card does not list is refused before INITIALIZE UPDATE")
    func keyVersion() throws {
        let card = CardManagerModel(.scp03)
        var keys = StaticKeys.testKeys
        keys.version = 0x42
        #expect { try Self.manager(card).authenticate(keys: keys) } throws: { ($0 as? GlobalPlatformError)?.kind == .keyVersionNotHeld }
        #expect(!card.current.received.contains(0x50) && !card.current.received.contains(0x82))
    }

    @Test("the emulator locks after N failed EXTERNAL AUTHENTICATEs (its counter works), and a locked card is reported before anything counted")
    func lockAfterN() throws {
        let card = CardManagerModel(.scp03, maxFailures: 3)
        for n in 1...3 {
            // A host that skips the cryptogram check (as the emulator's counter test needs).
            let transport = APDUTransport(channel: EmulatedChannel(card: card))
            _ = try transport.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0, data: CardManagerModel.isdAID, ne: 256))
            _ = try transport.send(CommandAPDU(cla: 0x80, ins: 0x50, p1: 0, p2: 0, data: [UInt8](repeating: 1, count: 8), ne: 256))
            let r = try transport.send(CommandAPDU(cla: 0x84, ins: 0x82, p1: 1, p2: 0, data: [UInt8](repeating: 0, count: 16)))
            #expect(r.statusWord.rawValue == 0x6300 && card.current.failedAuthentications == n)
        }
        let before = card.current.externalAuthenticates
        #expect { try Self.manager(card).authenticate(keys: .testKeys) } throws: { ($0 as? GlobalPlatformError)?.kind == .locked }
        #expect(card.current.externalAuthenticates == before)
    }

    @Test("hostile registries: 63 10 forever stops, a truncated answer is malformed, the legacy format is read")
    func hostileRegistry() throws {
        let endless = Self.manager(CardManagerModel(.scp03, hostile: .endlessMoreData))
        try endless.authenticate(keys: .testKeys)
        #expect { try endless.registry() } throws: { ($0 as? GlobalPlatformError)?.kind == .malformed }
        #expect(endless.getStatusCommands <= endless.maxContinuations + 1)
        let cut = Self.manager(CardManagerModel(.scp03, hostile: .truncatedRegistry))
        try cut.authenticate(keys: .testKeys)
        #expect { try cut.registry() } throws: { ($0 as? GlobalPlatformError)?.kind == .malformed }
        let legacyCard = CardManagerModel(.scp02, hostile: .legacyOnly)
        legacyCard.preinstall(package: [1, 2, 3, 4, 5], modules: [[1, 2, 3, 4, 5, 6]], instances: [[1, 2, 3, 4, 5, 6]])
        let legacy = Self.manager(legacyCard)
        try legacy.authenticate(keys: .testKeys)
        let entries = try legacy.registry()
        #expect(entries.map(\.kind) == [.issuerSecurityDomain, .application, .loadFile] && entries.last?.modules == [[1, 2, 3, 4, 5, 6]])
    }

    @Test("information without authentication: CPLC, recognition data, key information, IIN, CIN")
    func information() throws {
        let card = CardManagerModel(.scp03)
        let info = try Self.manager(card).information()
        #expect(info.isdAID == CardManagerModel.isdAID && info.cplc?.fields.first?.value == [0x47, 0x90])
        #expect(info.recognition?.globalPlatformVersion == "2.3.1" && info.recognition?.protocols == [SecureChannelProtocol(version: 3, i: 0x70)])
        #expect(info.keys.count == 3 && info.keys.allSatisfy { $0.version == 0x30 && $0.typeName == "AES-128" })
        #expect(info.iin == [0x91, 0x23, 0x45] && info.cin?.count == 10)
        #expect(card.current.externalAuthenticates == 0 && !card.current.received.contains(0x50))
    }
}

@Suite("GlobalPlatform secrets in the redaction table")
struct GlobalPlatformRedactionTests {
    @Test("PUT KEY's data and EXTERNAL AUTHENTICATE's cryptograms are secrets; GET STATUS is not")
    func rules() {
        let putKey: [UInt8] = [0x84, 0xD8, 0x00, 0x81, 0x10] + [UInt8](repeating: 0xAB, count: 16)
        #expect(Redaction.isSecret(putKey) && Redaction.isSecret([0x80, 0xD8, 0x31, 0x81, 0x02, 0x31, 0x88]))
        #expect(!Redaction.hex(putKey).contains("AB"))
        #expect(Redaction.isSecret([0x84, 0x82, 0x33, 0x00, 0x10] + [UInt8](repeating: 0x11, count: 16)))
        #expect(!Redaction.isSecret([0x80, 0xF2, 0x40, 0x02, 0x02, 0x4F, 0x00, 0x00]))
    }
}

@Suite("PUT KEY against the emulated card manager")
struct PutKeyTests {
    @Test("a new key set and a replacement, 3DES under SCP02 and AES-128/192/256 under SCP03; the new keys authenticate",
          arguments: [(CardManagerModel.SCP.scp02, 16), (.scp03, 16), (.scp03, 24), (.scp03, 32)])
    func putKey(_ scp: CardManagerModel.SCP, _ length: Int) throws {
        let card = CardManagerModel(scp)
        let manager = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try manager.authenticate(keys: .testKeys)
        let fresh = StaticKeys(master: (0..<length).map { UInt8($0 * 7 + 3) }, version: 0x21 + UInt8(length))
        let checks = try manager.putKey(fresh)
        #expect(checks.count == 3 && card.current.keySets.contains { $0.version == fresh.version && $0.enc == fresh.enc })
        let again = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try again.authenticate(keys: fresh)
        // Replace the set just used.
        let next = StaticKeys(master: (0..<length).map { UInt8($0 * 5 + 1) }, version: 0x50)
        try again.putKey(next, replacing: fresh.version)
        #expect(!card.current.keySets.contains { $0.version == fresh.version } && card.current.keySets.contains { $0.version == 0x50 && $0.mac == next.mac })
        #expect(try CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card))).cardAccepts(next))
        #expect(card.current.failedAuthentications == 0)
    }
}

@Suite("Diversified keys against the emulated card manager")
struct DiversificationTests {
    @Test("a card holding keys diversified from a master: the master and the method authenticate, the master alone stops at the cryptogram",
          arguments: [(CardManagerModel.SCP.scp02, Diversification.emv), (.scp02, .visa2), (.scp03, .kdf3)])
    func diversified(_ scp: CardManagerModel.SCP, _ method: Diversification) throws {
        let master: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
        // The emulated card's key diversification data (INITIALIZE UPDATE bytes 0-9).
        let data: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99]
        let own = try StaticKeys(master: master, diversification: method).diversified(with: data, aes: scp == .scp03)
        #expect(own.enc != master && own.enc != own.mac)
        let card = CardManagerModel(scp, keys: .init(version: 0x31, enc: own.enc, mac: own.mac, dek: own.dek))
        try CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card))).authenticate(keys: StaticKeys(master: master, diversification: method))
        #expect { try CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card))).authenticate(keys: StaticKeys(master: master)) }
            throws: { ($0 as? GlobalPlatformError)?.kind == .wrongKeys }
        #expect(card.current.failedAuthentications == 0 && card.current.externalAuthenticates == 1)
    }
}
