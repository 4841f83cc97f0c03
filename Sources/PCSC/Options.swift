// The PC/SC option values as small structs: scope, share mode, protocols, disposition, reader
// and card state flags, and attribute identifiers.

/// The scope of a resource manager context (`SCARD_SCOPE_*`). pcsclite treats them alike.
public struct Scope: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_SCOPE_USER`
    public static let user = Scope(rawValue: 0x0000)
    /// `SCARD_SCOPE_TERMINAL`
    public static let terminal = Scope(rawValue: 0x0001)
    /// `SCARD_SCOPE_SYSTEM`, the usual choice.
    public static let system = Scope(rawValue: 0x0002)
}

/// How a connection shares the card with other processes (`SCARD_SHARE_*`).
public struct ShareMode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_SHARE_EXCLUSIVE`: nobody else may connect while this handle is open.
    public static let exclusive = ShareMode(rawValue: 0x0001)
    /// `SCARD_SHARE_SHARED`: others may connect; use transactions to keep exchanges whole.
    public static let shared = ShareMode(rawValue: 0x0002)
    /// `SCARD_SHARE_DIRECT`: talk to the reader (control, attributes) even without a card.
    public static let direct = ShareMode(rawValue: 0x0003)
}

/// Transmission protocols (`SCARD_PROTOCOL_*`).
public struct Protocols: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_PROTOCOL_T0`
    public static let t0 = Protocols(rawValue: 0x0001)
    /// `SCARD_PROTOCOL_T1`
    public static let t1 = Protocols(rawValue: 0x0002)
    /// `SCARD_PROTOCOL_RAW`
    public static let raw = Protocols(rawValue: 0x0004)
    /// `SCARD_PROTOCOL_T15`
    public static let t15 = Protocols(rawValue: 0x0008)
    /// `SCARD_PROTOCOL_ANY`: T=0 or T=1, whichever the reader negotiates.
    public static let any: Protocols = [.t0, .t1]

    /// A short name for people: `T=0`, `T=1`, `RAW`, or `none`.
    public var name: String {
        var parts: [String] = []
        if contains(.t0) { parts.append("T=0") }
        if contains(.t1) { parts.append("T=1") }
        if contains(.raw) { parts.append("RAW") }
        if contains(.t15) { parts.append("T=15") }
        return parts.isEmpty ? "none" : parts.joined(separator: "|")
    }
}

/// What to do with the card when a handle lets go of it (`SCARD_*_CARD`).
public struct Disposition: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_LEAVE_CARD`: the default everywhere in this library.
    public static let leave = Disposition(rawValue: 0x0000)
    /// `SCARD_RESET_CARD`
    public static let reset = Disposition(rawValue: 0x0001)
    /// `SCARD_UNPOWER_CARD`
    public static let unpower = Disposition(rawValue: 0x0002)
    /// `SCARD_EJECT_CARD`
    public static let eject = Disposition(rawValue: 0x0003)
}

