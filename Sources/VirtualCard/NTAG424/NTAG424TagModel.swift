// An emulated NTAG 424 DNA (NT4H2421Gx): its files and keys, EV2 authentication and secure
// messaging, the native and ISO commands, and SDM mirroring on every read.
import ISO7816
import SUN

/// An NTAG 424 DNA as NXP's datasheet (NT4H2421Gx) and AN12196 describe it, for tests and
/// `apdu emulate --ntag424`: the NDEF application `D2 76 00 00 85 01 01` with its three files
/// (CC E103, NDEF E104 of 256 bytes, proprietary E105), five AES keys (all zero as shipped),
/// AuthenticateEV2First / NonFirst, secure messaging (CmdCtr, session keys, MACs checked
/// before anything is done), GetVersion, GetFileSettings, ChangeFileSettings, ChangeKey,
/// GetCardUID, Read_Sig, ReadData / WriteData, ISO SELECT / READ BINARY / UPDATE BINARY, and
/// Secure Dynamic Messaging: every read of a file with SDM enabled increments SDMReadCtr and
/// mirrors the PICC data (or UID and counter), the encrypted file data and the MAC into the text
/// read.
///
/// The SDM and secure-messaging computations are written here from the datasheet, apart from
/// the library's reader side, so a test of the one against the other can fail.
public final class NTAG424TagModel: CardApplication, @unchecked Sendable {
    public let aid: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    public let uid: [UInt8]
    /// What Read_Sig answers: NXP's 56-byte ECDSA signature (r ‖ s, secp224r1) over the UID.
    /// All zeros unless given: an emulator holds no NXP private key, so it is a signature only
    /// when a published one is given with its UID (AN12196 Table 30's, say).
    public let originalitySignature: [UInt8]
    /// Random ID (SetConfiguration option 00h bit 1): GetVersion then shows no UID; GetCardUID,
    /// after an authentication, gives it. The reader's UID is the host's (a 4-byte 08 xx xx xx).
    public let randomID: Bool
    /// An NTAG 424 DNA TagTamper (NT4H2421Tx): GetVersion's subtype 08, GetTTStatus, and
    /// SDMOptions bit 3 (the status letters mirrored at TTStatusOffset). Its loop is closed and
    /// TagTamper enabled from the start; `openTamperLoop()` and `closeTamperLoop()` cut and
    /// mend the wire while the card is served (issue 51).
    public let tagTamper: Bool
    /// How this tag breaks its data sheet, if it does (the hostile matrix).
    public let hostile: Hostile?

    /// A file's settings as the tag keeps them (its own representation, not the library's).
    public struct File: Sendable, Hashable {
        public var id: [UInt8]
        public var commMode: UInt8        // 0 plain, 1 MAC, 3 full
        public var read: UInt8, write: UInt8, readWrite: UInt8, change: UInt8
        public var data: [UInt8]
        public var sdmEnabled = false
        public var sdm: [UInt8] = []       // SDMOptions … as ChangeFileSettings gave them
    }

    struct State {
        var keys = [[UInt8]](repeating: [UInt8](repeating: 0, count: 16), count: 5)
        var keyVersions = [UInt8](repeating: 0, count: 5)
        var files: [UInt8: File]
        var selectedFile: UInt8?
        var readCounter = 0
        // Authentication in progress, then the session (EV2 secure messaging, shared with the
        // DESFire emulator). The session's TI and counter outlive `authenticated`, as on the chip:
        // AuthenticateEV2NonFirst continues them.
        var pendingAuth: EV2ChipAuthentication?
        var authenticated: Int?
        var session: EV2ChipSession?
        var versionFrame = 0
        var failedAuthentications = 0
        var tamperLoopClosed = true
        /// The permanent status: set once the chip saw its loop open, never cleared.
        var tamperLatchedOpen = false
    }
    let state: Locked<State>
    /// Called with the NDEF file after every change (for `emulate --memory`-style tests).
    public var onChange: (@Sendable ([UInt8]) -> Void)?

    public init(uid: [UInt8] = [0x04, 0x3A, 0x51, 0x6A, 0x71, 0x80, 0x90], keys: [[UInt8]]? = nil,
                originalitySignature: [UInt8] = [UInt8](repeating: 0, count: 56), randomID: Bool = false, tagTamper: Bool = false,
                hostile: Hostile? = nil) {
        self.uid = uid
        self.hostile = hostile
        self.tagTamper = tagTamper
        self.originalitySignature = originalitySignature
        self.randomID = randomID
        // CC (NT4H2421Gx §8.1.4): CCLEN 0017, mapping 2.0, MLe 0100, MLc 00FF, the NDEF file
        // control TLV (E104, 256 bytes, read and write free) and the proprietary file's (E105, 128
        // bytes, read and write with keys 2 and 3).
        var cc: [UInt8] = [0x00, 0x17, 0x20, 0x01, 0x00, 0x00, 0xFF, 0x04, 0x06, 0xE1, 0x04, 0x01, 0x00, 0x00, 0x00,
                           0x05, 0x06, 0xE1, 0x05, 0x00, 0x80, 0x82, 0x83]
        cc += [UInt8](repeating: 0, count: 32 - cc.count)
        var s = State(files: [
            1: File(id: [0xE1, 0x03], commMode: 0, read: 0xE, write: 0x0, readWrite: 0x0, change: 0x0, data: cc),
            2: File(id: [0xE1, 0x04], commMode: 0, read: 0xE, write: 0xE, readWrite: 0xE, change: 0x0, data: [UInt8](repeating: 0, count: 256)),
            3: File(id: [0xE1, 0x05], commMode: 3, read: 0x2, write: 0x3, readWrite: 0x3, change: 0x0, data: [UInt8](repeating: 0, count: 128)),
        ])
        if let keys { for (i, k) in keys.prefix(5).enumerated() { s.keys[i] = k } }
        state = Locked(s)
    }

