// A MIFARE Classic card read sector by sector with candidate keys, the key search, and the
// checked write of one block.
import ISO7816

/// One sector of a dump: what its keys opened, its blocks, its access bits.
public struct MifareClassicSectorDump: Sendable, Hashable {
    public var sector: Int
    public var firstBlock: Int
    /// Every block of the sector in order, the trailer last; nil where it could not be read.
    public var blocks: [[UInt8]?]
    /// The key that opened the sector for the reads, by type and label (nil: none did).
    public var keyType: MifareClassicKeyType?
    public var keyLabel: String?
    /// Decoded from the trailer (nil: unreadable, or the inverted copy does not match).
    public var access: MifareClassicAccessBits?
    /// Why blocks are missing ("no key opens it", "block 6 needs key B").
    public var notes: [String]

    /// The value blocks among the data blocks: block number and value.
    public var valueBlocks: [(block: Int, value: MifareClassicValueBlock)] {
        blocks.dropLast().enumerated().compactMap { i, b in b.flatMap(MifareClassicValueBlock.init(bytes:)).map { (firstBlock + i, $0) } }
    }
}

/// A whole card, as far as the keys open it.
public struct MifareClassicDump: Sendable, Hashable {
    public var layout: MifareClassicLayout
    public var uid: [UInt8]?
    public var sectors: [MifareClassicSectorDump]
    /// GENERAL AUTHENTICATEs and READ BINARYs it took.
    public var authentications: Int
    public var reads: Int
}

/// Which keys open a sector, as key A and as key B.
public struct MifareClassicSectorKeys: Sendable, Hashable {
    public var sector: Int
    public var keyA: String?
    public var keyB: String?
    /// The access bits, read with the key A found (nil without one).
    public var access: MifareClassicAccessBits?
}

extension MifareClassicCard {
    /// Reads every sector the candidates open: one authentication per sector where one key may
    /// read the whole sector (the key that opened the previous sector is tried first), a second
    /// only where the access bits give some blocks to the other key.
    /// - Parameters:
    ///   - keys: the keys to try, as key A and key B, in order.
    ///   - uid: the card's UID, carried into the dump.
    ///   - progress: called with each sector number before it is read.
    public func dump(keys: [MifareClassicKeyCandidate], uid: [UInt8]? = nil, progress: ((Int) -> Void)? = nil) throws -> MifareClassicDump {
        var out: [MifareClassicSectorDump] = []
        var order = keys
        var reads = 0
        let startAuths = authentications
        for sector in layout.sectors {
            progress?(sector)
            let first = layout.firstBlock(ofSector: sector), trailer = layout.trailerBlock(ofSector: sector)
            var entry = MifareClassicSectorDump(sector: sector, firstBlock: first, blocks: Array(repeating: nil, count: trailer - first + 1), notes: [])
            guard let opened = try open(sector: sector, with: order) else {
                entry.notes.append("no key given opens it (\(keys.count) tried as key A and B)")
                out.append(entry)
                continue
            }
            if let i = order.firstIndex(of: opened.key), i > 0 { order.insert(order.remove(at: i), at: 0) }
            entry.keyType = opened.keyType
            entry.keyLabel = opened.key.label
            func readBlock(_ block: Int) throws -> [UInt8]? {
                reads += 1
                do { return try read(block: block) } catch let e as TagError where e.kind == .readFailed { return nil }
            }
            if let t = try readBlock(trailer) {
                entry.blocks[trailer - first] = t
                entry.access = MifareClassicAccessBits(bytes: Array(t[6..<9]))
                if entry.access == nil { entry.notes.append("access bits \(Array(t[6..<9]).hexString) are invalid: the chip blocks this sector") }
            } else {
                entry.notes.append("the trailer is not readable with key \(opened.keyType)")
            }
            for block in first..<trailer {
                // The access bits say which key reads the block: authenticate again only when
                // the current key may not (or a refusal dropped the authentication).
                let group = layout.accessGroup(ofBlock: block)
                let types = entry.access.map { a in MifareClassicKeyType.allCases.filter { a.allows(.read, group: group, with: $0) } } ?? [.a, .b]
                if types.isEmpty {
                    entry.notes.append("block \(block) is readable by no key (\(MifareClassicAccessBits.words(data: entry.access!.conditions[group])))")
                    continue
                }
                if current == nil || current!.sector != sector || !types.contains(current!.keyType) {
                    guard try open(sector: sector, with: order, as: types) != nil else {
                        entry.notes.append("block \(block) needs key \(types.map(\.description).joined(separator: " or ")), which no key given opens")
                        continue
                    }
                }
                entry.blocks[block - first] = try readBlock(block)
                if entry.blocks[block - first] == nil { entry.notes.append("block \(block) refused a read") }
            }
            out.append(entry)
        }
        return MifareClassicDump(layout: layout, uid: uid, sectors: out, authentications: authentications - startAuths, reads: reads)
    }

