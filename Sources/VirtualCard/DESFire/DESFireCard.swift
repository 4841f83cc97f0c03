// An emulated MIFARE DESFire EV1, EV2 or EV3: its state, what a reset keeps, the framing of
// wrapped and unwrapped native commands, and their dispatch.
import CardCrypto
import ISO7816

/// A MIFARE DESFire EV1, EV2 or EV3 as a PC/SC contactless reader presents it, for tests and
/// `apdu emulate --desfire`: the PICC level and up to 28 applications with their keys and files,
/// Authenticate (0A), AuthenticateISO (1A), AuthenticateAES (AA) and, on EV2 and EV3,
/// AuthenticateEV2First/NonFirst (71/77); plain, MACed and enciphered communication with the
/// session's CMAC and IV chaining (EV1) or the EV2 MACs and command counter; access rights,
/// transactions on backup, value and record files, and the status code the chip gives for every
/// refusal. Native commands come ISO 7816-4 wrapped (`90 INS 00 00 Lc data 00` → `data 91 SW2`)
/// or unwrapped, as a transparent reader passes them (`INS data` → `SW data`); ISO SELECT,
/// READ BINARY and UPDATE BINARY reach standard files with ISO file identifiers, so an NXP
/// AN11004 NDEF application is an NFC Forum Type 4 tag.
///
/// Written from public sources (NXP's application notes and status tables, the MF3ICD40 command
/// descriptions as libfreefare and proxmark3 implement them, and the real-card traces in
/// sotechcllc/RFDoorLock's "Desfire EV1 Communication Examples"), apart from the library's reader
/// side, so that a test of the one against the other can fail.
///
/// What a pulled card keeps: the ``Image`` (keys, applications, committed file contents).
/// What it loses: the session, the selection, a half-done multi-frame exchange and every
/// uncommitted change to backup, value and record files.
public final class DESFireCard: EmulatedCard, @unchecked Sendable {
    /// The ATR a PC/SC reader builds from a DESFire's ATS (historical byte 80): 3B 81 80 01 80 80.
    public static let defaultATR: [UInt8] = [0x3B, 0x81, 0x80, 0x01, 0x80, 0x80]
    public let atr: [UInt8]
    let random: RandomSource
    let state: Locked<State>
    /// The rule this card breaks (nil: none), for the hostile matrix.
    public let hostile: Hostile?
    /// Called with the image after every command that changed it (for `--memory`-style saving).
    public var onChange: (@Sendable (Image) -> Void)?

    /// A card holding `image`, drawing its challenges (RndB, TI, the random UID) from `random`;
    /// `hostile` names a rule of the data sheet it breaks.
    public init(image: Image = Image(), atr: [UInt8] = DESFireCard.defaultATR, random: RandomSource = .system, hostile: Hostile? = nil) {
        self.atr = atr
        self.random = random
        self.hostile = hostile
        state = Locked(State(image: image))
        reset()
    }

    /// A factory-fresh card: PICC master key DES zeros (version 0), key settings 0F, no
    /// applications.
    public static func factory(_ chip: Chip = Chip()) -> DESFireCard { DESFireCard(image: .factory(chip)) }

    /// What the chip keeps across power cycles, as it is now.
    public var image: Image { state.current.image }

    /// The UID the reader saw at activation: the chip's UID, or with random ID on, a fresh
    /// 08 xx xx xx for this activation.
    public var anticollisionUID: [UInt8] { state.current.anticollisionUID }

    /// Whether the card holds an authenticated session now (for tests of what a reset drops).
    public var isAuthenticated: Bool {
        if case .none = state.current.channel { return false }
        return true
    }

    /// Whether uncommitted changes to backup, value or record files are pending.
    public var hasPendingTransaction: Bool { state.current.transaction?.isEmpty == false }

    /// Power on or reset: the session, the selection, any multi-frame exchange and every
    /// uncommitted change are gone; committed data and completed key changes stay.
    public func reset() {
        state.withLock { s in
            s.selected = nil
            s.channel = .none
            s.pending = nil
            s.transaction = nil
            s.isoFile = nil
            s.anticollisionUID = s.image.randomUID ? [0x08] + random.bytes(3) : s.image.chip.uid
        }
    }

    /// Faults real chips show rarely, for tests of how readers take them.
    public enum Fault: Sendable, Hashable {
        /// The next command that writes EEPROM fails with `91 EE` (EEPROM error) and changes
        /// nothing: the chip's backup/rollback mechanism.
        case eepromError
        /// The file is damaged: every access to it answers `91 F1` (file integrity error).
        case fileIntegrity(aid: UInt32, file: UInt8)
    }

