// The emulated eMRTD chip's Active Authentication and Chip Authentication version 1.
import CardCrypto
import ISO7816

/// Active Authentication (ICAO 9303 Part 11 §6.1: INTERNAL AUTHENTICATE signed with DG15's
/// key) and Chip Authentication version 1 (Part 11 §6.2, BSI TR-03110 Part 2 §3.4: a key
/// agreement with DG14's static key and new session keys, SSC 0).
extension MRTDChip {
    struct ChipAuthenticationSetup {
        let protocolID: ChipAuthenticationProtocol
    }

    // MARK: Active Authentication

    func internalAuthenticate(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard let key = document.activeAuthenticationKey else { return Outcome(.insNotSupported) }
        guard c.p1 == 0, c.p2 == 0 else { return Outcome(.incorrectP1P2) }
        guard s.session != nil else { return Outcome(.securityStatusNotSatisfied) }
        // RND.IFD is 8 bytes (Part 11 §6.1.3).
        guard c.data.count == 8, let ne = c.ne else { return Outcome(.wrongLength) }
        let signature: [UInt8]
        if key.isRSA {
            guard let sig = key.iso9796Signature(challenge: c.data, nonce: random.bytes) else { return Outcome(.noPreciseDiagnosis) }
            signature = sig
        } else {
            // ECDSA over the hash ActiveAuthenticationInfo names (TR-03111 plain r ‖ s).
            let digest = Self.plainECDSADigest(activeAuthenticationAlgorithm) ?? .sha256
            guard let (r, sv) = key.ecdsaSignature(hash: digest.hash(c.data), nonce: random.bytes) else { return Outcome(.noPreciseDiagnosis) }
            signature = r + sv
        }
        // The signature is never cut short: an Le or an APDU too small for it is a length error.
        guard ne >= signature.count, exchange.capacity >= signature.count else { return Outcome(.wrongLength) }
        return Outcome(data: signature)
    }

    /// The hash of an ecdsa-plain-SHA* OID (TR-03111 §5.2.1).
    static func plainECDSADigest(_ oid: String?) -> Digest? {
        switch oid {
        case "\(OID.ecdsaPlain).1": return .sha1
        case "\(OID.ecdsaPlain).2": return .sha224
        case "\(OID.ecdsaPlain).3": return .sha256
        case "\(OID.ecdsaPlain).4": return .sha384
        case "\(OID.ecdsaPlain).5": return .sha512
        default: return nil
        }
    }

    // MARK: Chip Authentication

    /// MSE:Set AT for chip authentication (TR-03110 Part 3 §B.3: DO 80 the protocol, DO 84
    /// the key), followed by GENERAL AUTHENTICATE: the AES way.
    func setChipAuthentication(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        s.chipAuthenticationSetup = nil
        guard let info = chipAuthenticationInfo, let protocolID = ChipAuthenticationProtocol(oid: info.protocolOID) else { return Outcome(.incorrectP1P2) }
        guard exchange.secured, s.session != nil else { return Outcome(.securityStatusNotSatisfied) }
        guard let objects = try? BERTLV.decode(c.data),
              let oid = objects.first(where: { $0.tag == [0x80] }).flatMap({ DER.dotted($0.value) }) else { return Outcome(.wrongData) }
        guard oid == info.protocolOID else { return Outcome(.wrongData) }
        if let keyID = objects.first(where: { $0.tag == [0x84] })?.value {
            guard let own = info.keyID, keyID.reduce(0, { $0 << 8 | Int($1) }) == own else { return Outcome(StatusWord(rawValue: 0x6A88)) }
        }
        s.chipAuthenticationSetup = ChipAuthenticationSetup(protocolID: protocolID)
        return Outcome(.success)
    }

    /// MSE:Set KAT (Part 11 §6.2.4.1: DO 91 the terminal's ephemeral key, DO 84 the key):
    /// the 3DES way, the key agreement in one command.
    func setKeyAgreementTemplate(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard let info = chipAuthenticationInfo, let protocolID = ChipAuthenticationProtocol(oid: info.protocolOID) else { return Outcome(.incorrectP1P2) }
        guard exchange.secured, s.session != nil else { return Outcome(.securityStatusNotSatisfied) }
        guard protocolID.cipher == .tdes else { return Outcome(.conditionsNotSatisfied) }
        guard let objects = try? BERTLV.decode(c.data), let key = objects.first(where: { $0.tag == [0x91] })?.value else { return Outcome(.wrongData) }
        if let keyID = objects.first(where: { $0.tag == [0x84] })?.value {
            guard let own = info.keyID, keyID.reduce(0, { $0 << 8 | Int($1) }) == own else { return Outcome(StatusWord(rawValue: 0x6A88)) }
        }
        return agreeChipAuthenticationKeys(protocolID, terminalKey: key, answer: [], &s)
    }

    func chipAuthenticationKeyAgreement(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard let setup = s.chipAuthenticationSetup else { return Outcome(.conditionsNotSatisfied) }
        s.chipAuthenticationSetup = nil
        guard !exchange.chained else { return Outcome(StatusWord(rawValue: 0x6883)) }
        guard exchange.secured, s.session != nil else { return Outcome(.securityStatusNotSatisfied) }
        guard let outer = try? BERTLV.decode(c.data), outer.count == 1, outer[0].tag == [0x7C],
              let inner = try? BERTLV.decode(outer[0].value), inner.count == 1, inner[0].tag == [0x80] else { return Outcome(.wrongData) }
        // The answer is an empty dynamic authentication data object.
        return agreeChipAuthenticationKeys(setup.protocolID, terminalKey: inner[0].value, answer: [0x7C, 0x00], &s)
    }

    /// K = KA(SK_IC, PK_terminal); K_enc and K_mac from it; SSC 0. The answer still goes out
    /// under the old keys.
    private func agreeChipAuthenticationKeys(_ protocolID: ChipAuthenticationProtocol, terminalKey: [UInt8], answer: [UInt8], _ s: inout State) -> Outcome {
        guard let key = document.chipAuthenticationKey else { return Outcome(.conditionsNotSatisfied) }
        let shared: [UInt8]
        switch key.material {
        case .ec(_, let scalar):
            guard protocolID.elliptic, let curve = key.curve, let terminal = curve.point(terminalKey),
                  let k = curve.multiply(generatorBy: nil, point: terminal, by: BigNumber(bytes: scalar)), !k.isInfinity else {
                return Outcome(.wrongData)
            }
            shared = k.x
        case .dh(_, _, _, let x):
            guard !protocolID.elliptic, let group = key.dhGroup, let terminal = group.element(terminalKey) else { return Outcome(.wrongData) }
            shared = group.power(terminal, BigNumber(bytes: x)).bytes(length: group.size)
        case .rsa:
            return Outcome(.conditionsNotSatisfied)
        }
        let cipher = protocolID.cipher.algorithm
        guard let channel = try? ChipSecureChannel(algorithm: cipher,
                                                   encryptionKey: KeyDerivation.key(shared, counter: KeyDerivation.encryption, for: cipher),
                                                   macKey: KeyDerivation.key(shared, counter: KeyDerivation.mac, for: cipher)) else {
            return Outcome(.noPreciseDiagnosis)
        }
        var outcome = answer.isEmpty ? Outcome(.success) : Outcome(data: answer)
        outcome.newSession = Session(channel: channel, access: .chipAuthentication, openedByPACE: s.session?.openedByPACE ?? false)
        return outcome
    }
}
