// How a PC/SC reader lets the host reach a Type 1 tag: no standard does, so each vendor has its
// form. The form is learned per connection, and each command is carried the way it takes it.
import ISO7816

/// The ways PC/SC readers carry Type 1 commands (sources in docs/readers.md).
public enum Type1ReaderForm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ACS ACR122U and its siblings (PN532 inside): InDataExchange `D4 40 01 cmd operands` in the
    /// direct-transmit pseudo-APDU `FF 00 00 00 Lc …` (ACR122U API 2.04 §7.4). The PN532 adds
    /// UID0-3 and the CRC and takes the command with its address and data only (libnfc
    /// `utils/jewel.h`); it answers `D5 41 status` and the tag's data without the address. Its
    /// firmware cannot send READ8, WRITE-E8, WRITE-NE8, nor RSEG past segment 0 (nfcpy
    /// `clf/pn532.py`): bytes 80-1FF of a Topaz 512, and its dynamic lock bytes, are out of reach.
    /// (ACS readers also take the short command as the APDU itself, `01 08`; a one-byte APDU such
    /// as RALL's cannot cross vpcd, so the pseudo-APDU is the form used.)
    case acs
    /// SCM/Identiv (SCL3711, uTrust): `FF 50` RID … `FF 60` WRITE-NE8, the address in P2
    /// (SCL3711 reference manual §6.4.1).
    case scm
    /// PC/SC Part 3 storage commands mapped onto the tag (card names `00 2F` Jewel, `00 30`
    /// Topaz; Microsoft's NFC class extension, `StorageClassJewel.cpp`): READ BINARY `FF B0 P1 P2 Le`
    /// with P1 the block, P2 the byte (the segment for RSEG), and Le choosing the command (00 RALL,
    /// 06 RID, 01 READ, 08 READ8, 80 RSEG); UPDATE BINARY with Lc 01 (WRITE-E) or 08 (WRITE-E8).
    /// It has no WRITE-NE, so lock and OTP bits cannot be set through it.
    case binary = "read-binary"

    public var description: String {
        switch self {
        case .acs: return "ACS direct transmit (PN532 InDataExchange)"
        case .scm: return "SCM/Identiv Topaz commands (FF 50-FF 60)"
        case .binary: return "READ/UPDATE BINARY mapped onto the tag"
        }
    }

    /// Whether the form carries `command` at all (a Topaz 96 has no 8-byte commands either,
    /// which the tag decides, not the reader).
    public func carries(_ command: Type1Command) -> Bool {
        switch (self, command) {
        case (.acs, .read8), (.acs, .writeErase8), (.acs, .writeNoErase8): return false
        case let (.acs, .readSegment(s)): return s == 0
        case (.binary, .writeNoErase), (.binary, .writeNoErase8): return false
        default: return true
        }
    }

    /// Why the form cannot carry `command`, for messages.
    public func refusal(_ command: Type1Command) -> String {
        switch self {
        case .acs: return "the PN532 in ACS readers cannot send \(command.name)\(command.code == 0x10 ? " past segment 0" : "") to a Type 1 tag"
        case .binary: return "a reader that maps Type 1 onto READ/UPDATE BINARY has no \(command.name)"
        case .scm: return "\(command.name) is not carried"
        }
    }
}

/// The reader's path to one Type 1 tag: its form (learned with a harmless RID), the tag's UID
/// for the frames, and each command carried as that form takes it. Answers come back in T1TOP's
/// layout (ADD DATA, ADD8 and 8 bytes, HR0 HR1 and 120 bytes), whatever the form strips.
public final class Type1Link {
    public let transport: APDUTransport
    public let form: Type1ReaderForm
    public let readerName: String
    /// The header ROM and UID0-3 from RID.
    public let header: Type1HeaderROM
    /// Commands sent to the tag (what `Scripts/bench` counts).
    public private(set) var framesSent = 0
    /// The ACS direct transmit through the reader's PN532 (its Le form learned there).
    let commands: TagCommandChannel?
    /// SCM: whether this reader wants an Le on the writes. The SCL3711 reference manual §6.4.1
    /// gives them without one, and a reader that follows it answers `67 00` to one with an Le;
    /// a reader that wants the other form refuses the manual's the same way, before anything
    /// reaches the tag. The first refusal teaches the form for the rest of the connection.
    private(set) var scmWritesWithLe = false
    private var scmWriteFormLearned = false

    init(transport: APDUTransport, form: Type1ReaderForm, readerName: String, header: Type1HeaderROM, commands: TagCommandChannel?) {
        self.transport = transport
        self.form = form
        self.readerName = readerName
        self.header = header
        self.commands = commands
    }

    /// Whether the ATR names a Type 1 tag: PC/SC Part 3 card names `00 2F` (Jewel) and `00 30`
    /// (Topaz), ACS's `F0 04`, or SCM/Identiv's card type `44` in its own ATR `3B 82 80 01 02 44 …`.
    public static func isType1(atr: [UInt8]) -> Bool { formHint(atr: atr) != nil || storageName(atr) != nil }

