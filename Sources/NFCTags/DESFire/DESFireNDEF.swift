// Formatting a DESFire as an NFC Forum Type 4 tag (NXP AN11004), resumable when cut short.
import ISO7816

/// What `formatForNDEF` did.
public struct DESFireNDEFFormat: Sendable, Hashable {
    /// The steps taken now, in order ("created application 000001", …).
    public var done: [String]
    /// The steps an earlier, interrupted run had taken already.
    public var alreadyDone: [String]
    /// The NDEF file's size; the largest message is 2 bytes less (NLEN).
    public var ndefFileSize: Int
    public var capacity: Int { ndefFileSize - 2 }
}

/// Where `formatForNDEF` stopped, and what the card holds then: every step before `step` is done
/// (and an unfinished format is finished by running it again).
public struct DESFireNDEFFormatInterrupted: Error, CustomStringConvertible {
    public var step: String
    public var done: [String]
    public var underlying: any Error
    public var description: String {
        "\(underlying) while trying to \(step); " + (done.isEmpty ? "nothing was changed yet" : "done so far: \(done.joined(separator: ", "))")
            + "; the card is not an NDEF tag until the format finishes: run it again"
    }
}

extension DESFireCard {
    /// NXP AN11004's NDEF application: AID 000001, ISO DF E110 named D2760000850101 (the NFC Forum
    /// Type 4 NDEF application), key settings 0F, one key.
    public static let ndefApplication = DESFireApplicationID(wire: [0x01, 0x00, 0x00])
    public static let ndefDFName: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]

    /// Makes the card an NFC Forum Type 4 tag as NXP AN11004 (mapping 2.0) describes, so that
    /// phones and the Type 4 procedure (`Type4Tag`) read and write it:
    ///
    /// 1. application 000001 with ISO file identifiers, DF E110 named D2760000850101, settings 0F,
    ///    one key (DES, the factory zero key);
    /// 2. file 01 (ISO E103), the capability container: 15 bytes, read free, the rest key 0;
    /// 3. the CC: version 2.0, MLe 003B, MLc 0034, the NDEF file E104 with its size, free read
    ///    and write;
    /// 4. file 02 (ISO E104), the NDEF file: read, write and read-write free, change key 0;
    /// 5. NLEN 0000: an empty message.
    ///
    /// Each step is one command that happens whole or not at all; a run cut short is finished by
    /// running it again (the steps done are recognised, not repeated).
    ///
    /// - Parameters:
    ///   - piccKey: the card master key, when the card's settings need it to create applications.
    ///   - ndefFileSize: the NDEF file's size; nil for AN11004's choice by card size (2048, 4096,
    ///     7680), made smaller when the card's free memory asks.
    /// - Throws: `DESFireError` before anything was changed; `DESFireNDEFFormatInterrupted`
    ///   after.
    public func formatForNDEF(piccKey: DESFireKey? = nil, ndefFileSize: Int? = nil) throws -> DESFireNDEFFormat {
        let version = try self.version ?? getVersion()
        guard version.generation != .d40 else {
            throw DESFireError(.illegalCommand, "an MF3ICD40 has no ISO file identifiers; AN11004's mapping 2.0 needs an EV1 or later")
        }
        if let size = ndefFileSize, !(3...0x7FFF).contains(size) { throw DESFireError(.parameterError, "an NDEF file of 3 to 32767 bytes, not \(size)") }
        var done: [String] = [], already: [String] = []
        func run<T>(_ name: String, _ body: () throws -> T) throws -> T {
            do { return try body() } catch {
                if done.isEmpty, error is DESFireError { throw error }
                throw DESFireNDEFFormatInterrupted(step: name, done: done, underlying: error)
            }
        }
        try run("select the card level") { try selectApplication(.picc) }
        if let piccKey { try run("authenticate with the card master key") { try authenticate(keyNumber: 0, key: piccKey) } }
        let exists = try run("list the applications") { try applicationIDs() }.contains(Self.ndefApplication)
        if exists {
            already.append("application 000001")
        } else {
            try run("create application 000001") {
                try createApplication(DESFireApplicationSpec(aid: Self.ndefApplication, settings: .factory, keyCount: 1, family: .des,
                                                             isoFileID: 0xE110, dfName: Self.ndefDFName))
            }
            done.append("created application 000001 (DF E110, D2760000850101)")
        }
        try run("select application 000001") { try selectApplication(Self.ndefApplication) }
        let files = try run("list its files") { try fileIDs() }
        if !files.contains(1) {
            try run("create the CC file") {
                try createFile(DESFireFileSpec(number: 1, kind: .standardData(size: 15), access: DESFireAccessRights(0xE000), isoFileID: 0xE103))
            }
            done.append("created the CC file (01, E103)")
        } else {
            already.append("the CC file")
        }
        let size: Int
        if files.contains(2) {
            let settings = try run("read the NDEF file's settings") { try fileSettings(2) }
            size = settings.size ?? 0
            already.append("the NDEF file")
        } else {
            let free = try run("ask the free memory") { try freeMemory() }
            let preferred = ndefFileSize ?? (version.storageSize.bytes >= 8192 ? 0x1E00 : version.storageSize.bytes >= 4096 ? 0x1000 : 0x0800)
            // Files take memory in 32-byte blocks.
            size = min(preferred, (free / 32) * 32)
            guard size >= 3 else {
                throw DESFireNDEFFormatInterrupted(step: "create the NDEF file", done: done, underlying: DESFireError(.outOfMemory, "only \(free) bytes free for the NDEF file"))
            }
        }
        let cc: [UInt8] = [0x00, 0x0F, 0x20, 0x00, 0x3B, 0x00, 0x34, 0x04, 0x06, 0xE1, 0x04, UInt8(size >> 8), UInt8(size & 0xFF), 0x00, 0x00]
        let current = try run("read the CC") { try readData(1, length: 15, mode: .plain) }
        if current != cc {
            try run("authenticate with the application's key 0") { try authenticate(keyNumber: 0, key: .zero(.des)) }
            try run("write the CC") { try writeData(1, data: cc, mode: .plain) }
            done.append("wrote the CC (mapping 2.0, NDEF file E104 of \(size) bytes)")
        } else {
            already.append("the CC")
        }
        if !files.contains(2) {
            try run("create the NDEF file") {
                try createFile(DESFireFileSpec(number: 2, kind: .standardData(size: size), access: DESFireAccessRights(0xEEE0), isoFileID: 0xE104))
            }
            try run("write an empty message") { try writeData(2, data: [0, 0], mode: .plain) }
            done.append("created the NDEF file (02, E104, \(size) bytes) with an empty message")
        }
        return DESFireNDEFFormat(done: done, alreadyDone: already, ndefFileSize: size)
    }
}
