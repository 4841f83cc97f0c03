// ICAO 9303 Part 11 §9.8: protected command and response APDUs in 3DES (retail MAC, 8-byte SSC)
// and AES (CMAC cut to 8 bytes, 16-byte SSC, IV = E(K_Enc, SSC)).
import CardCrypto
import ISO7816

/// One secure-messaging session's keys and send sequence counter, and the wrapping of commands
/// and unwrapping of answers (Part 11 §9.8; Appendix D.4 is its worked example).
///
/// Every answer's DO 8E is checked in constant time before anything in it is decrypted. An
/// answer that does not verify, a chip's `69 87`/`69 88`, or any bare error status ends the
/// session: every later call throws `.secureMessagingEnded` until access control runs again and
/// a new value is made.
public final class SecureMessaging: CustomStringConvertible {
    /// 2K3DES (BAC and 3DES PACE) or AES-128/192/256.
    public let cipher: CipherAlgorithm
    let encryption: BlockCipher
    let macKey: [UInt8]
    let cmac: CMAC?
    /// SSC: incremented before every command and every answer (§9.8.2).
    private(set) var sendSequenceCounter: [UInt8]
    /// Set when the session broke; nothing is sent or accepted after.
    public private(set) var hasEnded = false
    /// Protected answers whose MAC verified under these keys: one proves the chip holds them
    /// (what completes chip authentication).
    public private(set) var verifiedAnswers = 0

    /// - Parameter keys: K_Enc, K_MAC and the starting SSC (BAC: from the nonces; PACE and chip
    ///   authentication: zero).
    public init(keys: SessionKeys) throws(MRTDProtocolError) {
        let algorithm: CipherAlgorithm = keys.cipher.isAES ? keys.cipher : .tdes2
        guard keys.sendSequenceCounter.count == algorithm.blockSize else {
            throw MRTDProtocolError(.malformed, "a \(algorithm) send sequence counter is \(algorithm.blockSize) bytes, not \(keys.sendSequenceCounter.count)")
        }
        cipher = algorithm
        do {
            encryption = try BlockCipher(algorithm, key: keys.encryption)
            cmac = algorithm.isAES ? try CMAC(algorithm, key: keys.mac) : nil
        } catch {
            throw MRTDProtocolError(.malformed, "secure-messaging keys: \(error.message)")
        }
        guard algorithm.isAES || keys.mac.count == 16 else { throw MRTDProtocolError(.malformed, "a 3DES MAC key is 16 bytes, not \(keys.mac.count)") }
        macKey = keys.mac
        sendSequenceCounter = keys.sendSequenceCounter
    }

    public var description: String { "\(cipher) secure messaging\(hasEnded ? " (ended)" : "")" }

    var blockSize: Int { cipher.blockSize }

    /// The 8-byte MAC of §9.8.6.2 (retail MAC) or §9.8.6.3 (CMAC truncated) over SSC ‖ `data`,
    /// padded with method 2.
    func mac(_ data: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let input = Padding.pad(sendSequenceCounter + data, blockSize: blockSize)
        do {
            if let cmac { return Array(try cmac.mac(input).prefix(8)) }
            return try RetailMAC.mac(key: macKey, data: input)
        } catch {
            throw MRTDProtocolError(.library, "secure-messaging MAC: \(error.message)")
        }
    }

    /// 3DES: zero IV; AES: E(K_Enc, SSC) (§9.8.6.3).
    func iv() throws(MRTDProtocolError) -> [UInt8]? {
        guard cipher.isAES else { return nil }
        do { return try encryption.encrypt(block: sendSequenceCounter) } catch { throw MRTDProtocolError(.library, "secure-messaging IV: \(error.message)") }
    }

    func incrementCounter() {
        for i in stride(from: sendSequenceCounter.count - 1, through: 0, by: -1) {
            sendSequenceCounter[i] &+= 1
            if sendSequenceCounter[i] != 0 { break }
        }
    }

    func decrementCounter() {
        for i in stride(from: sendSequenceCounter.count - 1, through: 0, by: -1) {
            sendSequenceCounter[i] &-= 1
            if sendSequenceCounter[i] != 0xFF { break }
        }
    }

    /// Marks the session over (a MAC failure, an SM error from the chip).
    func end() { hasEnded = true }

