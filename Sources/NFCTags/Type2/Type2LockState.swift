// What locks a Type 2 tag: the CC, static and dynamic lock bits, and the password configuration.

/// The lock state of a Type 2 tag, worked out from the CC, the static lock bits (page 2), the
/// dynamic lock bits and, where the chip has them, AUTH0/PROT.
public struct Type2LockState: TagLockState {
    /// Where a dynamic lock area's position came from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        case lockControlTLV
        /// A chip GET_VERSION proved.
        case chip(String)
        public var description: String {
            switch self {
            case .lockControlTLV: return "lock control TLV"
            case let .chip(name): return "\(name) datasheet"
            }
        }
    }

    public struct DynamicArea: Sendable, Hashable {
        /// Absolute address of the first lock byte.
        public var position: Int
        public var bits: Int
        /// Bytes each bit locks, from the data area's byte 48 (page 16) on.
        public var bytesLockedPerBit: Int
        public var source: Source
        /// The lock bytes as read (nil: not readable here).
        public var bytes: [UInt8]?
        public var byteCount: Int { (bits + 7) / 8 }
        /// The bytes with every lock bit set (other bits as they are).
        public var lockedBytes: [UInt8]? {
            bytes.map { b in (0..<byteCount).map { i in b[i] | UInt8(truncatingIfNeeded: (1 << min(8, bits - i * 8)) - 1) } }
        }
        public var isFullyLocked: Bool { bytes != nil && bytes == lockedBytes }
    }

    public enum Password: Sendable, Hashable, CustomStringConvertible {
        /// The chip has no password feature (or it is unknown to have one).
        case none
        case disabled
        /// Pages from `fromPage` need PWD_AUTH to be written (and read, with `reads`).
        case protects(fromPage: Int, reads: Bool)
        /// The configuration could not be read (it may itself be protected).
        case unknown(String)
        public var description: String {
            switch self {
            case .none: return "not supported by the chip"
            case .disabled: return "disabled"
            case let .protects(page, reads): return "\(reads ? "reads and writes" : "writes") of pages \(page) on need the password"
            case let .unknown(why): return "unknown (\(why))"
            }
        }
    }

    public var ccWriteAccess: UInt8
    public var staticLockBytes: [UInt8]
    public var dynamicAreas: [DynamicArea]
    /// Why the tag's dynamic lock bytes cannot be placed (no lock control TLV and no proven
    /// chip, on a data area past 48 bytes): nil when they are known or the tag has none.
    public var unknownDynamicLocks: String?
    public var password: Password
    /// Pages no write can change (lock bits), sorted.
    public var lockedPages: [Int]
    /// PWD_AUTH succeeded in this session: the password no longer blocks writes.
    public var authenticated = false

    /// Whether every lock the tag has is set: CC read-only, static and dynamic lock bits.
    public var isFullyLocked: Bool {
        ccWriteAccess == 0x0F && staticLockBytes == [0xFF, 0xFF] && unknownDynamicLocks == nil && dynamicAreas.allSatisfy(\.isFullyLocked)
    }
    /// Some but not all of the locks are set (an interrupted lock, or a partly locked tag).
    public var isPartlyLocked: Bool {
        !isFullyLocked && (ccWriteAccess != 0 || staticLockBytes != [0, 0] || dynamicAreas.contains { ($0.bytes ?? []).contains { $0 != 0 } })
    }

    public func isWritable(page: Int) -> Bool {
        if lockedPages.contains(page) { return false }
        if case let .protects(from, _) = password, page >= from, !authenticated { return false }
        return true
    }

    /// The pages the lock bits cover, as ranges for people.
    public var lockedRanges: [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        for p in lockedPages {
            if let last = out.last, last.upperBound + 1 == p { out[out.count - 1] = last.lowerBound...p } else { out.append(p...p) }
        }
        return out
    }
}
