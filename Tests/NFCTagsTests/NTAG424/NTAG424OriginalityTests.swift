import ISO7816
@testable import NFCTags
import SUN
import Testing
import VirtualCard

/// The NTAG 424 DNA's originality signature: NXP's published key and AN12196's worked example,
/// Read_Sig in both modes against the emulator, random ID, and the verdict recorded by
/// provisioning.
@Suite("NTAG 424 DNA: the originality signature (Read_Sig, secp224r1)")
struct NTAG424OriginalityTests {
    static let zero = [UInt8](repeating: 0, count: 16)
    /// NXP AN12196 Table 30 (asymmetric originality check): a genuine tag's UID and the
    /// signature its Read_Sig returned.
    static let an12196UID = h("04518DFAA96180")
    static let an12196Signature = h("D1940D17CFEDA4BFF80359AB975F9F6514313E8F90C1D3CAAF5941AD" + "744A1CDF9A83F883CAFE0FE95D1939B1B7E47113993324473B785D21")

    @Test("AN12196 Table 30 verifies with NXP's NTAG 424 DNA key; every flipped bit, another UID, the Type 2 keys and a short signature do not")
    func publishedVector() {
        let key = OriginalitySignature.PublicKey.ntag424DNA
        #expect(key.isOnCurve && key.signatureLength == 56 && key.curve == "secp224r1")
        let s = OriginalitySignature(uid: Self.an12196UID, signature: Self.an12196Signature)
        #expect(s.verifies(with: key))
        for bit in 0..<(56 * 8) {
            var flipped = Self.an12196Signature
            flipped[bit / 8] ^= 1 << (bit % 8)
            if OriginalitySignature(uid: Self.an12196UID, signature: flipped).verifies(with: key) { Issue.record("bit \(bit) flipped still verifies") }
        }
        for bit in 0..<(7 * 8) {
            var uid = Self.an12196UID
            uid[bit / 8] ^= 1 << (bit % 8)
            if OriginalitySignature(uid: uid, signature: Self.an12196Signature).verifies(with: key) { Issue.record("UID bit \(bit) flipped still verifies") }
        }
        #expect(!s.verifies(with: .ntag21x) && !s.verifies(with: .ultralightEV1))
        #expect(!OriginalitySignature(uid: Self.an12196UID, signature: Array(Self.an12196Signature.prefix(32))).verifies(with: key))
        #expect(!OriginalitySignature(uid: Self.an12196UID, signature: [UInt8](repeating: 0, count: 56)).verifies(with: key))
    }

    @Test("every key is a point on its curve; the table entry proxmark3 also names for NTAG 424 DNA (…2B3B) is not on secp224r1")
    func keysOnCurves() {
        for key in OriginalitySignature.PublicKey.all + [.ntag424DNA] { #expect(key.isOnCurve, "\(key.name)") }
        let notOnCurve = OriginalitySignature.PublicKey(name: "proxmark3 'NTAG424DNA, NTAG424DNATT, DESFire Light EV2'", curve: "secp224r1",
                                                        point: h("04B304DC4C615F5326FE9383DDEC9AA892DF3A57FA7FFB3276192BC0EAA252ED45A865E3B093A3D0DCE5BE29E92F1392CE7DE321E3E5C52B3B"))
        #expect(!notOnCurve.isOnCurve)
        #expect(!OriginalitySignature(uid: Self.an12196UID, signature: Self.an12196Signature).verifies(with: notOnCurve))
    }

    @Test("the same verifier on another secp224r1 key: AN12343 §11.2.1's MIFARE DESFire Light example")
    func otherKey() {
        let light = OriginalitySignature.PublicKey(name: "NXP MIFARE DESFire Light", curve: "secp224r1",
                                                   point: h("040E98E117AAA36457F43173DC920A8757267F44CE4EC5ADD3C54075571AEBBF7B942A9774A1D94AD02572427E5AE0A2DD36591B1FB34FCF3D"))
        let s = OriginalitySignature(uid: h("045A115A346180"), signature: h("1CA298FC3F0F04A329254AC0DF7A3EB8E756C076CD1BAAF47B8BBA6DCD78BCC64DFD3E80E679D9A663CAE9E4D4C2C77023077CC549CE4A61"))
        #expect(light.isOnCurve && s.verifies(with: light) && !s.verifies(with: .ntag424DNA))
    }

    func connect(_ model: NTAG424TagModel, tamper: (@Sendable ([UInt8], [UInt8]) -> [UInt8])? = nil) throws -> (NTAG424Tag, RecordingChannel) {
        let channel = RecordingChannel(EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)), tamper: tamper)
        return (try #require(try NTAG424Tag.detect(APDUTransport(channel: channel))), channel)
    }

    @Test("Read_Sig without a session: 90 3C 00 00 01 00 00, 56 bytes and 91 90; the emulator's default signature is blank and does not verify")
    func plain() throws {
        let (tag, channel) = try connect(NTAG424TagModel(uid: Self.an12196UID, originalitySignature: Self.an12196Signature))
        let o = try tag.originality()
        #expect(channel.exchanges.last?.command == h("903C0000010000"))
        #expect(channel.exchanges.last?.answer == Self.an12196Signature + [0x91, 0x90])
        #expect(o.isValid && o.uid == Self.an12196UID && o.uidSource == .getVersion && o.verdict.hasPrefix("genuine"))
        let (blank, _) = try connect(NTAG424TagModel())
        let b = try blank.originality()
        #expect(!b.isValid && b.signature.isBlank && b.verdict.contains("all zeros"))
        // Another chip's signature on this UID (a clone that copied it): not valid.
        let (clone, _) = try connect(NTAG424TagModel(originalitySignature: Self.an12196Signature))
        #expect(try !clone.originality().isValid)
    }

