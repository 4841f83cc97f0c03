// The Core NFC-shaped tag types a session delivers (NDEF, ISO 7816, MIFARE, ISO 15693,
// FeliCa), each call in a transaction of its own on the tag's queue.
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF
import NFCTags
import PCSC

/// What every tag family offers: Core NFC's `NFCNDEFTag`.
///
/// Each call runs in a PC/SC transaction of its own and detects the tag's NDEF layout afresh,
/// so another program's change between two calls is seen, never overwritten blindly.
public protocol NFCNDEFTag: Sendable {
    /// The reader the tag is in.
    var reader: String { get }
    /// The card's answer to reset, as the reader reported it.
    var atr: [UInt8] { get }
    /// Whether the tag is `readWrite`, `readOnly` or `notSupported`, and the largest message it
    /// holds (0 when not supported).
    func queryNDEFStatus() async throws -> (status: NDEFStatus, capacity: Int)
    /// The tag's NDEF message; an empty message (no records) when the tag holds none.
    /// - Throws: `NDEFError` when the bytes are not a valid message, `TagError`, `PCSCError`.
    func readNDEF() async throws -> NDEFMessage
    /// The tag's NDEF message as bytes, whether or not they parse.
    func readNDEFBytes() async throws -> [UInt8]
    /// Keeps the old message in the session's `BackupStore`, then writes and verifies `message`.
    /// - Throws: `TagError` (`.readOnly`, `.tooLarge`, …) or `BackupError` when nothing was
    ///   written; `WriteInterrupted` (what the tag holds now, where the backup is) after.
    @discardableResult
    func writeNDEF(_ message: NDEFMessage) async throws -> WriteReceipt
    /// Makes the tag read-only for good. Returns only when the tag then refuses writes.
    /// - Throws: `TagError` (`.readOnly` when already locked, `.lockFailed`), `LockInterrupted`.
    @discardableResult
    func writeLock() async throws -> LockReceipt
    /// Puts a backup back byte for byte (see `TagBackup`).
    @discardableResult
    func restore(_ backup: TagBackup, allowingOtherTag: Bool) async throws -> WriteReceipt
}

/// A card that speaks ISO 7816-4 APDUs: a Type 4 tag, a contactless smart card, or a contact
/// card in a contact reader. Core NFC's `NFCISO7816Tag`.
public protocol NFCISO7816Tag: NFCNDEFTag {
    /// The ATR's historical bytes (for a contactless card, what the reader built from its ATS).
    var historicalBytes: [UInt8] { get }
    /// Sends one command, with GET RESPONSE (61xx), a wrong Le (6Cxx) and chaining handled, and
    /// returns the card's whole answer. A SELECT outside the session's `selectIdentifiers`
    /// throws `TransmitError.refusedSelect` without reaching the card. Commands are not held
    /// in a transaction (as with pyscard); use `ISO7816Tag.transaction(_:)` for sequences that
    /// must not be interleaved with another program's.
    func sendCommand(_ apdu: CommandAPDU) async throws -> ResponseAPDU
}

/// The MIFARE family a card belongs to: a storage card's from its PC/SC Part 3 ATR; DESFire's
/// from its GetVersion answer (`ISO7816Tag.desfire()`).
public enum MiFareFamily: String, Sendable, Hashable {
    /// MIFARE Ultralight, Ultralight C/EV1, NTAG21x: NFC Forum Type 2.
    case ultralight
    case classic
    case plus
    /// MIFARE DESFire (MF3ICD40, EV1, EV2, EV3, Light): an ISO 14443-4 card, proved by GetVersion.
    case desfire
    case unknown
}

/// A storage card the reader presents through PC/SC Part 3 (MIFARE Ultralight and NTAG as NFC
/// Forum Type 2 tags, MIFARE Classic). Core NFC's `NFCMiFareTag`; `MiFareTag` adds
/// `sendMiFareCommand`, the tag's own commands through the reader's dialect.
public protocol NFCMiFareTag: NFCNDEFTag {
    var mifareFamily: MiFareFamily { get }
    /// The UID, as the reader reports it (GET DATA FF CA).
    func identifier() async throws -> [UInt8]
}

