// Basic Access Control (ICAO 9303 Part 11 §4.3; worked example Appendix D.3).
import CardCrypto
import ISO7816

/// BAC: GET CHALLENGE, then EXTERNAL AUTHENTICATE with E_IFD ‖ M_IFD under the keys from the
/// MRZ; the chip's cryptogram and MAC are checked, then the session keys and SSC are derived
/// (§4.3.3, §9.7.1, §9.8.2).
public enum BasicAccessControl {
    /// Runs BAC on the selected eMRTD application and installs the new session on `channel`.
    /// - Parameters:
    ///   - channel: the channel to the chip, plain (any session on it is dropped).
    ///   - key: an MRZ key (BAC knows no CAN).
    ///   - random: RND.IFD (8 bytes) then K.IFD (16 bytes) are drawn from it.
    /// - Returns: the session keys' cipher (always 2K3DES) inside the installed `SecureMessaging`.
    @discardableResult
    public static func perform(on channel: MRTDChannel, key: MRTDAccessKey, random: RandomSource = .system) throws -> SecureMessaging {
        guard let seed = key.bacKeySeed else {
            throw MRTDProtocolError(.invalidAccessKey, "BAC needs the MRZ (document number, birth and expiry dates), not a CAN")
        }
        channel.secureMessaging = nil
        let kEnc = KeyDerivation.derive(seed, purpose: .encryption, cipher: .tdes2)
        let kMac = KeyDerivation.derive(seed, purpose: .mac, cipher: .tdes2)

        let challenge = try channel.transport.send(CommandAPDU(cla: 0x00, ins: 0x84, p1: 0, p2: 0, ne: 8))
        guard challenge.statusWord == .success else { throw MRTDProtocolError.status(challenge.statusWord, "GET CHALLENGE") }
        guard challenge.data.count == 8 else {
            throw MRTDProtocolError(.malformed, "GET CHALLENGE: the chip's nonce is \(challenge.data.count) bytes, not 8")
        }
        let rndICC = challenge.data
        let rndIFD = random.bytes(8)
        let kIFD = random.bytes(16)

        let cipher = try tdes(kEnc)
        let eIFD = try MRTDProtocolError.crypto("BAC") { try cipher.encrypt(cbc: rndIFD + rndICC + kIFD) }
        let mIFD = try MRTDProtocolError.crypto("BAC") { try RetailMAC.mac(key: kMac, data: Padding.pad(eIFD, blockSize: 8)) }
        // E_IFD ‖ M_IFD and the chip's E_ICC ‖ M_ICC are cryptograms under keys made from the MRZ
        // alone: whoever holds them can test MRZ guesses offline. Traces and recordings show them
        // as `**`, as they show PINs.
        let externalAuthenticate = CommandAPDU(cla: 0x00, ins: 0x82, p1: 0, p2: 0, data: eIFD + mIFD, ne: 40)
        let dataStart = externalAuthenticate.isExtended ? 7 : 5
        let answer = try channel.transport.send(externalAuthenticate, secret: dataStart..<(dataStart + 40), secretResponse: true)
        switch answer.statusWord {
        case .success: break
        case .securityStatusNotSatisfied, .verificationFailed, StatusWord(rawValue: 0x6300):
            throw MRTDProtocolError(.accessDenied, "BAC refused (\(answer.statusWord)): the MRZ data is not this document's", statusWord: answer.statusWord)
        case StatusWord(rawValue: 0x6988):
            // No secure messaging runs yet: the only MAC in this command is M_IFD, made with
            // K_MAC from our MRZ. The chip saying it does not verify means the MRZ is not this
            // document's (issue 48), not a secure-messaging fault.
            throw MRTDProtocolError(.accessDenied, "BAC refused (\(answer.statusWord)): our MRZ-derived MAC did not verify, so the MRZ is not this document's",
                                    statusWord: answer.statusWord)
        default:
            throw MRTDProtocolError.status(answer.statusWord, "EXTERNAL AUTHENTICATE")
        }
        guard answer.data.count == 40 else {
            throw MRTDProtocolError(.malformed, "EXTERNAL AUTHENTICATE: the chip's answer is \(answer.data.count) bytes, not 40")
        }
        let eICC = Array(answer.data[0..<32])
        let mICC = Array(answer.data[32..<40])
        guard constantTimeEquals(try MRTDProtocolError.crypto("BAC") { try RetailMAC.mac(key: kMac, data: Padding.pad(eICC, blockSize: 8)) }, mICC) else {
            throw MRTDProtocolError(.badCryptogram, "BAC: the chip's MAC does not verify (a chip without this MRZ's keys, or an altered answer)")
        }
        let plain = try MRTDProtocolError.crypto("BAC") { try cipher.decrypt(cbc: eICC) }
        // RND.ICC ‖ RND.IFD ‖ K.ICC: the chip must echo both nonces.
        guard constantTimeEquals(Array(plain[0..<8]), rndICC), constantTimeEquals(Array(plain[8..<16]), rndIFD) else {
            throw MRTDProtocolError(.badCryptogram, "BAC: the chip's cryptogram does not carry our nonces")
        }
        let kICC = Array(plain[16..<32])
        let sessionSeed = zip(kIFD, kICC).map { $0 ^ $1 }
        let keys = SessionKeys(cipher: .tdes2,
                               encryption: KeyDerivation.derive(sessionSeed, purpose: .encryption, cipher: .tdes2),
                               mac: KeyDerivation.derive(sessionSeed, purpose: .mac, cipher: .tdes2),
                               sendSequenceCounter: Array(rndICC.suffix(4) + rndIFD.suffix(4)))
        let sm = try SecureMessaging(keys: keys)
        channel.secureMessaging = sm
        return sm
    }

    static func tdes(_ key: [UInt8]) throws(MRTDProtocolError) -> BlockCipher {
        try MRTDProtocolError.crypto("BAC") { try BlockCipher(.tdes2, key: key) }
    }
}
