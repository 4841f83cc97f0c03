// What PACE and chip authentication ask of a key-agreement group, whether an elliptic curve or a
// Diffie-Hellman group (ICAO 9303 Part 11 §4.4.3, §6.2, §9.6).

/// A private key of an ephemeral or mapping key pair: a libcrypto number, cleared when freed,
/// never shown.
struct PrivateKey: CustomStringConvertible, CustomReflectable {
    let value: BigNumber
    var description: String { "private key" }
    var customMirror: Mirror { Mirror(self, children: []) }
}

/// One side's ephemeral key pair; the public key is in the group's wire encoding (EC:
/// uncompressed point `04 ‖ x ‖ y`; DH: the unsigned integer, as long as p).
struct KeyPair {
    let privateKey: PrivateKey
    let publicKey: [UInt8]
}

/// The operations of key agreement over one group, implemented on libcrypto.
protocol KeyAgreementGroup: AnyObject, CustomStringConvertible {
    /// Bytes of a shared secret and of a field element: the length of p.
    var fieldSize: Int { get }
    /// The tag of the public key inside a 7F49 public-key template (§4.4.4.2.1): 86 for a point,
    /// 84 for a DH value.
    var publicKeyTag: UInt8 { get }
    /// A key pair whose private key is drawn from `random`, in [1, order − 1].
    func generateKeyPair(random: RandomSource) throws(MRTDProtocolError) -> KeyPair
    /// The public key of a given private key (tests of published vectors).
    func keyPair(privateKey: [UInt8]) throws(MRTDProtocolError) -> KeyPair
    /// Checks a public key from the chip: a point on the curve, in the prime-order subgroup, not
    /// the identity; or a DH value in 2…p−2 of order q. Returns it in canonical encoding.
    func validatePublicKey(_ key: [UInt8]) throws(MRTDProtocolError) -> [UInt8]
    /// The whole key-agreement result (EC: the point, encoded; DH: the value), for the generic
    /// mapping's H (§4.4.3.3.1).
    func agreeElement(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8]
    /// The shared secret K of §9.6: ECDH's x-coordinate, or DH's value, as long as p.
    func sharedSecret(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8]
    /// Generic mapping: the group with generator G' = s·G + H (EC) or g' = g^s·h (DH).
    func genericMapping(nonce: [UInt8], element: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup
    /// Integrated mapping: the group whose generator is the encoding of the pseudo-random
    /// `fieldElement` (already reduced mod p): Appendix B's point encoding (EC), or
    /// fieldElement^((p−1)/q) (DH).
    func integratedMapping(fieldElement: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup
    /// The bit length of p (the integrated mapping's output length depends on it).
    var primeBits: Int { get }
    /// p, big-endian.
    var prime: [UInt8] { get }
    /// The order of the generator, big-endian (q for DH; nil when a DH group does not give it).
    var order: [UInt8]? { get }
}
