// A page dump of a Type 2 tag with what each page is for, as far as the evidence names the chip.
import ISO7816

/// The pages of a Type 2 tag with what each one is for (`apdu ultralight read`).
public struct Type2PageMap: Sendable {
    public struct Row: Sendable, Hashable {
        public var page: Int
        /// nil: the tag refused the page (protected by a password, or past its memory).
        public var bytes: [UInt8]?
        /// "UID", "CC", "data", "dynamic lock", "config", …
        public var role: String
    }
    public var rows: [Row]
    /// Pages of the chip past 255 that were not read: storage READ BINARY cannot address them.
    public var unreachable: ClosedRange<Int>?

    /// Pages 0-3 (UID, lock bytes, CC) could not be read: the reader or tag answers wrongly.
    public struct HeaderUnreadable: Error, CustomStringConvertible {
        public var reason: TagError
        public var description: String { "cannot read pages 0-3: \(reason.message)" }
    }
}

extension Type2Tag {
    /// Reads `pages` (nil: the whole tag, as its chip or else its CC describes it) with their
    /// roles. Where the evidence names the chip, its datasheet says where the lock and
    /// configuration pages really are (NTAG215/216 keep user pages past the CC's data area).
    /// Run it inside one transaction, so the pages come from one moment of the tag.
    /// - Throws: `TagError` `.notNDEF` for a card not of the Ultralight family, `.readFailed`;
    ///   `Type2PageMap.HeaderUnreadable` when pages 0-3 cannot be read.
    /// With `commands` (a native path) pages come with FAST_READ and past 255 with SECTOR_SELECT;
    /// with `password`, PWD_AUTH opens read-protected pages first.
    public static func pageMap(_ transport: APDUTransport, atr: [UInt8], pages: ClosedRange<Int>?,
                               commands: TagCommandChannel? = nil, password: Type2Password? = nil) throws -> Type2PageMap {
        guard isType2(atr: atr) else {
            throw TagError(.notNDEF, "not a MIFARE Ultralight / NTAG tag (the ATR is not a PC/SC Part 3 Ultralight-family storage card)")
        }
        let raw = Type2Tag(transport: transport, uid: nil, cardName: (try? ATR(bytes: atr))?.storageCard?.cardName,
                           commands: try nativePath(commands, password: password), password: password)
        try raw.start()
        // Only GET_VERSION names the chip (its pages, lock and configuration); without it the CC
        // says how far the data area goes, and nothing past it is given a chip's meaning.
        let proven = raw.version?.chip
        // Pages 0-3 first where the CC decides the extent or the range leaves them out; else
        // they come in the same frames as the rest (a whole-tag map: ⌈bytes / frame⌉ reads).
        if proven == nil || !(pages.map { $0.lowerBound == 0 && $0.upperBound >= 3 } ?? true) { try raw.readHeader() }
        let reach = raw.reachablePages
        let total = proven?.pages ?? defaultExtent(dataPages: dataPages(raw.header))
        let wanted = pages ?? 0...(total - 1)
        guard wanted.lowerBound < reach else {
            throw TagError(.beyondReach, "pages \(wanted.lowerBound)-\(wanted.upperBound) are \(raw.reachNote)")
        }
        let unreachable = wanted.upperBound >= reach ? reach...wanted.upperBound : nil
        let readable = wanted.lowerBound...min(wanted.upperBound, reach - 1)
        let dumped = try raw.dump(pages: readable)
        if raw.header.count != 16 { try raw.readHeader(from: dumped) }
        let data = dataPages(raw.header)
        let rows = dumped.map { page, bytes in
            Type2PageMap.Row(page: page, bytes: bytes, role: proven?.role(ofPage: page, dataAreaEnd: 16 + data * 4) ?? defaultRole(page, dataPages: data))
        }
        guard rows.contains(where: { $0.bytes != nil }) else {
            throw TagError(.readFailed, "the tag refused every page of \(readable.lowerBound)-\(readable.upperBound)")
        }
        return Type2PageMap(rows: rows, unreachable: unreachable)
    }

    /// Pages 0-3, from rows already dumped when they are there, else read.
    func readHeader(from rows: [(page: Int, bytes: [UInt8]?)] = []) throws {
        var head = rows.filter { $0.page < 4 }.compactMap(\.bytes).flatMap { $0 }
        if head.count != 16 {
            do { head = try dump(pages: 0...3).compactMap(\.bytes).flatMap { $0 } } catch let e as TagError {
                throw Type2PageMap.HeaderUnreadable(reason: e)
            }
        }
        guard head.count == 16 else { throw Type2PageMap.HeaderUnreadable(reason: TagError(.readFailed, "the tag refused")) }
        header = head
    }

    /// Data-area pages by the CC (12, a 48-byte area, where there is no NDEF CC).
    static func dataPages(_ header: [UInt8]) -> Int { header.count == 16 && header[12] == 0xE1 ? Int(header[14]) * 2 : 12 }

    /// How many pages a map of a chip that is not proven shows: the header, the data area, and
    /// past a 48-byte area five more (where NTAG21x keep lock and configuration pages; shown
    /// without a chip's meaning).
    static func defaultExtent(dataPages: Int) -> Int { 4 + dataPages + (dataPages > 12 ? 5 : 0) }

    /// Roles for a chip the evidence does not prove: the header and the CC's data area; past
    /// it, no chip's meaning (lock bytes on one chip are user memory on another).
    static func defaultRole(_ page: Int, dataPages: Int) -> String {
        switch page {
        case 0, 1: return "UID"
        case 2: return "UID/internal/static lock"
        case 3: return "CC"
        case 4..<(4 + dataPages): return "data"
        default: return "past the data area (chip not proven: role unknown)"
        }
    }
}
