// The security level of a secure channel session: what EXTERNAL AUTHENTICATE's P1 asks the card
// to protect (Card Specification §10.6.2, Amendment D §5.1).

/// What each command and answer of a session carries.
public struct SecurityLevel: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Every command carries a MAC.
    public static let cMAC = SecurityLevel(rawValue: 0x01)
    /// Every command's data is enciphered (and MACed).
    public static let cDecryption = SecurityLevel(rawValue: 0x02)
    /// Every answer carries a MAC.
    public static let rMAC = SecurityLevel(rawValue: 0x10)
    /// Every answer's data is enciphered (SCP03 only).
    public static let rEncryption = SecurityLevel(rawValue: 0x20)

    /// The levels a secure channel may take: a MAC on commands always, and encryption only with it.
    public var isValid: Bool {
        guard contains(.cMAC) || self == [] else { return false }
        if contains(.rEncryption) && !contains(.rMAC) { return false }
        // Amendment D §5.1: R-ENCRYPTION only with C-DECRYPTION too (33); 31 is no level.
        if contains(.rEncryption) && !contains(.cDecryption) { return false }
        return rawValue & ~0x33 == 0
    }

    public var description: String {
        var parts: [String] = []
        if contains(.cMAC) { parts.append("C-MAC") }
        if contains(.cDecryption) { parts.append("C-DECRYPTION") }
        if contains(.rMAC) { parts.append("R-MAC") }
        if contains(.rEncryption) { parts.append("R-ENCRYPTION") }
        return parts.isEmpty ? "none" : parts.joined(separator: "+")
    }
}

/// The secure channel protocol and its i parameter, as the card names them.
public struct SecureChannelProtocol: Sendable, Hashable, CustomStringConvertible {
    /// 2 or 3.
    public var version: UInt8
    public var i: UInt8
    public init(version: UInt8, i: UInt8) {
        self.version = version
        self.i = i
    }

    public var description: String {
        "SCP0\(version) i=\(String(i, radix: 16, uppercase: true).leftPadded(2))"
    }

    /// The levels this protocol can give: R-ENCRYPTION in SCP03 only, R-MAC where the card
    /// offers it (SCP03 i bit b6; SCP02 i bit b6, "R-MAC support": i=35 or 75, not 15 or 55,
    /// whose b7 names the card challenge's pseudo-random algorithm).
    public var offered: SecurityLevel {
        var level: SecurityLevel = [.cMAC, .cDecryption]
        if i & 0x20 != 0 { level.insert(.rMAC) }
        if version == 3, i & 0x20 != 0 && i & 0x40 != 0 { level.insert(.rEncryption) }
        return level
    }
}
