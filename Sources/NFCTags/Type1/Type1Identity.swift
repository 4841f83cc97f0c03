// Who a Type 1 tag is, from RID and block 0, without needing it NDEF-formatted: `apdu tag-info`.
import ISO7816

/// A Type 1 tag's identity: the header ROM, the chip it proves, the 7-byte UID, the memory model
/// and the locks, and the reader's form.
public struct Type1Identity: Sendable, Hashable {
    public var form: Type1ReaderForm
    public var header: Type1HeaderROM
    public var uid: [UInt8]
    /// LOCK0, LOCK1 (bytes 70-71).
    public var staticLockBytes: [UInt8]
    /// LOCK2-LOCK7 (7A-7F) on a Topaz 512, when the reader reaches block F.
    public var dynamicLockBytes: [UInt8]?
    /// The CC (bytes 08-0B).
    public var capabilityContainer: [UInt8]
    public var notes: [String]

    /// "Topaz 96", "Topaz 512", or "unknown T1T (HR 12 00)".
    public var chipName: String { header.chip?.name ?? "unknown T1T (HR \(header.bytes.hexString))" }
    public var memoryModel: String { header.staticMemory ? "static (120 bytes)" : "dynamic (\(header.chip.map { "\($0.memorySize) bytes" } ?? "size from the CC"))" }

    /// Blocks the static lock bits lock (0-F), and past 0F those the dynamic ones do.
    public var lockedBlocks: [Int] {
        var out = (0..<16).filter { staticLockBytes[$0 / 8] & (1 << ($0 % 8)) != 0 }
        for (i, byte) in (dynamicLockBytes ?? []).enumerated() {
            for bit in 0..<8 where byte & (1 << bit) != 0 { out.append(16 + i * 8 + bit) }
        }
        return out
    }

    /// RID, then RALL (or RSEG 0 on dynamic memory, which brings block F too).
    public static func read(_ transport: APDUTransport, atr: [UInt8], readerName: String, commands: TagCommandChannel?) throws -> Type1Identity {
        let link = try Type1Link.open(transport: transport, atr: atr, readerName: readerName, commands: commands)
        var notes: [String] = []
        let memory: [UInt8]
        if !link.header.staticMemory, link.form.carries(.readSegment(0)) {
            memory = Array(try link.send(.readSegment(0)).dropFirst())
        } else {
            memory = Array(try link.send(.rall).dropFirst(2))
            if !link.header.staticMemory { notes.append("\(link.readerName): \(link.form.refusal(.readSegment(0))): block F (the dynamic lock bytes) is out of reach") }
        }
        if Array(memory[0..<4]) != link.header.uid4 {
            notes.append("block 0 reads \(Array(memory[0..<4]).hexString), RID gave UID0-3 \(link.header.uid4.hexString)")
        }
        if !link.header.ndefCapable { notes.append("HR0 \(Hex.encode([link.header.hr0])): not NDEF-capable (T1TOP wants its high nibble 1)") }
        if link.header.chip == nil { notes.append("HR0 HR1 \(link.header.bytes.hexString) name no Broadcom Topaz: the memory layout is taken from T1TOP and the CC") }
        return Type1Identity(form: link.form, header: link.header, uid: Array(memory[0..<7]), staticLockBytes: Array(memory[0x70..<0x72]),
                             dynamicLockBytes: memory.count >= 0x80 && link.header.chip == .topaz512 ? Array(memory[0x7A..<0x80]) : nil,
                             capabilityContainer: Array(memory[8..<12]), notes: notes)
    }
}
