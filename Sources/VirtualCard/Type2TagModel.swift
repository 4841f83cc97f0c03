import ISO7816

/// An NFC Forum Type 2 tag (MIFARE Ultralight, NTAG21x) behind a contactless PC/SC reader,
/// answering the PC/SC Part 3 storage-card pseudo-APDUs the way readers like the ACR122U do:
/// GET DATA `FF CA 00 00` (UID), READ BINARY `FF B0 00 page Le` (at most 16 bytes, wrapping at
/// the end of memory like the chip), UPDATE BINARY `FF D6 00 page 04 data` (one page, with the
/// chip's lock bits and one-time-programmable bytes honoured).
public final class Type2TagModel: EmulatedCard, @unchecked Sendable {
    public struct Chip: Sendable, Hashable {
        public var name: String
        public var pages: Int
        /// CC size byte: data area bytes / 8.
        public var ccSize: UInt8
        /// Pages covered by one dynamic lock bit, and the page holding the dynamic lock bytes (nil: none).
        public var dynamicLockPage: Int?
        public var pagesPerLockBit: Int
        /// GET_VERSION answer (for identification through a transparent exchange), when the chip has one.
        public var version: [UInt8]?
        /// PC/SC Part 3 card name.
        public var cardName: UInt16

        public static let ultralight = Chip(name: "MIFARE Ultralight", pages: 16, ccSize: 0x06, dynamicLockPage: nil, pagesPerLockBit: 0, version: nil, cardName: 0x0003)
        public static let ultralightC = Chip(name: "MIFARE Ultralight C", pages: 48, ccSize: 0x12, dynamicLockPage: 40, pagesPerLockBit: 4, version: nil, cardName: 0x003A)
        public static let ntag213 = Chip(name: "NTAG213", pages: 45, ccSize: 0x12, dynamicLockPage: 40, pagesPerLockBit: 2, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03], cardName: 0x0003)
        public static let ntag215 = Chip(name: "NTAG215", pages: 135, ccSize: 0x3E, dynamicLockPage: 130, pagesPerLockBit: 16, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03], cardName: 0x0003)
        public static let ntag216 = Chip(name: "NTAG216", pages: 231, ccSize: 0x6D, dynamicLockPage: 226, pagesPerLockBit: 16, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03], cardName: 0x0003)

        public static let all: [String: Chip] = ["ultralight": .ultralight, "ultralight-c": .ultralightC, "ntag213": .ntag213, "ntag215": .ntag215, "ntag216": .ntag216]

        public var dataAreaBytes: Int { Int(ccSize) * 8 }
    }

    public let chip: Chip
    public let uid: [UInt8]
    private let memory: Locked<[UInt8]>
    /// Called with the whole memory after every successful write.
    public var onChange: (@Sendable ([UInt8]) -> Void)?

    public var atr: [UInt8] {
        // PC/SC Part 3: 3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS NN NN 00 00 00 00 TCK (SS 03: ISO 14443 A part 3).
        var a: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x03,
                          UInt8(chip.cardName >> 8), UInt8(chip.cardName & 0xFF), 0x00, 0x00, 0x00, 0x00]
        a.append(a.dropFirst().reduce(0, ^))
        return a
    }

    /// A factory-fresh tag (NDEF-formatted: CC, lock control TLV on NTAG21x, empty NDEF TLV) or
    /// the given memory image.
    public init(chip: Chip, uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80], memory image: [UInt8]? = nil) {
        self.chip = chip
        self.uid = uid
        var m = [UInt8](repeating: 0, count: chip.pages * 4)
        if let image {
            for (i, b) in image.prefix(m.count).enumerated() { m[i] = b }
        } else {
            // Page 0-1: UID and check bytes; page 2: BCC1, internal, static lock bytes; page 3: CC.
            m[0] = uid[0]; m[1] = uid[1]; m[2] = uid[2]; m[3] = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
            m[4] = uid[3]; m[5] = uid[4]; m[6] = uid[5]; m[7] = uid[6]
            m[8] = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]; m[9] = 0x48
            m[12] = 0xE1; m[13] = 0x10; m[14] = chip.ccSize; m[15] = 0x00
            var tlvs: [UInt8] = []
            if let lockPage = chip.dynamicLockPage {
                // Lock Control TLV: the dynamic lock bytes at lockPage, byte 0 (page size 4 bytes).
                // Position = PageAddr × 2^BytesPerPage + ByteOffset, both nibbles (T2T §4.6.2).
                let bits = (chip.dataAreaBytes - 48 + 7) / 8
                let position = lockPage * 4
                var e = 2
                while position >> e > 15 || position & ((1 << e) - 1) > 15 { e += 1 }
                let lockedExponent = (chip.pagesPerLockBit * 4).trailingZeroBitCount
                tlvs += [0x01, 0x03, UInt8((position >> e) << 4 | (position & ((1 << e) - 1))), UInt8(bits & 0xFF), UInt8(lockedExponent << 4 | e)]
            }
            tlvs += [0x03, 0x00, 0xFE]
            for (i, b) in tlvs.enumerated() { m[16 + i] = b }
        }
        memory = Locked(m)
    }

    public var contents: [UInt8] { memory.current }

    public func reset() {}

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        switch apdu[1] {
        case 0xCA:
            guard apdu[2] == 0x00, apdu[3] == 0x00 else { return [0x6A, 0x81] }
            let le = apdu.count >= 5 ? Int(apdu[4]) : 0
            if le != 0 && le != uid.count { return [0x6C, UInt8(uid.count)] }
            return uid + [0x90, 0x00]
        case 0xB0:
            guard apdu.count == 5 else { return [0x67, 0x00] }
            let page = Int(apdu[2]) << 8 | Int(apdu[3])
            let le = apdu[4] == 0 ? 256 : Int(apdu[4])
            guard le <= 16 else { return [0x67, 0x00] }     // the reader's real limit
            guard page < chip.pages else { return [0x6A, 0x82] }
            let m = memory.current
            // The chip wraps reads at the end of memory.
            let bytes = (0..<le).map { m[(page * 4 + $0) % m.count] }
            return bytes + [0x90, 0x00]
        case 0xD6:
            guard apdu.count == 9, apdu[4] == 0x04 else { return [0x67, 0x00] }
            let page = Int(apdu[2]) << 8 | Int(apdu[3])
            guard page >= 2, page < chip.pages else { return [0x6A, 0x82] }
            let data = Array(apdu[5..<9])
            let result: (ok: Bool, image: [UInt8]) = memory.withLock { m in
                guard !isLocked(page: page, m) else { return (false, m) }
                for i in 0..<4 {
                    let at = page * 4 + i
                    if page == 2 {
                        // Page 2: only the static lock bytes (2, 3) can change, and only 0 → 1.
                        if i >= 2 { m[at] |= data[i] }
                    } else if page == 3 || page == chip.dynamicLockPage {
                        m[at] |= data[i]            // OTP and lock bits: set-only
                    } else {
                        m[at] = data[i]
                    }
                }
                return (true, m)
            }
            guard result.ok else { return [0x63, 0x00] }
            onChange?(result.image)
            return [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    /// Whether the static or dynamic lock bits protect `page`.
    func isLocked(page: Int, _ m: [UInt8]) -> Bool {
        let lock0 = m[10], lock1 = m[11]
        if (3...7).contains(page) && lock0 & (1 << page) != 0 { return true }
        if (8...15).contains(page) && lock1 & (1 << (page - 8)) != 0 { return true }
        if page >= 16, let lockPage = chip.dynamicLockPage, page < lockPage, chip.pagesPerLockBit > 0 {
            let bit = (page - 16) / chip.pagesPerLockBit
            let byte = m[lockPage * 4 + bit / 8]
            if byte & (1 << (bit % 8)) != 0 { return true }
        }
        return false
    }
}
