// SUN provisioning of an NTAG 424 DNA's NDEF file in an order that leaves every cut safe, and
// what it proved or where it stopped.
import ISO7816
import NDEF
import SUN

/// Where an SDM provisioning stopped, and what the tag holds then.
public struct SDMProvisioningInterrupted: Error, CustomStringConvertible {
    public enum Stage: Sendable, Hashable {
        /// Turning the old SDM off before the URL changes (a file with SDM on serves mirrors, so
        /// a write could not be read back): the tag holds the old URL with the old settings, or
        /// with SDM off (serving zeros where the mirrors were).
        case pausingSDM
        /// Writing the URL: the tag holds what `WriteInterrupted.state` says, with its old settings.
        case writingURL(WriteInterrupted.TagState)
        /// Enabling SDM: the tag holds the new URL, with its old settings or (if the answer was
        /// lost) the new ones; the same provisioning again finishes it.
        case enablingSDM
        /// Reading back: SDM was enabled; what the tag serves could not be checked.
        case checking
    }
    public var stage: Stage
    public var underlying: any Error
    /// The backup of the previous message, when one was made.
    public var backup: TagBackup?
    public var description: String {
        switch stage {
        case .pausingSDM: return "interrupted while turning the old SDM off (the tag holds the old URL): \(underlying)"
        case let .writingURL(state): return "interrupted while writing the URL (\(state)): \(underlying)"
        case .enablingSDM: return "interrupted while enabling SDM (the tag holds the new URL): \(underlying)"
        case .checking: return "SDM enabled, but the read-back failed: \(underlying)"
        }
    }
}

/// What a provisioning proved: the tag serves SUN URLs of the template's shape, and its chip's
/// originality signature verifies (or not) with NXP's key. The one says the tag holds the keys
/// now; the other that it is NXP's silicon. Keep both: a backend that sees only URLs cannot
/// check the second.
public struct SDMProvisioningResult: Sendable, Hashable {
    /// The URL the tag served to the check (its read counter is now 1 or more).
    public var served: String
    /// The originality signature, read in the authenticated session before anything was written,
    /// over the UID GetCardUID gave.
    public var originality: NTAG424Originality
}

