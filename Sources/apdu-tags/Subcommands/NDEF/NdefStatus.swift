// `apdu ndef-status`: whether a tag is readWrite, readOnly or notSupported, with its capacity,
// locks and message, and each family's details.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NDEF
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct NdefStatus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-status",
            abstract: "Say whether a tag is readWrite, readOnly or notSupported, its capacity, locks and current message.",
            discussion: "Type 2: the capacity as the CC declares it, as this reader can reach it and as the chip really has it; the lock state from the CC, the static and dynamic lock bits and the password configuration; and whether the message parses.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        struct Findings {
            var view: TagView
            var tag: any NDEFTag
            var inspection: TagInspection
        }

        func run() throws {
            try reportingFailures {
                let found: Findings
                var detected = false
                do {
                    found = try readerOptions.withTag(trace: traceOptions, tolerant: true, access: tagAccess) { t in
                        detected = true
                        return Findings(view: TagView(t), tag: t.tag, inspection: try t.inspect())
                    }
                } catch let e as TagError where !detected && [.notNDEF, .fileMissing, .unsupportedVersion].contains(e.kind) {
                    // No NDEF application, not formatted, not an NFC Forum tag, or a mapping
                    // newer than this tool reads: Core NFC's notSupported. A read that failed is
                    // not among them: that stays an I/O error.
                    if output.json {
                        Terminal.print(JSON.object([("status", .string(NDEFStatus.notSupported.rawValue)), ("reason", .string(e.message)),
                                                    ("mappingVersion", e.mappingVersion.map(JSON.string) ?? .null)]).serialized)
                    } else {
                        Terminal.print("notSupported: \(e.message)")
                    }
                    return
                }
                report(found)
            }
        }

        func report(_ found: Findings) {
            let view = found.view, tag = found.tag, inspection = found.inspection
            let canLock = inspection.canMakeReadOnly
            var details: [(String, JSON)] = []
            var lines: [String] = []
            if let t4 = tag as? Type4Tag {
                let cc = t4.capabilityContainer
                details = [("readAccess", .string(cc.readAccess.description)), ("writeAccess", .string(cc.writeAccess.description)),
                           ("mle", .int(cc.mle)), ("mlc", .int(cc.mlc)), ("fileID", .hex(cc.fileID)), ("maxFileSize", .int(cc.maxFileSize))]
                lines = ["  read access: \(cc.readAccess), write access: \(cc.writeAccess)",
                         "  MLe \(cc.mle), MLc \(cc.mlc), NDEF file \(cc.fileID.hexString) of \(cc.maxFileSize) bytes"]
            } else if let t2 = tag as? Type2Tag, let locks = inspection.locks {
                (details, lines) = type2Details(t2, locks: locks, canLock: canLock)
            } else if let t5 = tag as? Type5Tag, let locks = inspection.type5Locks {
                (details, lines) = type5Details(t5, locks: locks, canLock: canLock)
            } else if let t3 = tag as? Type3Tag, let locks = inspection.type3Locks {
                (details, lines) = type3Details(t3, locks: locks, canLock: canLock, reader: view.reader)
            } else if let classic = tag as? MifareClassicNDEFTag, let locks = inspection.classicLocks {
                (details, lines) = classicDetails(classic, locks: locks, canLock: canLock)
            } else if let t1 = tag as? Type1Tag, let locks = inspection.type1Locks {
                (details, lines) = type1Details(t1, locks: locks, canLock: canLock)
            }
            if output.json {
                Terminal.print(JSON.object([
                    ("reader", .string(view.reader)), ("tag", view.json), ("status", .string(view.status.rawValue)),
                    ("capacity", .int(view.capacity)), ("length", inspection.length.map(JSON.int) ?? .null),
                    ("messageParses", .bool(inspection.messageError == nil)), ("messageError", inspection.messageError.map(JSON.string) ?? .null),
                    ("canMakeReadOnly", .bool(canLock)),
                ] + details).serialized)
            } else {
                Terminal.print("\(Terminal.safe(view.reader)): \(view.description)")
                Terminal.print("  status: \(view.status.rawValue)")
                Terminal.print("  capacity: \(view.capacity) bytes, message: \(inspection.length.map { "\($0) bytes" } ?? "UNREADABLE: \(Terminal.safe(inspection.messageError ?? ""))")")
                for line in lines { Terminal.print(line) }
                Terminal.print("  can be made read-only: \(canLock ? "yes (apdu ndef-lock --yes)" : "no")")
            }
        }

        func type5Details(_ t5: Type5Tag, locks: Type5LockState, canLock: Bool) -> ([(String, JSON)], [String]) {
            let cc = t5.capabilityContainer
            let ranges = locks.lockedRanges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            let details: [(String, JSON)] = [
                ("capabilityContainer", .hex(cc.bytes)), ("dataAreaSize", .int(cc.dataAreaSize)), ("blockSize", .int(t5.blockSize)),
                ("blockCount", t5.blockCount.map(JSON.int) ?? .null), ("chip", .string(t5.chipDescription)),
                ("readMultipleBlocks", .bool(cc.supportsReadMultiple)), ("extendedCommands", .bool(cc.needsExtendedCommands)),
                ("locks", .object([("ccWriteAccess", .int(Int(locks.ccWriteAccess))),
                                   ("lockedBlocks", locks.lockedBlocks == nil ? .null : .array(ranges.map(JSON.string))),
                                   ("complete", .bool(locks.isFullyLocked)), ("partial", .bool(locks.isPartlyLocked))])),
            ]
            var lines = ["  CC \(Hex.encode(cc.bytes, separator: " ")): data area \(cc.dataAreaSize) bytes, read access \(cc.readAccess), write access \(cc.writeAccess)"
                         + (cc.supportsReadMultiple ? ", READ MULTIPLE BLOCKS" : "") + (cc.needsExtendedCommands ? ", extended commands" : ""),
                         "  chip: \(t5.chipDescription); \(t5.blockCount.map { "\($0) blocks" } ?? "block count unknown") of \(t5.blockSize) bytes"]
            if locks.lockedBlocks == nil {
                lines.append("  locked blocks: unknown (this reader path has no GET MULTIPLE BLOCK SECURITY STATUS)")
            } else {
                lines.append("  locked blocks: \(ranges.isEmpty ? "none" : ranges.joined(separator: ", ")) of \(locks.areaBlocks.lowerBound)-\(locks.areaBlocks.upperBound - 1)")
            }
            if locks.isPartlyLocked {
                lines.append("  PARTLY LOCKED: \(locks.ccWriteAccess != 0 ? "the CC says read-only" : "some blocks are locked") but not every lock is set\(canLock ? " (apdu ndef-lock --yes finishes the lock)" : "")")
            }
            return (details, lines)
        }

        func type1Details(_ t1: Type1Tag, locks: Type1LockState, canLock: Bool) -> ([(String, JSON)], [String]) {
            let cc = t1.capabilityContainer
            let locked = locks.lockedBlocks.sorted().map { Hex.encode([UInt8($0)]) }
            let details: [(String, JSON)] = [
                ("capabilityContainer", .hex(cc.bytes)), ("memorySize", .int(t1.memorySize)), ("reachableCapacity", .int(t1.reachableCapacity)),
                ("locks", .object([("ccWriteAccess", .int(Int(locks.ccWriteAccess))), ("lock0", .hex([locks.staticLockBytes[0]])), ("lock1", .hex([locks.staticLockBytes[1]])),
                                   ("dynamic", .hex(locks.dynamicLockBytes.map(\.value))), ("lockedBlocks", .array(locked.map(JSON.string))),
                                   ("complete", .bool(locks.isFullyLocked)), ("partial", .bool(locks.isPartlyLocked))])),
                ("lockRefusal", t1.lockRefusal.map(JSON.string) ?? .null),
            ]
            var lines = ["  CC \(Hex.encode(cc.bytes, separator: " ")): \(t1.memorySize) bytes, read access \(cc.readAccess), write access \(cc.writeAccess); reader form \(t1.link.form.rawValue)",
                         "  locks: LOCK0 \(Hex.encode([locks.staticLockBytes[0]])) LOCK1 \(Hex.encode([locks.staticLockBytes[1]]))"
                            + (locks.dynamicLockBytes.isEmpty ? "" : ", dynamic \(Hex.encode(locks.dynamicLockBytes.map(\.value), separator: " "))")
                            + "; locked blocks \(locked.joined(separator: " "))"]
            if t1.reachableCapacity < t1.capacity {
                lines.append("  this reader reaches \(t1.reachableCapacity) of the \(t1.capacity) bytes (\(t1.link.form.refusal(.read8(block: 0x10))))")
            }
            if let why = t1.lockRefusal { lines.append("  cannot be locked through this reader: \(why)") }
            if locks.isPartlyLocked { lines.append("  PARTLY LOCKED\(canLock ? " (apdu ndef-lock --yes finishes the lock)" : "")") }
            return (details, lines)
        }

        func classicDetails(_ tag: MifareClassicNDEFTag, locks: MifareClassicLockState, canLock: Bool) -> ([(String, JSON)], [String]) {
            let readOnly = locks.readOnlySectors.filter(\.value).keys.sorted()
            let details: [(String, JSON)] = [("chip", .string(tag.layout.description)), ("madVersion", .int(tag.directory.version)),
                                             ("ndefSectors", .array(tag.sectors.map(JSON.int))),
                                             ("locks", .object([("readOnlySectors", .array(readOnly.map(JSON.int))),
                                                                ("complete", .bool(locks.isFullyLocked)), ("partial", .bool(locks.isPartlyLocked))]))]
            let ranges = tag.sectors.count > 1 ? "\(tag.sectors.first!)-\(tag.sectors.last!)" : "\(tag.sectors.first!)"
            var lines = ["  chip: \(tag.layout), MAD\(tag.directory.version), NDEF sectors \(ranges) (\(tag.sectors.count) sectors)"]
            lines.append("  lock: \(readOnly.isEmpty ? "every NDEF sector writable" : "\(readOnly.count) of \(tag.sectors.count) NDEF sectors read-only for good")")
            if locks.isPartlyLocked {
                lines.append("  PARTLY LOCKED\(canLock ? " (apdu ndef-lock --yes finishes the lock; it needs key B)" : "")")
            }
            return (details, lines)
        }

        func type3Details(_ t3: Type3Tag, locks: Type3LockState, canLock: Bool, reader: String) -> ([(String, JSON)], [String]) {
            var details: [(String, JSON)] = [("chip", .string(t3.polling.productName)), ("idm", .hex(t3.polling.idm)), ("pmm", .hex(t3.polling.pmm)),
                                             ("attributeBlock", .hex(t3.attributeBlock))]
            var lines = ["  chip: \(t3.polling.productName), IDm \(t3.polling.idm.hexString), PMm \(t3.polling.pmm.hexString)"]
            if let a = t3.attribute {
                details += [("nbr", .int(a.nbr)), ("nbw", .int(a.nbw)), ("nmaxb", .int(a.nmaxb)), ("writeF", .hex([a.writeF])), ("rwFlag", .hex([a.rwFlag]))]
                lines.append("  attribute block: version \(a.versionString), Nbr \(a.nbr), Nbw \(a.nbw), Nmaxb \(a.nmaxb), WriteF \(Hex.encode([a.writeF])), RWFlag \(Hex.encode([a.rwFlag])), Ln \(a.ln)")
                if a.writeInProgress {
                    lines.append("  INTERRUPTED WRITE: WriteF 0F; \(tagAccess.interruptedAdvice(reader: reader, kind: t3.kind, uid: t3.uid))")
                }
            }
            let mc = locks.memoryConfiguration
            details.append(("locks", .object([("rwFlag", .hex([locks.rwFlag])), ("memoryConfiguration", mc.map { .hex($0) } ?? .null),
                                               ("readOnlyBlocks", .array(locks.readOnlyBlocks.map(JSON.int))), ("memoryConfigurationFrozen", .bool(locks.mcFrozen)),
                                               ("complete", .bool(locks.isFullyLocked)), ("partial", .bool(locks.isPartlyLocked))])))
            if let mc {
                lines.append("  memory configuration (88h) \(Hex.encode(Array(mc.prefix(4)), separator: " ")): \(locks.readOnlyBlocks.isEmpty ? "every user block writable" : "\(locks.readOnlyBlocks.count) of 14 user blocks read-only")\(locks.mcFrozen ? ", frozen" : "")")
            } else {
                lines.append("  no memory configuration block: RWFlag is this card's only NDEF lock, and ndef-lock refuses it")
            }
            if locks.isPartlyLocked {
                lines.append("  PARTLY LOCKED\(canLock ? " (apdu ndef-lock --yes finishes the lock)" : "")")
            }
            return (details, lines)
        }

        func type2Details(_ t2: Type2Tag, locks: Type2LockState, canLock: Bool) -> ([(String, JSON)], [String]) {
            let cc = t2.capabilityContainer
            let ranges = locks.lockedRanges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            let dynamic = locks.dynamicAreas.map { area -> JSON in
                .object([("position", .int(area.position)), ("bits", .int(area.bits)), ("bytes", area.bytes.map { .hex($0) } ?? .null),
                         ("source", .string(area.source.description)), ("allSet", .bool(area.isFullyLocked))])
            }
            let details: [(String, JSON)] = [
                ("capabilityContainer", .hex(cc.bytes)), ("dataAreaSize", .int(cc.dataAreaSize)),
                ("reachableCapacity", .int(t2.reachableCapacity)), ("chipCapacity", t2.chipCapacity.map(JSON.int) ?? .null),
                ("chip", .string(t2.chip.name)), ("chipProven", .bool(t2.chip.proven)), ("chipEvidence", .string(t2.chip.evidence)),
                ("locks", .object([("ccWriteAccess", .int(Int(locks.ccWriteAccess))), ("staticLockBytes", .hex(locks.staticLockBytes)),
                                   ("dynamicLockBytes", .array(dynamic)), ("dynamicLockBytesUnknown", JSON.optional(locks.unknownDynamicLocks)),
                                   ("lockedPages", .array(ranges.map(JSON.string))),
                                   ("password", .string(locks.password.description)),
                                   ("complete", .bool(locks.isFullyLocked)), ("partial", .bool(locks.isPartlyLocked))])),
            ]
            var lines = ["  CC \(Hex.encode(cc.bytes, separator: " ")): data area \(cc.dataAreaSize) bytes, read access \(cc.readAccess), write access \(cc.writeAccess)",
                         "  chip: \(t2.chip.name) (from the \(t2.chip.evidence))"]
            if t2.reachableCapacity < t2.capacity {
                lines.append("  this reader reaches \(t2.reachableCapacity) of those bytes (pages 0-255; the rest needs SECTOR_SELECT)")
            }
            if let chipCapacity = t2.chipCapacity { lines.append("  the chip itself would hold \(chipCapacity) bytes with a CC covering all its user memory") }
            lines.append("  static lock bytes \(Hex.encode(locks.staticLockBytes, separator: " ")); locked pages: \(ranges.isEmpty ? "none" : ranges.joined(separator: ", "))")
            for area in locks.dynamicAreas {
                lines.append("  dynamic lock bytes at byte \(area.position) (\(area.source)): \(area.bytes.map { Hex.encode($0, separator: " ") } ?? "unreadable")")
            }
            if let why = locks.unknownDynamicLocks { lines.append("  dynamic lock bytes: unknown (\(why))") }
            lines.append("  password protection: \(locks.password)")
            if locks.isPartlyLocked {
                lines.append("  PARTLY LOCKED: the CC says \(locks.ccWriteAccess != 0 ? "read-only" : "writable") but not every lock bit is set\(canLock ? " (apdu ndef-lock --yes finishes the lock)" : "")")
            }
            return (details, lines)
        }
    }
}