    /// Takes `other`'s non-volatile state: files, keys, key versions and the read counter.
    public func restoreState(from other: NTAG424TagModel) {
        let s = other.state.current
        state.withLock { $0.files = s.files; $0.keys = s.keys; $0.keyVersions = s.keyVersions; $0.readCounter = s.readCounter }
    }

    /// Cuts the TagTamper loop (the seal is opened): the next status the chip reads is `OO`.
    public func openTamperLoop() { state.withLock { $0.tamperLoopClosed = false } }
    /// Mends the loop: the current status is `C` again, the permanent one stays `O` once seen.
    public func closeTamperLoop() { state.withLock { $0.tamperLoopClosed = true } }

    /// The two letters the chip reads now (permanent, current), latching an open loop; `II`
    /// on a chip without TagTamper.
    func readTamperStatus(_ s: inout State) -> [UInt8] {
        guard tagTamper else { return [UInt8(ascii: "I"), UInt8(ascii: "I")] }
        if !s.tamperLoopClosed { s.tamperLatchedOpen = true }
        return Self.tamperLetters(s)
    }

    static func tamperLetters(_ s: State) -> [UInt8] {
        [s.tamperLatchedOpen ? UInt8(ascii: "O") : UInt8(ascii: "C"), s.tamperLoopClosed ? UInt8(ascii: "C") : UInt8(ascii: "O")]
    }

    /// The NDEF file's bytes as stored (without SDM mirroring).
    public var ndefFile: [UInt8] { state.current.files[2]!.data }
    public var readCounter: Int { state.current.readCounter }
    public func file(_ number: UInt8) -> File? { state.current.files[number] }
    public var keys: [[UInt8]] { state.current.keys }
    public var keyVersions: [UInt8] { state.current.keyVersions }

    public func select(_ command: CommandAPDU) -> ResponseAPDU {
        state.withLock { $0.selectedFile = nil; $0.authenticated = nil; $0.pendingAuth = nil }
        return ResponseAPDU(statusWord: .success)
    }

    public func deselect() { state.withLock { $0.selectedFile = nil; $0.authenticated = nil; $0.pendingAuth = nil } }

    static let ok = StatusWord(rawValue: 0x9100), more = StatusWord(rawValue: 0x91AF)
    /// A command refused before it is done: the answer to give.
    struct Refusal: Error { let response: ResponseAPDU; init(_ r: ResponseAPDU) { response = r } }
    static func err(_ sw2: UInt8) -> ResponseAPDU { ResponseAPDU(statusWord: StatusWord(0x91, sw2)) }

    public func process(_ command: CommandAPDU) -> ResponseAPDU {
        state.withLock { s in
            if command.cla == 0x90 { return native(command, &s) }
            guard command.cla == 0x00 else { return ResponseAPDU(statusWord: .claNotSupported) }
            switch command.ins {
            case 0xA4: return isoSelect(command, &s)
            case 0xB0: return isoRead(command, &s)
            case 0xD6: return isoUpdate(command, &s)
            default: return ResponseAPDU(statusWord: .insNotSupported)
            }
        }
    }

    // MARK: ISO 7816-4

    func isoSelect(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard c.p1 == 0x00 || c.p1 == 0x02, c.data.count == 2 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        guard let (n, _) = s.files.first(where: { $0.value.id == c.data }) else { return ResponseAPDU(statusWord: .fileNotFound) }
        s.selectedFile = n
        return ResponseAPDU(statusWord: .success)
    }

    func isoRead(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard let n = s.selectedFile, let f = s.files[n] else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)) }
        // ISO READ BINARY serves plain files readable without a key (or with the key in use).
        guard f.commMode == 0, f.read == 0xE || f.readWrite == 0xE || s.authenticated.map({ UInt8($0) == f.read || UInt8($0) == f.readWrite }) == true else {
            return ResponseAPDU(statusWord: .securityStatusNotSatisfied)
        }
        let offset = Int(c.p1 & 0x7F) << 8 | Int(c.p2)
        let content = offset == 0 ? served(n, &s) : servedWithoutCounting(n, s)
        guard offset <= content.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        let ne = c.ne ?? 256
        let end = min(content.count, offset + ne)
        return ResponseAPDU(data: Array(content[offset..<end]), statusWord: end - offset < ne ? .endOfFileReached : .success)
    }

    func isoUpdate(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard let n = s.selectedFile, var f = s.files[n] else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)) }
        guard f.commMode == 0, f.write == 0xE || f.readWrite == 0xE else { return ResponseAPDU(statusWord: .securityStatusNotSatisfied) }
        let offset = Int(c.p1 & 0x7F) << 8 | Int(c.p2)
        guard offset + c.data.count <= f.data.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        f.data.replaceSubrange(offset..<(offset + c.data.count), with: c.data)
        s.files[n] = f
        if n == 2 { onChange?(f.data) }
        return ResponseAPDU(statusWord: .success)
    }
}
