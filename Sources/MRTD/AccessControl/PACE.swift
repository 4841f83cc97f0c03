// PACE (ICAO 9303 Part 11 §4.4; BSI TR-03110 Parts 2 and 3): MSE:Set AT, then four General
// Authenticate steps (nonce, mapping, key agreement, mutual authentication), with the Generic,
// Integrated and Chip Authentication mappings over ECDH and DH. Worked examples: Appendices G
// (generic), H (integrated) and I (CAM).
import CardCrypto
import ISO7816

/// Password Authenticated Connection Establishment, from the terminal's side.
public enum PACE {
    /// Runs PACE with `info`'s protocol and installs the new session on `channel`.
    /// - Parameters:
    ///   - channel: the channel to the chip, plain (any session on it is dropped).
    ///   - key: the MRZ or the CAN.
    ///   - info: the PACEInfo to run (see `MRTDReader`'s choice for `.auto`).
    ///   - securityInfos: EF.CardAccess as read (gives the domain parameters and whether DO 84
    ///     must be sent).
    ///   - random: the terminal's nonce (IM) and private keys are drawn from it.
    public static func perform(on channel: MRTDChannel, key: MRTDAccessKey, info: PACEInfo, securityInfos: SecurityInfos,
                               random: RandomSource = .system) throws -> PACEResult {
        let domain = try securityInfos.domainParameters(for: info)
        channel.secureMessaging = nil
        let cipher = info.cipher.algorithm
        let what = "PACE (\(info.keyAgreement) \(info.mapping))"

        // MSE:Set AT (§4.4.4.1): no Le (NFCPassportReader PR #153). DO 84 whenever the id is
        // standardized or EF.CardAccess lists several PACEInfos (NFCPassportReader PR #269,
        // gmrtd #108: Ukrainian passports answer 6A 87 without it).
        var mse: [UInt8] = [0x80, UInt8(info.protocolIdentifier.encoded.count)] + info.protocolIdentifier.encoded
        mse += [0x83, 0x01, key.passwordReference.rawValue]
        if let id = info.parameterId, id < 0x100, StandardDomainParameters.named(id) != nil || securityInfos.paceInfos.count > 1 {
            mse += [0x84, 0x01, UInt8(id)]
        }
        let set = try channel.transport.send(CommandAPDU(cla: 0x00, ins: 0x22, p1: 0xC1, p2: 0xA4, data: mse))
        guard set.statusWord == .success || set.statusWord.sw1 == 0x63 && set.statusWord.sw2 & 0xF0 == 0xC0 && set.statusWord.sw2 != 0xC0 else {
            throw MRTDProtocolError.status(set.statusWord, "\(what): MSE:Set AT")
        }

        // Step 1: the encrypted nonce.
        // The encrypted nonce is under K_π, a key made from the MRZ or CAN alone: traces show it as `**`.
        let step1 = try generalAuthenticate(channel, [], last: false, expecting: 0x80, what: "\(what), step 1 (nonce)", secretResponse: true)
        let passwordKey = KeyDerivation.derive(key.pacePassword, purpose: .password, cipher: cipher)
        let nonce = try decryptNonce(step1, passwordKey: passwordKey, cipher: cipher)

        // Step 2: mapping.
        let group = domain.group
        let mapped: any KeyAgreementGroup
        var chipMappingKey: [UInt8]?
        switch info.mapping {
        case .generic, .chipAuthentication:
            let mapping = try group.generateKeyPair(random: random)
            let chipKey = try group.validatePublicKey(try generalAuthenticate(channel, tlv(0x81, mapping.publicKey), last: false, expecting: 0x82, what: "\(what), step 2 (mapping)"))
            guard !constantTimeEquals(chipKey, mapping.publicKey) else { throw MRTDProtocolError(.badCryptogram, "\(what): the chip echoed the terminal's mapping key") }
            chipMappingKey = chipKey
            mapped = try group.genericMapping(nonce: nonce, element: try group.agreeElement(privateKey: mapping.privateKey, peer: chipKey))
        case .integrated:
            let t = random.bytes(cipher.keySize)
            // The chip's answer has an empty DO 82, or none at all: `7C 00` and `7C 02 82 00` are both seen.
            _ = try generalAuthenticate(channel, tlv(0x81, t), last: false, expecting: nil, what: "\(what), step 2 (mapping)")
            let r = try pseudoRandom(s: nonce, t: t, cipher: cipher, primeBits: group.primeBits)
            mapped = try group.integratedMapping(fieldElement: r)
        }

        // Step 3: key agreement on the mapped group.
        let ephemeral = try mapped.generateKeyPair(random: random)
        let chipKey = try mapped.validatePublicKey(try generalAuthenticate(channel, tlv(0x83, ephemeral.publicKey), last: false, expecting: 0x84, what: "\(what), step 3 (key agreement)"))
        guard !constantTimeEquals(chipKey, ephemeral.publicKey) else { throw MRTDProtocolError(.badCryptogram, "\(what): the chip echoed the terminal's ephemeral key") }
        let secret = try mapped.sharedSecret(privateKey: ephemeral.privateKey, peer: chipKey)
        let kEnc = KeyDerivation.derive(secret, purpose: .encryption, cipher: cipher)
        let kMac = KeyDerivation.derive(secret, purpose: .mac, cipher: cipher)

        // Step 4: mutual authentication with the tokens (§4.4.3.4).
        let terminalToken = try authenticationToken(publicKey: chipKey, tag: mapped.publicKeyTag, protocol: info.protocolIdentifier, macKey: kMac, cipher: cipher)
        let step4 = try channel.transport.send(CommandAPDU(cla: 0x00, ins: 0x86, p1: 0, p2: 0, data: [0x7C, 0x0A] + tlv(0x85, terminalToken), ne: 256))
        switch step4.statusWord {
        case .success: break
        case .verificationFailed, .securityStatusNotSatisfied, StatusWord(rawValue: 0x6300):
            throw MRTDProtocolError(.accessDenied, "\(what): the chip refused the terminal's token (\(step4.statusWord)): the \(key.passwordReference) is not this document's", statusWord: step4.statusWord)
        default:
            if step4.statusWord.sw1 == 0x63 {
                throw MRTDProtocolError(.accessDenied, "\(what): the chip refused the terminal's token (\(step4.statusWord)): the \(key.passwordReference) is not this document's", statusWord: step4.statusWord)
            }
            throw MRTDProtocolError.status(step4.statusWord, "\(what), step 4 (mutual authentication)")
        }
        let answer = try dynamicAuthenticationData(step4.data, what: "\(what), step 4")
        guard let chipToken = answer.first(where: { $0.tag == [0x86] })?.value else {
            throw MRTDProtocolError(.malformed, "\(what), step 4: the chip's answer has no authentication token (DO 86)")
        }
        let expected = try authenticationToken(publicKey: ephemeral.publicKey, tag: mapped.publicKeyTag, protocol: info.protocolIdentifier, macKey: kMac, cipher: cipher)
        guard constantTimeEquals(chipToken, expected) else {
            throw MRTDProtocolError(.badCryptogram, "\(what): the chip's authentication token does not verify")
        }

        var mappingEvidence: ChipAuthenticationMappingData?
        if info.mapping == .chipAuthentication {
            guard let encrypted = answer.first(where: { $0.tag == [0x8A] })?.value, let chipMappingKey else {
                throw MRTDProtocolError(.malformed, "\(what): the chip's answer has no encrypted chip authentication data (DO 8A)")
            }
            let chipData = try decryptChipAuthenticationData(encrypted, encryptionKey: kEnc, cipher: cipher)
            mappingEvidence = ChipAuthenticationMappingData(chipAuthenticationData: chipData, chipMappingPublicKey: chipMappingKey)
        }

        let sm = try SecureMessaging(keys: SessionKeys(cipher: cipher, encryption: kEnc, mac: kMac,
                                                       sendSequenceCounter: [UInt8](repeating: 0, count: cipher.blockSize)))
        channel.secureMessaging = sm
        return PACEResult(info: info, passwordReference: key.passwordReference, domainParameters: domain.description,
                          secureMessaging: sm, chipAuthenticationMapping: mappingEvidence)
    }

