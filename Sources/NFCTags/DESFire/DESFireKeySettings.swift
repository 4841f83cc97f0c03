// A DESFire application's (or the card's) key settings byte, and who may change its keys.
import ISO7816

/// Who may change an application's keys: the high nibble of its key settings.
public enum DESFireChangeKeyAccess: Sendable, Hashable, CustomStringConvertible {
    /// 0-D: an authentication with this key allows changing any key (the master key itself
    /// still only with the master key).
    case key(UInt8)
    /// E: each key changes itself (an authentication with that same key).
    case sameKey
    /// F: no key can be changed any more except the application master key (with itself).
    case frozen

    public init(nibble: UInt8) {
        switch nibble & 0x0F {
        case 0x0E: self = .sameKey
        case 0x0F: self = .frozen
        case let k: self = .key(k)
        }
    }

    public var nibble: UInt8 {
        switch self {
        case let .key(k): return k & 0x0F
        case .sameKey: return 0x0E
        case .frozen: return 0x0F
        }
    }

    public var description: String {
        switch self {
        case .key(0): return "the master key (key 0) changes keys"
        case let .key(k): return "key \(k) changes keys"
        case .sameKey: return "each key changes itself"
        case .frozen: return "keys are frozen (only the master key changes itself)"
        }
    }
}

/// An application's (or the card's) key settings: the byte of GetKeySettings, CreateApplication
/// and ChangeKeySettings. At the card level (application 000000) bits 0-3 speak of the card
/// master key and of creating applications, and the high nibble is unused.
public struct DESFireKeySettings: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bit 0: the master key can be changed (with itself). Cleared, it never can again.
    public var masterKeyChangeable: Bool {
        get { rawValue & 0x01 != 0 }
        set { rawValue = newValue ? rawValue | 0x01 : rawValue & ~0x01 }
    }
    /// Bit 1: listing (GetFileIDs, GetFileSettings, GetKeySettings; GetApplicationIDs at the card
    /// level) needs no master key.
    public var freeDirectoryListing: Bool {
        get { rawValue & 0x02 != 0 }
        set { rawValue = newValue ? rawValue | 0x02 : rawValue & ~0x02 }
    }
    /// Bit 2: creating and deleting files (applications at the card level) needs no master key.
    public var freeCreateDelete: Bool {
        get { rawValue & 0x04 != 0 }
        set { rawValue = newValue ? rawValue | 0x04 : rawValue & ~0x04 }
    }
    /// Bit 3: these settings can be changed. Cleared, they are frozen for good.
    public var configurationChangeable: Bool {
        get { rawValue & 0x08 != 0 }
        set { rawValue = newValue ? rawValue | 0x08 : rawValue & ~0x08 }
    }
    /// Bits 4-7 (applications only).
    public var changeKeyAccess: DESFireChangeKeyAccess {
        get { DESFireChangeKeyAccess(nibble: rawValue >> 4) }
        set { rawValue = rawValue & 0x0F | newValue.nibble << 4 }
    }

    /// As shipped and as most tools create applications: 0F (everything free and changeable,
    /// the master key changes keys).
    public static let factory = DESFireKeySettings(rawValue: 0x0F)

    /// Whether a change to `self` from `old` can never be undone: the settings frozen, the master
    /// key made unchangeable, or keys frozen.
    public func freezes(from old: DESFireKeySettings, cardLevel: Bool) -> Bool {
        (old.configurationChangeable && !configurationChangeable) || (old.masterKeyChangeable && !masterKeyChangeable)
            || (!cardLevel && old.changeKeyAccess != .frozen && changeKeyAccess == .frozen)
    }

    /// The settings in words, one phrase per bit.
    public func words(cardLevel: Bool) -> [String] {
        var out = [masterKeyChangeable ? "the master key can be changed" : "the master key is frozen",
                   freeDirectoryListing ? (cardLevel ? "applications listed without a key" : "files listed without a key")
                       : (cardLevel ? "listing applications needs the card master key" : "listing files needs the master key"),
                   freeCreateDelete ? (cardLevel ? "applications created without a key" : "files created and deleted without a key")
                       : (cardLevel ? "creating applications needs the card master key" : "creating and deleting files needs the master key"),
                   configurationChangeable ? "settings changeable" : "settings frozen"]
        if !cardLevel { out.append(changeKeyAccess.description) }
        return out
    }
}

/// GetKeySettings' answer: the settings, how many keys the application has and their family.
public struct DESFireKeyInfo: Sendable, Hashable {
    public var settings: DESFireKeySettings
    public var keyCount: Int
    public var family: DESFireKeyFamily

    /// From the 2-byte answer (settings, key count with the family in bits 6-7).
    public init(parsing bytes: [UInt8]) throws(DESFireError) {
        guard bytes.count == 2 else { throw DESFireError(.malformed, "GetKeySettings answered \(bytes.count) bytes, not 2") }
        settings = DESFireKeySettings(rawValue: bytes[0])
        keyCount = Int(bytes[1] & 0x0F)
        guard let family = DESFireKeyFamily(rawValue: bytes[1] >> 6) else {
            throw DESFireError(.malformed, "GetKeySettings names key family \(bytes[1] >> 6), which does not exist")
        }
        self.family = family
    }

    public init(settings: DESFireKeySettings, keyCount: Int, family: DESFireKeyFamily) {
        self.settings = settings
        self.keyCount = keyCount
        self.family = family
    }
}
