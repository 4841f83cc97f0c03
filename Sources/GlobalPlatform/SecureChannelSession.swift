// The two secure channel protocols' session state: keys made from the static keys and the two
// challenges, the cryptograms, and how each command is wrapped and each answer unwrapped.
// SCP02: Card Specification 2.2 Appendix E; SCP03: Amendment D. Pinned byte for byte by
// GlobalPlatformPro's and pySim's published vectors (Tests/GlobalPlatformTests).
import CardCrypto
import ISO7816

/// What INITIALIZE UPDATE's answer says (Card Specification Table E-3, Amendment D Table 7-3).
public struct InitializeUpdateResponse: Sendable, Hashable {
    /// Key diversification data: the input of `Diversification`.
    public var diversificationData: [UInt8]
    public var keyVersion: UInt8
    public var scp: SecureChannelProtocol
    /// SCP02's sequence counter (2 bytes), SCP03's when the card sends it (3 bytes).
    public var sequenceCounter: [UInt8]
    public var cardChallenge: [UInt8]
    public var cardCryptogram: [UInt8]

    /// - Parameters:
    ///   - data: the answer's data.
    ///   - scp02i: the i parameter of SCP02, which the answer does not carry (it comes
    ///     from the card recognition data; 15 when unknown).
    public init(_ data: [UInt8], scp02i: UInt8 = 0x15) throws(GlobalPlatformError) {
        guard data.count >= 12 else { throw GlobalPlatformError(.malformed, "INITIALIZE UPDATE answered \(data.count) bytes, fewer than 12") }
        diversificationData = Array(data[0..<10])
        keyVersion = data[10]
        switch data[11] {
        case 2:
            guard data.count == 28 else { throw GlobalPlatformError(.malformed, "an SCP02 INITIALIZE UPDATE answer is 28 bytes, not \(data.count)") }
            scp = SecureChannelProtocol(version: 2, i: scp02i)
            sequenceCounter = Array(data[12..<14])
            cardChallenge = Array(data[14..<20])
            cardCryptogram = Array(data[20..<28])
        case 3:
            let s: Int
            switch data.count {
            case 29, 32: s = 8
            case 45, 48: s = 16
            default: throw GlobalPlatformError(.malformed, "an SCP03 INITIALIZE UPDATE answer is 29, 32, 45 or 48 bytes, not \(data.count)")
            }
            scp = SecureChannelProtocol(version: 3, i: data[12])
            cardChallenge = Array(data[13..<(13 + s)])
            cardCryptogram = Array(data[(13 + s)..<(13 + 2 * s)])
            sequenceCounter = Array(data[(13 + 2 * s)...])
        default:
            throw GlobalPlatformError(.malformed, "INITIALIZE UPDATE names SCP \(data[11]), which this tool does not speak (SCP02 and SCP03 only)")
        }
    }
}

/// The state of one secure channel session after INITIALIZE UPDATE.
public struct SecureChannelSession: Sendable {
    public let scp: SecureChannelProtocol
    public private(set) var level: SecurityLevel = []
    /// The cryptogram the card should have sent, and the one the host sends back.
    public let expectedCardCryptogram: [UInt8]
    public let hostCryptogram: [UInt8]
    /// The data encryption key of PUT KEY's key data: SCP02's session DEK, SCP03's static DEK.
    let dek: [UInt8]
    let encKey: [UInt8]
    let macKey: [UInt8]
    let rmacKey: [UInt8]
    /// SCP02: the ICV (the last C-MAC, enciphered when i says so); SCP03: the MAC chaining value.
    private var chaining: [UInt8]
    /// SCP03's encryption counter.
    private var counter = 0
    /// SCP02: C-MACs made so far (the first ICV is zeros, never enciphered).
    private var macsSent = 0
    /// SCP03's S8 or S16 mode: the length of cryptograms and MACs.
    let macLength: Int
    /// SCP02's R-MAC chaining value: the last R-MAC (zeros before the first), never enciphered.
    private var rmacChaining = [UInt8](repeating: 0, count: 8)
    /// SCP02: the last command wrapped in the clear (header, data), which its answer's R-MAC covers.
    private var lastCommand: (header: [UInt8], data: [UInt8])?

