// The Type 2 chips this library knows from their datasheets (pages, lock bytes, password
// configuration), and what the evidence proves about a tag's chip.
import ISO7816

/// What this library knows of a Type 2 chip's memory: where its lock bits and password
/// configuration really are. The NFC Forum's default ("dynamic lock bytes right after the CC's
/// data area") is wrong on NTAG215/216, whose CC leaves user pages uncovered: their lock bytes
/// are at 82h / E2h, and writing at 80h / DEh would overwrite user data.
///
/// Sources: the NXP datasheets (MF0ICU1, MF0ICU2, MF0ULx1, NTAG210/212, NTAG213/215/216) and
/// proxmark3's page counts. Granularities marked UNCONFIRMED could not be checked against a
/// datasheet here; a lock control TLV on the tag always wins over this table.
public struct Type2Chip: Sendable, Hashable {
    public var name: String
    /// Every page of the chip.
    public var pages: Int
    /// The CC size byte the chip ships with (data area / 8).
    public var factoryCCSize: UInt8
    /// PC/SC Part 3 card names readers report for it.
    public var cardNames: Set<UInt16>
    public var dynamicLock: DynamicLock?
    public var passwords: Passwords?

    public struct DynamicLock: Sendable, Hashable {
        /// The page of the lock bytes; bits from bit 0 of its byte 0 on, each locking
        /// `pagesPerBit` pages from page 16 on.
        public var page: Int
        public var bits: Int
        public var pagesPerBit: Int
    }

    public struct Passwords: Sendable, Hashable {
        /// AUTH0: the first protected page (page, byte).
        public var auth0Page: Int
        public var auth0Byte: Int
        /// The access byte and its protection bit.
        public var accessPage: Int
        public var accessByte: Int
        public var protectionBit: UInt8
        /// NTAG/EV1 PROT: bit set = reads protected too; Ultralight C AUTH1 bit 0: bit set = writes only.
        public var readsProtectedWhenBitSet: Bool
        /// AUTH0 values at or past this disable protection.
        public var disabledFrom: Int

        static func ntag(cfg0: Int, pages: Int) -> Passwords {
            Passwords(auth0Page: cfg0, auth0Byte: 3, accessPage: cfg0 + 1, accessByte: 0, protectionBit: 0x80, readsProtectedWhenBitSet: true, disabledFrom: pages)
        }
    }

    /// User memory as the chip really has it (bytes): up to the lock page or the configuration.
    public var userMemoryEnd: Int {
        if let d = dynamicLock { return d.page * 4 }
        if let p = passwords { return p.auth0Page * 4 }
        return pages * 4
    }

    public static let ultralight = Type2Chip(name: "MIFARE Ultralight", pages: 16, factoryCCSize: 0x06, cardNames: [0x0003], dynamicLock: nil, passwords: nil)
    public static let ultralightC = Type2Chip(name: "MIFARE Ultralight C", pages: 48, factoryCCSize: 0x12, cardNames: [0x003A],
                                              dynamicLock: DynamicLock(page: 0x28, bits: 6, pagesPerBit: 4),  // granularity UNCONFIRMED
                                              passwords: Passwords(auth0Page: 0x2A, auth0Byte: 0, accessPage: 0x2B, accessByte: 0, protectionBit: 0x01,
                                                                   readsProtectedWhenBitSet: false, disabledFrom: 0x30))
    public static let ultralightEV1 = Type2Chip(name: "MIFARE Ultralight EV1 (MF0UL11)", pages: 20, factoryCCSize: 0x06, cardNames: [0x003D],
                                                dynamicLock: nil, passwords: .ntag(cfg0: 0x10, pages: 20))
    public static let ultralightEV1b = Type2Chip(name: "MIFARE Ultralight EV1 (MF0UL21)", pages: 41, factoryCCSize: 0x10, cardNames: [0x003D],
                                                 dynamicLock: DynamicLock(page: 0x24, bits: 5, pagesPerBit: 4),  // granularity UNCONFIRMED
                                                 passwords: .ntag(cfg0: 0x25, pages: 41))
    public static let ntag210 = Type2Chip(name: "NTAG210", pages: 20, factoryCCSize: 0x06, cardNames: [0x0003], dynamicLock: nil, passwords: .ntag(cfg0: 0x10, pages: 20))
    public static let ntag212 = Type2Chip(name: "NTAG212", pages: 41, factoryCCSize: 0x10, cardNames: [0x0003],
                                          dynamicLock: DynamicLock(page: 0x24, bits: 10, pagesPerBit: 2),  // granularity UNCONFIRMED
                                          passwords: .ntag(cfg0: 0x25, pages: 41))
    public static let ntag213 = Type2Chip(name: "NTAG213", pages: 45, factoryCCSize: 0x12, cardNames: [0x0003],
                                          dynamicLock: DynamicLock(page: 0x28, bits: 12, pagesPerBit: 2), passwords: .ntag(cfg0: 0x29, pages: 45))
    public static let ntag215 = Type2Chip(name: "NTAG215", pages: 135, factoryCCSize: 0x3E, cardNames: [0x0003],
                                          dynamicLock: DynamicLock(page: 0x82, bits: 8, pagesPerBit: 16), passwords: .ntag(cfg0: 0x83, pages: 135))
    public static let ntag216 = Type2Chip(name: "NTAG216", pages: 231, factoryCCSize: 0x6D, cardNames: [0x0003],
                                          dynamicLock: DynamicLock(page: 0xE2, bits: 14, pagesPerBit: 16), passwords: .ntag(cfg0: 0xE3, pages: 231))

