// How the ndef commands connect to a tag or card and describe it.
import APDUCommandLine
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import PCSC
import TagReader

extension ReaderOptions {
    /// Chooses the reader, connects and detects the tag (`TagTransaction.run`) and runs `body`.
    func withTag<T>(trace: TraceOptions, tolerant: Bool = false, access: TagAccessOptions? = nil, _ body: (TagTransaction) throws -> T) throws -> T {
        try TagTransaction.run(reader: requestedReader, wait: waitDuration, observer: trace.observer, tolerant: tolerant,
                               access: try access?.access() ?? TagAccess(), body)
    }
}

/// What the ndef commands print about a tag, taken inside its transaction (where finding the
/// chip may still cost a READ).
struct TagView {
    var reader: String
    var json: JSON
    /// "Type 4 tag, mapping 2.0" / "Type 2 tag (NTAG213), mapping 1.0, UID …" / "MIFARE Classic 1K (MAD1, 15 NDEF sectors) …".
    var description: String
    var status: NDEFStatus
    var capacity: Int

    init(_ transaction: TagTransaction) {
        let tag = transaction.tag
        reader = transaction.reader
        status = tag.status
        capacity = tag.capacity
        var m: [(String, JSON)] = [("kind", .string(tag.kind)), ("uid", tag.uid.map { .hex($0) } ?? .null), ("version", .string(tag.mappingVersion))]
        if let t2 = tag as? Type2Tag {
            m.append(("chip", .string(t2.chip.name)))
            m.append(("chipEvidence", .string(t2.chip.evidence)))
            description = "Type 2 tag (\(t2.chip.name)), mapping \(t2.mappingVersion)" + (t2.uid.map { ", UID \($0.hexString)" } ?? "")
            if let commands = transaction.commands { m.append(("dialect", .string(commands.dialect.rawValue))) }
        } else if let t5 = tag as? Type5Tag {
            m.append(("chip", .string(t5.chipDescription)))
            m.append(("blockSize", .int(t5.blockSize)))
            m.append(("blockCount", t5.blockCount.map(JSON.int) ?? .null))
            description = "Type 5 tag (\(t5.chipDescription)), mapping \(t5.mappingVersion)" + (t5.uid.map { ", UID \($0.hexString)" } ?? "")
                + (t5.blockCount.map { ", \($0) blocks of \(t5.blockSize) bytes" } ?? ", blocks of \(t5.blockSize) bytes")
        } else if let t1 = tag as? Type1Tag {
            m.append(("chip", .string(t1.chip?.name ?? "unknown T1T")))
            m.append(("hr", .hex(t1.header.bytes)))
            m.append(("readerForm", .string(t1.link.form.rawValue)))
            description = "Type 1 tag (\(t1.chip?.name ?? "unknown T1T, HR \(t1.header.bytes.hexString)")), mapping \(t1.mappingVersion)" + (t1.uid.map { ", UID \($0.hexString)" } ?? "")
                + ", \(t1.memorySize) bytes of \(t1.header.staticMemory ? "static" : "dynamic") memory"
        } else if let t3 = tag as? Type3Tag {
            m.append(("chip", .string(t3.polling.productName)))
            m.append(("pmm", .hex(t3.polling.pmm)))
            if let a = t3.attribute { m.append(("nbr", .int(a.nbr))); m.append(("nbw", .int(a.nbw))); m.append(("nmaxb", .int(a.nmaxb))) }
            description = "Type 3 tag (\(t3.polling.productName)), mapping \(t3.mappingVersion), IDm \(t3.polling.idm.hexString)"
        } else if let classic = tag as? MifareClassicNDEFTag {
            m.append(("chip", .string(classic.layout.description)))
            m.append(("madVersion", .int(classic.directory.version)))
            description = "\(classic.layout) (MAD\(classic.directory.version), \(classic.sectors.count) NDEF sectors), mapping \(classic.mappingVersion)" + (classic.uid.map { ", UID \($0.hexString)" } ?? "")
        } else if let plus = tag as? MifarePlusNDEFTag {
            m.append(("chip", .string(plus.familyDescription)))
            m.append(("madVersion", .int(plus.directory.version)))
            description = "\(plus.familyDescription), mapping \(plus.mappingVersion)"
        } else {
            description = "Type 4 tag, mapping \(tag.mappingVersion)"
        }
        if !(tag is Type2Tag), !(tag is Type4Tag), let commands = transaction.commands { m.append(("dialect", .string(commands.dialect.rawValue))) }
        json = .object(m)
    }
}