    /// The session keys and cryptograms for `keys` (already diversified) and the two challenges.
    public init(keys: StaticKeys, hostChallenge: [UInt8], response: InitializeUpdateResponse) throws(GlobalPlatformError) {
        scp = response.scp
        do {
            if scp.version == 2 {
                guard keys.enc.count == 16, keys.mac.count == 16, keys.dek.count == 16 else {
                    throw GlobalPlatformError(.policy, "SCP02 keys are 16-byte triple DES keys")
                }
                let seq = response.sequenceCounter
                func derive(_ key: [UInt8], _ constant: [UInt8]) throws -> [UInt8] {
                    try BlockCipher(.tdes2, key: key).encrypt(cbc: constant + seq + [UInt8](repeating: 0, count: 12))
                }
                encKey = try derive(keys.enc, [0x01, 0x82])
                macKey = try derive(keys.mac, [0x01, 0x01])
                rmacKey = try derive(keys.mac, [0x01, 0x02])
                dek = try derive(keys.dek, [0x01, 0x81])
                let sEnc = try BlockCipher(.tdes2, key: encKey)
                func fullMAC(_ data: [UInt8]) throws -> [UInt8] { Array(try sEnc.encrypt(cbc: Padding.pad(data, blockSize: 8)).suffix(8)) }
                expectedCardCryptogram = try fullMAC(hostChallenge + seq + response.cardChallenge)
                hostCryptogram = try fullMAC(seq + response.cardChallenge + hostChallenge)
                chaining = [UInt8](repeating: 0, count: 8)
                macLength = 8
            } else {
                let context = hostChallenge + response.cardChallenge
                let bits = keys.enc.count * 8
                encKey = try KDF.scp03(key: keys.enc, constant: 0x04, context: context, bits: bits)
                macKey = try KDF.scp03(key: keys.mac, constant: 0x06, context: context, bits: bits)
                rmacKey = try KDF.scp03(key: keys.mac, constant: 0x07, context: context, bits: bits)
                dek = keys.dek
                macLength = response.cardChallenge.count
                expectedCardCryptogram = try KDF.scp03(key: macKey, constant: 0x00, context: context, bits: macLength * 8)
                hostCryptogram = try KDF.scp03(key: macKey, constant: 0x01, context: context, bits: macLength * 8)
                chaining = [UInt8](repeating: 0, count: 16)
            }
        } catch let e as GlobalPlatformError {
            throw e
        } catch {
            throw GlobalPlatformError(.policy, "the keys do not fit \(response.scp): \(error)")
        }
    }

    /// Whether the card's cryptogram is the one these keys make, compared in constant time.
    public func cardCryptogramMatches(_ cryptogram: [UInt8]) -> Bool {
        constantTimeEquals(cryptogram, expectedCardCryptogram)
    }

    /// EXTERNAL AUTHENTICATE for `level`, MACed; from here every command is wrapped at `level`.
    public mutating func externalAuthenticate(level: SecurityLevel) throws(GlobalPlatformError) -> CommandAPDU {
        let command = CommandAPDU(cla: 0x80, ins: 0x82, p1: level.rawValue, p2: 0, data: hostCryptogram)
        self.level = [.cMAC]
        defer { self.level = level }
        return try wrap(command, encrypt: false)
    }

    /// The command as the card must receive it: MACed at `cMAC`, its data enciphered at
    /// `cDecryption`; CLA gets bit b3 (secure messaging).
    public mutating func wrap(_ command: CommandAPDU) throws(GlobalPlatformError) -> CommandAPDU {
        try wrap(command, encrypt: true)
    }