    public static let known: [Type2Chip] = [.ultralight, .ultralightC, .ultralightEV1, .ultralightEV1b, .ntag210, .ntag212, .ntag213, .ntag215, .ntag216]

    /// The chip a storage-only reader lets us infer: the ATR's card name and the CC's size as
    /// shipped. Ambiguous evidence (a 48-byte CC: Ultralight, NTAG210 or Ultralight EV1) gives
    /// every candidate, for the caller to tell apart or to treat conservatively.
    public static func candidates(cardName: UInt16?, ccSize: UInt8) -> [Type2Chip] {
        known.filter { $0.factoryCCSize == ccSize && (cardName == nil || $0.cardNames.contains(cardName!)) }
    }

    /// What `page` holds on this chip, for a dump: the data area as the CC declares it, the user
    /// memory it leaves out (NTAG215/216), the lock and configuration pages where they really are.
    public func role(ofPage page: Int, dataAreaEnd: Int) -> String {
        switch page {
        case 0, 1: return "UID"
        case 2: return "UID/internal/static lock"
        case 3: return "CC"
        case 4..<(dataAreaEnd / 4): return "data"
        default: break
        }
        if page >= pages { return "beyond the chip" }
        if let d = dynamicLock, page == d.page { return "dynamic lock" }
        if let p = passwords {
            if page == p.auth0Page { return p.auth0Byte == 3 ? "config (CFG0, AUTH0)" : "config (AUTH0)" }
            if page == p.accessPage { return p.auth0Byte == 3 ? "config (CFG1, ACCESS)" : "config (AUTH1)" }
            if page > p.accessPage { return p.auth0Byte == 3 ? (page == p.accessPage + 1 ? "PWD (reads as 00)" : "PACK (reads as 00)") : "key (reads as 00)" }
        }
        if page < userMemoryEnd / 4 { return "user memory outside the CC's data area" }
        return "config"
    }
}

/// What a Type 2 tag is, with the evidence for it.
///
/// Only proof names the chip: GET_VERSION's answer, matched against the datasheet table. The
/// CC's size and the ATR's card name are circumstantial (an NTAG215 re-formatted with a 144-byte
/// CC looks like an NTAG213; readers report 0003 for most of the family), so they give a `hint`
/// for people and nothing else: no configuration page is interpreted, no lock bit placed and no
/// write refused on a hint. Where the chip is not proven, the tag's own answers decide.
public struct Type2ChipIdentity: Sendable, Hashable {
    /// The chip, when the evidence proves it (nil: not proven, or not in this tool's table).
    public var chip: Type2Chip?
    /// For people: the proven name, or "unknown" with the hint.
    public var name: String
    /// How it was learned, for people: the GET_VERSION answer, or the circumstances.
    public var evidence: String
    /// Chips the circumstantial evidence fits (for display only; empty when proven).
    public var hint: [Type2Chip]
    /// Whether `chip` rests on proof.
    public var proven: Bool { chip != nil }

    public init(version: Type2Version?, cardName: UInt16?, ccSize: UInt8, lockAreas: [Type2TLVArea.LockArea], nativePath: Bool) {
        if let version {
            hint = []
            if let chip = version.chip {
                self.chip = chip
                name = chip.name
                evidence = "GET_VERSION \(version.bytes.hexString)"
            } else {
                // Named by GET_VERSION but not described here: its layout from the CC and TLVs.
                chip = nil
                name = version.productName
                evidence = "GET_VERSION \(version.bytes.hexString) (layout not in this tool's table: locks from the CC and TLVs)"
            }
            return
        }
        chip = nil
        // A lock control TLV that puts the lock bytes elsewhere rules a candidate out.
        hint = Type2Chip.candidates(cardName: cardName, ccSize: ccSize).filter { chip in
            lockAreas.allSatisfy { $0.position == (chip.dynamicLock?.page).map { $0 * 4 } }
        }
        name = hint.isEmpty ? "unknown Type 2 chip" : "unknown (the CC size suggests \(hint.map(\.name).joined(separator: " or ")); not proven)"
        evidence = "CC size \(Int(ccSize) * 8) bytes" + (cardName.map { ", ATR card name \(Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)]))" } ?? "")
            + (nativePath ? "; the tag does not answer GET_VERSION" : "; no GET_VERSION: the reader offers no raw tag-command path")
    }
}
