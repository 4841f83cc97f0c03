// The card's static keys as the user gives them, and how a card's own keys are made from a
// master key (diversification). Keys never appear in a description: only their check values.
import CardCrypto

/// How a card's keys are derived from the master key the user holds.
public enum Diversification: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The keys are the card's own.
    case none
    /// EMV CPS 1.1 §5.5.2: 3DES over the last 6 bytes of the key diversification data.
    case emv
    /// VISA2 (Visa GP 2.1.1 card implementation requirements): bytes 0-1 and 4-7 of the data.
    case visa2
    /// KDF3: the SCP03 KDF (Amendment D §6.2.1) over the diversification data, as
    /// GlobalPlatformPro's `--kdf3`.
    case kdf3

    public var description: String { rawValue }
}

/// The three static keys of a Security Domain key set (ENC, MAC, DEK) and its version.
public struct StaticKeys: Sendable, Hashable, CustomStringConvertible {
    public var enc: [UInt8]
    public var mac: [UInt8]
    public var dek: [UInt8]
    /// The key version number to ask for in INITIALIZE UPDATE; 0 means the card's default.
    public var version: UInt8
    public var diversification: Diversification

    /// The well-known test keys `40 41 … 4F` of GlobalPlatform's sample cards: used only when a
    /// caller asks for them by name, never tried on its own.
    public static let testKeys = StaticKeys(master: Array(0x40...0x4F))

    public init(enc: [UInt8], mac: [UInt8], dek: [UInt8], version: UInt8 = 0, diversification: Diversification = .none) {
        self.enc = enc
        self.mac = mac
        self.dek = dek
        self.version = version
        self.diversification = diversification
    }

    /// One key for all three roles (`--key`).
    public init(master: [UInt8], version: UInt8 = 0, diversification: Diversification = .none) {
        self.init(enc: master, mac: master, dek: master, version: version, diversification: diversification)
    }

    /// Key versions and diversification, never the key bytes.
    public var description: String {
        "key version \(version == 0 ? "default" : String(version, radix: 16, uppercase: true).leftPadded(2)), diversification \(diversification)"
    }

    /// The card's own keys for `data`, the 10 bytes of key diversification data of its
    /// INITIALIZE UPDATE answer.
    public func diversified(with data: [UInt8], aes: Bool) throws(GlobalPlatformError) -> StaticKeys {
        guard diversification != .none else { return self }
        guard data.count == 10 else { throw GlobalPlatformError(.malformed, "the key diversification data is \(data.count) bytes, not 10") }
        var out = self
        do {
            switch diversification {
            case .none: break
            case .kdf3:
                out.enc = try KDF.counterMode(key: enc, fixedBefore: [], fixedAfter: [0, 0, 0, 1, 0] + data, bytes: enc.count)
                out.mac = try KDF.counterMode(key: mac, fixedBefore: [], fixedAfter: [0, 0, 0, 2, 0] + data, bytes: mac.count)
                out.dek = try KDF.counterMode(key: dek, fixedBefore: [], fixedAfter: [0, 0, 0, 3, 0] + data, bytes: dek.count)
            case .emv, .visa2:
                guard !aes, enc.count == 16, mac.count == 16, dek.count == 16 else {
                    throw GlobalPlatformError(.policy, "\(diversification) diversification is for 16-byte triple DES keys")
                }
                func derive(_ key: [UInt8], _ purpose: UInt8) throws -> [UInt8] {
                    let half: [UInt8] = diversification == .emv ? Array(data[4..<10]) : Array(data[0..<2]) + Array(data[4..<8])
                    return try BlockCipher(.tdes2, key: key).encrypt(ecb: half + [0xF0, purpose] + half + [0x0F, purpose])
                }
                out.enc = try derive(enc, 1)
                out.mac = try derive(mac, 2)
                out.dek = try derive(dek, 3)
            }
        } catch let e as GlobalPlatformError {
            throw e
        } catch {
            throw GlobalPlatformError(.policy, "diversification failed: \(error)")
        }
        return out
    }

    /// The key check value GlobalPlatform defines (Card Specification §11.8.2.3, Amendment D
    /// §7.2.2): the first 3 bytes of 8 bytes 00 under triple DES, or of 16 bytes 01 under AES.
    public static func checkValue(_ key: [UInt8], aes: Bool) throws(GlobalPlatformError) -> [UInt8] {
        do {
            if aes { return Array(try BlockCipher(KDF.aesAlgorithm(key.count), key: key).encrypt(ecb: [UInt8](repeating: 1, count: 16)).prefix(3)) }
            return Array(try BlockCipher(key.count == 24 ? .tdes3 : .tdes2, key: key).encrypt(ecb: [UInt8](repeating: 0, count: 8)).prefix(3))
        } catch {
            throw GlobalPlatformError(.policy, "a key of \(key.count) bytes: \(error)")
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// NIST SP 800-108's KDF in counter mode with AES-CMAC as the PRF and a one-byte counter, the
/// derivation of SCP03 (Amendment D §6.2.1).
public enum KDF {
    static func aesAlgorithm(_ keyLength: Int) throws(CryptoError) -> CipherAlgorithm {
        switch keyLength {
        case 16: return .aes128
        case 24: return .aes192
        case 32: return .aes256
        default: throw CryptoError(.badKey, "an AES key is 16, 24 or 32 bytes, not \(keyLength)")
        }
    }

    /// CMAC(key, fixedBefore ‖ i ‖ fixedAfter) for i = 1, 2, … until `bytes` are made.
    public static func counterMode(key: [UInt8], fixedBefore: [UInt8], fixedAfter: [UInt8], bytes: Int) throws(CryptoError) -> [UInt8] {
        let cmac = try CMAC(aesAlgorithm(key.count), key: key)
        var out: [UInt8] = []
        var i: UInt8 = 1
        while out.count < bytes {
            out += try cmac.mac(fixedBefore + [i] + fixedAfter)
            i &+= 1
        }
        return Array(out.prefix(bytes))
    }

    /// Amendment D §6.2.1: the label (11 bytes 00, the derivation constant), a separator 00, L
    /// in bits on two bytes, the counter, then the context.
    public static func scp03(key: [UInt8], constant: UInt8, context: [UInt8], bits: Int) throws(CryptoError) -> [UInt8] {
        try counterMode(key: key, fixedBefore: [UInt8](repeating: 0, count: 11) + [constant, 0, UInt8(bits >> 8), UInt8(bits & 0xFF)],
                        fixedAfter: context, bytes: bits / 8)
    }
}
