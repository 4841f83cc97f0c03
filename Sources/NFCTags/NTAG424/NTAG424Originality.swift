// NTAG 424 DNA's originality check: Read_Sig in or out of a session, and the verdict on the
// UID's signature.
import ISO7816
import SUN

/// What an NTAG 424 DNA's originality signature proves: that NXP signed this UID. A SUN MAC
/// proves that a tap's maker knew the tag's key; this proves that the chip is NXP's silicon
/// (a programmable clone serves valid SUN URLs with leaked keys, but it cannot sign its UID).
public struct NTAG424Originality: Sendable, Hashable {
    /// Where the signed UID came from.
    public enum UIDSource: String, Sendable, Hashable {
        /// GetVersion's third frame, in the clear (random ID off).
        case getVersion
        /// GetCardUID in an authenticated session (CommMode.Full): the one way with random ID on.
        case getCardUID
    }

    /// The UID and the 56-byte signature (r ‖ s, secp224r1) Read_Sig gave.
    public var signature: OriginalitySignature
    public var uidSource: UIDSource
    /// The key it was checked with (NXP's NTAG 424 DNA key).
    public var key: OriginalitySignature.PublicKey
    /// Whether it verifies: the chip is NXP's, and this UID is the one NXP signed.
    public var isValid: Bool

    public var uid: [UInt8] { signature.uid }

    public init(signature: OriginalitySignature, uidSource: UIDSource, key: OriginalitySignature.PublicKey = .ntag424DNA) {
        self.signature = signature
        self.uidSource = uidSource
        self.key = key
        isValid = signature.verifies(with: key)
    }

    /// One line: the verdict and why.
    public var verdict: String {
        if isValid { return "genuine: the signature verifies with the \(key.name) key (\(key.curve))" }
        if signature.isBlank { return "NOT VALID: the signature is all zeros (never signed: not an NXP chip, or an emulator)" }
        return "NOT VALID: the signature does not verify with the \(key.name) key for this UID (a clone, or another chip)"
    }
}

extension NTAG424Tag {
    /// The length of Read_Sig's answer: r ‖ s on secp224r1.
    public static let signatureLength = 56

    /// Read_Sig (`90 3C 00 00 01 00 00`, NT4H2421Gx §10.12): the 56-byte originality signature.
    /// Plain without a session. In one, the command is MACed and the answer comes in
    /// CommMode.Full: encrypted, its MAC (over the return code, CmdCtr + 1, TI and the
    /// ciphertext) checked in constant time. Real chips answer `91 90` (AN12196 Table 30; the
    /// datasheet says 91 00): both are accepted, and the return code is the first byte of the
    /// answer's MAC input.
    public func readSignature() throws -> [UInt8] {
        let what = "Read_Sig"
        let accepted: Set<UInt16> = [0x9100, 0x9190]
        guard let session else {
            let r = try transport.send(CommandAPDU(cla: 0x90, ins: 0x3C, p1: 0, p2: 0, data: [0x00], ne: 256))
            guard accepted.contains(r.statusWord.rawValue) else { throw NTAG424Error.status(r.statusWord, what) }
            guard r.data.count == Self.signatureLength else {
                throw NTAG424Error(.malformed, "\(what) answered \(r.data.count) bytes; the signature is \(Self.signatureLength)")
            }
            return r.data
        }
        let r = try transport.send(try session.wrap(ins: 0x3C, header: [0x00], mode: .mac))
        guard accepted.contains(r.statusWord.rawValue) else { throw NTAG424Error.status(r.statusWord, what) }
        guard r.data.count >= 8 + 16, (r.data.count - 8) % 16 == 0 else {
            throw NTAG424Error(.malformed, "\(what): the answer is \(r.data.count) bytes, not an enciphered signature and a MAC")
        }
        let next = session.commandCounter &+ 1
        let counter = [UInt8(next & 0xFF), UInt8(next >> 8)]
        let cipher = Array(r.data.dropLast(8))
        guard constantTimeEqual(session.mac([r.statusWord.sw2] + counter + session.transactionIdentifier + cipher), Array(r.data.suffix(8))) else {
            throw NTAG424Error(.badCryptogram, "\(what): the answer's MAC does not verify (a tag without this session's keys, or an altered answer)")
        }
        let iv = session.encryption.encrypt(block: [0x5A, 0xA5] + session.transactionIdentifier + counter + [UInt8](repeating: 0, count: 8))
        var plain = try session.encryption.cbcDecrypt(cipher, iv: iv)
        guard let marker = plain.lastIndex(where: { $0 != 0 }), plain[marker] == 0x80 else {
            throw NTAG424Error(.malformed, "\(what): the decrypted answer has no 80 00… padding")
        }
        plain.removeSubrange(marker...)
        guard plain.count == Self.signatureLength else {
            throw NTAG424Error(.malformed, "\(what) answered \(plain.count) bytes; the signature is \(Self.signatureLength)")
        }
        // The answer is checked: the counter moves on as for any answer the tag accepted.
        // (EV2Session.unwrap knows 91 00 answers only; its counter step is all that is used.)
        _ = try session.unwrap(ResponseAPDU(statusWord: StatusWord(rawValue: 0x9100)), mode: .plain, what: what)
        return plain
    }

    /// The chip's originality signature, checked with NXP's NTAG 424 DNA key over its UID: the
    /// UID from GetCardUID when a session is open (authentic, and the real one with random ID
    /// on), else GetVersion's.
    /// - Throws: `NTAG424Error.permissionDenied` with random ID on and no session (GetVersion
    ///   shows no UID); the tag's and the channel's errors.
    public func originality() throws -> NTAG424Originality {
        let uid: [UInt8], source: NTAG424Originality.UIDSource
        if session != nil {
            uid = try cardUID()
            source = .getCardUID
        } else {
            guard version.uid.contains(where: { $0 != 0 }) else {
                throw NTAG424Error(.permissionDenied, "random ID is on: GetVersion shows no UID; authenticate with any key so that GetCardUID gives the one NXP signed")
            }
            uid = version.uid
            source = .getVersion
        }
        let signature = try readSignature()
        return NTAG424Originality(signature: OriginalitySignature(uid: uid, signature: signature), uidSource: source)
    }
}