    private mutating func wrap(_ command: CommandAPDU, encrypt: Bool) throws(GlobalPlatformError) -> CommandAPDU {
        guard level.contains(.cMAC) else { return command }
        // The MAC covers CLA with bit b3 set and the logical channel zeroed; the card gets the channel back.
        let macCLA = (command.cla & 0xF0) | 0x04
        let cla = macCLA | (command.cla & 0x03)
        var data = command.data
        do {
            if scp.version == 2 {
                // E.4.4: the MAC over the modified header and the clear data, then the data enciphered.
                let lc = data.count + 8
                guard lc <= 255 || command.forceExtended else { throw GlobalPlatformError(.policy, "\(data.count) bytes and a C-MAC exceed a short APDU") }
                var icv = chaining
                if scp.i & 0x10 != 0, macsSent > 0 {
                    icv = try BlockCipher(.des, key: Array(macKey[0..<8])).encrypt(block: chaining)
                }
                let mac = try Self.retailMAC(key: macKey, icv: icv, data: Padding.pad([macCLA, command.ins, command.p1, command.p2, UInt8(lc & 0xFF)] + data, blockSize: 8))
                chaining = mac
                macsSent += 1
                // E.4.5: the answer's R-MAC covers the command in the clear, its CLA without the
                // secure messaging and logical channel bits (b3-b1).
                lastCommand = level.contains(.rMAC) ? ([command.cla & ~0x07, command.ins, command.p1, command.p2], command.data) : nil
                if encrypt, level.contains(.cDecryption), !data.isEmpty {
                    data = try BlockCipher(.tdes2, key: encKey).encrypt(cbc: Padding.pad(data, blockSize: 8))
                }
                return CommandAPDU(cla: cla, ins: command.ins, p1: command.p1, p2: command.p2, data: data + mac, ne: command.ne)
            }
            // Amendment D §6.2.6: the counter moves for every command, data or not.
            if encrypt, level.contains(.cDecryption) {
                counter += 1
                if !data.isEmpty {
                    let aes = try BlockCipher(KDF.aesAlgorithm(encKey.count), key: encKey)
                    let icv = try aes.encrypt(block: Self.counterBlock(counter, response: false))
                    data = try aes.encrypt(cbc: Padding.pad(data, blockSize: 16), iv: icv)
                }
            }
            let lc = data.count + macLength
            let extended = lc > 255 || command.forceExtended
            let lcBytes: [UInt8] = extended ? [0, UInt8(lc >> 8), UInt8(lc & 0xFF)] : [UInt8(lc)]
            let full = try CMAC(KDF.aesAlgorithm(macKey.count), key: macKey).mac(chaining + [macCLA, command.ins, command.p1, command.p2] + lcBytes + data)
            chaining = full
            return CommandAPDU(cla: cla, ins: command.ins, p1: command.p1, p2: command.p2, data: data + full.prefix(macLength), ne: command.ne, forceExtended: extended)
        } catch let e as GlobalPlatformError {
            throw e
        } catch {
            throw GlobalPlatformError(.policy, "wrapping the command failed: \(error)")
        }
    }

    /// The answer in the clear: its R-MAC checked in constant time, its data deciphered. Under
    /// SCP03 an error status word carries no MAC (Amendment D §6.2.5); under SCP02 every answer
    /// of an R-MAC session carries one (Card Specification E.4.5).
    public mutating func unwrap(_ response: ResponseAPDU) throws(GlobalPlatformError) -> ResponseAPDU {
        guard level.contains(.rMAC) else { return response }
        if scp.version == 2 { return try unwrapSCP02(response) }
        let sw = response.statusWord
        guard sw == .success || sw.sw1 == 0x62 || sw.sw1 == 0x63 else { return response }
        guard response.data.count >= macLength else {
            throw GlobalPlatformError(.malformed, "the answer (\(response.data.count) bytes) lacks its R-MAC")
        }
        var data = Array(response.data.dropLast(macLength))
        let mac = Array(response.data.suffix(macLength))
        do {
            let expected = try CMAC(KDF.aesAlgorithm(rmacKey.count), key: rmacKey).mac(chaining + data + [sw.sw1, sw.sw2])
            guard constantTimeEquals(mac, Array(expected.prefix(macLength))) else {
                throw GlobalPlatformError(.malformed, "the answer's R-MAC does not check out")
            }
            if level.contains(.rEncryption), !data.isEmpty {
                let aes = try BlockCipher(KDF.aesAlgorithm(encKey.count), key: encKey)
                let icv = try aes.encrypt(block: Self.counterBlock(counter, response: true))
                guard data.count % 16 == 0, let clear = Padding.unpad(try aes.decrypt(cbc: data, iv: icv), blockSize: 16) else {
                    throw GlobalPlatformError(.malformed, "the answer's enciphered data does not decipher")
                }
                data = clear
            }
        } catch let e as GlobalPlatformError {
            throw e
        } catch {
            throw GlobalPlatformError(.malformed, "unwrapping the answer failed: \(error)")
        }
        return ResponseAPDU(data: data, statusWord: sw)
    }

