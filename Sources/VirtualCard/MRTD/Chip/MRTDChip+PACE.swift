// The emulated eMRTD chip's half of PACE: MSE:Set AT and the four GENERAL AUTHENTICATE steps,
// Generic and Chip Authentication Mapping.
import CardCrypto
import ISO7816

/// PACE, the chip's half (ICAO 9303 Part 11 §4.4; BSI TR-03110 Part 2 §3.2 and Part 3 §B.1):
/// MSE:Set AT chooses the protocol and password, then four chained GENERAL AUTHENTICATE
/// commands: the encrypted nonce, the mapping (Generic: Ĝ = s·G + H, ĝ = g^s·h), the ephemeral
/// key agreement, and the authentication tokens. Chip Authentication Mapping adds the chip's
/// proof (DO 8A) to the last answer.
extension MRTDChip {
    struct PACERun {
        let info: SecurityInfos.PACEInfo
        let protocolID: PACEProtocol
        let oidContent: [UInt8]
        /// K_π.
        let passwordKey: [UInt8]
        let curve: EllipticCurve?
        let group: ModularGroup?
        /// 0: set, waiting for the nonce request; 1: nonce sent; 2: mapped; 3: keys agreed.
        var step = 0
        var nonce: [UInt8] = []
        var mappingPrivateKey: BigNumber?
        var mappedCurve: EllipticCurve?
        var mappedGroup: ModularGroup?
        /// The chip's ephemeral public key as sent, and the terminal's as received.
        var chipEphemeral: [UInt8] = []
        var terminalEphemeral: [UInt8] = []
        var encryptionKey: [UInt8] = []
        var macKey: [UInt8] = []
    }

    // MARK: MSE:Set AT

    func manageSecurityEnvironment(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        switch (c.p1, c.p2) {
        case (0xC1, 0xA4): return setPACE(c, &s)
        case (0x41, 0xA4): return setChipAuthentication(c, exchange, &s)
        case (0x41, 0xA6): return setKeyAgreementTemplate(c, exchange, &s)
        default: return Outcome(.incorrectP1P2)
        }
    }

    private func setPACE(_ c: CommandAPDU, _ s: inout State) -> Outcome {
        s.pace = nil
        // PACE is offered by EF.CardAccess; a chip without it knows no such template.
        guard !paceOffers.isEmpty else { return Outcome(.incorrectP1P2) }
        guard let objects = try? BERTLV.decode(c.data) else { return Outcome(.wrongData) }
        func value(_ tag: [UInt8]) -> [UInt8]? { objects.first { $0.tag == tag }?.value }
        guard let oidContent = value([0x80]), let oid = DER.dotted(oidContent) else { return Outcome(.wrongData) }
        guard let reference = value([0x83]), reference.count == 1 else { return Outcome(.wrongData) }
        let parameterID = value([0x84]).map { $0.reduce(0) { $0 << 8 | Int($1) } }
        if parameterID == nil && configuration.requiresParameterIDWhenSeveral && paceOffers.count > 1 {
            return Outcome(StatusWord(rawValue: 0x6A87))
        }
        guard let info = paceOffers.first(where: { $0.protocolOID == oid && (parameterID == nil || $0.parameterID == parameterID) }),
              let protocolID = PACEProtocol(oid: oid), let id = info.parameterID, let parameters = StandardDomainParameters(id: id) else {
            return Outcome(.wrongData)
        }
        // Password reference (Part 11 §9.5.3): 01 MRZ, 02 CAN (03 PIN and 04 PUK are not on
        // eMRTDs): referenced data not found.
        let secret: [UInt8]
        switch reference[0] {
        case 0x01:
            guard configuration.pacePasswords.contains(.mrz), let key = document.effectiveAccessKey else { return Outcome(StatusWord(rawValue: 0x6A88)) }
            secret = Digest.sha1.hash(Array(key.information.utf8))
        case 0x02:
            guard configuration.pacePasswords.contains(.can), let can = document.can else { return Outcome(StatusWord(rawValue: 0x6A88)) }
            secret = Array(can.utf8)
        default:
            return Outcome(StatusWord(rawValue: 0x6A88))
        }
        if protocolID.mapping == .chipAuthenticationECDH {
            guard let key = document.chipAuthenticationKey, key.curve.map({ $0.nameOID == parameters.makeCurve()?.nameOID }) == true else {
                return Outcome(.conditionsNotSatisfied)
            }
        }
        let cipher = protocolID.cipher.algorithm
        s.pace = PACERun(info: info, protocolID: protocolID, oidContent: oidContent,
                         passwordKey: KeyDerivation.key(secret, counter: KeyDerivation.password, for: cipher),
                         curve: parameters.makeCurve(), group: parameters.makeGroup())
        return Outcome(.success)
    }

