import CardCrypto
import ISO7816
import Testing
import VirtualCard

/// ChangeKey, where every DESFire library stumbles (libfreefare #67, python-desfire #4 and #20,
/// proxmark3 #956 and #2842): both cases, every scheme, the CRCs checked before anything
/// changes, the session's end, the ChangeKey access rules and the PICC master key's type change.
@Suite("DESFire emulator: ChangeKey, both cases, every rule")
struct DESFireChangeKeyTests {
    static let aid: UInt32 = 0xC4C4C4

    static func card(_ type: DESFireCard.KeyType, settings: UInt8 = 0x0F, generation: DESFireCard.Generation = .ev1) -> DESFireCard {
        let app = DESFireCard.Application(aid: aid, keySettings: settings, keyType: type, keyCount: 4)
        return DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]))
    }

    static func newKey(_ type: DESFireCard.KeyType, _ seed: UInt8, version: UInt8) -> DESFireCard.Key {
        let bytes = (0..<type.keyLength).map { UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ $0 &* 13) }
        return type == .aes ? DESFireCard.Key(.aes, bytes: bytes, version: version)
            : type == .tdes ? .tdes(bytes, version: version) : DESFireCard.Key(.tdes3, bytes: bytes)
    }

    static let schemes: [(DESFireCard.KeyType, DESFireTestReader.Scheme, DESFireCard.Generation)] = [
        (.tdes, .legacy, .ev1), (.tdes, .iso, .ev1), (.tdes3, .iso, .ev1), (.aes, .aes, .ev1), (.aes, .ev2First, .ev2),
    ]

    @Test("the key in use: changed, the session ends with no MAC on the answer, the old key is refused and the new one opens a session",
          arguments: schemes.indices)
    func changeKeyInUse(_ i: Int) throws {
        let (type, scheme, generation) = Self.schemes[i]
        let card = Self.card(type, generation: generation)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(type), scheme)
        let new = Self.newKey(type, 1, version: 0x21)
        try reader.changeKey(0, to: new)
        #expect(!card.isAuthenticated, "changing the key in use ends the session")
        #expect(card.image.application(Self.aid)?.keys[0].bytes == new.bytes)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.authenticate(0, .zero(type), scheme) }
        try reader.authenticate(0, new, scheme)
        #expect(try reader.getKeyVersion(0) == new.version)
        // Pulled and put back: a completed ChangeKey holds.
        card.reset()
        let again = DESFireTestReader(card)
        try again.select(Self.aid)
        try again.authenticate(0, new, scheme)
    }

    @Test("another key: (new ⊕ old) with the CRC of the new key; the session goes on; changed twice", arguments: schemes.indices)
    func changeOtherKey(_ i: Int) throws {
        let (type, scheme, generation) = Self.schemes[i]
        let card = Self.card(type, generation: generation)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(type), scheme)
        let first = Self.newKey(type, 2, version: 0x10), second = Self.newKey(type, 3, version: 0x11)
        try reader.changeKey(2, to: first)
        #expect(card.isAuthenticated)
        try reader.changeKey(2, to: second, old: first)
        _ = try reader.getKeySettings()
        try reader.authenticate(2, second, scheme)
        #expect(card.image.application(Self.aid)?.keys[2].bytes == second.bytes)
        #expect(try reader.getKeyVersion(2) == second.version)
    }

    @Test("a wrong old key (so a wrong CRC of the new key), or one flipped cryptogram bit: 91 1E, the key as it was, the session gone",
          arguments: schemes.indices)
    func badCRC(_ i: Int) throws {
        let (type, scheme, generation) = Self.schemes[i]
        let card = Self.card(type, generation: generation)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(type), scheme)
        let before = card.image
        let wrongOld = Self.newKey(type, 9, version: 0)
        #expect(throws: DESFireTestReader.Failure.status(0x1E)) { try reader.changeKey(1, to: Self.newKey(type, 4, version: 1), old: wrongOld) }
        #expect(card.image == before)
        #expect(!card.isAuthenticated)

        // The key in use, with one bit of the cryptogram flipped on the way.
        let flipping = FlippingCard(card, ins: 0xC4)
        let tampered = DESFireTestReader(flipping)
        try tampered.select(Self.aid)
        try tampered.authenticate(0, .zero(type), scheme)
        #expect(throws: DESFireTestReader.Failure.status(0x1E)) { try tampered.changeKey(0, to: Self.newKey(type, 5, version: 2)) }
        #expect(card.image == before)
    }

    @Test("the rules of the key settings: master key frozen (9D), keys frozen (F: 9D), the key itself (E), a change key (1-13), no session (AE), no such key (40)")
    func accessRules() throws {
        // Master key not changeable (bit 0 clear).
        var card = Self.card(.aes, settings: 0x0E)
        var reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9D)) { try reader.changeKey(0, to: Self.newKey(.aes, 1, version: 1)) }
        // Rule F: every other key frozen.
        card = Self.card(.aes, settings: 0xFF)
        reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9D)) { try reader.changeKey(1, to: Self.newKey(.aes, 1, version: 1)) }
        // Rule E: only the key itself.
        card = Self.card(.aes, settings: 0xEF)
        reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.changeKey(1, to: Self.newKey(.aes, 1, version: 1)) }
        try reader.authenticate(1, .zero(.aes), .aes)
        try reader.changeKey(1, to: Self.newKey(.aes, 1, version: 1))
        // Rule 2: key 2 changes the others (libfreefare's "three key procedure" with 0x5F).
        card = Self.card(.tdes, settings: 0x2F)
        reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.changeKey(1, to: Self.newKey(.tdes, 1, version: 1)) }
        try reader.authenticate(2, .zero(.tdes), .legacy)
        try reader.changeKey(1, to: Self.newKey(.tdes, 1, version: 7))
        try reader.changeKey(3, to: Self.newKey(.tdes, 3, version: 9))
        #expect(try reader.getKeyVersion(1) == 7)
        #expect(try reader.getKeyVersion(3) == 9)
        // No session, no such key.
        card = Self.card(.aes)
        reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        #expect(card.process(h("90C40000") + [0x21, 0x01] + [UInt8](repeating: 0, count: 32) + [0]) == h("91AE"))
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x40)) { try reader.changeKey(4, to: Self.newKey(.aes, 1, version: 1)) }
    }

    @Test("the PICC master key changes type through the key number's bits: DES → AES (80) → 3K3DES (40) → DES (00), GetKeySettings follows")
    func piccMasterKeyType() throws {
        let card = DESFireCard.factory()
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        let aes = DESFireCard.Key(.aes, bytes: Array("PICC master key!".utf8), version: 3)
        try reader.changeKey(0x80, to: aes)
        #expect(card.image.masterKey == aes)
        try reader.authenticate(0, aes, .aes)
        #expect(try reader.getKeySettings() == [0x0F, 0x81])
        let tdes3 = DESFireCard.Key(.tdes3, bytes: Array("3K3DES PICC master key!!".utf8))
        try reader.changeKey(0x40, to: tdes3)
        try reader.authenticate(0, tdes3, .iso)
        #expect(try reader.getKeySettings() == [0x0F, 0x41])
        try reader.changeKey(0x00, to: .zero(.tdes))
        try reader.authenticate(0, .zero(.tdes), .iso)
        #expect(try reader.getKeySettings() == [0x0F, 0x01])
        #expect(card.image.masterKey == .zero(.tdes))
    }
}

/// A card between the reader and the emulator that flips one bit of one byte of every wrapped
/// command `ins` (by default the first after the key number): data damaged on the way.
final class FlippingCard: EmulatedCard, @unchecked Sendable {
    let inner: DESFireCard
    let ins: UInt8
    /// Index into the APDU; negative counts from the end.
    var position = 6
    init(_ inner: DESFireCard, ins: UInt8) {
        self.inner = inner
        self.ins = ins
    }
    var atr: [UInt8] { inner.atr }
    func reset() { inner.reset() }
    func process(_ apdu: [UInt8]) -> [UInt8] {
        var a = apdu
        let i = position < 0 ? a.count + position : position
        if a.count > 8, a[0] == 0x90, a[1] == ins, a.indices.contains(i) { a[i] ^= 0x01 }
        return inner.process(a)
    }
}