/// A tag or card a `TagReaderSession` delivered: Core NFC's `NFCTag`.
public enum NFCTag: Sendable {
    case iso7816(ISO7816Tag)
    case miFare(MiFareTag)
    /// An ISO 15693 tag (NFC Forum Type 5: ICODE, ST25, Tag-it).
    case iso15693(ISO15693Tag)
    /// A FeliCa card (NFC Forum Type 3).
    case feliCa(FeliCaTag)

    init(session: TagReaderSession, card: Card, atr: [UInt8]) {
        let connection = TagConnection(session: session, card: card, atr: atr)
        if Type5Tag.isType5(atr: atr) {
            self = .iso15693(ISO15693Tag(connection))
        } else if Type3Tag.isType3(atr: atr) {
            self = .feliCa(FeliCaTag(connection))
        } else if Type1Tag.isType1(atr: atr) {
            // A Type 1 tag (Topaz): ISO 14443-3A without anticollision, no MIFARE; its NDEF side
            // works as every family's does.
            self = .miFare(MiFareTag(connection, family: .unknown))
        } else if MifarePlusIdentity.historicalBytesNamePlus(atr) != nil {
            // A MIFARE Plus in SL0 or SL3 (ISO 14443-4): Core NFC delivers it as a MIFARE tag.
            self = .miFare(MiFareTag(connection, family: .plus))
        } else if let storage = (try? ATR(bytes: atr))?.storageCard {
            self = .miFare(MiFareTag(connection, family: Self.family(storage.cardName, atr: atr)))
        } else {
            self = .iso7816(ISO7816Tag(connection))
        }
    }

    static func family(_ cardName: UInt16, atr: [UInt8]) -> MiFareFamily {
        if Type2Tag.isType2(atr: atr) { return .ultralight }
        switch cardName {
        case 0x0001, 0x0002, 0x0026: return .classic
        case 0x0036...0x0039: return .plus
        default: return .unknown
        }
    }

    /// The tag's NDEF side, whatever its family.
    public var ndef: any NFCNDEFTag {
        switch self {
        case let .iso7816(tag): return tag
        case let .miFare(tag): return tag
        case let .iso15693(tag): return tag
        case let .feliCa(tag): return tag
        }
    }

    public var reader: String { ndef.reader }
}

/// A connection and the serial queue that alone touches it.
final class TagConnection: @unchecked Sendable {
    let session: TagReaderSession
    let atr: [UInt8]
    // Used only on `queue`: pcsclite wants one thread at a time per card.
    private let card: Card
    private let queue: DispatchQueue
    /// The reader's learned forms, kept for the connection (touched on `queue` only).
    let forms = ConnectionForms()

    init(session: TagReaderSession, card: Card, atr: [UInt8]) {
        self.session = session
        self.card = card
        self.atr = atr
        self.queue = DispatchQueue(label: "TagConnection \(card.reader)")
    }

    var reader: String { card.reader }

    func perform<T: Sendable>(_ body: @escaping @Sendable (Card) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body(self.card) }) }
        }
    }

    /// Runs `body` with `object` (a family's card object, which only this queue touches) inside
    /// one PC/SC transaction.
    func inTransaction<Object, T: Sendable>(with object: Object, _ body: @escaping @Sendable (Object) throws -> T) async throws -> T {
        let box = SendableBox(object)
        return try await perform { card in try card.withTransaction { try body(box.value) } }
    }

    /// Runs `body` on the detected tag inside a transaction.
    func ndef<T: Sendable>(tolerant: Bool = false, _ body: @escaping @Sendable (TagTransaction) throws -> T) async throws -> T {
        let observer = session.observer
        let atr = self.atr
        return try await perform { card in
            try TagTransaction.run(card: card, atr: atr, observer: observer, tolerant: tolerant, forms: self.forms, body)
        }
    }

    /// An `APDUTransport` to `card` with the session's allowlist and observer.
    func transport(_ card: Card) -> APDUTransport {
        APDUTransport(channel: PCSCChannel(card: card), selectPolicy: session.selectIdentifiers, observer: session.observer)
    }
}

/// What every tag a session delivers shares: its connection, and the NDEF methods, each run in a
/// transaction of its own on the tag's thread.
public class ConnectedTag: NFCNDEFTag, @unchecked Sendable {
    // @unchecked only because the class is not final: its one stored property is Sendable, and
    // the subclasses (in this module only) add none that are not.
    let connection: TagConnection
    init(_ connection: TagConnection) { self.connection = connection }