    /// The dictionary attempt: for each sector, the first candidate that opens it as key A and
    /// the first as key B, and (with key A) the access bits.
    /// - Parameters:
    ///   - keys: the keys to try.
    ///   - progress: called with each sector number before it is tried.
    public func findKeys(_ keys: [MifareClassicKeyCandidate], progress: ((Int) -> Void)? = nil) throws -> [MifareClassicSectorKeys] {
        var out: [MifareClassicSectorKeys] = []
        for sector in layout.sectors {
            progress?(sector)
            var entry = MifareClassicSectorKeys(sector: sector)
            if let a = try open(sector: sector, with: keys, as: [.a]) {
                entry.keyA = a.key.label
                if let t = try? read(block: layout.trailerBlock(ofSector: sector)) { entry.access = MifareClassicAccessBits(bytes: Array(t[6..<9])) }
            }
            forgetAuthentication()
            if let b = try open(sector: sector, with: keys, as: [.b]) { entry.keyB = b.key.label }
            forgetAuthentication()
            out.append(entry)
        }
        return out
    }

    /// Writes one block, with the checks a careless write would skip: block 0 is refused (the
    /// manufacturer block), a trailer needs `trailer` and valid access bits, and a trailer that
    /// leaves no key able to write it again needs `confirmLockout` equal to its sector.
    /// Authenticates with the first candidate the current access bits allow to write.
    /// - Parameters:
    ///   - block: the block number.
    ///   - data: its 16 new bytes.
    ///   - keys: the keys to try.
    ///   - trailer: the caller means to write a sector trailer.
    ///   - confirmLockout: the sector's number, confirming access bits that lock it for good.
    public func writeChecked(block: Int, data: [UInt8], keys: [MifareClassicKeyCandidate], trailer: Bool = false, confirmLockout: Int? = nil) throws {
        guard data.count == 16 else { throw TagError(.writeFailed, "a block is 16 bytes; \(data.count) were given; nothing was written") }
        guard (0..<layout.blockCount).contains(block) else {
            throw TagError(.beyondReach, "block \(block) does not exist on a \(layout) (blocks 0-\(layout.blockCount - 1)); nothing was written")
        }
        guard block != 0 else { throw TagError(.unsafe, "block 0 holds the UID and manufacturer data (read-only on genuine cards); nothing was written") }
        let sector = layout.sector(ofBlock: block)
        if layout.isTrailer(block) {
            try checkTrailer(data, sector: sector, trailer: trailer, confirmLockout: confirmLockout)
        } else if trailer {
            throw TagError(.unsafe, "block \(block) is a data block, not sector \(sector)'s trailer (block \(layout.trailerBlock(ofSector: sector))); nothing was written")
        }
        guard try open(sector: sector, with: keys) != nil else {
            throw TagError(.authenticationFailed, "sector \(sector): no key given opens it (\(keys.count) tried as key A and B); nothing was written")
        }
        // Read the access bits to pick the key that may write; switch to key B where needed.
        if let t = try? read(block: layout.trailerBlock(ofSector: sector)), let access = MifareClassicAccessBits(bytes: Array(t[6..<9])) {
            let group = layout.accessGroup(ofBlock: block)
            let may: (MifareClassicKeyType) -> Bool = { type in
                group == 3 ? { let r = access.trailer; return [r.writeKeyA, r.writeAccessBits, r.writeKeyB].contains { $0.allows(type) } && !(type == .b && access.keyBReadable) }()
                    : access.allows(.write, group: group, with: type)
            }
            let types = MifareClassicKeyType.allCases.filter(may)
            guard !types.isEmpty else {
                throw TagError(.readOnly, "block \(block): the access bits \(access) let no key write it (\(group == 3 ? MifareClassicAccessBits.words(trailer: access.conditions[3]) : MifareClassicAccessBits.words(data: access.conditions[group]))); nothing was written")
            }
            if let current, !types.contains(current.keyType), try open(sector: sector, with: keys, as: types) == nil {
                throw TagError(.authenticationFailed, "block \(block) is written with key \(types.map(\.description).joined(separator: " or ")), and no key given opens sector \(sector) so; nothing was written")
            }
        } else if current == nil, try open(sector: sector, with: keys) == nil {
            throw TagError(.authenticationFailed, "sector \(sector) no longer opens; nothing was written")
        }
        try write(block: block, data: data)
    }

