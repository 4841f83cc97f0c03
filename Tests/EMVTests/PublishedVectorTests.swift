import CardCrypto
import ISO7816
import Testing
@testable import EMV

/// The verifier against published vectors (see `PublishedVectors` for the sources), byte for
/// byte, and the built-in CA keys' checksums.
@Suite("EMV: published ODA vectors and the built-in CA keys")
struct PublishedVectorTests {
    typealias V = PublishedVectors
    static let visa: [UInt8] = [0xA0, 0x00, 0x00, 0x00, 0x03], mastercard: [UInt8] = [0xA0, 0x00, 0x00, 0x00, 0x04]

    func ca(_ rid: [UInt8], _ index: UInt8) throws -> EMVPublicKey { try #require(CAPublicKeys.builtIn.key(rid: rid, index: index)).key }

    @Test("every built-in CA key loads with its checksum; live and test keys are marked")
    func builtIn() throws {
        #expect(CAPublicKeys.builtInProblems.isEmpty, "\(CAPublicKeys.builtInProblems)")
        #expect(CAPublicKeys.builtIn.keys.count == 21)
        for key in CAPublicKeys.builtIn.keys {
            #expect(CAPublicKey.checksum(rid: key.rid, index: key.index, key: key.key) == key.checksum)
        }
        #expect(CAPublicKeys.builtIn.key(rid: Self.visa, index: 0x94)?.test == true)
        #expect(CAPublicKeys.builtIn.key(rid: Self.visa, index: 0x09)?.test == false)
        #expect(CAPublicKeys.builtIn.key(rid: [0xA0, 0x00, 0x00, 0x00, 0x25], index: 0x10)?.key.modulus.count == 248)
    }

    @Test("proxmark3 SDA: Visa live CA 01, issuer 427655, DAC 3132 over the static data; one changed byte of it fails")
    func proxmarkSDA() throws {
        let issuer = try EMVCertificates.issuerKey(certificate: V.pm_sda_issuer, remainder: V.pm_sda_rem, exponent: [0x03], ca: try ca(Self.visa, 0x01))
        #expect(issuer.issuerIdentifier == [0x42, 0x76, 0x55, 0xFF] && issuer.expiry == EMVMonth(year: 2009, month: 12) && issuer.key.modulus.count == 128)
        #expect(EMVCertificates.issuerIdentifier(issuer.issuerIdentifier, matches: "4276550013234599"))
        #expect(try EMVCertificates.staticDataAuthenticationCode(ssad: V.pm_sda_ssad, issuer: issuer.key, staticData: V.pm_sda_ssd) == [0x31, 0x32])
        var changed = V.pm_sda_ssd
        changed[10] ^= 0x01
        #expect(throws: ODAFailure.self) { try EMVCertificates.staticDataAuthenticationCode(ssad: V.pm_sda_ssad, issuer: issuer.key, staticData: changed) }
    }

    @Test("proxmark3 DDA: Mastercard live CA 05, ICC key over the static data (with the AIP 9F4A asks for), IDN 7A33FB8C9546E1E7 for dynamic data 00000000")
    func proxmarkDDA() throws {
        let issuer = try EMVCertificates.issuerKey(certificate: V.pm_dda_issuer, remainder: V.pm_dda_rem, exponent: [0x03], ca: try ca(Self.mastercard, 0x05))
        #expect(issuer.issuerIdentifier == [0x52, 0x85, 0x88, 0xFF] && issuer.key.modulus.count == 176)
        let icc = try EMVCertificates.iccKey(certificate: V.pm_dda_icc, remainder: [], exponent: [0x03], issuer: issuer.key, staticData: V.pm_dda_ssd)
        #expect(EMVCertificates.digits(icc.pan) == "5285881254345653" && icc.expiry == EMVMonth(year: 2015, month: 6) && icc.key.modulus.count == 112)
        let sdad = try EMVCertificates.dynamicData(sdad: V.pm_dda_sdad, icc: icc.key, terminalData: [0, 0, 0, 0])
        #expect(sdad.iccDynamicNumber.hexString == "7A33FB8C9546E1E7")
        #expect(throws: ODAFailure.self) { try EMVCertificates.dynamicData(sdad: V.pm_dda_sdad, icc: icc.key, terminalData: [0, 0, 0, 1]) }
    }

    @Test("emv-utils Visa test CA 94: issuer 476173FF to 12/31, the SSAD's DAC DAC0, the ICC certificate for 4761739001010119, IDN 00AE for UN 7FBC4049; the published invalid variants fail")
    func emvUtilsVisa() throws {
        let ca94 = try ca(Self.visa, 0x94)
        let issuer = try EMVCertificates.issuerKey(certificate: V.eu_visa_issuer, remainder: [], exponent: [0x03], ca: ca94)
        #expect(issuer.key.modulus == V.eu_visa_issuer_mod && issuer.issuerIdentifier == [0x47, 0x61, 0x73, 0xFF] && issuer.expiry == EMVMonth(year: 2031, month: 12))
        #expect(issuer.serial == [0x03, 0xDA, 0x0A])
        // The test gives no static data: the DAC is read from the recovered block, whose hash
        // is the one emv-utils records.
        let ssad = try EMVCertificates.open(V.eu_visa_ssad, key: issuer.key, format: 0x03, what: "SSAD")
        #expect(Array(ssad[3..<5]) == [0xDA, 0xC0] && Array(ssad.suffix(21).prefix(20)).hexString == "4E2821974D704E338E7218F887763F7BDCE2B814")
        let icc = try EMVCertificates.open(V.eu_visa_icc, key: issuer.key, format: 0x04, what: "ICC certificate")
        #expect(EMVCertificates.digits(Array(icc[2..<12])) == "4761739001010119" && Array(icc[12..<14]) == [0x12, 0x22])
        let iccModulus = Array(icc[21..<(icc.count - 21)]) + V.eu_visa_icc_rem
        #expect(iccModulus == V.eu_visa_icc_mod)
        let sdad = try EMVCertificates.dynamicData(sdad: V.eu_visa_sdad, icc: EMVPublicKey(modulus: iccModulus, exponent: [0x03]), terminalData: [0x7F, 0xBC, 0x40, 0x49])
        #expect(sdad.iccDynamicNumber == [0x00, 0xAE])
        var invalidIssuer = V.eu_visa_issuer; invalidIssuer[invalidIssuer.count - 1] = 0x2D
        #expect(throws: ODAFailure.self) { try EMVCertificates.issuerKey(certificate: invalidIssuer, remainder: [], exponent: [0x03], ca: ca94) }
        var invalidSDAD = V.eu_visa_sdad; invalidSDAD[invalidSDAD.count - 1] = 0xC8
        #expect(throws: ODAFailure.self) {
            try EMVCertificates.dynamicData(sdad: invalidSDAD, icc: EMVPublicKey(modulus: iccModulus, exponent: [0x03]), terminalData: [0x7F, 0xBC, 0x40, 0x49])
        }
    }

