import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// Chip authentication v1 after BAC, against the test chip holding a static brainpoolP256r1 key.
@Suite("Chip Authentication (ICAO 9303 Part 11 §6.2)")
struct ChipAuthenticationTests {
    static func der(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] { [tag] + BERTLV.encodeLength(value.count) + value }

    /// DG14 with id-PK-ECDH (SubjectPublicKeyInfo on the named curve) and id-CA-ECDH-`suffix`.
    static func dg14(publicKey: [UInt8], cipherArc: UInt8) -> [UInt8] {
        let spki = der(0x30, der(0x30, h("06072A8648CE3D0201 06092B2403030208010107")) + der(0x03, [0x00] + publicKey))
        let pk = der(0x30, der(0x06, h("04007F000702020102")) + spki)
        let ca = der(0x30, der(0x06, h("04007F0007020203 02") + [cipherArc]) + [0x02, 0x01, 0x01])
        return der(0x6E, der(0x31, pk + ca))
    }

    static let chipKey = h("1FCD3D8AC4FAE3960A14FEA2925D75ADD335F13B248EBA192358DDED93A89552")

    static func setUp(cipherArc: UInt8, dg14Key: [UInt8]? = nil) throws -> (MRTDReader, TestPassportChip, SecurityInfos) {
        let curve = try EllipticCurveDomain(named: "brainpoolP256r1")
        let chip = MRTDReaderTests.chip()
        chip.caCurve = curve
        chip.caPrivateKey = chipKey
        let published = try curve.keyPair(privateKey: dg14Key ?? chipKey).publicKey
        chip.appFiles[0x010E] = dg14(publicKey: published, cipherArc: cipherArc)
        let reader = MRTDReaderTests.reader(chip)
        _ = try reader.establishAccess(.bac, key: MRTDReaderTests.key)
        guard case let .read(bytes) = try reader.readFile(.dataGroup(14)!) else { throw MRTDProtocolError(.malformed, "no DG14") }
        return (reader, chip, try SecurityInfos(dg14: bytes))
    }

    @Test("3DES (MSE:Set KAT) and AES-128/256 (MSE:Set AT + General Authenticate): new keys, SSC zero, confirmed by the next answer",
          arguments: [UInt8(1), 2, 4])
    func chipAuthentication(cipherArc: UInt8) throws {
        let (reader, chip, infos) = try Self.setUp(cipherArc: cipherArc)
        let result = try reader.performChipAuthentication(dg14: infos)
        #expect(result.isConfirmed)
        #expect(result.secureMessaging.cipher == (cipherArc == 1 ? .tdes2 : cipherArc == 2 ? .aes128 : .aes256))
        // And reading goes on under the new keys.
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
    }

    @Test("a chip without the private key of DG14's key (a clone): the first answer under the new keys fails; never confirmed")
    func clone() throws {
        let (reader, _, infos) = try Self.setUp(cipherArc: 2, dg14Key: h("0102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F20"))
        do {
            let result = try reader.performChipAuthentication(dg14: infos)
            Issue.record("confirmed: \(result)")
        } catch let error as MRTDProtocolError {
            #expect(error.kind == .secureMessagingEnded)
        }
        #expect(reader.channel.secureMessaging?.verifiedAnswers == 0)
    }

    @Test("DH chip authentication (RFC 5114 group 0 as X9.42 parameters in DG14), 3DES")
    func diffieHellman() throws {
        guard case let .diffieHellman(group) = try StandardDomainParameters.named(0)!.domain() else { Issue.record("not DH"); return }
        func integer(_ v: [UInt8]) -> [UInt8] { Self.der(0x02, v.first.map { $0 & 0x80 != 0 } == true ? [0] + v : v) }
        let chipKey = try group.keyPair(privateKey: h("5265030F751F4AD18B08AC565FC7AC952E41618D"))
        let parameters = Self.der(0x30, integer(group.p.bytes()) + integer(group.g.bytes()) + integer(group.q!.bytes()))
        let spki = Self.der(0x30, Self.der(0x30, Self.der(0x06, h("2A8648CE3E0201")) + parameters) + Self.der(0x03, [0x00] + integer(chipKey.publicKey)))
        let pk = Self.der(0x30, Self.der(0x06, h("04007F000702020101")) + spki)
        let chip = MRTDReaderTests.chip()
        chip.caCurve = group
        chip.caPrivateKey = h("5265030F751F4AD18B08AC565FC7AC952E41618D")
        chip.appFiles[0x010E] = Self.der(0x6E, Self.der(0x31, pk))
        let reader = MRTDReaderTests.reader(chip)
        _ = try reader.establishAccess(.bac, key: MRTDReaderTests.key)
        guard case let .read(bytes) = try reader.readFile(.dataGroup(14)!) else { Issue.record("no DG14"); return }
        let infos = try SecurityInfos(dg14: bytes)
        #expect(infos.chipAuthenticationPublicKeyInfos.first?.keyAgreement == .dh)
        let result = try reader.performChipAuthentication(dg14: infos)
        #expect(result.isConfirmed && result.keyAgreement == .dh && result.cipher == .tdes)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
    }

    @Test("chip authentication needs secure messaging first")
    func needsSession() throws {
        let infos = try SecurityInfos(dg14: Self.dg14(publicKey: try EllipticCurveDomain(named: "brainpoolP256r1").keyPair(privateKey: Self.chipKey).publicKey, cipherArc: 2))
        let channel = MRTDChannel(transport: APDUTransport(channel: ScriptedChip([])))
        #expect(throws: MRTDProtocolError.self) {
            try ChipAuthentication.perform(on: channel, publicKey: infos.chipAuthenticationPublicKeyInfos[0], info: infos.chipAuthenticationInfos.first)
        }
    }
}