    /// One General Authenticate (`10 86 00 00` chained, `00 86` last) with `7C ‖ data`; returns
    /// the value of `expecting` in the chip's 7C answer (nil: any answer, the value unused).
    static func generalAuthenticate(_ channel: MRTDChannel, _ data: [UInt8], last: Bool, expecting tag: UInt8?, what: String,
                                    secretResponse: Bool = false) throws -> [UInt8] {
        let body = [0x7C] + BERTLV.encodeLength(data.count) + data
        // CLA bit 10 already chains the General Authenticate steps: a body longer than a short
        // APDU cannot be split with the same bit, so it needs extended length (2048-bit DH).
        guard body.count <= 255 || channel.transport.extendedLengthUsable else {
            throw MRTDProtocolError(.unsupported, "\(what): \(body.count) bytes need an extended-length APDU, which this reader or chip does not take")
        }
        let response = try channel.transport.send(CommandAPDU(cla: last ? 0x00 : 0x10, ins: 0x86, p1: 0, p2: 0, data: body, ne: 256),
                                                  secret: nil, secretResponse: secretResponse)
        guard response.statusWord == .success else { throw MRTDProtocolError.status(response.statusWord, what) }
        let objects = try dynamicAuthenticationData(response.data, what: what)
        guard let tag else { return [] }
        // Unrequested DOs are tolerated (Appendix G.2's step 4 carries a CA reference).
        guard let value = objects.first(where: { $0.tag == [tag] })?.value, !value.isEmpty else {
            throw MRTDProtocolError(.malformed, "\(what): the chip's answer has no DO \(Hex.encode([tag]))")
        }
        return value
    }

