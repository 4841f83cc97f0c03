import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// The block- and page-addressed NFC Forum families under the man in the middle: Types 1, 2, 3
/// and 5 and NDEF on MIFARE Classic, each through a reader path of its own. The NDEF read earns
/// no verdict (no trap, no hang); the write with its backup is judged against the emulated tag's
/// memory, read by the reference readers written from the specifications (`ReferenceType2` and
/// the rest, which the fault matrix uses too), not by the library's own parser.
@Suite("Hostile matrix: Types 1, 2, 3, 5 and MIFARE Classic")
struct TagFamiliesMatrixTests {
    /// One family's tag behind its reader, made fresh for every run.
    struct Setup {
        var card: any EmulatedCard
        /// What a reader sees on the tag now, from its memory alone.
        var reading: () -> ReferenceType2.Reading
        var detect: (APDUTransport) throws -> any NDEFTag
        /// The tag's whole memory now, where a family gives it (nil: judged by `reading` alone).
        var memory: (() -> [UInt8])? = nil
    }

    struct Family: Sendable {
        var name: String
        /// A tag holding `message`, written by the library through an honest channel.
        var make: @Sendable ([UInt8]) -> Setup
        /// Message sizes (old, new) that take several writes and reads on this tag.
        var sizes: (old: Int, new: Int)
        /// A hostile tag (its layout breaks a rule of its mapping): the clean write need not
        /// finish; its claims are judged all the same.
        var hostile = false
    }