extension NTAG424Tag {
    /// Provisions Secure Unique NFC on the NDEF file, in the order that leaves every cut safe:
    ///
    /// 1. an authentication with the file's change key proves `key` before anything is written;
    ///    in that session the file's settings are read again (MACed: the new ones are built from
    ///    them), and GetCardUID and Read_Sig give the UID and its originality signature
    ///    (checked; with `requireGenuine`, one that does not verify stops here); a file with SDM
    ///    on has it turned off first (a file that mirrors cannot be read back);
    /// 2. the URL goes in by the Type 4 procedure (`Type4Tag.replaceNDEF`: old, empty or new
    ///    message at every moment), the old message handed to `keep` first;
    /// 3. ChangeFileSettings enables SDM in one command (old settings or new, never a mix), the
    ///    NDEF file left readable without a key (background reading);
    /// 4. a plain read, as a phone makes it, must serve a URL of the template's shape.
    ///
    /// - Returns: the URL the tag served to the check and the originality signature's verdict.
    /// - Throws: `NTAG424Error` or the channel's errors before anything was written;
    ///   `SDMProvisioningInterrupted` after.
    public func provisionSDM(_ plan: SUNURLTemplate, key: [UInt8], requireGenuine: Bool = false,
                             keepingOld keep: (TagBackup) throws -> Void) throws -> SDMProvisioningResult {
        // SDMOptions bit 3 exists on NTAG 424 DNA TagTamper only (NT4H2421Tx); GetVersion's
        // subtype says which chip this is.
        if plan.settings.tamperOffset != nil, version.productName != "NTAG 424 DNA TagTamper" {
            throw NTAG424Error(.refused, "this chip is an \(version.productName), without TagTamper (GetVersion subtype \(Hex.encode([version.bytes[2]]))): it cannot mirror a tamper status; nothing was written")
        }
        let plain = try fileSettings(Self.ndefFile)
        guard case let .key(changeKey) = plain.change else {
            throw NTAG424Error(.permissionDenied, "the NDEF file's settings can \(plain.change == .never ? "never be changed" : "be changed by anyone; this tool does not provision such a file"); nothing was written")
        }
        guard plan.fileContents.count <= plain.size else {
            throw NTAG424Error(.lengthError, "the URL needs \(plan.fileContents.count) bytes; the NDEF file holds \(plain.size); nothing was written")
        }
        try authenticate(keyNumber: changeKey, key: key)
        // The settings above came in the clear, and the new ones are built from them: read them
        // again in the session (MACed), so that no one between chooses the access rights or the
        // mode the file keeps (issue 49's matrix: a flipped bit had written them).
        let before = try fileSettings(Self.ndefFile)
        guard before.change == plain.change, plan.fileContents.count <= before.size else {
            throw NTAG424Error(.badCryptogram, "the NDEF file's settings read in the clear (change \(plain.change), \(plain.size) bytes) are not those read in the session (change \(before.change), \(before.size) bytes): an altered answer; nothing was written")
        }
        let originality = try self.originality()
        if requireGenuine, !originality.isValid {
            throw NTAG424Error(.refused, "the chip's originality signature: \(originality.verdict); nothing was written")
        }
        if before.sdm != nil {
            var paused = before
            paused.sdm = nil
            do { try changeFileSettings(Self.ndefFile, to: paused) } catch {
                throw SDMProvisioningInterrupted(stage: .pausingSDM, underlying: error, backup: nil)
            }
        }
        var backup: TagBackup?
        do {
            try Type4Tag.detect(transport).replaceNDEF(with: Array(plan.fileContents.dropFirst(2))) { b in
                backup = b
                try keep(b)
            }
        } catch let e as WriteInterrupted {
            throw SDMProvisioningInterrupted(stage: .writingURL(e.state), underlying: e.underlying, backup: backup)
        }
        var after = before
        after.read = .free
        after.sdm = plan.settings
        do {
            // Selecting the application for the write ended the session: a new one.
            guard try Self.selectApplication(transport) else { throw NTAG424Error(.refused, "the NDEF application is gone") }
            try authenticate(keyNumber: changeKey, key: key)
            try changeFileSettings(Self.ndefFile, to: after)
            // The answer's MAC says the tag took the settings; only the tag's settings read again
            // in the session (MACed) show it did (issue 49's hostile tag answered 91 00 and kept
            // the old ones, and the URL it then served, placeholders of zeros, had the plan's shape).
            let now = try fileSettings(Self.ndefFile)
            guard now.changeData == after.changeData else {
                throw NTAG424Error(.refused, "the tag acknowledged the new settings but reads them back as \(Hex.encode(now.changeData)), not \(Hex.encode(after.changeData)): SDM is not enabled as planned")
            }
        } catch {
            throw SDMProvisioningInterrupted(stage: .enablingSDM, underlying: error, backup: backup)
        }
        do {
            // Read as a phone reads it: the application selected again (which ends the session),
            // then the NDEF file in the clear.
            guard try Self.selectApplication(transport) else { throw NTAG424Error(.refused, "the NDEF application is gone") }
            endSession()
            let served = try plainRead(length: plan.fileContents.count)
            let message = try NDEFMessage(decoding: Array(served.dropFirst(2)))
            guard case let .uri(uri)? = try message.records.first?.content() else {
                throw NTAG424Error(.malformed, "the tag serves no URI record")
            }
            guard Self.sameShape(uri, plan.shape) else { throw NTAG424Error(.malformed, "the tag serves a URL that does not have the template's shape") }
            // The template's own zeros are what a tag with SDM off serves (and what a middle
            // could put there): a tag that mirrors fills at least one placeholder otherwise.
            guard uri != plan.shape else { throw NTAG424Error(.malformed, "the tag serves the template with its placeholders unfilled: SDM does not mirror") }
            return SDMProvisioningResult(served: uri, originality: originality)
        } catch {
            throw SDMProvisioningInterrupted(stage: .checking, underlying: error, backup: backup)
        }
    }

    /// The served URL and the planned one agree outside the placeholders (hex digits there).
    static func sameShape(_ served: String, _ planned: String) -> Bool {
        let a = Array(served.utf8), b = Array(planned.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            x == y || (y == UInt8(ascii: "0") && (UInt8(ascii: "0")...UInt8(ascii: "9") ~= x || UInt8(ascii: "A")...UInt8(ascii: "F") ~= x))
                // A TagTamper letter where the plan put "II".
                || (y == UInt8(ascii: "I") && [UInt8(ascii: "C"), UInt8(ascii: "O")].contains(x))
        }
    }
}