    static func storageName(_ atr: [UInt8]) -> UInt16? {
        guard let name = (try? ATR(bytes: atr))?.storageCard?.cardName, [0x002F, 0x0030, 0xF004].contains(name) else { return nil }
        return name
    }

    /// The form the ATR suggests: ACS's card name `F0 04`, SCM's card type `44`; nil for the
    /// Part 3 names, which several forms give.
    static func formHint(atr: [UInt8]) -> Type1ReaderForm? {
        if storageName(atr) == 0xF004 { return .acs }
        if atr.count >= 6, atr.starts(with: [0x3B, 0x82, 0x80, 0x01]), atr[4] == 0x02, atr[5] == 0x44 { return .scm }
        return nil
    }

    /// Learns the reader's form with RID (a read; nothing changes on the tag): the form the ATR
    /// or the reader's name suggests first, then the others. `override` skips the probing.
    /// - Throws: `TagError(.notNDEF)` when no form gets a header ROM back; the channel's errors.
    public static func open(transport: APDUTransport, atr: [UInt8], readerName: String, commands: TagCommandChannel?,
                            override: Type1ReaderForm? = nil) throws -> Type1Link {
        var order: [Type1ReaderForm] = [.binary, .scm, .acs]
        let nameHint: Type1ReaderForm? = readerName.lowercased().contains("acr") ? .acs
            : ["scm", "identiv", "utrust", "scl3711"].contains(where: readerName.lowercased().contains) ? .scm : nil
        for hint in [nameHint, formHint(atr: atr)].compactMap({ $0 }) { order = [hint] + order.filter { $0 != hint } }
        if let override { order = [override] }
        var why: [String] = []
        for form in order {
            let probe = Type1Link(transport: transport, form: form, readerName: readerName, header: Type1HeaderROM(hr0: 0, hr1: 0, uid4: [0, 0, 0, 0]),
                                  commands: form == .acs ? (commands ?? TagCommandChannel(transport: transport, dialect: .acr122u, readerName: readerName)) : nil)
            do {
                let answer = try probe.send(.rid)
                let header = try Type1HeaderROM(rid: answer)
                return Type1Link(transport: transport, form: form, readerName: readerName, header: header, commands: probe.commands)
            } catch let e as TagCommandError {
                why.append("\(form.rawValue): \(e.message)")
            } catch let e as TagError where e.kind == .readFailed {
                why.append("\(form.rawValue): \(e.message)")
            }
        }
        throw TagError(.notNDEF, "\(readerName) answers RID in none of the Type 1 forms this tool knows (\(why.joined(separator: "; ")))")
    }

    /// Sends `command` to the tag and returns its answer in T1TOP's layout.
    /// - Throws: `TagCommandError(.noRawPath)` for a command this form cannot carry (nothing is
    ///   sent); `TagError(.readFailed)` or `.writeFailed` when the reader reports the tag did not
    ///   answer or refused; the channel's errors when the card went away.
    @discardableResult
    public func send(_ command: Type1Command) throws -> [UInt8] {
        guard form.carries(command) else { throw TagCommandError(.noRawPath, "\(form.refusal(command)); nothing was sent") }
        framesSent += 1
        let data: [UInt8]
        switch form {
        case .acs: data = try viaPN532(command)
        case .scm: data = try viaSCM(command)
        case .binary: data = try viaBinary(command)
        }
        return try complete(data, for: command)
    }

    /// Sends a frame as T1TOP writes it (`apdu transceive 78 00 00 00 00 00 00`) through this
    /// reader's form: the command is taken apart and carried as the form takes it. A frame for
    /// another UID, or a command the tag does not answer, is `.noAnswer`, as on the air.
    /// - Throws: `TagCommandError` for a malformed frame or one the form cannot carry (nothing
    ///   is sent); the channel's errors.
    public func transceive(_ frame: [UInt8]) throws -> TagAnswer {
        let (command, uid) = try Type1Command.parse(frame)
        if command != .rid, uid != header.uid4 { return .noAnswer }
        do { return .data(try send(command)) } catch let e as TagError where e.kind == .readFailed || e.kind == .writeFailed {
            return .noAnswer
        }
    }

    /// Puts back what a form strips (the address), and checks the length.
    func complete(_ data: [UInt8], for command: Type1Command) throws -> [UInt8] {
        let full: [UInt8]
        switch command {
        case .rid, .rall: full = data
        case let .read(a), let .writeErase(a, _), let .writeNoErase(a, _):
            full = data.count == 2 && data[0] == a ? data : [a] + data
        case let .readSegment(s): full = data.count == 129 ? data : [s] + data
        case let .read8(b), let .writeErase8(b, _), let .writeNoErase8(b, _): full = data.count == 9 ? data : [b] + data
        }
        guard full.count == command.answerLength else {
            throw TagError(command.writes ? .writeFailed : .readFailed,
                           "\(command) answered \(data.count) bytes (\(data.hexString)), \(command.answerLength) expected in T1TOP's form")
        }
        return full
    }