    /// The protected form of `command` (§9.8.4, Figure 5): CLA with bits 0C set, DO 87 (DO 85 for
    /// an odd INS) with the padded, encrypted data, DO 97 with Le, DO 8E with the MAC over SSC ‖
    /// padded header ‖ those DOs; Le 00 (0000 when extended). Increments the SSC.
    public func protect(_ command: CommandAPDU) throws(MRTDProtocolError) -> CommandAPDU {
        guard !hasEnded else { throw MRTDProtocolError(.secureMessagingEnded, "secure messaging has ended: access control must run again") }
        incrementCounter()
        let cla = command.cla | 0x0C
        let header = Padding.pad([cla, command.ins, command.p1, command.p2], blockSize: blockSize)
        var objects: [UInt8] = []
        if !command.data.isEmpty {
            let cryptogram: [UInt8]
            let vector = try iv()
            cryptogram = try MRTDProtocolError.crypto("secure-messaging encryption") { try encryption.encrypt(cbc: Padding.pad(command.data, blockSize: blockSize), iv: vector) }
            // Odd INS (B1, READ BINARY with offset DO 54) carries BER-TLV data: DO 85, no padding-content indicator.
            if command.ins & 1 == 1 {
                objects += [0x85] + BERTLV.encodeLength(cryptogram.count) + cryptogram
            } else {
                objects += [0x87] + BERTLV.encodeLength(cryptogram.count + 1) + [0x01] + cryptogram
            }
        }
        if let ne = command.ne {
            // Le as in a plain APDU: one byte up to 256 (00 = 256), two beyond (0000 = 65536).
            let le: [UInt8] = ne > 256 ? [UInt8(ne >> 8 & 0xFF), UInt8(ne & 0xFF)] : [UInt8(ne & 0xFF)]
            objects += [0x97, UInt8(le.count)] + le
        }
        let tag = try mac(header + objects)
        objects += [0x8E, 0x08] + tag
        let extended = objects.count > 255 || (command.ne ?? 0) > 256 || command.forceExtended
        return CommandAPDU(cla: cla, ins: command.ins, p1: command.p1, p2: command.p2, data: objects,
                           ne: extended ? 65536 : 256, forceExtended: extended)
    }

    /// What `unprotect` found: the verified status word and plain data, or a bare status word the
    /// chip sent outside secure messaging.
    public enum Answer: Sendable, Hashable {
        /// DO 8E verified; `response` holds DO 99's status and the decrypted data.
        case protected(ResponseAPDU)
        /// No DOs, an error status: the chip refused the command before secure messaging took it
        /// (an oversized READ answered `67 00`, gmrtd #457), or someone in the middle says it
        /// did. Unauthenticated, so the session has ended: access control must run again.
        case unprotected(StatusWord)
    }

    /// Checks and opens the answer to the command just protected (§9.8.5, Figure 6): increments
    /// the SSC, checks DO 8E over SSC ‖ DO 85/87 ‖ DO 99 in constant time, then decrypts DO 87/85
    /// and removes its padding. A MAC that does not verify, a malformed answer, `69 87`/`69 88`
    /// or a bare error status ends the session.
    public func unprotect(_ response: ResponseAPDU) throws(MRTDProtocolError) -> Answer {
        guard !hasEnded else { throw MRTDProtocolError(.secureMessagingEnded, "secure messaging has ended: access control must run again") }
        if response.data.isEmpty {
            let sw = response.statusWord
            // ICAO 9303-11 §9.8.5 / ISO 7816-4 §10: the chip reports SM errors unprotected and aborts
            // the session.
            if sw == StatusWord(rawValue: 0x6987) || sw == StatusWord(rawValue: 0x6988) {
                end()
                throw MRTDProtocolError(.secureMessagingEnded, "the chip ended secure messaging (\(sw): \(sw.meaning.text))", statusWord: sw)
            }
            if sw != .success && sw.sw1 != 0x61 && sw.sw1 != 0x62 && sw.sw1 != 0x63 {
                // A bare refusal (gmrtd #457: a Chinese passport's 67 00 to an extended READ
                // BINARY) carries no MAC, so anyone in the middle can send one. Were the SSC wound
                // back to go on, the next command would carry the same SSC (and, with AES, the
                // same IV) as the refused one: the middle could hold a command back, answer it with
                // a bare error, and forward it in place of the next one, whose answer (its MAC
                // covers the SSC and the answer, not the command) would then pass for the answer
                // to the other. So the session ends here; the caller opens the chip again.
                end()
                return .unprotected(sw)
            }
            end()
            throw MRTDProtocolError(.secureMessagingEnded, "the chip answered \(sw) without secure messaging; the session is over", statusWord: sw)
        }
        incrementCounter()
        do {
            return .protected(try open(response.data))
        } catch {
            end()
            throw error
        }
    }

