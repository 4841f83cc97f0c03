// The Type 1 memory map (T1TOP §2): the capability container in block 1, the areas every T1T
// reserves, and what locks a tag.
import ISO7816

/// The Type 1 capability container, bytes 08-0B: the NDEF magic number, the version, the tag
/// memory size and the read/write access (T1TOP §2.2).
public struct Type1CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    /// E1 on an NDEF tag. A write sets it to 00 first and back to E1 last: 00 with a valid CC
    /// otherwise is a tag whose message is invalid (a write was cut, or it was never formatted).
    public var magic: UInt8 { bytes[0] }
    public var version: UInt8 { bytes[1] }
    /// (TMS + 1) × 8: the tag's memory, blocks 0-E (120 bytes) on static tags.
    public var memorySize: Int { (Int(bytes[2]) + 1) * 8 }
    public var readAccess: UInt8 { bytes[3] >> 4 }
    public var writeAccess: UInt8 { bytes[3] & 0x0F }
    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }
    /// The message is valid (NMN E1).
    public var valid: Bool { magic == 0xE1 }

    static let invalidMessage = "no valid NDEF message: the NDEF magic number (byte 08) is 00: the tag is not formatted, or a write was cut (`apdu ndef-write --restore FILE` puts a backup back)"

    /// - Parameters:
    ///   - bytes: bytes 08-0B of the tag.
    ///   - tolerateInvalid: an NMN of 00 is accepted (to restore a cut write's tag).
    public init(bytes: [UInt8], tolerateInvalid: Bool = false) throws(TagError) {
        guard bytes.count == 4 else { throw TagError(.badCapabilityContainer, "the capability container must be 4 bytes") }
        self.bytes = bytes
        guard magic == 0xE1 || (tolerateInvalid && magic == 0x00) else {
            throw TagError(.notNDEF, magic == 0 ? Self.invalidMessage : "not NDEF-formatted: the NDEF magic number (byte 08) is \(Hex.encode([magic])), not E1 (CC \(bytes.hexString))")
        }
        guard version >> 4 == 1 else {
            throw TagError(.unsupportedVersion, "unsupported Type 1 mapping version \(versionString) (this tool reads 1.x)", mappingVersion: versionString)
        }
    }
}

/// What locks a Type 1 tag: the CC's write access, the static lock bytes LOCK0/LOCK1 (bytes
/// 70-71: one bit per block 0-E) and, on a dynamic tag, the dynamic lock bytes (one bit per
/// `bytesLockedPerBit` from byte 80).
public struct Type1LockState: TagLockState {
    public var ccWriteAccess: UInt8
    public var staticLockBytes: [UInt8]
    /// Absolute address and value of each dynamic lock byte (empty on a static tag).
    public var dynamicLockBytes: [(address: Int, value: UInt8)]
    /// Bits in the dynamic lock area (48 on a Topaz 512) and bytes each locks.
    public var dynamicBits: Int
    public var bytesLockedPerBit: Int

    public static func == (a: Self, b: Self) -> Bool {
        a.ccWriteAccess == b.ccWriteAccess && a.staticLockBytes == b.staticLockBytes && a.dynamicBits == b.dynamicBits
            && a.dynamicLockBytes.map(\.address) == b.dynamicLockBytes.map(\.address) && a.dynamicLockBytes.map(\.value) == b.dynamicLockBytes.map(\.value)
    }

    public func hash(into h: inout Hasher) {
        h.combine(ccWriteAccess)
        h.combine(staticLockBytes)
        h.combine(dynamicLockBytes.map(\.value))
    }

    /// Blocks 0-E that the static lock bits lock, and the blocks past 0F the dynamic bits lock.
    public var lockedBlocks: Set<Int> {
        var out = Set<Int>()
        for block in 0...14 where staticLockBytes[block / 8] & (1 << (block % 8)) != 0 { out.insert(block) }
        let blocksPerBit = max(1, bytesLockedPerBit / 8)
        for bit in 0..<dynamicBits {
            let byte = dynamicLockBytes.count > bit / 8 ? dynamicLockBytes[bit / 8].value : 0
            guard byte & (1 << (bit % 8)) != 0 else { continue }
            for b in 0..<blocksPerBit { out.insert(16 + bit * blocksPerBit + b) }
        }
        return out
    }

    func dynamicFullyLocked() -> Bool {
        (0..<dynamicBits).allSatisfy { bit in dynamicLockBytes.count > bit / 8 && dynamicLockBytes[bit / 8].value & (1 << (bit % 8)) != 0 }
    }

    public var isFullyLocked: Bool { ccWriteAccess == 0x0F && staticLockBytes == [0xFF, 0xFF] && dynamicFullyLocked() }
    /// Some lock set but not all: the factory's bits (blocks 0, D, E, F) do not count.
    public var isPartlyLocked: Bool {
        !isFullyLocked && (ccWriteAccess != 0 || staticLockBytes[0] & 0xFE != 0 || staticLockBytes[1] & 0x1F != 0 || dynamicLockBytes.contains { $0.value != 0 })
    }
}
