// Chip Authentication version 1 (ICAO 9303 Part 11 §6.2; BSI TR-03110 Part 3 B.1): an
// ephemeral-static key agreement with the chip's key from DG14, new session keys, and secure
// messaging restarted with them.
import CardCrypto
import ISO7816

/// Chip authentication from the terminal's side.
public enum ChipAuthentication {
    /// Runs chip authentication over the current session and installs the new keys on `channel`.
    ///
    /// 3DES (id-CA-*-3DES-CBC-CBC): MSE:Set KAT with the ephemeral key (DO 91) and key id (DO 84).
    /// AES: MSE:Set AT (DO 80 OID, DO 84 key id), then General Authenticate with DO 80. Then
    /// K = KA(SK_IFD, PK_IC), K_Enc = KDF(K, 1), K_MAC = KDF(K, 2), SSC zero.
    ///
    /// The chip is proven to hold the key only when an answer under the new keys verifies: see
    /// `ChipAuthenticationResult.isConfirmed`.
    /// - Parameters:
    ///   - channel: the channel, secure messaging established by BAC or PACE.
    ///   - publicKey: the chip's key from DG14 (its hash checked by passive authentication makes
    ///     the verdict mean "genuine chip").
    ///   - info: the ChipAuthenticationInfo naming the cipher; nil means 3DES, as chips with only
    ///     a ChipAuthenticationPublicKeyInfo use (§9.2.5).
    ///   - random: the ephemeral key is drawn from it.
    public static func perform(on channel: MRTDChannel, publicKey: ChipAuthenticationPublicKeyInfo, info: ChipAuthenticationInfo?,
                               random: RandomSource = .system) throws -> ChipAuthenticationResult {
        guard channel.isSecured else {
            throw MRTDProtocolError(.sessionNotEstablished, "chip authentication runs inside secure messaging: run BAC or PACE first")
        }
        let domain = try publicKey.publicKey.specification.domain()
        let group = domain.group
        let chipKey = try group.validatePublicKey(publicKey.publicKey.publicKey)
        let cipher = info?.cipher ?? .tdes
        let ephemeral = try group.generateKeyPair(random: random)
        let keyId: [UInt8] = (info?.keyId ?? publicKey.keyId).map { id in
            let bytes = id > 0xFF ? [UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)] : [UInt8(id)]
            return [0x84, UInt8(bytes.count)] + bytes
        } ?? []
        let what = "chip authentication (\(group), \(cipher))"

        if cipher == .tdes {
            let data = PACE.tlv(0x91, ephemeral.publicKey) + keyId
            let answer = try channel.send(CommandAPDU(cla: 0x00, ins: 0x22, p1: 0x41, p2: 0xA6, data: data))
            guard answer.statusWord == .success else { throw MRTDProtocolError.status(answer.statusWord, "\(what): MSE:Set KAT") }
        } else {
            guard let info else { throw MRTDProtocolError(.unsupported, "\(what): AES needs a ChipAuthenticationInfo") }
            let set = try channel.send(CommandAPDU(cla: 0x00, ins: 0x22, p1: 0x41, p2: 0xA4,
                                                   data: PACE.tlv(0x80, info.protocolIdentifier.encoded) + keyId))
            guard set.statusWord == .success else { throw MRTDProtocolError.status(set.statusWord, "\(what): MSE:Set AT") }
            let inner = PACE.tlv(0x80, ephemeral.publicKey)
            let ga = try channel.send(CommandAPDU(cla: 0x00, ins: 0x86, p1: 0, p2: 0, data: PACE.tlv(0x7C, inner), ne: 256))
            guard ga.statusWord == .success else { throw MRTDProtocolError.status(ga.statusWord, "\(what): General Authenticate") }
        }

        let secret = try group.sharedSecret(privateKey: ephemeral.privateKey, peer: chipKey)
        let algorithm = cipher.algorithm
        let sm = try SecureMessaging(keys: SessionKeys(cipher: algorithm,
                                                       encryption: KeyDerivation.derive(secret, purpose: .encryption, cipher: algorithm),
                                                       mac: KeyDerivation.derive(secret, purpose: .mac, cipher: algorithm),
                                                       sendSequenceCounter: [UInt8](repeating: 0, count: algorithm.blockSize)))
        channel.secureMessaging = sm
        return ChipAuthenticationResult(keyAgreement: publicKey.keyAgreement, cipher: cipher, domainParameters: domain.description, secureMessaging: sm)
    }
}

/// What chip authentication did. It proves the chip holds the private key of DG14's key once an
/// answer under the new keys verifies (`isConfirmed`); that key is the document's own only if
/// passive authentication verified DG14.
public struct ChipAuthenticationResult: CustomStringConvertible {
    /// DH or ECDH, from the chip's key.
    public let keyAgreement: KeyAgreementAlgorithm
    /// The new session's cipher (3DES, AES-128/192/256).
    public let cipher: ProtocolCipher
    /// The name of the key's domain parameters.
    public let domainParameters: String
    /// The new session, installed on the channel.
    public let secureMessaging: SecureMessaging

    /// Whether the chip has answered under the new keys with a MAC that verifies: the proof.
    public var isConfirmed: Bool { secureMessaging.verifiedAnswers > 0 }

    public var description: String {
        "chip authentication \(keyAgreement), \(cipher), \(domainParameters): " + (isConfirmed ? "confirmed by the chip's first protected answer" : "not yet confirmed")
    }
}