    /// SCP02's R-MAC (Card Specification 2.2 E.4.5, as GlobalPlatformPro's `SCP02Wrapper` and
    /// GPShell's `GP211_calculate_R_MAC` compute it): the retail MAC under the R-MAC session key
    /// (derivation constant 0102 from the static MAC key), chained from the previous R-MAC, over
    /// the clear command's header, Lc and data, then the answer's data length, data and status word.
    private mutating func unwrapSCP02(_ response: ResponseAPDU) throws(GlobalPlatformError) -> ResponseAPDU {
        guard let command = lastCommand else {
            throw GlobalPlatformError(.malformed, "an answer with no command wrapped before it in an R-MAC session")
        }
        lastCommand = nil
        let sw = response.statusWord
        guard response.data.count >= 8 else {
            throw GlobalPlatformError(.malformed, "the answer (\(response.data.count) bytes, \(sw.hex)) lacks its R-MAC", statusWord: sw)
        }
        let data = Array(response.data.dropLast(8))
        let mac = Array(response.data.suffix(8))
        let input = command.header + [UInt8(command.data.count & 0xFF)] + command.data + [UInt8(data.count & 0xFF)] + data + [sw.sw1, sw.sw2]
        let expected: [UInt8]
        do {
            expected = try Self.retailMAC(key: rmacKey, icv: rmacChaining, data: Padding.pad(input, blockSize: 8))
        } catch {
            throw GlobalPlatformError(.malformed, "unwrapping the answer failed: \(error)")
        }
        guard constantTimeEquals(mac, expected) else {
            throw GlobalPlatformError(.malformed, "the answer's R-MAC does not check out")
        }
        rmacChaining = expected
        return ResponseAPDU(data: data, statusWord: sw)
    }

    /// Key data for PUT KEY: the key enciphered under the DEK (ECB for SCP02's session DEK, CBC
    /// with a zero ICV for SCP03's static DEK, Amendment D §7.2.2.1).
    public func encipherKey(_ key: [UInt8]) throws(GlobalPlatformError) -> [UInt8] {
        do {
            if scp.version == 2 { return try BlockCipher(.tdes2, key: dek).encrypt(ecb: key) }
            // A key that is not whole blocks (AES-192) is padded with zeros; its length goes before it.
            let padded = key + [UInt8](repeating: 0, count: (16 - key.count % 16) % 16)
            return try BlockCipher(KDF.aesAlgorithm(dek.count), key: dek).encrypt(cbc: padded)
        } catch {
            throw GlobalPlatformError(.policy, "a key of \(key.count) bytes cannot be enciphered under the DEK: \(error)")
        }
    }

    static func counterBlock(_ counter: Int, response: Bool) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 16)
        var n = counter
        for i in stride(from: 15, through: 8, by: -1) {
            block[i] = UInt8(n & 0xFF)
            n >>= 8
        }
        if response { block[0] = 0x80 }
        return block
    }

    /// Card Specification B.1.2.2: single DES CBC under K1 from `icv`, the last block through
    /// triple DES.
    static func retailMAC(key: [UInt8], icv: [UInt8], data: [UInt8]) throws -> [UInt8] {
        let k1 = try BlockCipher(.des, key: Array(key[0..<8]))
        let k2 = try BlockCipher(.des, key: Array(key[8..<16]))
        let h = Array(try k1.encrypt(cbc: data, iv: icv).suffix(8))
        return try k1.encrypt(block: try k2.decrypt(block: h))
    }
}