    private func open(_ data: [UInt8]) throws(MRTDProtocolError) -> ResponseAPDU {
        var i = 0
        var cryptogram: (tag: UInt8, value: ArraySlice<UInt8>)?
        var status: [UInt8]?
        var macStart: Int?
        var received: [UInt8]?
        while i < data.count {
            let tag = data[i]
            guard let (length, valueStart) = Self.length(data, at: i + 1), data.count - valueStart >= length else {
                throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer has a truncated data object at byte \(i)")
            }
            let value = data[valueStart..<(valueStart + length)]
            switch tag {
            case 0x85, 0x87:
                guard cryptogram == nil, status == nil else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer repeats or misorders DO \(Hex.encode([tag]))") }
                cryptogram = (tag, value)
            case 0x99:
                guard status == nil, length == 2 else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer has a malformed DO 99") }
                status = Array(value)
            case 0x8E:
                guard length == 8, valueStart + length == data.count else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer has a malformed DO 8E") }
                macStart = i
                received = Array(value)
            default:
                throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer holds an unexpected DO \(Hex.encode([tag]))")
            }
            i = valueStart + length
        }
        guard let macStart, let received else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's answer has no MAC (DO 8E)") }
        guard let status else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's protected answer has no status (DO 99)") }
        guard constantTimeEquals(try mac(Array(data[..<macStart])), received) || MRTDRemovedChecks.secureMessagingMAC else {
            throw MRTDProtocolError(.secureMessagingEnded, "the chip's answer MAC does not verify; secure messaging has ended")
        }
        verifiedAnswers += 1
        var plain: [UInt8] = []
        if let cryptogram {
            var body = cryptogram.value
            if cryptogram.tag == 0x87 {
                guard body.first == 0x01 else { throw MRTDProtocolError(.secureMessagingEnded, "the chip's DO 87 does not announce padding (01)") }
                body = body.dropFirst()
            }
            guard !body.isEmpty, body.count % blockSize == 0 else {
                throw MRTDProtocolError(.secureMessagingEnded, "the chip's encrypted data is \(body.count) bytes, not whole \(blockSize)-byte blocks")
            }
            let decrypted: [UInt8]
            let vector = try iv()
            decrypted = try MRTDProtocolError.crypto("secure-messaging decryption") { try encryption.decrypt(cbc: Array(body), iv: vector) }
            guard let unpadded = Padding.unpad(decrypted, blockSize: blockSize) else {
                throw MRTDProtocolError(.secureMessagingEnded, "the chip's decrypted data has no 80 00… padding")
            }
            plain = unpadded
        }
        return ResponseAPDU(data: plain, statusWord: StatusWord(status[0], status[1]))
    }

    /// A BER length at `index`: (length, index of the value); nil when truncated or over 3 bytes.
    static func length(_ data: [UInt8], at index: Int) -> (Int, Int)? {
        guard index < data.count else { return nil }
        let first = data[index]
        if first < 0x80 { return (Int(first), index + 1) }
        let count = Int(first & 0x7F)
        guard (1...3).contains(count), data.count - index - 1 >= count else { return nil }
        var length = 0
        for k in 0..<count { length = length << 8 | Int(data[index + 1 + k]) }
        return (length, index + 1 + count)
    }
}

extension SecureMessaging: CustomReflectable {
    /// Only the cipher and state: `dump` and debuggers never show the keys or the counter.
    public var customMirror: Mirror { Mirror(self, children: ["cipher": cipher, "hasEnded": hasEnded]) }
}

#if DEBUG
/// Test-only (issue 49): checks the hostile matrix removes, in its own task, to show that it fails
/// without them. A release build has neither the switches nor the branches.
public enum MRTDRemovedChecks {
    /// The comparison of the chip's answer MAC (DO 8E) with ours.
    @TaskLocal public static var secureMessagingMAC = false
    /// Passive authentication's comparison of a data group's hash with EF.SOD's.
    @TaskLocal public static var dataGroupHash = false
    /// The clone rule: a document that offers a proof of its chip (chip or active
    /// authentication) is genuine only when the chip gave that proof.
    @TaskLocal public static var cloneRule = false
}
#else
enum MRTDRemovedChecks { static let secureMessagingMAC = false, dataGroupHash = false, cloneRule = false }
#endif