    @Test("Read_Sig in a session: the command MACed, the answer enciphered and MACed with 90 first in its MAC input; the counter moves on; a flipped bit of the answer is refused")
    func authenticated() throws {
        let (tag, channel) = try connect(NTAG424TagModel(uid: Self.an12196UID, originalitySignature: Self.an12196Signature))
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        let o = try tag.originality()
        #expect(o.isValid && o.uidSource == .getCardUID && o.uid == Self.an12196UID)
        let command = try #require(channel.exchanges.last?.command), answer = try #require(channel.exchanges.last?.answer)
        #expect(command.count == 15 && Array(command.prefix(6)) == h("903C00000900") && command.last == 0)
        // 64 bytes of ciphertext (56 + 80 00… padding), 8 of MAC, then 91 90: the signature is not in the clear.
        #expect(answer.count == 64 + 8 + 2 && Array(answer.suffix(2)) == [0x91, 0x90])
        #expect(!answer.indices.dropLast(56).contains { Array(answer[$0..<($0 + 56)]) == Self.an12196Signature })
        // The session goes on: a MACed command after it verifies.
        #expect(try tag.fileSettings(NTAG424Tag.ndefFile).size == 256)

        // Any bit of the enciphered answer or its MAC flipped on the way: refused, never a signature.
        for bit in [0, 100, 511, 512, 575] {
            let (t, _) = try connect(NTAG424TagModel(uid: Self.an12196UID, originalitySignature: Self.an12196Signature)) { command, answer in
                guard command.count > 1, command[1] == 0x3C, answer.count > 2 else { return answer }
                var a = answer
                a[bit / 8] ^= 1 << (bit % 8)
                return a
            }
            try t.authenticate(keyNumber: 0, key: Self.zero)
            do { _ = try t.readSignature(); Issue.record("a flipped bit \(bit) was accepted") } catch let e as NTAG424Error {
                #expect(e.kind == .badCryptogram, "\(bit): \(e.message)")
            }
        }
    }

    @Test("random ID: GetVersion shows no UID, so the signature needs GetCardUID in a session; without one, a one-line refusal")
    func randomID() throws {
        let model = NTAG424TagModel(uid: Self.an12196UID, originalitySignature: Self.an12196Signature, randomID: true)
        let (tag, _) = try connect(model)
        #expect(tag.version.uid == [UInt8](repeating: 0, count: 7))
        do { _ = try tag.originality(); Issue.record("no UID, yet a verdict") } catch let e as NTAG424Error {
            #expect(e.kind == .permissionDenied && e.message.contains("random ID"))
        }
        try tag.authenticate(keyNumber: 2, key: Self.zero)
        let o = try tag.originality()
        #expect(o.isValid && o.uid == Self.an12196UID && o.uidSource == .getCardUID)
    }

    @Test("provisioning records the verdict beside the served URL; --require-genuine refuses a chip that does not verify before anything is written")
    func provisioning() throws {
        let plan = try SUNURLTemplate("https://t.example/{picc}/{mac}")
        let (genuine, _) = try connect(NTAG424TagModel(uid: Self.an12196UID, originalitySignature: Self.an12196Signature, randomID: true))
        let result = try genuine.provisionSDM(plan, key: Self.zero, requireGenuine: true) { _ in }
        #expect(result.originality.isValid && result.originality.uid == Self.an12196UID)
        #expect(try SUNMessage(url: result.served, template: SUNTemplate(url: "https://t.example/{picc}/{mac}")).verify(keys: SDMKeys(metaRead: Self.zero, fileRead: Self.zero)).uid == Self.an12196UID)
        let blankModel = NTAG424TagModel()
        let (blank, _) = try connect(blankModel)
        do { _ = try blank.provisionSDM(plan, key: Self.zero, requireGenuine: true) { _ in Issue.record("a backup was taken: something was about to be written") }; Issue.record("a blank signature was accepted") } catch let e as NTAG424Error {
            #expect(e.kind == .refused && e.message.contains("nothing was written"))
        }
        #expect(blankModel.ndefFile.allSatisfy { $0 == 0 } && blankModel.file(2)?.sdmEnabled == false)
        // Without the requirement, the verdict is recorded and provisioning goes on.
        let recorded = try blank.provisionSDM(plan, key: Self.zero) { _ in }
        #expect(!recorded.originality.isValid && recorded.originality.uid == blankModel.uid)
    }
}

/// A channel that keeps every exchange (the command and the whole answer, status included) and
/// may alter an answer on its way back.
final class RecordingChannel: CardChannel {
    let inner: any CardChannel
    let tamper: (@Sendable ([UInt8], [UInt8]) -> [UInt8])?
    var exchanges: [(command: [UInt8], answer: [UInt8])] = []
    var supportsExtendedLength: Bool { inner.supportsExtendedLength }
    init(_ inner: any CardChannel, tamper: (@Sendable ([UInt8], [UInt8]) -> [UInt8])? = nil) {
        self.inner = inner
        self.tamper = tamper
    }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        var answer = try inner.transmit(command)
        if let tamper { answer = tamper(command, answer) }
        exchanges.append((command, answer))
        return answer
    }
}