    /// The children of the 7C dynamic authentication data template.
    static func dynamicAuthenticationData(_ data: [UInt8], what: String) throws(MRTDProtocolError) -> [TLV] {
        let outer: [TLV]
        do { outer = try BERTLV.decode(data, maxDepth: 1) } catch { throw MRTDProtocolError(.malformed, "\(what): the chip's answer is not BER-TLV (\(error.reason))") }
        guard outer.count == 1, let template = outer.first, template.tag == [0x7C] else {
            throw MRTDProtocolError(.malformed, "\(what): the chip's answer is not a 7C template")
        }
        if template.value.isEmpty { return [] }
        guard let children = template.children else { throw MRTDProtocolError(.malformed, "\(what): the chip's 7C template does not parse") }
        return children
    }

    static func tlv(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] { [tag] + BERTLV.encodeLength(value.count) + value }

    /// s = D(K_π, z): CBC with a zero IV, one block (§4.4.3.1).
    static func decryptNonce(_ z: [UInt8], passwordKey: [UInt8], cipher: CipherAlgorithm) throws(MRTDProtocolError) -> [UInt8] {
        guard !z.isEmpty, z.count % cipher.blockSize == 0, z.count <= 32 else {
            throw MRTDProtocolError(.malformed, "PACE: the encrypted nonce is \(z.count) bytes, not whole \(cipher.blockSize)-byte blocks")
        }
        return try MRTDProtocolError.crypto("PACE nonce") { try BlockCipher(cipher, key: passwordKey).decrypt(cbc: z) }
    }

    /// The authentication token (§4.4.3.4): MAC(K_MAC, 7F49 { 06 OID, 86 point | 84 value })
    /// — CMAC cut to 8 bytes for AES, the retail MAC over padded input for 3DES.
    static func authenticationToken(publicKey: [UInt8], tag: UInt8, protocol oid: ObjectIdentifier9303, macKey: [UInt8], cipher: CipherAlgorithm) throws(MRTDProtocolError) -> [UInt8] {
        let inner = tlv(0x06, oid.encoded) + tlv(tag, publicKey)
        let input = [0x7F, 0x49] + BERTLV.encodeLength(inner.count) + inner
        return try MRTDProtocolError.crypto("PACE token") {
            if cipher.isAES { return Array(try CMAC(cipher, key: macKey).mac(input).prefix(8)) }
            return try RetailMAC.mac(key: macKey, data: Padding.pad(input, blockSize: 8))
        }
    }

    /// R(s, t) of the integrated mapping (§4.4.3.3.2): k0 = E(t, s), then n blocks
    /// x_i = E(k_i, c1), k_{i+1} = E(k_i, c0), with n = ⌈(log2 p + 64) / l⌉; the output reduced
    /// mod p by the caller's group.
    static func pseudoRandom(s: [UInt8], t: [UInt8], cipher: CipherAlgorithm, primeBits: Int) throws(MRTDProtocolError) -> [UInt8] {
        let c0: [UInt8], c1: [UInt8]
        switch s.count {
        case 16:
            c0 = [0xA6, 0x68, 0x89, 0x2A, 0x7C, 0x41, 0xE3, 0xCA, 0x73, 0x9F, 0x40, 0xB0, 0x57, 0xD8, 0x59, 0x04]
            c1 = [0xA4, 0xE1, 0x36, 0xAC, 0x72, 0x5F, 0x73, 0x8B, 0x01, 0xC1, 0xF6, 0x02, 0x17, 0xC1, 0x88, 0xAD]
        case 32:
            c0 = [0xD4, 0x63, 0xD6, 0x52, 0x34, 0x12, 0x4E, 0xF7, 0x89, 0x70, 0x54, 0x98, 0x6D, 0xCA, 0x0A, 0x17,
                  0x4E, 0x28, 0xDF, 0x75, 0x8C, 0xBA, 0xA0, 0x3F, 0x24, 0x06, 0x16, 0x41, 0x4D, 0x5A, 0x16, 0x76]
            c1 = [0x54, 0xBD, 0x72, 0x55, 0xF0, 0xAA, 0xF8, 0x31, 0xBE, 0xC3, 0x42, 0x3F, 0xCF, 0x39, 0xD6, 0x9B,
                  0x6C, 0xBF, 0x06, 0x66, 0x77, 0xD0, 0xFA, 0xAE, 0x5A, 0xAD, 0xD9, 0x9D, 0xF8, 0xE5, 0x35, 0x17]
        default:
            throw MRTDProtocolError(.unsupported, "the integrated mapping with a \(s.count)-byte nonce (\(cipher)) is not supported")
        }
        guard cipher.isAES, t.count == cipher.keySize else {
            throw MRTDProtocolError(.unsupported, "the integrated mapping with \(cipher) is not supported")
        }
        let l = s.count * 8
        let n = (primeBits + 64 + l - 1) / l
        return try MRTDProtocolError.crypto("PACE integrated mapping") {
            func block(_ key: [UInt8], _ plain: [UInt8]) throws -> [UInt8] { try BlockCipher(cipher, key: Array(key.prefix(cipher.keySize))).encrypt(cbc: plain) }
            var k = try block(t, s)
            var out: [UInt8] = []
            for _ in 0..<n {
                out += try block(k, c1)
                k = try block(k, c0)
            }
            return out
        }
    }

