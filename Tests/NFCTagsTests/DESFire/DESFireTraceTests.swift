import ISO7816
@testable import NFCTags
import Testing

/// A card that replays a published trace: each command must be the trace's byte for byte (wrapped
/// in ISO 7816), each answer is the trace's; RndA comes from the trace's `A` lines in order.
final class TraceCard: CardChannel {
    private var steps: [String]
    private(set) var exchanges = 0
    let supportsExtendedLength = false
    /// Where the replay and the library parted ways.
    private(set) var mismatch: String?

    init(_ steps: [String]) { self.steps = steps }

    struct Mismatch: Error, CustomStringConvertible { var description: String }

    var remaining: Int { steps.count }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        guard !steps.isEmpty else { throw record("the library sent \(Hex.encode(command)) after the trace ended") }
        let s = steps.removeFirst()
        guard s.hasPrefix("S ") else { throw record("the trace expects \(s), the library sent \(Hex.encode(command))") }
        let native = h(String(s.dropFirst(2)))
        let expected = [0x90, native[0], 0, 0] + (native.count > 1 ? [UInt8(native.count - 1)] + native.dropFirst() + [0] : [0])
        guard command == expected else {
            throw record("the trace sends \(Hex.encode(expected)), the library sent \(Hex.encode(command))")
        }
        guard let r = steps.first, r.hasPrefix("R ") else { throw record("no answer in the trace after \(s)") }
        steps.removeFirst()
        exchanges += 1
        let answer = h(String(r.dropFirst(2)))
        return Array(answer.dropFirst()) + [0x91, answer[0]]
    }

    /// RndA for the authentication under way: the trace's next `A` line.
    func rndA(_ n: Int) -> [UInt8] {
        guard let a = steps.first, a.hasPrefix("A ") else {
            mismatch = mismatch ?? "an RndA asked where the trace has \(steps.first ?? "nothing")"
            return [UInt8](repeating: 0, count: n)
        }
        steps.removeFirst()
        return h(String(a.dropFirst(2)))
    }

    private func record(_ message: String) -> Mismatch {
        mismatch = mismatch ?? message
        return Mismatch(description: message)
    }
}

/// sotechcllc/RFDoorLock's real-card traces replayed through `DESFireCard`: every command the
/// library builds (CMAC-chained IVs, enciphered key settings, ChangeKey cryptograms of both kinds
/// for 2K3DES, 3K3DES and AES) must be the card's byte for byte, and every CMAC the card sent must
/// verify, or the replay stops.
@Suite("DESFire EV1: RFDoorLock's real-card trace, byte for byte")
struct DESFireTraceTests {
    static let des0 = try! DESFireKey(.des, [UInt8](repeating: 0, count: 8))
    static let k2a = try! DESFireKey(.tdes2, h("00102031405060708090A0B0B0A09080"))
    static let k2b = try! DESFireKey(.tdes2, h("10182029303840485058606870788088"))
    static let k3zero = DESFireKey.zero(.tdes3)
    static let k3a = try! DESFireKey(.tdes3, h("00102031405060708090A0B0B0A090807060504030201000"))
    static let k3b = try! DESFireKey(.tdes3, h("101820293038404850586068707880889098A0A8B0B8C0C8"))
    static let aesZero = DESFireKey.zero(.aes)
    static let aesA = try! DESFireKey(.aes, h("00102030405060708090A0B0B0A09080"), version: 0x10)
    static let aesB = try! DESFireKey(.aes, h("10182028303840485058606870788088"), version: 0x10)

    @Test("the whole session: PICC, 2K3DES, 3K3DES and AES applications, key changes, files, format")
    func replay() throws {
        let trace = TraceCard(RFDoorLockTrace.steps)
        let card = DESFireCard(transport: APDUTransport(channel: trace))
        card.randomSource = { trace.rndA($0) }
        // The trace's PN532 sends 59-byte frames whole.
        card.frameSize = 64
        do {
            try Self.run(card)
        } catch {
            Issue.record("stopped after \(trace.exchanges) exchanges: \(trace.mismatch ?? "\(error)")")
        }
        #expect(trace.mismatch == nil, "\(trace.mismatch ?? "")")
        #expect(trace.remaining == 0, "\(trace.remaining) trace lines not replayed")
    }

