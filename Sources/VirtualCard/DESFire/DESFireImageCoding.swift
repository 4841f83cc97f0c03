import FoundationEssentials
import ISO7816

// The card image on disk: JSON with bytes as hex strings, so that `apdu emulate --desfire
// --memory card.json` can save every change and load it again. It holds the card's keys, as a
// MIFARE Classic dump holds its sector keys; nothing here prints them.

extension DESFireCard {
    /// Why a card image could not be read.
    public struct ImageError: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable { case notJSON, badValue }
        public var kind: Kind
        public var message: String
        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }
        public var description: String { message }
    }
}

extension DESFireCard.Image {
    static let format = "swift-apdu DESFire image 1"

    /// The image as JSON (UTF-8), keys sorted, bytes in hex.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(ImageJSON(self)) else { return [] }
        return [UInt8](data)
    }

    /// Reads an image written by ``encoded()``; every value is checked (key lengths, file
    /// numbers, record sizes, value limits), so a hand-edited file cannot make a card that traps.
    public init(decoding bytes: [UInt8]) throws(DESFireCard.ImageError) {
        let wire: ImageJSON
        do { wire = try JSONDecoder().decode(ImageJSON.self, from: Data(bytes)) } catch {
            throw DESFireCard.ImageError(.notJSON, "not a DESFire card image (JSON): \(error)")
        }
        self = try wire.image()
    }
}

private func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

private func bytes(_ text: String, _ what: String) throws(DESFireCard.ImageError) -> [UInt8] {
    do { return try Hex.decode(text, allowEmpty: true) } catch { throw DESFireCard.ImageError(.badValue, "\(what): \(error)") }
}

private func bad(_ message: String) -> DESFireCard.ImageError { DESFireCard.ImageError(.badValue, message) }

private struct KeyJSON: Codable {
    var type: String, key: String, version: UInt8

    init(_ k: DESFireCard.Key) {
        type = k.type.rawValue
        key = hex(k.bytes)
        version = k.version
    }

    func key(_ what: String) throws(DESFireCard.ImageError) -> DESFireCard.Key {
        guard let t = DESFireCard.KeyType(rawValue: type) else { throw bad("\(what): unknown key type '\(type)'") }
        let b = try bytes(key, what)
        guard b.count == t.keyLength else { throw bad("\(what): a \(t) key is \(t.keyLength) bytes, not \(b.count)") }
        return DESFireCard.Key(t, bytes: b, version: version)
    }
}

private struct FileJSON: Codable {
    var number: UInt8
    var isoFileID: String?
    var commMode: UInt8
    var access: String
    var type: String
    var data: String?
    var value: Int32?, lowerLimit: Int32?, upperLimit: Int32?, limitedCreditValue: Int32?
    var limitedCreditEnabled: Bool?, freeGetValue: Bool?
    var recordSize: Int?, maxRecords: Int?, records: [String]?

