// How the MIFARE Classic commands show blocks, access bits and sectors, as JSON and as dump
// lines.
import APDUCommandLine
import ISO7816
import NFCTags

/// How the Classic commands show blocks, access bits and sectors: the same facts as JSON and as
/// lines laid out as other tools' dumps (block number, 16 hex bytes, ASCII, what it is).
enum ClassicRender {
    static func blockKind(_ layout: MifareClassicLayout, _ block: Int, _ bytes: [UInt8]?) -> String {
        if block == 0 { return "manufacturer" }
        if layout.isTrailer(block) { return "trailer" }
        if let bytes, MifareClassicValueBlock(bytes: bytes) != nil { return "value" }
        return "data"
    }

    static func accessJSON(_ access: MifareClassicAccessBits?, layout: MifareClassicLayout, sector: Int) -> JSON {
        guard let access else { return .null }
        let groups = layout.blockCount(inSector: sector) == 4 ? ["block 0", "block 1", "block 2"] : ["blocks 0-4", "blocks 5-9", "blocks 10-14"]
        return .object([("bits", .hex(access.bytes)),
                        ("data", .array((0..<3).map { g in .object([("blocks", .string(groups[g])), ("condition", .int(Int(access.conditions[g]))),
                                                                     ("access", .string(MifareClassicAccessBits.words(data: access.conditions[g])))]) })),
                        ("trailer", .object([("condition", .int(Int(access.conditions[3]))), ("access", .string(MifareClassicAccessBits.words(trailer: access.conditions[3])))])),
                        ("keyBReadable", .bool(access.keyBReadable))])
    }

    static func blockJSON(_ layout: MifareClassicLayout, _ block: Int, _ bytes: [UInt8]?) -> JSON {
        var members: [(String, JSON)] = [("block", .int(block)), ("bytes", bytes.map(JSON.hex) ?? .null), ("kind", .string(blockKind(layout, block, bytes)))]
        if let bytes, let value = MifareClassicValueBlock(bytes: bytes), !layout.isTrailer(block), block != 0 {
            members += [("value", .int(Int(value.value))), ("address", .int(Int(value.address)))]
        }
        return .object(members)
    }

    /// `  12  00 11 … FF  |................|  note`
    static func blockLine(_ layout: MifareClassicLayout, _ block: Int, _ bytes: [UInt8]?, access: MifareClassicAccessBits?) -> String {
        let number = String(repeating: " ", count: max(0, 4 - String(block).count)) + String(block)
        guard let bytes else { return "\(number)  " + String(repeating: "-- ", count: 16).dropLast() + "  (not read)" }
        var note = ""
        let group = layout.accessGroup(ofBlock: block)
        if block == 0 {
            note = "manufacturer"
        } else if layout.isTrailer(block) {
            note = access.map { "trailer: \(MifareClassicAccessBits.words(trailer: $0.conditions[3]))" } ?? "trailer: access bits invalid"
        } else if let value = MifareClassicValueBlock(bytes: bytes) {
            note = "value \(value.value) (address \(value.address))"
        } else if let access {
            note = MifareClassicAccessBits.words(data: access.conditions[group])
        }
        return "\(number)  \(Hex.encode(bytes, separator: " "))  |\(Terminal.ascii(bytes))|  \(note)"
    }
}
