// A DESFire key: its type (DES, 2K3DES, 3K3DES, AES), its bytes and version, and the key family of
// an application.
import CardCrypto
import ISO7816

/// The cipher of a DESFire key.
public enum DESFireKeyType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Single DES: 8 bytes, stored by the card as the 16-byte 2K3DES key K ‖ K.
    case des
    /// Two-key triple DES: 16 bytes. A key whose halves are equal runs as single DES.
    case tdes2 = "2k3des"
    /// Three-key triple DES: 24 bytes.
    case tdes3 = "3k3des"
    /// AES-128: 16 bytes and a separate version byte.
    case aes

    /// Bytes of key as given.
    public var keySize: Int {
        switch self {
        case .des: return 8
        case .tdes2, .aes: return 16
        case .tdes3: return 24
        }
    }

    public var blockSize: Int { self == .aes ? 16 : 8 }

    /// The application's crypto family this key belongs to (bits 6-7 of key settings 2).
    public var family: DESFireKeyFamily {
        switch self {
        case .des, .tdes2: return .des
        case .tdes3: return .tdes3
        case .aes: return .aes
        }
    }

    public var description: String {
        switch self {
        case .des: return "DES"
        case .tdes2: return "2K3DES"
        case .tdes3: return "3K3DES"
        case .aes: return "AES"
        }
    }
}

/// The crypto an application's keys use (every key of one application has the same family): bits
/// 6-7 of the second key-settings byte of CreateApplication and GetKeySettings.
public enum DESFireKeyFamily: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// DES and 2K3DES (00): the only family of MF3ICD40 cards.
    case des = 0
    case tdes3 = 1
    case aes = 2

    /// The family's factory key (all zeros) of its default type.
    public var defaultKeyType: DESFireKeyType {
        switch self {
        case .des: return .des
        case .tdes3: return .tdes3
        case .aes: return .aes
        }
    }

    public var description: String {
        switch self {
        case .des: return "DES/2K3DES"
        case .tdes3: return "3K3DES"
        case .aes: return "AES"
        }
    }
}

/// A DESFire key: its type, its bytes and its version. The bytes never appear in a description,
/// an error or a trace.
///
/// DES-family keys carry their version in the low (parity) bits of their first eight bytes, as
/// the card stores it (GetKeyVersion reads it from there); AES keys carry it as a byte of its own,
/// sent with ChangeKey.
public struct DESFireKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let type: DESFireKeyType
    let bytes: [UInt8]
    let aesVersion: UInt8

    /// - Parameters:
    ///   - type: the key's cipher.
    ///   - bytes: exactly `type.keySize` bytes.
    ///   - version: an AES key's version byte (DES-family keys keep theirs in their bytes; see
    ///     `settingVersion(_:)`).
    public init(_ type: DESFireKeyType, _ bytes: [UInt8], version: UInt8 = 0) throws(DESFireError) {
        guard bytes.count == type.keySize else {
            throw DESFireError(.lengthError, "a \(type) key is \(type.keySize) bytes, not \(bytes.count) (the value is not shown)")
        }
        self.type = type
        self.bytes = bytes
        aesVersion = type == .aes ? version : 0
    }

    /// The factory key of `type`: all zeros, version 0.
    public static func zero(_ type: DESFireKeyType) -> DESFireKey {
        DESFireKey(type: type, bytes: [UInt8](repeating: 0, count: type.keySize), aesVersion: 0)
    }

    /// The key's version: AES its version byte; DES-family keys the low bits of bytes 0-7, most
    /// significant first.
    public var version: UInt8 {
        if type == .aes { return aesVersion }
        return (0..<8).reduce(0) { $0 << 1 | (bytes[$1] & 1) }
    }

    /// The same key with version `v`, as libfreefare writes it: for DES-family keys into the low
    /// bits of bytes 0-7 (which the cipher ignores); a 2K3DES key's second half gets the
    /// complement, so that its halves never become equal and the card never takes it for DES.
    public func settingVersion(_ v: UInt8) -> DESFireKey {
        if type == .aes { return DESFireKey(type: type, bytes: bytes, aesVersion: v) }
        var b = bytes
        for i in 0..<8 {
            let bit = v >> (7 - i) & 1
            b[i] = b[i] & 0xFE | bit
            if type == .tdes2 { b[i + 8] = b[i + 8] & 0xFE | (bit ^ 1) }
        }
        return DESFireKey(type: type, bytes: b, aesVersion: 0)
    }

    private init(type: DESFireKeyType, bytes: [UInt8], aesVersion: UInt8) {
        self.type = type
        self.bytes = bytes
        self.aesVersion = aesVersion
    }

    /// The bytes the card stores and ChangeKey sends: a DES key doubled to 16.
    var stored: [UInt8] { type == .des ? bytes + bytes : bytes }

    /// Whether the card runs the key as single DES: a DES key, or a 2K3DES key whose halves are
    /// equal byte for byte (parity bits included), which changes the session key's shape.
    var runsAsSingleDES: Bool {
        type == .des || (type == .tdes2 && bytes[0..<8] == bytes[8..<16])
    }

    /// The key as a block cipher (DES runs as 2K3DES K ‖ K: the same permutation).
    func cipher() throws(DESFireError) -> BlockCipher {
        do {
            switch type {
            case .des, .tdes2: return try BlockCipher(.tdes2, key: stored)
            case .tdes3: return try BlockCipher(.tdes3, key: bytes)
            case .aes: return try BlockCipher(.aes128, key: bytes)
            }
        } catch {
            throw DESFireError(.malformed, "the \(type) key could not be used: \(error)")
        }
    }

    public var description: String { "\(type) key, version \(version)" }
    public var debugDescription: String { description }
    /// No children: `dump`, test failures and debuggers' summaries never show the bytes.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// A DESFire application identifier: 3 bytes, sent least significant first. Written as proxmark3,
/// the RFDoorLock traces and NXP write it: the 24-bit number, most significant digit first
/// (`F21190` is sent as `90 11 F2`). `000000` is the card (PICC) level.
public struct DESFireApplicationID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt32
    public init?(rawValue: UInt32) {
        guard rawValue <= 0xFF_FFFF else { return nil }
        self.rawValue = rawValue
    }

    /// From the three bytes as the card sends them (least significant first).
    public init(wire bytes: ArraySlice<UInt8>) {
        let b = Array(bytes.prefix(3)) + [0, 0, 0]
        rawValue = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16
    }

    /// From six hex digits, most significant first (`F21190`).
    public init?(hex: String) {
        guard hex.count == 6, let v = UInt32(hex, radix: 16) else { return nil }
        rawValue = v
    }

    /// The card level (PICC): the master application.
    public static let picc = DESFireApplicationID(wire: [0, 0, 0])

    /// The three bytes as sent.
    public var wire: [UInt8] { [UInt8(rawValue & 0xFF), UInt8(rawValue >> 8 & 0xFF), UInt8(rawValue >> 16)] }

    public var description: String { Hex.encode([UInt8(rawValue >> 16), UInt8(rawValue >> 8 & 0xFF), UInt8(rawValue & 0xFF)]) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