    public var reader: String { connection.reader }
    public var atr: [UInt8] { connection.atr }

    public func queryNDEFStatus() async throws -> (status: NDEFStatus, capacity: Int) {
        do {
            return try await connection.ndef { ($0.tag.status, $0.tag.status == .notSupported ? 0 : $0.tag.capacity) }
        } catch let error as TagError where error.kind == .notNDEF || error.kind == .fileMissing {
            return (.notSupported, 0)
        }
    }

    public func readNDEFBytes() async throws -> [UInt8] { try await connection.ndef { try $0.tag.readNDEF() } }

    public func readNDEF() async throws -> NDEFMessage {
        let bytes = try await readNDEFBytes()
        return bytes.isEmpty ? NDEFMessage(records: []) : try NDEFMessage(decoding: bytes)
    }

    @discardableResult
    public func writeNDEF(_ message: NDEFMessage) async throws -> WriteReceipt {
        let bytes = try message.encoded()
        let backups = connection.session.backups
        return try await connection.ndef { try $0.writeNDEF(bytes, backups: backups) }
    }

    @discardableResult
    public func writeLock() async throws -> LockReceipt { try await connection.ndef { try $0.makeReadOnly() } }

    @discardableResult
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) async throws -> WriteReceipt {
        try await connection.ndef(tolerant: true) { try $0.restore(backup, allowingOtherTag: allowingOtherTag) }
    }
}

/// A card that speaks ISO 7816-4 APDUs (see `NFCISO7816Tag`).
public final class ISO7816Tag: ConnectedTag, NFCISO7816Tag, @unchecked Sendable {
    public var historicalBytes: [UInt8] { (try? ATR(bytes: atr))?.historicalBytes ?? [] }

    public func sendCommand(_ apdu: CommandAPDU) async throws -> ResponseAPDU {
        // Refused before the command is queued: nothing reaches the card.
        if let policy = connection.session.selectIdentifiers, let aid = policy.refusal(for: apdu) { throw TransmitError.refusedSelect(aid: aid) }
        return try await connection.perform { [connection] card in try connection.transport(card).send(apdu) }
    }

    /// Runs `body` inside one PC/SC transaction, so no other program's command lands between its
    /// commands (a SELECT and what depends on it, a VERIFY and the command it unlocks). `body`
    /// runs on the tag's own thread; send with the transport it is given (the session's
    /// `selectIdentifiers` apply).
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (APDUTransport) throws -> T) async throws -> T {
        try await connection.perform { [connection] card in
            try card.withTransaction { try body(connection.transport(card)) }
        }
    }
}

/// A PC/SC Part 3 storage card (see `NFCMiFareTag`).
public final class MiFareTag: ConnectedTag, NFCMiFareTag, @unchecked Sendable {
    public let mifareFamily: MiFareFamily
    init(_ connection: TagConnection, family: MiFareFamily) {
        self.mifareFamily = family
        super.init(connection)
    }

    public func identifier() async throws -> [UInt8] { try await readerUID() }
}

extension ConnectedTag {
    /// The UID the reader reports for this activation (PC/SC Part 3 GET DATA, `FF CA 00 00 00`).
    func readerUID() async throws -> [UInt8] {
        try await connection.perform { card in
            let response = try APDUTransport(channel: PCSCChannel(card: card)).send(.getUID)
            guard response.statusWord == .success else { throw TagError(.readFailed, "the reader gave no UID (\(response.statusWord))") }
            return response.data
        }
    }
}

extension ConnectedTag {
    /// Opens the reader's tag-command channel inside one transaction and runs `body` on it; the
    /// transparent session ends with it.
    func commands<T: Sendable>(dialect: ReaderDialect?, _ body: @escaping @Sendable (TagCommandChannel) throws -> T) async throws -> T {
        let observer = connection.session.observer
        let atr = connection.atr
        return try await connection.perform { card in
            try card.withTransaction {
                try NativeCommands.run(card: card, atr: atr, observer: observer, dialect: dialect) { _, _, commands in try body(commands) }
            }
        }
    }
}