    public func inject(_ fault: Fault) {
        state.withLock { s in
            switch fault {
            case .eepromError: s.failNextWrite = true
            case let .fileIntegrity(aid, file): s.damagedFiles.insert(FileReference(aid: aid, file: file))
            }
        }
    }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        let (answer, changed) = state.withLock { s -> ([UInt8], Image?) in
            let before = s.image
            let out = respond(apdu, &s)
            return (out, s.image != before ? s.image : nil)
        }
        if let changed { onChange?(changed) }
        return answer
    }

    // MARK: State

    struct FileReference: Hashable { let aid: UInt32, file: UInt8 }

    /// A multi-frame exchange under way: the chip answered `AF` and expects `90 AF`.
    enum Pending {
        /// Answer frames still to hand out, and the status the last one ends with.
        case frames([[UInt8]], status: UInt8)
        /// Authentication part 1 answered; part 2 (the reader's cryptogram) expected.
        case authentication(PendingAuthentication)
        /// A command whose data is longer than one frame: what came so far, and how much is due.
        case command(UInt8, [UInt8], expected: Int)
    }

    struct PendingAuthentication {
        enum Kind { case legacy, iso, ev2 }
        let kind: Kind
        let keyNumber: UInt8
        let key: Key
        let rndB: [UInt8]
        /// ISO/AES: the IV for part 2, the last block of E(RndB).
        let iv: [UInt8]
        let ev2: EV2ChipAuthentication?
        let capabilities: [UInt8]
    }

    struct State {
        var image: Image
        /// The selected application; nil is the PICC level (AID 000000).
        var selected: UInt32?
        var channel: DESFireChannel = .none
        var pending: Pending?
        var transaction: Transaction?
        /// The file ISO SELECT chose in the selected application.
        var isoFile: UInt8?
        var anticollisionUID: [UInt8] = []
        var failNextWrite = false
        var damagedFiles: Set<FileReference> = []

        init(image: Image) { self.image = image }

        var applicationIndex: Int? { selected.flatMap { aid in image.applications.firstIndex { $0.aid == aid } } }
        var application: Application? { applicationIndex.map { image.applications[$0] } }
        var authenticatedKey: UInt8? { channel.keyNumber }

        /// Ends the session (after an error, SelectApplication, a key change of the key in use).
        mutating func dropSession() {
            channel = .none
            pending = nil
        }

        /// Writes EEPROM: the injected EEPROM fault refuses it, and then nothing changes.
        mutating func persist(_ change: (inout Image) throws(DESFireStatus) -> Void) throws(DESFireStatus) {
            if failNextWrite {
                failNextWrite = false
                throw .memoryError
            }
            var copy = image
            try change(&copy)
            image = copy
        }
    }

    // MARK: Framing

    func respond(_ apdu: [UInt8], _ s: inout State) -> [UInt8] {
        guard let first = apdu.first else { return [0x67, 0x00] }
        switch first {
        case 0xFF:
            return readerCommand(apdu, s)
        case 0x90:
            guard let command = try? CommandAPDU(bytes: apdu) else { return [0x67, 0x00] }
            guard !command.isExtended else { return [0x67, 0x00] }
            guard command.p1 == 0, command.p2 == 0 else { return [0x6A, 0x86] }
            let (status, data) = native(command.ins, command.data, &s)
            return data + [0x91, status]
        case 0x00:
            s.pending = nil
            return iso(apdu, &s).bytes
        default:
            // Unwrapped native framing: no DESFire command code is 00, 90 or FF.
            let (status, data) = native(first, Array(apdu.dropFirst()), &s)
            return [status] + data
        }
    }

    /// The reader's own pseudo-APDUs (PC/SC Part 3): GET DATA for the UID the reader saw.
    func readerCommand(_ apdu: [UInt8], _ s: State) -> [UInt8] {
        guard let command = try? CommandAPDU(bytes: apdu), command.ins == 0xCA else { return [0x6E, 0x00] }
        guard command.p1 == 0, command.p2 == 0 else { return [0x6A, 0x81] }
        return s.anticollisionUID + [0x90, 0x00]
    }

    /// One native command (wrapped or not): its status byte and data.
    func native(_ command: UInt8, _ data: [UInt8], _ s: inout State) -> (UInt8, [UInt8]) {
        if command == 0xAF { return continuation(data, &s) }
        if s.pending != nil {
            // A new command while frames were due: the chip drops the exchange (MF3ICD40 status
            // table: "previous command was not fully completed").
            return fail(.commandAborted, &s)
        }
        do {
            return deliver(try dispatch(command, data, &s), &s)
        } catch {
            return fail(error, &s)
        }
    }

    /// Every error ends the session and aborts the transaction (libfreefare's test: a refused
    /// WriteRecord aborts the transaction; RFDoorLock: any status but 00 and AF ends it).
    func fail(_ status: DESFireStatus, _ s: inout State) -> (UInt8, [UInt8]) {
        s.dropSession()
        s.transaction = nil
        return (status.code, [])
    }

    func continuation(_ data: [UInt8], _ s: inout State) -> (UInt8, [UInt8]) {
        guard let pending = s.pending else { return fail(.illegalCommand, &s) }
        s.pending = nil
        do throws(DESFireStatus) {
            switch pending {
            case .frames(var rest, let status):
                guard data.isEmpty else { throw DESFireStatus.lengthError }
                let next = rest.removeFirst()
                if rest.isEmpty { return (status, next) }
                s.pending = .frames(rest, status: status)
                return (DESFireStatus.additionalFrame.code, next)
            case .authentication(let p):
                return deliver(try authenticatePart2(p, data, &s), &s)
            case let .command(command, sofar, expected):
                let all = sofar + data
                guard all.count <= expected else { throw DESFireStatus.lengthError }
                if all.count < expected {
                    s.pending = .command(command, all, expected: expected)
                    return (DESFireStatus.additionalFrame.code, [])
                }
                return deliver(try dispatch(command, all, &s), &s)
            }
        } catch {
            return fail(error, &s)
        }
    }

    /// An answer before framing: its protected bytes, where the chip cuts its first frames, and
    /// the status it ends with.
    struct Answer {
        var bytes: [UInt8] = []
        var boundaries: [Int] = []
        var status: DESFireStatus = .ok
        /// More command frames are expected (the pending state is already set).
        var wantsMore = false

        static let more = Answer(wantsMore: true)
    }

    func deliver(_ answer: Answer, _ s: inout State) -> (UInt8, [UInt8]) {
        if answer.wantsMore { return (DESFireStatus.additionalFrame.code, []) }
        // Most data bytes one native answer frame carries: FSC less PCB, CRC and the status.
        let limit = max(16, s.image.chip.frameSize - 5)
        var frames: [[UInt8]] = []
        var rest = answer.bytes[...]
        for size in answer.boundaries where rest.count > size {
            frames.append(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        while rest.count > limit {
            frames.append(Array(rest.prefix(limit)))
            rest = rest.dropFirst(limit)
        }
        frames.append(Array(rest))
        if frames.count == 1 { return (answer.status.code, frames[0]) }
        let first = frames.removeFirst()
        s.pending = .frames(frames, status: answer.status.code)
        return (DESFireStatus.additionalFrame.code, first)
    }

    func dispatch(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let ev2 = s.image.chip.generation.hasEV2SecureMessaging, ev2Auth = takesEV2Authentication(s)
        switch command {
        case 0x60: return try getVersion(data, &s)
        case 0x51: return try getCardUID(data, &s)
        case 0x6E: return try freeMemory(data, &s)
        case 0x5A: return try selectApplication(data, &s)
        case 0xCA: return try createApplication(data, &s)
        case 0xDA: return try deleteApplication(data, &s)
        case 0x6A: return try getApplicationIDs(data, &s)
        case 0x6D: return try getDFNames(data, &s)
        case 0xFC: return try formatPICC(data, &s)
        case 0x5C: return try setConfiguration(data, &s)
        case 0x0A, 0x1A, 0xAA: return try authenticatePart1(command, data, &s)
        case 0x71 where ev2Auth: return try authenticateEV2Part1(first: true, data, &s)
        case 0x77 where ev2Auth: return try authenticateEV2Part1(first: false, data, &s)
        case 0x45: return try getKeySettings(data, &s)
        case 0x54: return try changeKeySettings(data, &s)
        case 0x64: return try getKeyVersion(data, &s)
        case 0xC4: return try changeKey(data, &s)
        case 0x6F: return try getFileIDs(data, &s)
        case 0x61: return try getISOFileIDs(data, &s)
        case 0xF5: return try getFileSettings(data, &s)
        case 0x5F: return try changeFileSettings(data, &s)
        case 0xCD, 0xCB: return try createDataFile(backup: command == 0xCB, data, &s)
        case 0xCC: return try createValueFile(data, &s)
        case 0xC1, 0xC0: return try createRecordFile(cyclic: command == 0xC0, data, &s)
        case 0xDF: return try deleteFile(data, &s)
        // EV2 adds AD/8D/AB/8B, the ReadData/WriteData/ReadRecords/WriteRecord codes NTAG 424 uses.
        case 0xBD: return try readData(command, data, &s)
        case 0xAD where ev2: return try readData(command, data, &s)
        case 0x3D: return try writeData(command, data, &s)
        case 0x8D where ev2: return try writeData(command, data, &s)
        case 0x6C: return try getValue(data, &s)
        case 0x0C, 0xDC, 0x1C: return try changeValue(command, data, &s)
        case 0x3B: return try writeRecord(command, data, &s)
        case 0x8B where ev2: return try writeRecord(command, data, &s)
        case 0xBB: return try readRecords(command, data, &s)
        case 0xAB where ev2: return try readRecords(command, data, &s)
        case 0xEB: return try clearRecordFile(data, &s)
        case 0xC7: return try commitTransaction(data, &s)
        case 0xA7: return try abortTransaction(data, &s)
        default: throw .illegalCommand
        }
    }
}
