import CardCrypto
import Foundation
import ISO7816
import Testing
@testable import EMV

/// The Book 2 chain built by a signer in the tests (TestPKI) and recovered by the library: every
/// field checked, and each kind of tampering refused.
@Suite("EMV offline data authentication: certificates and signatures")
struct OfflineDataAuthenticationTests {
    static let ca = TestRSAKey.generate(bytes: 144)
    static let issuer = TestRSAKey.generate(bytes: 128)
    static let icc = TestRSAKey.generate(bytes: 112)
    static let pan = "4761739001010119"
    static let panCN: [UInt8] = [0x47, 0x61, 0x73, 0x90, 0x01, 0x01, 0x01, 0x19, 0xFF, 0xFF]
    static let staticData: [UInt8] = Array("records signed by the AFL, then the AIP".utf8)

    @Test("issuer key, SDA (DAC), ICC key and DDA (IDN) recover from a chain built by Book 2's rules")
    func chain() throws {
        let (cert, remainder) = TestSigner.issuerCertificate(Self.issuer, ca: Self.ca)
        #expect(!remainder.isEmpty, "an issuer key longer than the certificate's room uses 92")
        let issuer = try EMVCertificates.issuerKey(certificate: cert, remainder: remainder, exponent: [0x03], ca: Self.ca.publicKey)
        #expect(issuer.key == Self.issuer.publicKey && issuer.expiry == EMVMonth(year: 2049, month: 12))
        #expect(EMVCertificates.issuerIdentifier(issuer.issuerIdentifier, matches: Self.pan))
        #expect(!EMVCertificates.issuerIdentifier(issuer.issuerIdentifier, matches: "5413330089020011"))
        let ssad = TestSigner.ssad(Self.staticData, dac: [0xDA, 0xC0], issuer: Self.issuer)
        #expect(try EMVCertificates.staticDataAuthenticationCode(ssad: ssad, issuer: issuer.key, staticData: Self.staticData) == [0xDA, 0xC0])
        let (iccCert, iccRemainder) = TestSigner.iccCertificate(Self.icc, issuer: Self.issuer, pan: Self.panCN, staticData: Self.staticData)
        let icc = try EMVCertificates.iccKey(certificate: iccCert, remainder: iccRemainder, exponent: [0x03], issuer: issuer.key, staticData: Self.staticData)
        #expect(icc.key == Self.icc.publicKey && EMVCertificates.digits(icc.pan) == Self.pan)
        let un: [UInt8] = [0x7F, 0xBC, 0x40, 0x49]
        let sdad = TestSigner.sdad(idn: [0x00, 0xAE], terminalData: un, icc: Self.icc)
        #expect(try EMVCertificates.dynamicData(sdad: sdad, icc: icc.key, terminalData: un).iccDynamicNumber == [0x00, 0xAE])
        // fDDA: format 95 over UN ‖ amount ‖ currency ‖ 9F69.
        let fdda = un + [0, 0, 0, 0, 0, 0] + [0x09, 0x78] + [0x01, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00]
        let signed = TestSigner.sdad(idn: [0x12, 0x34], terminalData: fdda, icc: Self.icc, format: 0x95)
        #expect(try EMVCertificates.dynamicData(sdad: signed, icc: icc.key, terminalData: fdda, format: 0x95).iccDynamicNumber == [0x12, 0x34])
    }