    /// CA_IC = D(K_Enc, A_IC) with IV = E(K_Enc, −1) (all ones), padding removed (§4.4.3.5.1).
    static func decryptChipAuthenticationData(_ encrypted: [UInt8], encryptionKey: [UInt8], cipher: CipherAlgorithm) throws(MRTDProtocolError) -> [UInt8] {
        guard cipher.isAES, !encrypted.isEmpty, encrypted.count % 16 == 0 else {
            throw MRTDProtocolError(.malformed, "PACE-CAM: the encrypted chip authentication data is \(encrypted.count) bytes, not whole AES blocks")
        }
        let plain = try MRTDProtocolError.crypto("PACE-CAM") {
            let k = try BlockCipher(cipher, key: encryptionKey)
            return try k.decrypt(cbc: encrypted, iv: try k.encrypt(block: [UInt8](repeating: 0xFF, count: 16)))
        }
        guard let data = Padding.unpad(plain, blockSize: 16), !data.isEmpty else {
            throw MRTDProtocolError(.badCryptogram, "PACE-CAM: the decrypted chip authentication data has no 80 00… padding")
        }
        return data
    }
}

/// What PACE established.
public struct PACEResult: CustomStringConvertible {
    /// The PACEInfo that ran.
    public let info: PACEInfo
    /// MRZ or CAN (never the value).
    public let passwordReference: MRTDAccessKey.PasswordReference
    /// The domain parameters' name.
    public let domainParameters: String
    /// The session, already installed on the channel.
    public let secureMessaging: SecureMessaging
    /// For Chip Authentication Mapping: what proves the chip genuine once its static key is
    /// known (DG14 or EF.CardSecurity). Nil for the other mappings.
    public let chipAuthenticationMapping: ChipAuthenticationMappingData?

    public var description: String { "PACE \(info.keyAgreement) \(info.mapping), \(info.cipher), \(domainParameters), with the \(passwordReference)" }
}

/// Chip Authentication Mapping's proof, checked when the chip's static key is at hand (§4.4.3.5.2).
public struct ChipAuthenticationMappingData: Sendable, Hashable {
    /// CA_IC, decrypted from the chip's DO 8A.
    public let chipAuthenticationData: [UInt8]
    /// PK_Map,IC, the chip's mapping public key.
    public let chipMappingPublicKey: [UInt8]

    /// Whether PK_Map,IC = CA_IC · PK_IC on the static key's curve: true proves the chip holds
    /// the private key of `key` (the chip is genuine if that key is signed, through EF.SOD or
    /// EF.CardSecurity). Throws when the key is no EC key or its parameters cannot be used.
    public func verify(against key: ChipAuthenticationPublicKeyInfo) throws(MRTDProtocolError) -> Bool {
        guard case let .ellipticCurve(curve) = try key.publicKey.specification.domain() else {
            throw MRTDProtocolError(.unsupported, "PACE-CAM needs an EC chip authentication key")
        }
        let scalar = try BigNumber(chipAuthenticationData)
        scalar.markSecret()
        let context = try BigNumberContext()
        let product = try curve.encode(try curve.multiply(scalar, try curve.decode(key.publicKey.publicKey, context: context), context: context), context: context)
        let expected = try curve.validatePublicKey(chipMappingPublicKey)
        return constantTimeEquals(product, expected)
    }
}
