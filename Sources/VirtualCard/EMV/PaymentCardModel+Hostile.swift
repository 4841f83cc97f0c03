// Payment cards that misbehave as the reviews of issue 48 found, each a named variant of a
// profile, for the tests and the hostile matrix. Everything they sign is signed under the
// emulator's test CA: what makes them hostile is what they choose to say, not a broken signature.
import ISO7816

extension PaymentCardModel {
    public enum Hostile: String, Sendable, CaseIterable {
        /// Mastercard (DDA) whose DDOL asks for the terminal country code (9F1A 02) and not the
        /// terminal's unpredictable number: INTERNAL AUTHENTICATE gets the same data, and the card
        /// answers one fixed signature, every time.
        case ddolWithoutUnpredictableNumber = "ddol-without-9f37"
        /// American Express whose AIP offers SDA but which gives no Signed Static Application
        /// Data (93).
        case sdaWithoutSignedData = "sda-without-93"
        /// Mastercard (DDA) with no PAN anywhere: no 5A, no track 2 (57, 9F6B), no track 1 (56).
        case ddaWithoutPAN = "dda-without-pan"
        /// Visa (fDDA) with no PAN: no 5A in the records, no track 2 in the GPO answer.
        case fddaWithoutPAN = "fdda-without-pan"
        /// American Express (SDA) with an unsigned record, read before the signed ones, holding
        /// another PAN of the same issuer, another name and another expiry.
        case unsignedRecordFirst = "unsigned-record-first"
        /// Visa whose GPO answer (format 77) gives an empty AIP: 82 00.
        case emptyAIPInGPO = "empty-aip-in-gpo"
        /// Visa whose FCI gives an empty AIP (82 00) and whose GPO answer gives none.
        case emptyAIPInFCI = "empty-aip-in-fci"
        /// American Express (SDA) whose issuer key, certified by the CA, is 16 bytes, and whose
        /// 93 is signed with it: 6A 03 01 DAC, padding, BC, no room for a hash.
        case shortIssuerKey = "short-issuer-key"

        /// The profile this variant changes.
        public var profile: Profile {
            switch self {
            case .ddolWithoutUnpredictableNumber, .ddaWithoutPAN: .mastercard
            case .fddaWithoutPAN, .emptyAIPInGPO, .emptyAIPInFCI: .visa
            case .sdaWithoutSignedData, .unsignedRecordFirst, .shortIssuerKey: .amex
            }
        }
    }

    /// The PAN, name and expiry (5F24) of `unsignedRecordFirst`'s unsigned record: the issuer's
    /// prefix (374245), so only the signature can tell them from the card's own.
    public static let unsignedPAN = "374245001751006"
    public static let unsignedName = "OTHER/HOLDER"
    public static let unsignedExpiry: [UInt8] = [0x31, 0x06, 0x30]

    /// A 16-byte RSA key (exponent 3) for `shortIssuerKey`, generated for this project.
    static let shortIssuer = PaymentTestKeys.Key(modulus: try! Hex.decode("D006A1F2982032A6AE5229FEE337D211"),
                                                 privateExponent: try! Hex.decode("8AAF16A1BAC021C3407904B7339F362B"))

    func personalise(_ hostile: Hostile) {
        var app = applications[0]
        let rid = Array(app.aid.prefix(5))
        let pan = Self.tlv([0x5A], Self.bcd(self.pan))
        let dates = Self.tlv([0x5F, 0x24], [0x49, 0x12, 0x31]) + Self.tlv([0x5F, 0x25], [0x24, 0x01, 0x01]) + Self.tlv([0x5F, 0x28], [0x08, 0x40])
        let cdol = Self.tlv([0x8C], [0x9F, 0x02, 0x06, 0x9F, 0x37, 0x04])
        switch hostile {
        case .ddolWithoutUnpredictableNumber:
            app.records[2 << 8 | 1] = record(pan + dates + Self.tlv([0x9F, 0x49], [0x9F, 0x1A, 0x02]) + cdol)
            app.fixedIDN = [0x48, 0x48, 0x48, 0x48, 0x48, 0x48, 0x48, 0x48]
            app.records[3 << 8 | 1] = certificateRecord(rid: rid, staticData: staticData(app, withAIP: false), icc: true, ssad: false)
        case .sdaWithoutSignedData:
            app.records[1 << 8 | 4] = certificateRecord(rid: rid, staticData: staticData(app, withAIP: false), icc: false, ssad: false)
        case .ddaWithoutPAN:
            app.records[1 << 8 | 1] = record(Self.tlv([0x9F, 0x6C], [0x00, 0x01]))
            app.records[2 << 8 | 1] = record(dates + Self.tlv([0x9F, 0x49], [0x9F, 0x37, 0x04]) + cdol)
            app.records[3 << 8 | 1] = certificateRecord(rid: rid, staticData: staticData(app, withAIP: false), icc: true, ssad: false)
        case .fddaWithoutPAN:
            app.records[2 << 8 | 2] = record(dates + Self.tlv([0x9F, 0x07], [0xFF, 0x00]) + Self.tlv([0x9F, 0x4A], [0x82]))
            app.gpoTrack2 = false
            app.records[3 << 8 | 1] = certificateRecord(rid: rid, staticData: staticData(app, withAIP: true), icc: true, ssad: false)
        case .unsignedRecordFirst:
            app.afl = [0x20, 0x01, 0x01, 0x00] + app.afl
            app.records[4 << 8 | 1] = record(Self.tlv([0x5A], Self.bcd(Self.unsignedPAN)) + Self.tlv([0x5F, 0x20], Array(Self.unsignedName.utf8))
                                             + Self.tlv([0x5F, 0x24], Self.unsignedExpiry))
        case .emptyAIPInGPO:
            app.gpoAIP = []
        case .emptyAIPInFCI:
            app.fciExtra = Self.tlv([0x82], [])
            app.gpoOmitsAIP = true
        case .shortIssuerKey:
            let small = Self.shortIssuer, ca = PaymentTestKeys.ca
            let issuerID = Array((Self.bcd(String(self.pan.prefix(6))) + [0xFF, 0xFF]).prefix(4))
            let (cert, remainder) = PaymentCardSigner.certificate(format: 0x02, identity: issuerID, expiry: [0x12, 0x49], serial: [0x00, 0x00, 0x01],
                                                                  subject: small.modulus, subjectExponent: small.exponent,
                                                                  signerModulus: ca.modulus, signerPrivateExponent: ca.privateExponent)
            let recovered: [UInt8] = [0x6A, 0x03, 0x01, 0xDA, 0xC1] + [UInt8](repeating: 0xBB, count: 10) + [0xBC]
            let ssad = PaymentCardSigner.rsa(recovered, modulus: small.modulus, privateExponent: small.privateExponent)
            app.records[1 << 8 | 4] = record(Self.tlv([0x8F], [PaymentTestKeys.caIndex]) + Self.tlv([0x9F, 0x32], small.exponent) + Self.tlv([0x92], remainder)
                                             + Self.tlv([0x90], cert) + Self.tlv([0x93], ssad))
        }
        applications[0] = app
    }
}
