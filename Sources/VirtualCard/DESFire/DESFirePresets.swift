extension DESFireCard.Image {
    public typealias Key = DESFireCard.Key
    public typealias Chip = DESFireCard.Chip

    /// A card as shipped: PICC master key DES zeros (version 0), settings 0F (everything
    /// changeable, listing and creation need the master key), no applications.
    public static func factory(_ chip: Chip = Chip()) -> DESFireCard.Image { DESFireCard.Image(chip: chip) }

    /// The keys of ``transit(_:)``, so that tests can also act as the operator: the PICC master
    /// key (AES, version 1) and the three application keys (AES, version 1). Test values only.
    public static let transitMasterKey = Key(.aes, bytes: Array("transit PICC key".utf8), version: 1)
    public static let transitApplicationKeys = (0..<3).map { Key(.aes, bytes: Array("transit app key\($0)".utf8), version: 1) }

    /// Clipper's AID (Metrodroid's table of transit applications); the file layout below is this
    /// emulator's own, not Clipper's.
    public static let transitAID: UInt32 = 0x9011F2
    /// A second application whose settings keep its file list private.
    public static let transitPrivateAID: UInt32 = 0x9011F3

    /// A transit-like card, readable as far as a keyless reader gets on a real one: the PICC and
    /// the application list their contents freely (key settings bit 1), and the application's
    /// files are plain with free read access, except file 04 (enciphered, key 1). Nothing can
    /// be written, created or changed without the keys above.
    ///
    /// Application ``transitAID`` (AES, 3 keys, settings 0B):
    /// - 01 standard, 32 bytes: card information (ASCII "TRANSIT CARD 0001" and zeros);
    /// - 02 value: balance 2500, limits 0…100000, GetValue free, debit with key 2, credit with key 1;
    /// - 03 cyclic record, 16-byte records, max 6 (5 kept): three trips;
    /// - 04 standard, 16 bytes, enciphered, read and write with key 1: operator data;
    /// - 05 backup, 16 bytes: the last top-up.
    ///
    /// Application ``transitPrivateAID`` (AES, 1 key, settings 09): one file, not listable.
    public static func transit(_ chip: Chip = Chip()) -> DESFireCard.Image {
        typealias F = DESFireCard.File
        typealias A = DESFireCard.AccessRights
        let readFree = A(read: 0xE, write: 2, readWrite: 1, change: 0)
        var info = Array("TRANSIT CARD 0001".utf8)
        info += [UInt8](repeating: 0, count: 32 - info.count)
        let trips: [[UInt8]] = [
            [0x01, 0x00, 0x10, 0x27, 0x14, 0x05, 0x1D, 0x08, 0x00, 0x00, 0x00, 0x96, 0x00, 0x00, 0x00, 0x00],
            [0x01, 0x00, 0x11, 0x27, 0x14, 0x05, 0x1D, 0x11, 0x00, 0x00, 0x00, 0x96, 0x00, 0x00, 0x00, 0x00],
            [0x02, 0x00, 0x12, 0x27, 0x14, 0x05, 0x1E, 0x09, 0x00, 0x00, 0x01, 0x2C, 0x00, 0x00, 0x00, 0x00],
        ]
        var app = DESFireCard.Application(aid: transitAID, keySettings: 0x0B, keyType: .aes, keyCount: 3, files: [
            F(number: 0x01, access: readFree, content: .standard(info)),
            // Debit needs Read, Write or Read&Write, so free read would be free debit: the
            // balance is free to see through the free GetValue option instead.
            F(number: 0x02, access: A(read: 2, write: 2, readWrite: 1, change: 0),
              content: .value(DESFireCard.ValueFile(value: 2500, lowerLimit: 0, upperLimit: 100_000, freeGetValue: true))),
            F(number: 0x03, access: readFree, content: .cyclicRecord(DESFireCard.RecordFile(recordSize: 16, maxRecords: 6, records: trips))),
            F(number: 0x04, commMode: .full, access: A(read: 1, write: 1, readWrite: 1, change: 0),
              content: .standard(Array("operator secret!".utf8))),
            F(number: 0x05, access: readFree, content: .backup([0x00, 0x00, 0x13, 0x88] + [UInt8](repeating: 0, count: 12))),
        ])
        app.keys = transitApplicationKeys
        var hidden = DESFireCard.Application(aid: transitPrivateAID, keySettings: 0x09, keyType: .aes, keyCount: 1, files: [
            F(number: 0x01, access: A(read: 0, write: 0, readWrite: 0, change: 0), content: .standard([UInt8](repeating: 0x5A, count: 16))),
        ])
        hidden.keys = [transitApplicationKeys[0]]
        return DESFireCard.Image(chip: chip, masterKey: transitMasterKey, masterKeySettings: 0x0B, applications: [app, hidden])
    }

    /// The NDEF application's AID, ISO file identifier and DF name for mapping 2.0 (NXP AN11004;
    /// libfreefare's mifare-desfire-create-ndef).
    public static let ndefAID: UInt32 = 0x000001
    public static let ndefDFName: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]

    /// A factory card formatted as an NFC Forum Type 4 tag the AN11004 way: application 000001
    /// (one DES key, zeros; ISO FID E110; DF name D2760000850101) with the capability container
    /// (file 01, ISO E103, 15 bytes, read free) and the NDEF file (file 02, ISO E104, read and
    /// write free; 2 KB on a 2K card, 4 KB on 4K, 7.5 KB on 8K) holding `message`.
    public static func ndef(_ chip: Chip = Chip(), message: [UInt8] = []) -> DESFireCard.Image {
        let size = chip.storage == .kb2 ? 0x0800 : chip.storage == .kb4 ? 0x1000 : 0x1E00
        // CCLEN 000F, mapping 2.0, MLe 003B, MLc 0034 (the chip's 59-byte answers and 52-byte
        // UPDATE BINARY in one frame), NDEF file control TLV: E104, size, read and write free.
        let cc: [UInt8] = [0x00, 0x0F, 0x20, 0x00, 0x3B, 0x00, 0x34, 0x04, 0x06, 0xE1, 0x04, UInt8(size >> 8), UInt8(size & 0xFF), 0x00, 0x00]
        let n = min(message.count, size - 2)
        var file = [UInt8(n >> 8), UInt8(n & 0xFF)] + message.prefix(n)
        file += [UInt8](repeating: 0, count: size - file.count)
        let app = DESFireCard.Application(aid: ndefAID, keySettings: 0x0F, keyType: .tdes, keyCount: 1, isoFileIDs: true, isoFileID: 0xE110,
                                          dfName: ndefDFName, files: [
            DESFireCard.File(number: 0x01, isoFileID: 0xE103, access: DESFireCard.AccessRights(0xE000), content: .standard(cc)),
            DESFireCard.File(number: 0x02, isoFileID: 0xE104, access: DESFireCard.AccessRights(0xEEE0), content: .standard(file)),
        ])
        return DESFireCard.Image(chip: chip, applications: [app])
    }
}
