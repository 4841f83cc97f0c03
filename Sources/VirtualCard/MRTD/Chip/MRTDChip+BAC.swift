// The emulated eMRTD chip's half of Basic Access Control: GET CHALLENGE and EXTERNAL
// AUTHENTICATE, which open 3DES secure messaging.
import CardCrypto
import ISO7816

/// Basic Access Control, the chip's half (ICAO 9303 Part 11 §4.3, worked in Appendix D.3):
/// GET CHALLENGE gives RND.IC; EXTERNAL AUTHENTICATE checks the terminal's MAC and RND.IC,
/// answers E_IC ‖ M_IC with the chip's K.IC, and opens 3DES secure messaging with
/// K_seed = K.IFD ⊕ K.IC and SSC = RND.IC[4..8] ‖ RND.IFD[4..8].
extension MRTDChip {
    func getChallenge(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard c.p1 == 0, c.p2 == 0 else { return Outcome(.incorrectP1P2) }
        guard c.data.isEmpty, c.ne == 8 else { return Outcome(.wrongLength) }
        let challenge = random.bytes(8)
        s.challenge = challenge
        return Outcome(data: challenge)
    }

    func externalAuthenticate(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard let keys = bacKeys else { return Outcome(.securityStatusNotSatisfied) }
        guard c.p1 == 0, c.p2 == 0 else { return Outcome(.incorrectP1P2) }
        // The challenge is good for one attempt, whatever its outcome.
        guard let rndIC = s.challenge else { return Outcome(.conditionsNotSatisfied) }
        s.challenge = nil
        guard c.data.count == 40, c.ne == nil || c.ne == 40 || c.ne == 256 else { return Outcome(.wrongLength) }
        let cryptogram = Array(c.data[0..<32])
        let terminalMAC = Array(c.data[32..<40])
        guard let expected = try? RetailMAC.mac(key: keys.mac, data: Padding.pad(cryptogram, blockSize: 8)),
              constantTimeEquals(expected, terminalMAC) else {
            return Outcome(configuration.bacWrongMACAnswer)
        }
        guard let cipher = try? BlockCipher(.tdes2, key: keys.encryption),
              let plain = try? cipher.decrypt(cbc: cryptogram) else {
            return Outcome(.verificationFailed)
        }
        // S = RND.IFD ‖ RND.IC ‖ K.IFD
        let rndIFD = Array(plain[0..<8])
        guard constantTimeEquals(Array(plain[8..<16]), rndIC) else { return Outcome(.verificationFailed) }
        let kIFD = Array(plain[16..<32])
        let kIC = random.bytes(16)
        guard let answer = try? cipher.encrypt(cbc: rndIC + rndIFD + kIC),
              let answerMAC = try? RetailMAC.mac(key: keys.mac, data: Padding.pad(answer, blockSize: 8)) else {
            return Outcome(.noPreciseDiagnosis)
        }
        let seed = zip(kIFD, kIC).map { $0 ^ $1 }
        guard let channel = try? ChipSecureChannel(algorithm: .tdes2,
                                                   encryptionKey: KeyDerivation.key(seed, counter: KeyDerivation.encryption, for: .tdes2),
                                                   macKey: KeyDerivation.key(seed, counter: KeyDerivation.mac, for: .tdes2),
                                                   ssc: Array(rndIC[4..<8]) + Array(rndIFD[4..<8])) else {
            return Outcome(.noPreciseDiagnosis)
        }
        var outcome = Outcome(data: answer + answerMAC)
        outcome.newSession = Session(channel: channel, access: .bac, openedByPACE: false)
        return outcome
    }
}
