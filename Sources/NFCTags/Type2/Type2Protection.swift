// Password protection of NTAG21x and Ultralight EV1 set and cleared in the order that never
// leaves a tag protected by an unknown password.
import ISO7816

/// What `protect` / `unprotect` did.
public struct Type2ProtectionReport: Sendable, Hashable {
    /// AUTH0 now: the first protected page (at or past the chip's last page: none).
    public var auth0: Int
    /// PROT now: reads need the password too.
    public var readsProtected: Bool
    /// PACK the tag answered to the new password (protect only).
    public var pack: [UInt8]?
}

/// Password protection of NTAG21x / Ultralight EV1 (AUTH0, PROT, PWD, PACK), changed in the one
/// order that never leaves a tag protected by a password nobody knows: the password and PACK
/// pages first, the access byte, and AUTH0 last. Until AUTH0 is written the tag is as it was.
extension Type2Tag {
    func passwordLayout() throws -> (chip: Type2Chip, passwords: Type2Chip.Passwords) {
        guard commands != nil else {
            throw TagCommandError(.noRawPath, "setting a password needs a reader with a raw tag-command path (the configuration pages' writes are checked by their ACK)")
        }
        guard let chip = chip.chip, let p = chip.passwords, p.auth0Byte == 3 else {
            throw TagError(.unsafe, "the chip (\(chip.name)) has no NTAG21x-style password configuration this tool knows; nothing was written")
        }
        return (chip, p)
    }

    /// Sets a new password and protects pages from `fromPage` on (writes; reads too with
    /// `reads`). Run inside one transaction; on a tag already protected, `detect` must have
    /// been given the current password.
    /// - Throws: `LockInterrupted` after the first write (its `done` lists the pages written;
    ///   AUTH0, written last, is as before unless listed), `TagError` before it.
    public func protect(with new: Type2Password, fromPage: Int, reads: Bool) throws -> Type2ProtectionReport {
        let (chip, p) = try passwordLayout()
        guard (4..<chip.pages).contains(fromPage) || fromPage == 0xFF else {
            throw TagError(.beyondReach, "AUTH0 \(fromPage) is outside the chip's pages 4-\(chip.pages - 1); nothing was written")
        }
        try ensureRead((p.auth0Page * 4)..<(p.accessPage * 4 + 4))
        let access = image[p.accessPage * 4]
        guard access & 0x40 == 0 else { throw TagError(.readOnly, "the configuration is locked (CFGLCK is set); nothing was written") }
        var cfg0 = Array(image[(p.auth0Page * 4)..<(p.auth0Page * 4 + 4)])
        var cfg1 = Array(image[(p.accessPage * 4)..<(p.accessPage * 4 + 4)])
        cfg0[3] = UInt8(fromPage)
        cfg1[0] = reads ? access | 0x80 : access & ~0x80
        let pack = new.pack ?? [0x00, 0x00]
        let steps: [(String, Int, [UInt8], Bool)] = [
            ("write the password (page \(p.accessPage + 1))", p.accessPage + 1, new.password, true),
            ("write PACK (page \(p.accessPage + 2))", p.accessPage + 2, pack + [0, 0], true),
            ("write ACCESS (PROT \(reads ? "on" : "off"), page \(p.accessPage))", p.accessPage, cfg1, false),
            ("write AUTH0 = \(fromPage) (page \(p.auth0Page))", p.auth0Page, cfg0, false),
        ]
        try runProtectionSteps(steps)
        // The new password must open the tag, with the PACK written.
        do {
            let answer = try commands!.authenticate(password: new.password)
            guard answer == pack else { throw TagError(.verifyFailed, "the tag answered PACK \(answer.hexString) after the change, \(pack.hexString) was written") }
            return Type2ProtectionReport(auth0: fromPage, readsProtected: reads, pack: answer)
        } catch {
            throw LockInterrupted(done: steps.map(\.0), underlying: error, step: "check the new password")
        }
    }

    /// Turns protection off: AUTH0 past the last page first (from then on nothing is protected),
    /// then PROT cleared. The password stays stored, unused.
    public func unprotect() throws -> Type2ProtectionReport {
        let (_, p) = try passwordLayout()
        try ensureRead((p.auth0Page * 4)..<(p.accessPage * 4 + 4))
        var cfg0 = Array(image[(p.auth0Page * 4)..<(p.auth0Page * 4 + 4)])
        var cfg1 = Array(image[(p.accessPage * 4)..<(p.accessPage * 4 + 4)])
        guard cfg1[0] & 0x40 == 0 else { throw TagError(.readOnly, "the configuration is locked (CFGLCK is set); nothing was written") }
        cfg0[3] = 0xFF
        cfg1[0] &= ~0x80
        try runProtectionSteps([("write AUTH0 = FF (page \(p.auth0Page))", p.auth0Page, cfg0, false),
                                ("clear PROT (page \(p.accessPage))", p.accessPage, cfg1, false)])
        return Type2ProtectionReport(auth0: 0xFF, readsProtected: false, pack: nil)
    }

    /// Writes each page (skipping those already as wanted), checking the ACK.
    private func runProtectionSteps(_ steps: [(String, Int, [UInt8], Bool)]) throws {
        var done: [String] = []
        for (what, page, data, secret) in steps {
            if !secret, Array(image[(page * 4)..<(page * 4 + 4)]) == data { continue }
            do {
                try select(sectorOf: page)
                let answer = try commands!.writePage(UInt8(page % 256), data, secret: secret)
                guard answer == .ack else {
                    try? recover()
                    throw TagError(.writeFailed, "the tag refused to \(what): \(answer)" + (pack == nil ? " (is it protected? give the current password with --password-file)" : ""))
                }
                if !secret { noteWritten(page, data) }
            } catch {
                if done.isEmpty { throw error }
                throw LockInterrupted(done: done, underlying: error, step: what)
            }
            done.append(what)
        }
    }
}