    // MARK: GENERAL AUTHENTICATE

    func generalAuthenticate(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        if s.pace != nil { return paceStep(c, exchange, &s) }
        if s.chipAuthenticationSetup != nil { return chipAuthenticationKeyAgreement(c, exchange, &s) }
        return Outcome(.conditionsNotSatisfied)
    }

    /// The dynamic authentication data's objects (tag 7C), or nil when the data is not one 7C.
    private func dynamicAuthenticationData(_ data: [UInt8]) -> [TLV]? {
        guard let objects = try? BERTLV.decode(data), objects.count == 1, objects[0].tag == [0x7C] else { return nil }
        if objects[0].value.isEmpty { return [] }
        return try? BERTLV.decode(objects[0].value)
    }

    private func paceStep(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard var run = s.pace else { return Outcome(.conditionsNotSatisfied) }
        // Any failure ends the run: the terminal starts again with MSE:Set AT.
        s.pace = nil
        // Steps 1–3 are chained (CLA b5), the last is not (TR-03110 Part 3 §B.1.1).
        guard exchange.chained == (run.step < 3) else { return Outcome(StatusWord(rawValue: 0x6883)) }
        guard let objects = dynamicAuthenticationData(c.data) else { return Outcome(.wrongData) }
        func only(_ tag: UInt8) -> [UInt8]? {
            guard objects.count == 1, objects[0].tag == [tag] else { return nil }
            return objects[0].value
        }
        let cipher = run.protocolID.cipher.algorithm
        switch run.step {
        case 0:
            // Step 1: z = E(K_π, s), s as long as the cipher's block (TR-03110 Part 3 §B.1.1;
            // OpenPACE does the same).
            guard objects.isEmpty, let k = try? BlockCipher(cipher, key: run.passwordKey) else { return Outcome(.wrongData) }
            run.nonce = random.bytes(cipher.blockSize)
            guard let z = try? k.encrypt(cbc: run.nonce) else { return Outcome(.noPreciseDiagnosis) }
            run.step = 1
            s.pace = run
            return Outcome(data: DER.element(0x7C, DER.element(0x80, z)))

        case 1:
            // Step 2: the Generic Mapping (Part 11 §4.4.3.3.1).
            guard let terminalKey = only(0x81) else { return Outcome(.wrongData) }
            let s0 = BigNumber(bytes: run.nonce)
            if let curve = run.curve {
                guard let terminal = curve.point(terminalKey) else { return Outcome(.wrongData) }
                let secret = randomScalar(below: curve.order)
                guard let chipKey = curve.multiply(generatorBy: secret),
                      let h = curve.multiply(generatorBy: nil, point: terminal, by: secret),
                      let mapped = curve.multiply(generatorBy: s0, point: h, by: BigNumber(1)), !mapped.isInfinity,
                      let mappedCurve = curve.with(generator: mapped) else { return Outcome(.wrongData) }
                run.mappingPrivateKey = secret
                run.mappedCurve = mappedCurve
                run.step = 2
                s.pace = run
                return Outcome(data: DER.element(0x7C, DER.element(0x82, chipKey.uncompressed)))
            }
            guard let group = run.group, let terminal = group.element(terminalKey) else { return Outcome(.wrongData) }
            let secret = randomScalar(below: group.q)
            let chipKey = group.power(secret)
            let h = group.power(terminal, secret)
            let mapped = group.multiply(group.power(s0), h)
            guard !mapped.isOne else { return Outcome(.wrongData) }
            run.mappingPrivateKey = secret
            run.mappedGroup = group.with(generator: mapped)
            run.step = 2
            s.pace = run
            return Outcome(data: DER.element(0x7C, DER.element(0x82, chipKey.bytes(length: group.size))))

        case 2:
            // Step 3: ephemeral key agreement on the mapped parameters; the terminal's key must
            // differ from the chip's (Part 11 §4.4.1 d).
            guard let terminalKey = only(0x83) else { return Outcome(.wrongData) }
            let shared: [UInt8]
            if let curve = run.mappedCurve {
                guard let terminal = curve.point(terminalKey) else { return Outcome(.wrongData) }
                let secret = randomScalar(below: curve.order)
                guard let chipKey = curve.multiply(generatorBy: secret), chipKey.uncompressed != terminal.uncompressed,
                      let k = curve.multiply(generatorBy: nil, point: terminal, by: secret), !k.isInfinity else { return Outcome(.wrongData) }
                run.chipEphemeral = chipKey.uncompressed
                shared = k.x
            } else if let group = run.mappedGroup {
                guard let terminal = group.element(terminalKey) else { return Outcome(.wrongData) }
                let secret = randomScalar(below: group.q)
                let chipKey = group.power(secret)
                guard !(chipKey == terminal) else { return Outcome(.wrongData) }
                run.chipEphemeral = chipKey.bytes(length: group.size)
                shared = group.power(terminal, secret).bytes(length: group.size)
            } else {
                return Outcome(.conditionsNotSatisfied)
            }
            run.terminalEphemeral = terminalKey
            run.encryptionKey = KeyDerivation.key(shared, counter: KeyDerivation.encryption, for: cipher)
            run.macKey = KeyDerivation.key(shared, counter: KeyDerivation.mac, for: cipher)
            run.step = 3
            s.pace = run
            return Outcome(data: DER.element(0x7C, DER.element(0x84, run.chipEphemeral)))

        default:
            // Step 4: mutual authentication with the tokens (Part 11 §4.4.3.4).
            guard let token = only(0x85) else { return Outcome(.wrongData) }
            let expected = authenticationToken(run, over: run.chipEphemeral)
            guard token.count == 8, constantTimeEquals(expected, token) else { return Outcome(.verificationFailed) }
            var answer = DER.element(0x86, authenticationToken(run, over: run.terminalEphemeral))
            guard let channel = try? ChipSecureChannel(algorithm: cipher, encryptionKey: run.encryptionKey, macKey: run.macKey) else {
                return Outcome(.noPreciseDiagnosis)
            }
            if run.protocolID.mapping == .chipAuthenticationECDH {
                guard let proof = chipAuthenticationMappingData(run) else { return Outcome(.noPreciseDiagnosis) }
                answer += DER.element(0x8A, proof)
            }
            var outcome = Outcome(data: DER.element(0x7C, answer))
            outcome.newSession = Session(channel: channel, access: .pace, openedByPACE: true)
            return outcome
        }
    }