    @Test("tampering fails its step: a flipped byte in each signed item, the static data, the remainder, another unpredictable number, the wrong key, another format")
    func tampering() throws {
        let (cert, remainder) = TestSigner.issuerCertificate(Self.issuer, ca: Self.ca)
        var flipped = cert; flipped[40] ^= 1
        #expect(throws: ODAFailure.self) { try EMVCertificates.issuerKey(certificate: flipped, remainder: remainder, exponent: [0x03], ca: Self.ca.publicKey) }
        var badRemainder = remainder; badRemainder[0] ^= 1
        #expect(throws: ODAFailure.self) { try EMVCertificates.issuerKey(certificate: cert, remainder: badRemainder, exponent: [0x03], ca: Self.ca.publicKey) }
        #expect(throws: ODAFailure.self) { try EMVCertificates.issuerKey(certificate: cert, remainder: remainder, exponent: [0x01, 0x00, 0x01], ca: Self.ca.publicKey) }
        #expect(throws: ODAFailure.self) { try EMVCertificates.issuerKey(certificate: cert, remainder: remainder, exponent: [0x03], ca: Self.issuer.publicKey) }
        let issuer = Self.issuer.publicKey
        let ssad = TestSigner.ssad(Self.staticData, dac: [0xDA, 0xC0], issuer: Self.issuer)
        #expect(throws: ODAFailure.self) { try EMVCertificates.staticDataAuthenticationCode(ssad: ssad, issuer: issuer, staticData: Self.staticData + [0]) }
        // An SSAD presented as an ICC certificate: the format byte is 03, not 04.
        #expect(throws: ODAFailure.self) { try EMVCertificates.iccKey(certificate: ssad, remainder: [], exponent: [0x03], issuer: issuer, staticData: Self.staticData) }
        let (iccCert, iccRemainder) = TestSigner.iccCertificate(Self.icc, issuer: Self.issuer, pan: Self.panCN, staticData: Self.staticData)
        #expect(throws: ODAFailure.self) { try EMVCertificates.iccKey(certificate: iccCert, remainder: iccRemainder, exponent: [0x03], issuer: issuer, staticData: Array(Self.staticData.dropLast())) }
        let sdad = TestSigner.sdad(idn: [0x00, 0xAE], terminalData: [1, 2, 3, 4], icc: Self.icc)
        do {
            _ = try EMVCertificates.dynamicData(sdad: sdad, icc: Self.icc.publicKey, terminalData: [1, 2, 3, 5])
            Issue.record("a signature over another unpredictable number verified")
        } catch {
            #expect(error.message.contains("replayed"))
        }
        #expect(throws: ODAFailure.self) { try EMVCertificates.dynamicData(sdad: Array(sdad.dropLast()), icc: Self.icc.publicKey, terminalData: [1, 2, 3, 4]) }
        #expect(throws: ODAFailure.self) { try EMVCertificates.dynamicData(sdad: sdad, icc: Self.icc.publicKey, terminalData: [1, 2, 3, 4], format: 0x95) }
        // A signature not below the modulus.
        #expect(throws: ODAFailure.self) { try EMVCertificates.dynamicData(sdad: [UInt8](repeating: 0xFF, count: 112), icc: Self.icc.publicKey, terminalData: []) }
    }

    @Test("certificate dates: YY 00-49 is 20YY, 50-99 is 19YY (Book 4 §6.7.3), so a certificate that ran out in 12/99 is expired, not valid until 2099")
    func centuries() throws {
        #expect(EMVMonth(mmyy: [0x12, 0x99]) == EMVMonth(year: 1999, month: 12))
        #expect(EMVMonth(mmyy: [0x01, 0x50]) == EMVMonth(year: 1950, month: 1))
        #expect(EMVMonth(mmyy: [0x12, 0x49]) == EMVMonth(year: 2049, month: 12))
        let (cert, remainder) = TestSigner.issuerCertificate(Self.issuer, ca: Self.ca, expiry: [0x12, 0x99])
        let issuer = try EMVCertificates.issuerKey(certificate: cert, remainder: remainder, exponent: [0x03], ca: Self.ca.publicKey)
        #expect(issuer.expiry < EMVMonth(year: 2026, month: 12), "\(issuer.expiry)")
    }

    @Test("CA keys: checksums checked on load, proxmark3's capk.txt lines parsed (CRLF, BOM, comments), a wrong checksum refused naming the line")
    func caKeys() throws {
        let rid: [UInt8] = [0xA0, 0x00, 0x00, 0x00, 0x03]
        let sum = CAPublicKey.checksum(rid: rid, index: 0x94, key: Self.ca.publicKey)
        let line = "a0:00:00:00:03 94 491231 rsa 03 \(Self.ca.modulus.hexString) sha1 \(sum.hexString)"
        let keys = try CAPublicKeys.parse(capkFile: "\u{FEFF}# test keys\r\n\r\n" + line + "  # Visa test\r\n", test: true)
        #expect(keys.count == 1 && keys[0].index == 0x94 && keys[0].key == Self.ca.publicKey && keys[0].test)
        #expect(CAPublicKeys(keys).key(rid: rid, index: 0x94) != nil && CAPublicKeys(keys).key(rid: rid, index: 0x95) == nil)
        var wrong = sum; wrong[0] ^= 1
        do {
            _ = try CAPublicKeys.parse(capkFile: "# one\n" + line.replacingOccurrences(of: sum.hexString, with: wrong.hexString))
            Issue.record("a wrong checksum was accepted")
        } catch {
            #expect(error.message.hasPrefix("CA key file line 2:") && error.message.contains("checksum"), "\(error)")
        }
        for bad in ["a0:00:00:00:03 94 491231 rsa 03", "a0:00:00:03 94 491231 rsa 03 00 sha1 00", "a0:00:00:00:03 9 491231 dsa 03 00 sha1 00"] {
            #expect(throws: EMVFormatError.self) { try CAPublicKeys.parse(capkFile: bad) }
        }
    }
}