    @Test("emv-utils Mastercard test CA F1: issuer 541333FF, ICC 5413330089020011, the CDA block's IDN 537EB5E03CC433C8, CID 00, cryptogram 55B6408DBC985131")
    func emvUtilsMastercardCDA() throws {
        let issuer = try EMVCertificates.issuerKey(certificate: V.eu_mc_issuer, remainder: [], exponent: [0x03], ca: try ca(Self.mastercard, 0xF1))
        #expect(issuer.key.modulus == V.eu_mc_issuer_mod && issuer.issuerIdentifier == [0x54, 0x13, 0x33, 0xFF])
        let icc = try EMVCertificates.open(V.eu_mc_icc, key: issuer.key, format: 0x04, what: "ICC certificate")
        #expect(EMVCertificates.digits(Array(icc[2..<12])) == "5413330089020011")
        let modulus = Array(icc[21..<(icc.count - 21)]) + V.eu_mc_icc_rem
        #expect(modulus.count == 96)
        let sdad = try EMVCertificates.dynamicData(sdad: V.eu_mc_sdad, icc: EMVPublicKey(modulus: modulus, exponent: [0x03]), terminalData: [0x8B, 0x55, 0x63, 0x3B])
        #expect(sdad.iccDynamicNumber.hexString == "537EB5E03CC433C8")
        #expect(Array(sdad.iccDynamicData[9..<18]).hexString == "0055B6408DBC985131")
    }

    @Test("proxmark3 CDA: the same card's signature for UN 12345779 recovers IDN 4CC2FB1FAFB30915, CID 40, cryptogram 16AFBA13C52FB173, and its transaction data hash is SHA-1 of the CDOL1 data and the GENERATE AC answer")
    func proxmarkCDA() throws {
        let issuer = try EMVCertificates.issuerKey(certificate: V.pm_dda_issuer, remainder: V.pm_dda_rem, exponent: [0x03], ca: try ca(Self.mastercard, 0x05))
        let icc = try EMVCertificates.iccKey(certificate: V.pm_dda_icc, remainder: [], exponent: [0x03], issuer: issuer.key, staticData: V.pm_dda_ssd)
        let sdad = try EMVCertificates.dynamicData(sdad: V.pm_cda_sdad, icc: icc.key, terminalData: [0x12, 0x34, 0x57, 0x79])
        #expect(sdad.iccDynamicNumber.hexString == "4CC2FB1FAFB30915")
        let d = sdad.iccDynamicData
        #expect(d[9] == 0x40 && Array(d[10..<18]).hexString == "16AFBA13C52FB173")
        #expect(Array(d[18..<38]) == Digest.sha1.hash(V.pm_cda_crm1 + V.pm_cda_dd2))
    }
}