    /// T = MAC(K_mac, public key data object of the other side's ephemeral key): 7F49 with the
    /// protocol's OID and the point (86) or the value (84) (Part 11 §4.4.3.4, TR-03110 Part 3
    /// §D.3.1); CMAC truncated to 8 bytes for AES, the retail MAC over padded data for 3DES.
    func authenticationToken(_ run: PACERun, over key: [UInt8]) -> [UInt8] {
        let input = DER.element([0x7F, 0x49], DER.element(0x06, run.oidContent) + DER.element(run.protocolID.isElliptic ? 0x86 : 0x84, key))
        let cipher = run.protocolID.cipher.algorithm
        if cipher.isAES {
            guard let cmac = try? CMAC(cipher, key: run.macKey), let tag = try? cmac.mac(input) else { return [] }
            return Array(tag.prefix(8))
        }
        return (try? RetailMAC.mac(key: run.macKey, data: Padding.pad(input, blockSize: 8))) ?? []
    }

    /// Chip Authentication Mapping's proof (Part 11 §4.4.3.5.1): CA_IC = SK_IC⁻¹ · SK_Map,IC mod
    /// n, enciphered with KS_enc in CBC mode with IV = E(KS_enc, FF…FF) after padding.
    func chipAuthenticationMappingData(_ run: PACERun) -> [UInt8]? {
        guard let key = document.chipAuthenticationKey, case .ec(_, let scalar) = key.material, let curve = run.curve,
              let mapping = run.mappingPrivateKey else { return nil }
        let context = BigNumberContext()
        guard let inverse = BigNumber.modInverse(BigNumber(bytes: scalar), curve.order, context) else { return nil }
        let ca = BigNumber.modMul(inverse, mapping, curve.order, context).bytes(length: curve.orderSize)
        let cipher = run.protocolID.cipher.algorithm
        guard let k = try? BlockCipher(cipher, key: run.encryptionKey),
              let iv = try? k.encrypt(block: [UInt8](repeating: 0xFF, count: cipher.blockSize)) else { return nil }
        return try? k.encrypt(cbc: Padding.pad(ca, blockSize: cipher.blockSize), iv: iv)
    }
}