/// An ISO 15693 tag (see Core NFC's `NFCISO15693Tag`): its commands through the reader's
/// transparent exchange, addressed to its UID, each call in a transaction of its own.
public final class ISO15693Tag: ConnectedTag, @unchecked Sendable {
    /// Runs `body` with the tag's command set (GET SYSTEM INFO already sent, requests addressed)
    /// in one transaction.
    /// - Throws: `TagCommandError` (`.noRawPath` on a reader without ISO 15693 frames),
    ///   `ISO15693Error` for the tag's error answers, and what `body` throws.
    public func perform<T: Sendable>(dialect: ReaderDialect? = nil, _ body: @escaping @Sendable (ISO15693Commands, ISO15693SystemInfo) throws -> T) async throws -> T {
        try await commands(dialect: dialect) { channel in
            let iso = try ISO15693Commands(channel: channel)
            return try body(iso, try iso.systemInfoWithMemorySize())
        }
    }

    /// GET SYSTEM INFO (the extended form where the standard one leaves the memory size out).
    public func systemInfo() async throws -> ISO15693SystemInfo { try await perform { _, info in info } }

    /// READ MULTIPLE BLOCKS over `blocks`, in as many frames as the reader needs.
    public func readBlocks(_ blocks: Range<Int>) async throws -> [UInt8] {
        try await perform { iso, info in
            let size = info.blockSize ?? 4
            let extended = (info.blockCount ?? 0) > 256
            let perFrame = max(1, (iso.channel.maxAnswerBytes - 1) / size)
            var out: [UInt8] = []
            var b = blocks.lowerBound
            while b < blocks.upperBound {
                let n = min(perFrame, blocks.upperBound - b)
                out += try iso.readMultipleBlocks(b, count: n, blockSize: size, extended: extended)
                b += n
            }
            return out
        }
    }

    /// WRITE SINGLE BLOCK.
    public func writeSingleBlock(_ block: Int, data: [UInt8]) async throws {
        try await perform { iso, info in try iso.writeSingleBlock(block, data: data, extended: (info.blockCount ?? 0) > 256) }
    }

    /// LOCK BLOCK: permanent.
    public func lockBlock(_ block: Int) async throws {
        try await perform { iso, info in try iso.lockBlock(block, extended: (info.blockCount ?? 0) > 256) }
    }

    /// A custom command (A0-DF) with the IC manufacturer code from the UID.
    public func customCommand(code: UInt8, parameters: [UInt8] = []) async throws -> [UInt8] {
        try await perform { iso, info in try iso.customCommand(code, manufacturer: info.manufacturer, parameters: parameters) }
    }
}

/// A FeliCa card (see Core NFC's `NFCFeliCaTag`): Polling, Request Service, Request System
/// Code, Read and Write Without Encryption through the reader's raw path.
public final class FeliCaTag: ConnectedTag, @unchecked Sendable {
    /// Runs `body` after Polling (any system code) in one transaction.
    /// - Throws: `TagCommandError`, `FeliCaStatusError` for the card's error status, and what `body` throws.
    public func perform<T: Sendable>(dialect: ReaderDialect? = nil, _ body: @escaping @Sendable (FeliCaCommands, FeliCaPolling) throws -> T) async throws -> T {
        try await commands(dialect: dialect) { channel in
            let felica = try FeliCaCommands(channel: channel)
            guard let polled = try felica.polling() else { throw TagError(.readFailed, "the FeliCa card did not answer Polling") }
            return try body(felica, polled)
        }
    }

    /// Polling for `systemCode`: IDm, PMm and the system code; nil when the card has no such system.
    public func polling(systemCode: UInt16 = 0xFFFF) async throws -> FeliCaPolling? {
        try await commands(dialect: nil) { channel in try FeliCaCommands(channel: channel).polling(systemCode: systemCode) }
    }

    public func requestService(_ nodes: [FeliCaServiceCode]) async throws -> [UInt16] {
        try await perform { felica, _ in try felica.requestService(nodes) }
    }

    public func requestSystemCode() async throws -> [UInt16] { try await perform { felica, _ in try felica.requestSystemCode() } }

    public func readWithoutEncryption(service: FeliCaServiceCode = .ndefRead, blocks: [Int]) async throws -> [UInt8] {
        try await perform { felica, _ in try felica.read(blocks: blocks, service: service) }
    }

    public func writeWithoutEncryption(service: FeliCaServiceCode = .ndefReadWrite, blocks: [Int], data: [UInt8]) async throws {
        try await perform { felica, _ in try felica.write(blocks: blocks, data: data, service: service) }
    }
}