/// Reader state flags from a status-change wait (`SCARD_STATE_*`), without the event counter.
public struct ReaderStatus: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue & 0xFFFF }
    /// `SCARD_STATE_UNAWARE`: the caller knows nothing yet; the wait returns at once.
    public static let unaware: ReaderStatus = []
    /// `SCARD_STATE_IGNORE`
    public static let ignore = ReaderStatus(rawValue: 0x0001)
    /// `SCARD_STATE_CHANGED`
    public static let changed = ReaderStatus(rawValue: 0x0002)
    /// `SCARD_STATE_UNKNOWN`: the reader does not exist (any more).
    public static let unknown = ReaderStatus(rawValue: 0x0004)
    /// `SCARD_STATE_UNAVAILABLE`
    public static let unavailable = ReaderStatus(rawValue: 0x0008)
    /// `SCARD_STATE_EMPTY`
    public static let empty = ReaderStatus(rawValue: 0x0010)
    /// `SCARD_STATE_PRESENT`
    public static let present = ReaderStatus(rawValue: 0x0020)
    /// `SCARD_STATE_ATRMATCH`
    public static let atrMatch = ReaderStatus(rawValue: 0x0040)
    /// `SCARD_STATE_EXCLUSIVE`
    public static let exclusive = ReaderStatus(rawValue: 0x0080)
    /// `SCARD_STATE_INUSE`
    public static let inUse = ReaderStatus(rawValue: 0x0100)
    /// `SCARD_STATE_MUTE`: a card is there but does not answer.
    public static let mute = ReaderStatus(rawValue: 0x0200)
    /// `SCARD_STATE_UNPOWERED`
    public static let unpowered = ReaderStatus(rawValue: 0x0400)

    /// A card is in the reader and answers: present and not mute.
    public var hasUsableCard: Bool { contains(.present) && !contains(.mute) }

    /// Names of the flags that are set, for logs and JSON.
    public var names: [String] {
        let all: [(ReaderStatus, String)] = [
            (.ignore, "ignore"), (.changed, "changed"), (.unknown, "unknown"),
            (.unavailable, "unavailable"), (.empty, "empty"), (.present, "present"),
            (.atrMatch, "atrMatch"), (.exclusive, "exclusive"), (.inUse, "inUse"),
            (.mute, "mute"), (.unpowered, "unpowered"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

/// The card state from `SCardStatus` (`SCARD_ABSENT` … `SCARD_SPECIFIC`, a bit set in pcsclite).
public struct CardState: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_UNKNOWN`
    public static let unknown = CardState(rawValue: 0x0001)
    /// `SCARD_ABSENT`
    public static let absent = CardState(rawValue: 0x0002)
    /// `SCARD_PRESENT`
    public static let present = CardState(rawValue: 0x0004)
    /// `SCARD_SWALLOWED`
    public static let swallowed = CardState(rawValue: 0x0008)
    /// `SCARD_POWERED`
    public static let powered = CardState(rawValue: 0x0010)
    /// `SCARD_NEGOTIABLE`
    public static let negotiable = CardState(rawValue: 0x0020)
    /// `SCARD_SPECIFIC`
    public static let specific = CardState(rawValue: 0x0040)
}

/// A reader attribute identifier for `Card.attribute(_:)` (`SCARD_ATTR_*`).
public struct Attribute: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    static func value(_ cls: UInt32, _ tag: UInt32) -> Attribute { Attribute(rawValue: cls << 16 | tag) }

    /// `SCARD_ATTR_VENDOR_NAME`
    public static let vendorName = value(1, 0x0100)
    /// `SCARD_ATTR_VENDOR_IFD_TYPE`
    public static let vendorIFDType = value(1, 0x0101)
    /// `SCARD_ATTR_VENDOR_IFD_VERSION`
    public static let vendorIFDVersion = value(1, 0x0102)
    /// `SCARD_ATTR_VENDOR_IFD_SERIAL_NO`
    public static let vendorIFDSerialNumber = value(1, 0x0103)
    /// `SCARD_ATTR_CHANNEL_ID`
    public static let channelID = value(2, 0x0110)
    /// `SCARD_ATTR_MAX_IFSD`
    public static let maxIFSD = value(3, 0x0125)
    /// `SCARD_ATTR_CURRENT_PROTOCOL_TYPE`
    public static let currentProtocolType = value(8, 0x0201)
    /// `SCARD_ATTR_ICC_PRESENCE`
    public static let iccPresence = value(9, 0x0300)
    /// `SCARD_ATTR_ICC_INTERFACE_STATUS`
    public static let iccInterfaceStatus = value(9, 0x0301)
    /// `SCARD_ATTR_ATR_STRING`
    public static let atrString = value(9, 0x0303)
    /// `SCARD_ATTR_ICC_TYPE_PER_ATR`
    public static let iccTypePerATR = value(9, 0x0304)
    /// `SCARD_ATTR_MAXINPUT`: the largest command the driver accepts, where it says.
    public static let maxInput = value(7, 0xA007)
    /// `SCARD_ATTR_DEVICE_FRIENDLY_NAME` (the ASCII variant pcsclite uses)
    public static let deviceFriendlyName = value(0x7FFF, 0x0003)
    /// `SCARD_ATTR_DEVICE_SYSTEM_NAME`
    public static let deviceSystemName = value(0x7FFF, 0x0004)
}