    private func failure(_ command: Type1Command, _ what: String) -> TagError {
        TagError(command.writes ? .writeFailed : .readFailed, "\(readerName): \(command) \(what)")
    }

    private func viaPN532(_ command: Type1Command) throws -> [UInt8] {
        guard let commands else { throw TagCommandError(.noRawPath, "no direct-transmit path") }
        // The PN532 takes the command, its address and its data; it adds the UID and the CRC.
        var operands: [UInt8]
        switch command {
        case .rid, .rall: operands = []
        case let .read(a): operands = [a]
        case let .readSegment(s): operands = [s]
        default: operands = command.operands
        }
        let r = try commands.directTransmit([0xD4, 0x40, 0x01, command.code] + operands)
        guard r.statusWord == .success else { throw failure(command, "refused by the reader: \(r.statusWord) (\(r.statusWord.meaning.text))") }
        guard r.data.count >= 3, r.data[0] == 0xD5, r.data[1] == 0x41 else {
            throw TagCommandError(.malformed, "\(readerName) answered InDataExchange with \(r.data.hexString), not D5 41 …")
        }
        switch r.data[2] & 0x3F {
        case 0x00: return Array(r.data[3...])
        case 0x01: throw failure(command, "got no answer from the tag (PN532 status 01: timeout)")
        case let e: throw failure(command, "failed: PN532 status \(Hex.encode([e]))")
        }
    }

    private func viaSCM(_ command: Type1Command) throws -> [UInt8] {
        let ins: UInt8 = [0x78: 0x50, 0x00: 0x52, 0x01: 0x54, 0x53: 0x56, 0x1A: 0x58, 0x10: 0x5A, 0x02: 0x5C, 0x54: 0x5E, 0x1B: 0x60][command.code]!
        let apdu: CommandAPDU
        switch command {
        case .rid, .rall: apdu = CommandAPDU(cla: 0xFF, ins: ins, p1: 0, p2: 0, ne: 256)
        case let .read(a), let .readSegment(a), let .read8(a): apdu = CommandAPDU(cla: 0xFF, ins: ins, p1: 0, p2: a, ne: 256)
        case let .writeErase(a, d), let .writeNoErase(a, d): apdu = CommandAPDU(cla: 0xFF, ins: ins, p1: 0, p2: a, data: [d], ne: scmWritesWithLe ? 256 : nil)
        case let .writeErase8(b, d), let .writeNoErase8(b, d): apdu = CommandAPDU(cla: 0xFF, ins: ins, p1: 0, p2: b, data: d, ne: scmWritesWithLe ? 256 : nil)
        }
        let r = try transport.send(apdu)
        if command.writes, !scmWriteFormLearned, r.statusWord.rawValue == 0x6700 {
            // Wrong length from the reader: the tag saw nothing; the other form, once.
            scmWriteFormLearned = true
            scmWritesWithLe.toggle()
            return try viaSCM(command)
        }
        if command.writes, r.statusWord == .success { scmWriteFormLearned = true }
        return try storageAnswer(command, r)
    }

    private func viaBinary(_ command: Type1Command) throws -> [UInt8] {
        let apdu: CommandAPDU
        switch command {
        case .rid: apdu = CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: 0, ne: 6)
        case .rall: apdu = CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: 0, ne: 256)
        case let .read(a): apdu = CommandAPDU(cla: 0xFF, ins: 0xB0, p1: a >> 3, p2: a & 0x07, ne: 1)
        case let .read8(b): apdu = CommandAPDU(cla: 0xFF, ins: 0xB0, p1: b, p2: 0, ne: 8)
        case let .readSegment(s): apdu = CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: s >> 4, ne: 128)
        case let .writeErase(a, d): apdu = CommandAPDU(cla: 0xFF, ins: 0xD6, p1: a >> 3, p2: a & 0x07, data: [d])
        case let .writeErase8(b, d): apdu = CommandAPDU(cla: 0xFF, ins: 0xD6, p1: b, p2: 0, data: d)
        case .writeNoErase, .writeNoErase8: throw TagCommandError(.noRawPath, form.refusal(command))
        }
        let r = try transport.send(apdu)
        guard command.writes else { return try storageAnswer(command, r) }
        guard r.statusWord == .success else { throw failure(command, "refused: \(r.statusWord) (\(r.statusWord.meaning.text))") }
        // UPDATE BINARY answers no data: the tag's answer is what was written.
        switch command {
        case let .writeErase(_, d): return [d]
        case let .writeErase8(_, d): return d
        default: return []
        }
    }

    private func storageAnswer(_ command: Type1Command, _ r: ResponseAPDU) throws -> [UInt8] {
        guard r.statusWord == .success else {
            // A reader that does not have the command (6A 81, 6D 00, 6E 00) is not this form.
            if [0x6A81, 0x6D00, 0x6E00, 0x6800, 0x6300].contains(r.statusWord.rawValue), command == .rid {
                throw TagCommandError(.readerRefused, "RID refused with \(r.statusWord)")
            }
            throw failure(command, "refused: \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
        return r.data
    }
}