    static func message(_ size: Int, seed: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ seed &* 11 &+ 3) }
    }

    /// Writes `message` on a fresh tag through an unmutated channel, so every run starts from it.
    static func holding(_ message: [UInt8], _ setup: Setup) -> Setup {
        do {
            try setup.detect(APDUTransport(channel: EmulatedChannel(card: setup.card))).writeNDEF(message)
        } catch {
            Issue.record("the clean write of the starting message failed: \(error)")
        }
        return setup
    }

    static let families: [Family] = [
        Family(name: "Type 2 (NTAG213, PC/SC storage)", make: { message in
            let model = Type2TagModel(chip: .ntag213)
            return holding(message, Setup(card: model, reading: { ReferenceType2.read(model.contents) },
                                          detect: { try Type2Tag.detect($0, atr: model.atr) }))
        }, sizes: (40, 70)),
        Family(name: "Type 2 (NTAG216, ACR122U native frames)", make: { message in
            let model = Type2TagModel(chip: .ntag216)
            let reader = ContactlessReader(.acr122u, tag: model)
            return holding(message, Setup(card: reader, reading: { ReferenceType2.read(model.contents) }, detect: {
                try Type2Tag.detect($0, atr: model.atr, commands: TagCommandChannel(transport: $0, dialect: .acr122u))
            }))
        }, sizes: (30, 90)),
        Family(name: "Type 5 (ICODE SLIX, transparent)", make: { message in
            let model = ISO15693TagModel(chip: .icodeSlix)
            let reader = ContactlessReader(.transparent, tag: model)
            return holding(message, Setup(card: reader, reading: { ReferenceType5.read(model.contents) }, detect: {
                try Type5Tag.detect($0, atr: model.atr, commands: TagCommandChannel(transport: $0, dialect: .transparent))
            }))
        }, sizes: (30, 60)),
        Family(name: "Type 3 (FeliCa Lite-S, ACR122U)", make: { message in
            let model = FeliCaTagModel(chip: .liteS)
            let reader = ContactlessReader(.acr122u, tag: model)
            return holding(message, Setup(card: reader, reading: { ReferenceType3.read(model.contents) }, detect: {
                try Type3Tag.detect($0, commands: TagCommandChannel(transport: $0, dialect: .acr122u))
            }))
        }, sizes: (40, 100)),
        Family(name: "Type 1 (Topaz 512, ACS)", make: { message in
            let model = Type1TagModel(chip: .topaz512)
            let reader = Type1Reader(.acs, tag: model)
            return holding(message, Setup(card: reader, reading: { ReferenceType1.read(model.contents, staticMemory: false) }, detect: {
                try Type1Tag.detect($0, atr: reader.atr, readerName: reader.form.rawValue,
                                    commands: TagCommandChannel(transport: $0, dialect: .acr122u, readerName: "ACS ACR122U"))
            }))
        }, sizes: (20, 50)),
        Family(name: "MIFARE Classic 1K (PC/SC storage)", make: { message in
            let model = MifareClassicModel(.classic1K)
            let reader = ContactlessReader(.storageOnly, tag: model)
            _ = try? MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: reader)), atr: model.atr)
            return holding(message, Setup(card: reader, reading: { ReferenceClassic.read(model.contents) },
                                          detect: { try MifareClassicNDEFTag.detect($0, atr: model.atr) }))
        }, sizes: (40, 100)),
    ]

    static func read(_ family: Family) -> HostileOperation {
        HostileOperation(family: family.name, name: "ndef-read", expectVerdict: false) {
            let setup = family.make(message(family.sizes.old, seed: 1))
            return HostileRun(card: setup.card) { context in
                let bytes = try setup.detect(context.transport()).readNDEF()
                // An NDEF read is no proof: a man in the middle may change what it shows.
                return HostileOutcome(verdict: false, vouched: Hex.encode(bytes), shown: Hex.encode(bytes))
            }
        }
    }

    /// The write with its backup. Written means the tag holds the new message; interrupted names
    /// a state the tag is in; any other error means the tag still reads as the old message.
    static func write(_ family: Family) -> HostileOperation {
        HostileOperation(family: family.name, name: "ndef-write", expectVerdict: family.hostile ? nil : true) {
            let old = message(family.sizes.old, seed: 1), new = message(family.sizes.new, seed: 2)
            let setup = family.make(old)
            let start = setup.reading(), before = setup.memory?()
            return HostileRun(card: setup.card) { context in
                try NDEFWriteMatrix.run(setup.detect(context.transport()), new: new)
            } claims: { result in
                let now = setup.reading()
                // A hostile tag that reads as no message before the run: an error must leave
                // every byte of it as it was.
                if case .failure(let error) = result, case .broken = start, let before, let after = setup.memory?() {
                    return after == before ? nil : "an error (\(error)) on a tag that read as no message, yet bytes \((0..<after.count).filter { after[$0] != before[$0] }.prefix(8)) changed"
                }
                guard case .message(let held) = now else { return NDEFWriteMatrix.judge(result, held: nil, why: "\(now)", old: old, new: new) { false } }
                return NDEFWriteMatrix.judge(result, held: held, old: old, new: new) { held == old }
            }
        }
    }

    /// `ndef-lock` on every family, as `apdu ndef-lock --yes` runs it (`TagTransaction.makeReadOnly`:
    /// Type 4's CC write access FF; the others' `makeReadOnly`, reported locked only when the lock
    /// bits read back set and a probe write is refused). Judged by what the tag does, whatever its
    /// layout: "locked" means the message is intact and an honest write afterwards is refused
    /// and changes nothing; anything else means the message is intact.
    static func lock(_ family: Family) -> HostileOperation {
        HostileOperation(family: family.name, name: "ndef-lock", expectVerdict: nil) {
            let old = message(family.sizes.old, seed: 1)
            let setup = family.make(old)
            let start = setup.reading(), before = setup.memory?()
            return HostileRun(card: setup.card) { context in
                try lockBody(setup.detect(context.transport()))
            } claims: { result in
                if case .broken = start, let before, let after = setup.memory?() {
                    // A tag that read as no message: an error leaves every byte as it was.
                    if case .failure(let error) = result, after != before { return "an error (\(error)) on a tag that read as no message, yet its memory changed" }
                    guard case .success(let o) = result, o.verdict else { return nil }
                    let wrote = (try? setup.detect(APDUTransport(channel: EmulatedChannel(card: setup.card))).writeNDEF(message(family.sizes.old, seed: 5))) != nil
                    return wrote || setup.memory?() != after ? "reported locked, yet an honest write afterwards changed the tag" : nil
                }
                guard setup.reading() == .message(old) else { return "the message changed: the tag reads as \(setup.reading())" }
                guard case .success(let o) = result, o.verdict else { return nil }
                let other = message(family.sizes.new, seed: 5)
                let wrote = (try? setup.detect(APDUTransport(channel: EmulatedChannel(card: setup.card))).writeNDEF(other)) != nil
                if wrote || setup.reading() != .message(old) { return "reported locked, yet an honest write afterwards changed the tag" }
                return nil
            }
        }
    }

    static func lockBody(_ tag: any NDEFTag) throws -> HostileOutcome {
        if let t4 = tag as? Type4Tag {
            let locked = try t4.makeReadOnly()
            return HostileOutcome(verdict: locked, vouched: "locked: \(locked)", shown: "CC write access \(t4.capabilityContainer.writeAccess)")
        }
        guard let lockable = tag as? any PermanentlyLockable else { throw TagError(.notNDEF, "no lock procedure for this tag") }
        return try lockOpened(lockable)
    }

    static func lockOpened<T: PermanentlyLockable>(_ tag: T) throws -> HostileOutcome {
        do {
            let report = try tag.makeReadOnly()
            let locked = report.refusesWrites && report.state.isFullyLocked
            return HostileOutcome(verdict: locked, vouched: "locked: \(locked)", shown: "\(report)")
        } catch let e as LockInterrupted {
            return HostileOutcome(verdict: false, vouched: "interrupted after \(e.done)", shown: "\(e)")
        }
    }

    /// Whether every lock of the chip is set, from the emulator's datasheet table and the bytes:
    /// the CC's write access, the static lock bytes, every dynamic lock bit.
    static func fullyLocked(_ m: [UInt8], _ chip: Type2TagModel.Chip) -> Bool {
        guard m[15] & 0x0F == 0x0F, m[10] == 0xFF, m[11] == 0xFF else { return false }
        guard let page = chip.dynamicLockPage else { return true }
        return (0..<chip.lockBits).allSatisfy { m[page * 4 + $0 / 8] & (1 << ($0 % 8)) != 0 }
    }

    /// The permanent lock of an NTAG213 (its chip proven by GET_VERSION through the ACR122U).
    /// Locked means every lock bit is set; an interrupted lock changed only the chip's lock bytes
    /// and left the message; any other error means no lock byte changed.
    /// The lock of `lock`, and a hostile tag's: an NTAG213 whose lock control TLV puts its
    /// dynamic lock bytes at 40-41, inside the data area, where the chip (its datasheet: page 40,
    /// bytes 160-162) has user memory. "Locked" there is earned only by the chip's own lock bits,
    /// and no byte but the chip's real lock bytes may change.
    static let lockTLVIntoData = lock(name: "ndef-lock, lock control TLV into the data area", declared: [40, 41]) {
        var image = Type2TagModel.factoryImage(chip: .ntag213)
        for (i, b) in [UInt8](arrayLiteral: 0x01, 0x03, 0x28, 0x10, 0x44, 0x03, 0x00, 0xFE).enumerated() { image[16 + i] = b }
        return image
    }

    /// The review's tag: a TLV naming byte 161 alone, 4 bits (inside the chip's lock bytes, but
    /// read as locking pages 16-23 where the chip's bits there lock pages 32-39).
    static let lockTLVPartial = lock(name: "ndef-lock, lock control TLV naming part of the lock bits", declared: [161]) {
        var image = Type2TagModel.factoryImage(chip: .ntag213)
        for (i, b) in [UInt8](arrayLiteral: 0x01, 0x03, 0xA1, 0x04, 0x34, 0x03, 0x00, 0xFE).enumerated() { image[16 + i] = b }
        return image
    }

    static let lock = lock(name: "ndef-lock", declared: []) { nil }

    /// Whether the run's tag proved its chip (GET_VERSION), seen from the claims.
    final class ChipProof: @unchecked Sendable { var proven = true }

    /// The lock run (`image`: a tag of the chip's but for these bytes). Where the run could not
    /// prove the chip (a middle turned GET_VERSION away) the tool can only follow the layout the
    /// tag declares, as the NFC Forum's Type 2 specification says (§4.6.2.2): the lock bytes a
    /// lock control TLV names may then change too, and "locked" means those bits are set.
    /// `declared`: the lock bytes the image's lock control TLV names (a hostile tag's clean run
    /// is refused: it cannot be locked honestly).
    static func lock(name: String, declared: Set<Int>, image: @escaping @Sendable () -> [UInt8]?) -> HostileOperation {
      HostileOperation(family: "Type 2 (NTAG213, ACR122U native frames)", name: name, expectVerdict: declared.isEmpty ? true : false) {
        let chip = Type2TagModel.Chip.ntag213
        let model = Type2TagModel(chip: chip, memory: image())
        let reader = ContactlessReader(.acr122u, tag: model)
        let message = Self.message(40, seed: 3)
        func detect(_ transport: APDUTransport) throws -> Type2Tag {
            try Type2Tag.detect(transport, atr: model.atr, commands: TagCommandChannel(transport: transport, dialect: .acr122u))
        }
        do { try detect(APDUTransport(channel: EmulatedChannel(card: reader))).writeNDEF(message) } catch {
            Issue.record("the clean write of the starting message failed: \(error)")
        }
        let start = model.contents
        var lockBytes: Set<Int> = [10, 11, 15]
        if let page = chip.dynamicLockPage { lockBytes.formUnion((page * 4)..<(page * 4 + 3)) }
        let proof = ChipProof()
        return HostileRun(card: reader) { context in
            let tag = try detect(context.transport())
            proof.proven = tag.chip.proven
            do {
                let report = try tag.makeReadOnly()
                return HostileOutcome(verdict: report.refusesWrites, vouched: "locked: \(report.refusesWrites)", shown: "\(report)")
            } catch let e as LockInterrupted {
                return HostileOutcome(verdict: false, vouched: "interrupted after \(e.done)", shown: "\(e)")
            }
        } claims: { result in
            let now = model.contents
            let changed = (0..<now.count).filter { now[$0] != start[$0] }
            let allowed = proof.proven ? lockBytes : lockBytes.union(declared)
            if let outside = changed.first(where: { !allowed.contains($0) }) { return "byte \(outside) changed, outside the lock bytes" }
            guard ReferenceType2.read(now) == .message(message) else { return "the message changed" }
            switch result {
            case .success(let o) where o.verdict:
                if !proof.proven && !declared.isEmpty {
                    return now[15] & 0x0F == 0x0F && now[10] == 0xFF && now[11] == 0xFF && declared.allSatisfy({ now[$0] == 0xFF })
                        ? nil : "reported locked, but not every lock bit the tag declares is set"
                }
                return fullyLocked(now, chip) ? nil : "reported locked, but not every lock bit is set"
            case .success:
                // Interrupted, or a report that does not prove the tag refuses writes: "not
                // confirmed", which claims neither way (`TagTransaction.lockDidNotTake`).
                return nil
            case .failure(let error):
                return changed.isEmpty ? nil : "an error that names no lock done (\(error)), yet bytes \(changed) changed"
            }
        }
      }
    }

    static let names = (families + hostileFamilies).flatMap { ["\($0.name) ndef-read", "\($0.name) ndef-write", "\($0.name) ndef-lock (any layout)"] }
        + ["Type 2 (NTAG213, ACR122U native frames) ndef-lock", "Type 2 (NTAG213, ACR122U native frames) ndef-lock, lock control TLV into the data area",
           "Type 2 (NTAG213, ACR122U native frames) ndef-lock, lock control TLV naming part of the lock bits"]

    @Test("ndef-read, ndef-write (with its backup) and the Type 2 lock through the man in the middle", arguments: names)
    func matrix(_ name: String) throws {
        if name.hasSuffix("ndef-lock (any layout)") {
            let family = try #require((Self.hostileFamilies + Self.families).first { name.hasPrefix($0.name) })
            let report = HostileMatrix.run(Self.lock(family))
            HostileMatrixLog.record(report)
            HostileKnownIssues.expectNoFailures(report)
            return
        }
        if name.contains("ndef-lock") {
            let report = HostileMatrix.run(name.hasSuffix("ndef-lock") ? Self.lock : name.hasSuffix("data area") ? Self.lockTLVIntoData : Self.lockTLVPartial)
            HostileMatrixLog.record(report)
            HostileKnownIssues.expectNoFailures(report)
            return
        }
        let family = try #require((Self.hostileFamilies + Self.families).first { name.hasPrefix($0.name) })
        let report = HostileMatrix.run(name.hasSuffix("ndef-read") ? Self.read(family) : Self.write(family))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