    static func run(_ card: DESFireCard) throws {
        // Card level: ISO authentication with the DES factory key, GetVersion CMACed over three frames.
        try card.selectApplication(.picc)
        #expect(try card.keyVersion(0) == 0)
        try card.authenticate(keyNumber: 0, key: des0, scheme: .iso)
        #expect(card.session?.scheme == .iso && card.session?.keyType == .des)
        let v = try card.getVersion()
        #expect(v.hardwareVersion == "1.0" && v.softwareVersion == "1.4" && v.generation == .ev1 && v.storageSize.bytes == 8192)
        #expect(v.uid == h("04063F72633480") && v.batch == h("BA4519E320") && v.productionWeek == 49 && v.productionYear == 2013)
        #expect(throws: DESFireError.self) { try card.formatPICC(confirmed: false) }
        try card.formatPICC(confirmed: true)
        for (aid, count, family) in [("00DE16", 2, DESFireKeyFamily.des), ("00DE24", 2, .tdes3), ("00AE16", 2, .aes), ("AABBCC", 1, .des)] {
            try card.createApplication(DESFireApplicationSpec(aid: DESFireApplicationID(hex: aid)!, keyCount: count, family: family))
        }
        #expect(try card.applicationIDs().map(\.description) == ["00DE16", "00DE24", "00AE16", "AABBCC"])
        try card.deleteApplication(DESFireApplicationID(hex: "AABBCC")!, confirmed: true)
        #expect(try card.applicationIDs().map(\.description) == ["00DE16", "00DE24", "00AE16"])

        // 00DE16: key settings read, changed enciphered (CRC32 over 54 ‖ settings), read again.
        let de16 = DESFireApplicationID(hex: "00DE16")!
        try card.selectApplication(de16)
        try card.authenticate(keyNumber: 0, key: des0, scheme: .iso)
        let info = try card.keySettings()
        #expect(info.settings.rawValue == 0x0F && info.keyCount == 2 && info.family == .des)
        try card.changeKeySettings(DESFireKeySettings(rawValue: 0x0D), current: info.settings, confirmed: false)
        #expect(try card.keySettings().settings.rawValue == 0x0D)

        // 2K3DES: key 0 changed twice (each proved by authenticating with it), version read, back
        // to DES; key 1 changed twice in a session of key 0 (new ⊕ old, CRC of the new key), proved.
        try card.selectApplication(de16)
        try card.authenticate(keyNumber: 0, key: des0, scheme: .iso)
        #expect(throws: DESFireError.self) { try card.changeKey(0, to: k2a, from: nil) }
        try card.changeKey(0, to: k2a, from: nil, confirmed: true)
        #expect(card.session?.keyType == .tdes2)
        try card.changeKey(0, to: k2b, from: nil, confirmed: true)
        #expect(try card.keyVersion(0) == 0x10)
        try card.changeKey(0, to: des0, from: nil, confirmed: true)
        try card.changeKey(1, to: k2a, from: des0, confirmed: false, settings: nil, proving: false)
        try card.changeKey(1, to: k2b, from: k2a)

        // 3K3DES.
        try card.selectApplication(DESFireApplicationID(hex: "00DE24")!)
        try card.authenticate(keyNumber: 0, key: k3zero)
        try card.changeKey(0, to: k3a, from: nil, confirmed: true)
        try card.changeKey(0, to: k3b, from: nil, confirmed: true)
        #expect(try card.keyVersion(0) == 0x10)
        try card.changeKey(0, to: k3zero, from: nil, confirmed: true)
        try card.changeKey(1, to: k3a, from: k3zero, confirmed: false, settings: nil, proving: false)
        try card.changeKey(1, to: k3b, from: k3a)

        // AES (AA), versions as a byte of their own.
        try card.selectApplication(DESFireApplicationID(hex: "00AE16")!)
        try card.authenticate(keyNumber: 0, key: aesZero)
        #expect(card.session?.scheme == .aes)
        try card.changeKey(0, to: aesA, from: nil, confirmed: true)
        try card.changeKey(0, to: aesB, from: nil, confirmed: true)
        #expect(try card.keyVersion(0) == 0x10)
        try card.changeKey(0, to: aesZero, from: nil, confirmed: true)
        try card.changeKey(1, to: aesA, from: aesZero, confirmed: false, settings: nil, proving: false)
        try card.changeKey(1, to: aesB, from: aesA)
        #expect(card.session?.keyNumber == 1)

        // Files in the AES session of key 1: create, list, settings, write and read plain (CMAC on
        // every answer), delete.
        try card.createFile(DESFireFileSpec(number: 5, kind: .standardData(size: 80), access: DESFireAccessRights(0x0011)))
        #expect(try card.fileIDs() == [5])
        let s = try card.fileSettings(5)
        #expect(s.type == .standardData && s.commMode == .plain && s.size == 80)
        #expect(s.access.read == .key(0) && s.access.write == .key(0) && s.access.readWrite == .key(1) && s.access.change == .key(1))
        let content = (0..<80).map { UInt8($0) }
        try card.writeData(5, offset: 0, data: Array(content[0..<52]), mode: card.writeMode(s))
        try card.writeData(5, offset: 52, data: Array(content[52...]), mode: card.writeMode(s))
        #expect(try card.readData(5, offset: 0, length: 48, mode: card.readMode(s)) + card.readData(5, offset: 48, length: 32, mode: .plain) == content)
        try card.deleteFile(5, confirmed: true)
        #expect(try card.fileIDs() == [])

        try card.selectApplication(.picc)
        try card.authenticate(keyNumber: 0, key: des0)
        try card.formatPICC(confirmed: true)
    }
}
