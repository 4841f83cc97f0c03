// The access-right nibble of the DESFire family's files (DESFire EV1-EV3, NTAG 424 DNA): a key, anyone, or no one.

/// Who may do one thing to a file of the DESFire family (DESFire, NTAG 424 DNA): a key of the
/// application, anyone, or no one (a nibble of the file's access rights).
public enum DESFireAccess: Sendable, Hashable, CustomStringConvertible {
    /// 0-D: after an authentication with this key.
    case key(UInt8)
    /// E: anyone, without authentication (and then the data travels plain).
    case free
    /// F: no one.
    case never

    public init(nibble: UInt8) {
        switch nibble & 0x0F {
        case 0x0E: self = .free
        case 0x0F: self = .never
        case let k: self = .key(k)
        }
    }

    public var nibble: UInt8 {
        switch self {
        case let .key(k): return k & 0x0F
        case .free: return 0x0E
        case .never: return 0x0F
        }
    }

    /// "key 1", "free", "never".
    public var description: String {
        switch self {
        case let .key(k): return "key \(k)"
        case .free: return "free"
        case .never: return "never"
        }
    }
}