    /// A new trailer's checks: valid access bits, and no lock-out unless confirmed.
    func checkTrailer(_ data: [UInt8], sector: Int, trailer: Bool, confirmLockout: Int?) throws {
        let block = layout.trailerBlock(ofSector: sector)
        guard trailer else {
            throw TagError(.unsafe, "block \(block) is sector \(sector)'s trailer (keys and access bits; a wrong one bricks the sector for good): pass --trailer to write it; nothing was written")
        }
        guard let access = MifareClassicAccessBits(bytes: Array(data[6..<9])) else {
            let fixed = MifareClassicAccessBits(conditions: Self.bestGuess(data))
            throw TagError(.unsafe, "the access bits \(Array(data[6..<9]).hexString) are invalid (the inverted copy does not match; the chip would block sector \(sector) for good; did you mean \(fixed)?); nothing was written")
        }
        if access.locksOutTrailer && confirmLockout != sector {
            throw TagError(.unsafe, "the access bits \(access) leave no key able to write sector \(sector)'s trailer again (\(MifareClassicAccessBits.words(trailer: access.conditions[3]))): pass --confirm-lockout \(sector) to do it anyway; nothing was written")
        }
        if access.keyBReadable && access.conditions[0..<3].contains(where: { MifareClassicAccessBits.dataRights($0).read == .keyB }) && confirmLockout != sector {
            throw TagError(.unsafe, "the access bits \(access) give data blocks to key B only, but make key B readable, which disables it: those blocks could never be read; pass --confirm-lockout \(sector) to do it anyway; nothing was written")
        }
    }

    /// The plain bits (C1 from byte 7, C2 and C3 from byte 8) as conditions: a suggestion for
    /// access bits whose inverted copy is wrong.
    static func bestGuess(_ data: [UInt8]) -> [UInt8] {
        (0..<4).map { g in (data[7] >> (4 + g) & 1) << 2 | (data[8] >> g & 1) << 1 | (data[8] >> (4 + g) & 1) }
    }
}

extension MifareClassicCard {
    /// After a write of sector trailer `block` with `data`: whether the card shows it took (a
    /// write's `90 00` alone shows nothing): the sector opens with the new key A (the session is
    /// dropped first; key A can always authenticate), the trailer then reads back with the access
    /// bits written, and key B is as written: read back where those bits make it readable, else
    /// opening the sector too. Nothing is written. The reviews of issue 49: a middle's `90 00`
    /// for a trailer write never passed on read as written, with the old access bits kept, and
    /// with key B alone changed. Crypto1 runs in the reader: what the reader reports is shown,
    /// not proven, against a middle between the tool and the reader.
    /// - Returns: how it was shown, in words.
    /// - Throws: `TagError` `.writeFailed` naming what differs: "not confirmed", never "did not
    ///   take" (a refused authentication or another read is only an answer too: the trailer holds
    ///   the old bytes or the new).
    public func confirmTrailer(block: Int, data: [UInt8]) throws -> String {
        let sector = layout.sector(ofBlock: block)
        guard data.count == 16, let newA = MifareClassicKey(Array(data[0..<6])) else {
            throw TagError(.writeFailed, "a trailer is 16 bytes; \(data.count) were given")
        }
        forgetAuthentication()
        guard try authenticate(sector: sector, keyType: .a, key: MifareClassicKeyCandidate(newA, label: "the new key A")) else {
            throw TagError(.writeFailed, "sector \(sector) does not open with the new key A after the write: the trailer write is not confirmed; it holds the old bytes or the new")
        }
        let back = try read(block: block)
        guard back.count == 16, back[6..<10] == data[6..<10] else {
            throw TagError(.writeFailed, "block \(block) (a sector trailer) reads back with access bits \(Array(back.prefix(10).dropFirst(6)).hexString), not as written: the trailer write is not confirmed; it holds the old bytes or the new")
        }
        let keyBReadable = MifareClassicAccessBits(bytes: Array(data[6..<9]))?.keyBReadable == true
        if keyBReadable, back[10..<16] != data[10..<16] {
            throw TagError(.writeFailed, "block \(block) (a sector trailer) reads back with another key B than written: the trailer write is not confirmed; it holds the old bytes or the new")
        }
        if !keyBReadable, let newB = MifareClassicKey(Array(data[10..<16])) {
            forgetAuthentication()
            guard try authenticate(sector: sector, keyType: .b, key: MifareClassicKeyCandidate(newB, label: "the new key B")) else {
                throw TagError(.writeFailed, "sector \(sector) does not open with the new key B after the write: the trailer write is not confirmed; it holds the old bytes or the new")
            }
        }
        return "the new key A opens sector \(sector) and the access bits read back as written, key B too (as the reader reports them)"
    }
}
