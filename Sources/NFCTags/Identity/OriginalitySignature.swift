// NXP's originality signature over the UID (secp128r1 or secp224r1 ECDSA), checked against
// NXP's published keys through libcrypto.
internal import COpenSSL
import ISO7816

/// NXP's originality signature (READ_SIG, Read_Sig): ECDSA over the tag's 7-byte UID, no hash,
/// signature r ‖ s: on secp128r1 for NTAG21x and Ultralight EV1 (32 bytes), on secp224r1 for
/// NTAG 424 DNA (56 bytes). A genuine NXP chip carries one made with NXP's private key; a clone
/// either has none, or copies one that does not match its own UID.
///
/// Verification runs in OpenSSL's libcrypto (swift-crypto has no secp128r1).
public struct OriginalitySignature: Sendable, Hashable {
    /// NXP's published public keys (uncompressed points), per chip family.
    public struct PublicKey: Sendable, Hashable {
        public var name: String
        public var curve: String
        public var point: [UInt8]

        /// NTAG21x (NTAG210–216): NXP AN11350 / the NTAG21x datasheet.
        public static let ntag21x = PublicKey(name: "NXP NTAG21x", curve: "secp128r1",
                                              point: try! Hex.decode("04494E1A386D3D3CFE3DC10E5DE68A499B1C202DB5B132393E89ED19FE5BE8BC61"))
        /// MIFARE Ultralight EV1.
        public static let ultralightEV1 = PublicKey(name: "NXP MIFARE Ultralight EV1", curve: "secp128r1",
                                                    point: try! Hex.decode("0490933BDCD6E99B4E255E3DA55389A827564E11718E017292FAF23226A96614B8"))

        /// NTAG 424 DNA (NT4H2421Gx), secp224r1: the key AN12196's worked example (Table 30)
        /// verifies with; proxmark3 lists it as "NTAG424DNA, DESFire EV2".
        public static let ntag424DNA = PublicKey(name: "NXP NTAG 424 DNA", curve: "secp224r1",
                                                 point: try! Hex.decode("048A9B380AF2EE1B98DC417FECC263F8449C7625CECE82D9B916C992DA209D68422B81EC20B65A66B5102A61596AF3379200599316A00A1410"))

        /// MIFARE Plus EV1 (secp224r1), as proxmark3 lists it (`client/src/crypto/originality.c`);
        /// the EV1 signatures proxmark3 publishes in `tools/recover_pk.py` verify with it.
        public static let mifarePlusEV1 = PublicKey(name: "NXP MIFARE Plus EV1", curve: "secp224r1",
                                                    point: try! Hex.decode("044409ADC42F91A8394066BA83D872FB1D16803734E911170412DDF8BAD1A4DADFD0416291AFE1C748253925DA39A5F39A1C557FFACD34C62E"))
        /// MIFARE Plus EV2 (secp224r1), as proxmark3 lists it; no published EV2 signature pins it.
        public static let mifarePlusEV2 = PublicKey(name: "NXP MIFARE Plus EV2", curve: "secp224r1",
                                                    point: try! Hex.decode("04BB49AE4447E6B1B6D21C098C1538B594A11A4A1DBF3D5E673DEACDEB3CC512D1C08AFA1A2768CE20A200BACD2DC7804CD7523A0131ABF607"))
        /// MIFARE Plus EV1 and EV2 (secp224r1).
        public static let mifarePlus: [PublicKey] = [.mifarePlusEV1, .mifarePlusEV2]

        /// The Type 2 chips' keys (secp128r1).
        public static let all: [PublicKey] = [.ntag21x, .ultralightEV1]

        /// The length of a signature r ‖ s under this key: r and s are as long as the curve's
        /// order, which on NXP's curves (cofactor 1) is as long as a coordinate of the
        /// uncompressed point 04 ‖ x ‖ y.
        public var signatureLength: Int { point.first == 0x04 ? point.count - 1 : 0 }

        /// Whether libcrypto knows the curve and the point lies on it. A key copied from a table
        /// can be wrong: one of proxmark3's entries named for NTAG 424 DNA is not on secp224r1.
        public var isOnCurve: Bool {
            let zero = [UInt8](repeating: 0, count: max(signatureLength, 2))
            return point.withUnsafeBufferPointer { p in
                zero.withUnsafeBufferPointer { z in apdu_ecdsa_verify_raw(curve, p.baseAddress, p.count, z.baseAddress, 1, z.baseAddress, z.count) != -1 }
            }
        }
    }

    public var uid: [UInt8]
    public var signature: [UInt8]

    public init(uid: [UInt8], signature: [UInt8]) {
        self.uid = uid
        self.signature = signature
    }

    /// Whether the signature verifies under `key`. A malformed signature (wrong length) does
    /// not verify; it is not an error.
    public func verifies(with key: PublicKey) -> Bool {
        guard signature.count == key.signatureLength, !uid.isEmpty else { return false }
        return key.point.withUnsafeBufferPointer { point in
            uid.withUnsafeBufferPointer { message in
                signature.withUnsafeBufferPointer { sig in
                    apdu_ecdsa_verify_raw(key.curve, point.baseAddress, point.count, message.baseAddress, message.count, sig.baseAddress, sig.count) == 1
                }
            }
        }
    }

    /// The first of `keys` the signature verifies with, nil for none.
    public func verifyingKey(among keys: [PublicKey] = PublicKey.all) -> PublicKey? {
        keys.first(where: verifies(with:))
    }

    /// A signature of all zeros: the chip was never signed (or reads it as protected).
    public var isBlank: Bool { signature.allSatisfy { $0 == 0 } }
}
