// What locks a Type 5 tag: the CC's write access and each block's lock.

/// A Type 5 tag's lock state: the CC's write access and each block's lock (GET MULTIPLE BLOCK
/// SECURITY STATUS, or READ SINGLE BLOCK with the option flag where the chip lacks it).
public struct Type5LockState: TagLockState {
    public var ccWriteAccess: UInt8
    /// Blocks of the T5T area (CC included).
    public var areaBlocks: Range<Int>
    /// The locked blocks among them; nil where the path cannot ask (storage pseudo-APDUs).
    public var lockedBlocks: [Int]?

    public var isFullyLocked: Bool { ccWriteAccess == 0x03 && lockedBlocks?.count == areaBlocks.count }
    public var isPartlyLocked: Bool { !isFullyLocked && (ccWriteAccess != 0 || !(lockedBlocks ?? []).isEmpty) }
    /// The locked blocks as ranges, for people.
    public var lockedRanges: [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        for b in lockedBlocks ?? [] {
            if let last = out.last, last.upperBound + 1 == b { out[out.count - 1] = last.lowerBound...b } else { out.append(b...b) }
        }
        return out
    }
}
