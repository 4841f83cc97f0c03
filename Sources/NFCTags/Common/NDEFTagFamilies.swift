// The NFC Forum tag families in the order detection tries them: the one place a family is listed.
import ISO7816

/// What detection knows of a card before it picks a family, and what a family may need.
public struct NDEFDetection {
    /// The channel to the card, with its transmission policy.
    public var transport: APDUTransport
    /// The card's answer to reset.
    public var atr: [UInt8]
    /// A tag whose TLV area or attribute block does not parse is still returned (to restore it).
    public var tolerant: Bool
    /// The reader's tag-command channel, for the families that use it (nil: storage
    /// pseudo-APDUs only).
    public var commands: TagCommandChannel?
    /// MIFARE Classic keys to try after the public MAD and NDEF keys.
    public var classicKeys: [MifareClassicKeyCandidate]
    /// Sent with PWD_AUTH first (NTAG21x / Ultralight EV1 with AUTH0 protection).
    public var password: Type2Password?

    public init(transport: APDUTransport, atr: [UInt8], tolerant: Bool = false, commands: TagCommandChannel? = nil,
                classicKeys: [MifareClassicKeyCandidate] = [], password: Type2Password? = nil) {
        self.transport = transport
        self.atr = atr
        self.tolerant = tolerant
        self.commands = commands
        self.classicKeys = classicKeys
        self.password = password
    }
}

/// A family of NDEF tags: how its cards are recognised, and its NDEF procedure found.
public protocol NDEFTagFamily {
    /// Whether the ATR names a card of this family (PC/SC Part 3 storage-card names, or for the
    /// last family, any card that may carry the NDEF application).
    static func recognizes(atr: [UInt8]) -> Bool
    /// Whether its procedures need the reader's tag-command channel (Types 2, 3, 5).
    static var usesTagCommands: Bool { get }
    /// Reads what the family needs to know of the tag (CC, TLVs, keys) and returns its procedures.
    static func detectNDEF(_ detection: NDEFDetection) throws -> any NDEFTag
}

extension NDEFTagFamily {
    public static var usesTagCommands: Bool { false }
}

/// The families, in detection order: the first whose `recognizes(atr:)` holds detects the tag.
/// Storage cards named by their ATR come first; an ISO 14443-4 card may carry the Type 4 NDEF
/// application and is asked for it with SELECT. Adding a family is one line here.
public enum NDEFTagFamilies {
    public static var all: [any NDEFTagFamily.Type] {
        [
            MifareClassicNDEFTag.self,
            Type2Tag.self,
            Type5Tag.self,
            Type3Tag.self,
            Type1Tag.self,
            MifarePlusNDEFTag.self,
            Type4Tag.self,
        ]
    }

    /// The family whose `recognizes(atr:)` holds first; nil for a storage card no family knows.
    public static func family(of atr: [UInt8]) -> (any NDEFTagFamily.Type)? {
        all.first { $0.recognizes(atr: atr) }
    }
}