    init(_ f: DESFireCard.File) {
        number = f.number
        isoFileID = f.isoFileID.map { hex([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }
        commMode = f.commMode.rawValue
        access = f.access.description
        switch f.content {
        case .standard(let d): type = "standard"; data = hex(d)
        case .backup(let d): type = "backup"; data = hex(d)
        case .value(let v):
            type = "value"
            value = v.value; lowerLimit = v.lowerLimit; upperLimit = v.upperLimit; limitedCreditValue = v.limitedCreditValue
            limitedCreditEnabled = v.limitedCreditEnabled; freeGetValue = v.freeGetValue
        case .linearRecord(let r), .cyclicRecord(let r):
            type = { if case .cyclicRecord = f.content { return "cyclicRecord" }; return "linearRecord" }()
            recordSize = r.recordSize; maxRecords = r.maxRecords; records = r.records.map(hex)
        }
    }

    func file(_ what: String) throws(DESFireCard.ImageError) -> DESFireCard.File {
        guard number <= 0x1F else { throw bad("\(what): file numbers are 00-1F") }
        guard let mode = DESFireCard.CommMode(rawValue: commMode) else { throw bad("\(what): comm mode is 0, 1 or 3") }
        let a = try bytes(access, "\(what) access")
        guard a.count == 2 else { throw bad("\(what): access rights are 2 bytes") }
        let rights = DESFireCard.AccessRights(UInt16(a[0]) << 8 | UInt16(a[1]))
        var fid: UInt16?
        if let isoFileID {
            let f = try bytes(isoFileID, "\(what) ISO file ID")
            guard f.count == 2 else { throw bad("\(what): an ISO file ID is 2 bytes") }
            fid = UInt16(f[0]) << 8 | UInt16(f[1])
        }
        let content: DESFireCard.FileContent
        switch type {
        case "standard", "backup":
            let d = try bytes(data ?? "", "\(what) data")
            guard !d.isEmpty, d.count <= 0xFF_FFFF else { throw bad("\(what): a data file holds 1 to 16777215 bytes") }
            content = type == "standard" ? .standard(d) : .backup(d)
        case "value":
            guard let value, let lowerLimit, let upperLimit, lowerLimit <= upperLimit, value >= lowerLimit, value <= upperLimit else {
                throw bad("\(what): a value file needs value, lowerLimit ≤ value ≤ upperLimit")
            }
            content = .value(DESFireCard.ValueFile(value: value, lowerLimit: lowerLimit, upperLimit: upperLimit, limitedCreditValue: limitedCreditValue ?? 0,
                                                   limitedCreditEnabled: limitedCreditEnabled ?? false, freeGetValue: freeGetValue ?? false))
        case "linearRecord", "cyclicRecord":
            guard let recordSize, let maxRecords, (1...0xFF_FFFF).contains(recordSize), (1...0xFF_FFFF).contains(maxRecords) else {
                throw bad("\(what): a record file needs recordSize and maxRecords of 1 or more")
            }
            var list: [[UInt8]] = []
            for r in records ?? [] {
                let b = try bytes(r, "\(what) record")
                guard b.count == recordSize else { throw bad("\(what): every record is \(recordSize) bytes") }
                list.append(b)
            }
            guard list.count <= maxRecords else { throw bad("\(what): more records than maxRecords") }
            let r = DESFireCard.RecordFile(recordSize: recordSize, maxRecords: maxRecords, records: list)
            content = type == "cyclicRecord" ? .cyclicRecord(r) : .linearRecord(r)
        default:
            throw bad("\(what): unknown file type '\(type)'")
        }
        return DESFireCard.File(number: number, isoFileID: fid, commMode: mode, access: rights, content: content)
    }
}

private struct ApplicationJSON: Codable {
    var aid: String, keySettings: UInt8, keyType: String, keys: [KeyJSON]
    var isoFileIDs: Bool, isoFileID: String?, dfName: String?, files: [FileJSON]

    init(_ a: DESFireCard.Application) {
        aid = hex([UInt8(a.aid >> 16 & 0xFF), UInt8(a.aid >> 8 & 0xFF), UInt8(a.aid & 0xFF)])
        keySettings = a.keySettings
        keyType = a.keyType.rawValue
        keys = a.keys.map(KeyJSON.init)
        isoFileIDs = a.isoFileIDs
        isoFileID = a.isoFileID.map { hex([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }
        dfName = a.dfName.map(hex)
        files = a.files.map(FileJSON.init)
    }

    func application() throws(DESFireCard.ImageError) -> DESFireCard.Application {
        let id = try bytes(aid, "application AID")
        guard id.count == 3, id != [0, 0, 0] else { throw bad("application AID '\(aid)': 3 bytes, not 000000") }
        let what = "application \(aid)"
        guard let type = DESFireCard.KeyType(rawValue: keyType) else { throw bad("\(what): unknown key type '\(keyType)'") }
        guard (1...14).contains(keys.count) else { throw bad("\(what): 1 to 14 keys") }
        var app = DESFireCard.Application(aid: UInt32(id[0]) << 16 | UInt32(id[1]) << 8 | UInt32(id[2]), keySettings: keySettings, keyType: type,
                                          keyCount: keys.count, isoFileIDs: isoFileIDs)
        var list: [DESFireCard.Key] = []
        for (i, k) in keys.enumerated() {
            let key = try k.key("\(what) key \(i)")
            guard key.type == type else { throw bad("\(what) key \(i): every key of an application is \(type)") }
            list.append(key)
        }
        app.keys = list
        if let isoFileID {
            let f = try bytes(isoFileID, "\(what) ISO file ID")
            guard f.count == 2 else { throw bad("\(what): an ISO file ID is 2 bytes") }
            app.isoFileID = UInt16(f[0]) << 8 | UInt16(f[1])
            app.isoFileIDs = true
        }
        if let dfName {
            let n = try bytes(dfName, "\(what) DF name")
            guard (1...16).contains(n.count) else { throw bad("\(what): a DF name is 1 to 16 bytes") }
            app.dfName = n
        }
        for f in files {
            let file = try f.file("\(what) file \(Hex.encode([f.number]))")
            guard app.file(file.number) == nil else { throw bad("\(what): file \(Hex.encode([file.number])) twice") }
            app.files.append(file)
        }
        return app
    }
}

private struct ImageJSON: Codable {
    var format: String
    var generation: String, storage: Int, uid: String, batch: String, productionWeek: UInt8, productionYear: UInt8, frameSize: Int
    var masterKey: KeyJSON, masterKeySettings: UInt8
    var formatDisabled: Bool, randomUID: Bool
    var applications: [ApplicationJSON]

    init(_ i: DESFireCard.Image) {
        format = DESFireCard.Image.format
        generation = i.chip.generation.rawValue
        storage = i.chip.storage.rawValue
        uid = hex(i.chip.uid)
        batch = hex(i.chip.batch)
        productionWeek = i.chip.productionWeek
        productionYear = i.chip.productionYear
        frameSize = i.chip.frameSize
        masterKey = KeyJSON(i.masterKey)
        masterKeySettings = i.masterKeySettings
        formatDisabled = i.formatDisabled
        randomUID = i.randomUID
        applications = i.applications.map(ApplicationJSON.init)
    }

    func image() throws(DESFireCard.ImageError) -> DESFireCard.Image {
        guard format == DESFireCard.Image.format else { throw bad("format '\(format)' is not '\(DESFireCard.Image.format)'") }
        guard let g = DESFireCard.Generation(rawValue: generation) else { throw bad("generation '\(generation)': ev1, ev2 or ev3") }
        guard let st = DESFireCard.Storage(rawValue: storage) else { throw bad("storage \(storage): 2048, 4096 or 8192") }
        let u = try bytes(uid, "uid"), b = try bytes(batch, "batch")
        guard u.count == 7 else { throw bad("uid: 7 bytes") }
        guard b.count == 5 else { throw bad("batch: 5 bytes") }
        guard (32...256).contains(frameSize) else { throw bad("frameSize: 32 to 256") }
        var image = DESFireCard.Image(chip: DESFireCard.Chip(generation: g, storage: st, uid: u, batch: b, productionWeek: productionWeek,
                                                             productionYear: productionYear, frameSize: frameSize),
                                      masterKey: try masterKey.key("master key"), masterKeySettings: masterKeySettings,
                                      formatDisabled: formatDisabled, randomUID: randomUID)
        guard applications.count <= 28 else { throw bad("at most 28 applications") }
        for a in applications {
            let app = try a.application()
            guard image.application(app.aid) == nil else { throw bad("application \(a.aid) twice") }
            image.applications.append(app)
        }
        return image
    }
}
