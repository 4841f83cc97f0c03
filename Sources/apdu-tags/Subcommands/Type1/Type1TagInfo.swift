// `apdu tag-info` on a Type 1 tag: the chip HR0/HR1 prove, the UID from block 0, the memory
// model, the locks, and the reader's form.
import APDUCommandLine
import ISO7816
import NFCTags

extension APDUCommand.TagInfo {
    /// A Type 1 tag's identity, in JSON fields and lines.
    func type1(_ atr: [UInt8], _ commands: TagCommandChannel, reader: String) throws -> OperationResult {
        let id = try Type1Identity.read(commands.transport, atr: atr, readerName: reader, commands: commands)
        let locked = id.lockedBlocks.map { Hex.encode([UInt8($0)]) }
        var json: [(String, JSON)] = [
            ("kind", .string("type1")), ("chip", .string(id.chipName)), ("hr0", .hex([id.header.hr0])), ("hr1", .hex([id.header.hr1])),
            ("uid", .hex(id.uid)), ("memory", .string(id.header.staticMemory ? "static" : "dynamic")),
            ("ndefCapable", .bool(id.header.ndefCapable)), ("capabilityContainer", .hex(id.capabilityContainer)),
            ("locks", .object([("lock0", .hex([id.staticLockBytes[0]])), ("lock1", .hex([id.staticLockBytes[1]])),
                               ("dynamic", id.dynamicLockBytes.map { .hex($0) } ?? .null), ("lockedBlocks", .array(locked.map(JSON.string)))])),
            ("readerForm", .string(id.form.rawValue)),
        ]
        json.append(("notes", .array(id.notes.map(JSON.string))))
        var lines = [
            "Chip:      \(id.chipName) (Type 1), HR0 \(Hex.encode([id.header.hr0])) HR1 \(Hex.encode([id.header.hr1]))\(id.header.ndefCapable ? "" : ", not NDEF-capable")",
            "UID:       \(Hex.encode(id.uid, separator: " "))",
            "Memory:    \(id.memoryModel), CC \(Hex.encode(id.capabilityContainer, separator: " "))",
            "Locks:     LOCK0 \(Hex.encode([id.staticLockBytes[0]])) LOCK1 \(Hex.encode([id.staticLockBytes[1]]))"
                + (id.dynamicLockBytes.map { ", LOCK2-7 \(Hex.encode($0, separator: " "))" } ?? "")
                + "; locked blocks \(locked.isEmpty ? "none" : locked.joined(separator: " "))",
            "Form:      \(id.form)",
        ]
        for note in id.notes { lines.append("Note:      \(note)") }
        return OperationResult(json: json, lines: lines)
    }
}
