// The `NDEFTag` protocol every family's NDEF procedures meet, and the detection of which family
// a card is.
import ISO7816

/// What the ndef-* commands need from any NFC Forum tag type.
public protocol NDEFTag: AnyObject {
    /// `type1`, `type2`, `type3`, `type4`, `type5` or `classic` (NDEF on MIFARE Classic).
    var kind: String { get }
    /// Mapping (Type 4) or CC (Type 2) version, e.g. "2.0" or "1.0".
    var mappingVersion: String { get }
    /// The tag's UID, when the reader reports it.
    var uid: [UInt8]? { get }
    var status: NDEFStatus { get }
    /// The largest message the tag holds, as the NFC Forum (and nfcpy, Core NFC) count it.
    var capacity: Int { get }
    func readNDEF() throws -> [UInt8]
    func writeNDEF(_ message: [UInt8]) throws
    /// Reads the current message, hands a backup of it to `keep` (it must be safe before the
    /// tag changes), then writes `message`. Run it inside one transaction.
    ///
    /// Once the tag has changed, a failure is a `WriteInterrupted` that says what the tag can
    /// hold; before that, the error is the cause itself and nothing was written.
    func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws
    /// Puts a backup back exactly, from whatever state a cut write left (see `TagBackup`).
    func restore(_ backup: TagBackup, allowingOtherTag: Bool) throws
    /// Told of each step of a write or restore as it begins (nil: nobody is watching), for a
    /// progress display on a slow tag. Called on the thread that writes.
    var writeObserver: ((WriteStep) -> Void)? { get set }
}

extension NDEFTag {
    /// Refuses, before anything is written, a backup of another tag type, and one of another
    /// tag (by `uid`, when both are known) unless `allowingOtherTag`.
    func checkBackupIdentity(_ backup: TagBackup, uid: [UInt8]?, allowingOtherTag: Bool, noun: String = "tag") throws(TagError) {
        guard backup.kind == kind else {
            throw TagError(.differentTag, "the backup is of a \(backup.kind ?? "bare message"), this is \(kind == "classic" ? "a MIFARE Classic card" : "a Type \(kind.dropFirst(4)) tag")")
        }
        if let a = backup.uid, let b = uid, a != b, !allowingOtherTag {
            throw TagError(.differentTag, "the backup is of \(noun) \(a.hexString), this is \(noun) \(b.hexString); nothing was written (--force writes it anyway)")
        }
    }
}

extension Type4Tag: NDEFTag, NDEFTagFamily {
    /// Any card that is not a PC/SC Part 3 storage card may carry the NDEF application.
    public static func recognizes(atr: [UInt8]) -> Bool { (try? ATR(bytes: atr))?.storageCard == nil }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag { try detect(d.transport, atr: d.atr) }
    public var kind: String { "type4" }
    public var mappingVersion: String { capabilityContainer.versionString }
    public var uid: [UInt8]? { readerUID }
    public var capacity: Int { capabilityContainer.capacity }
}

/// Which NFC Forum tag type a card is, and its NDEF procedures, found over `transport`: the
/// first of `NDEFTagFamilies.all` that recognises the ATR detects it.
///
/// A PC/SC Part 3 storage-card ATR of the Ultralight/NTAG family is a Type 2 tag, of ISO 15693
/// a Type 5 tag, of FeliCa a Type 3 tag, of MIFARE Classic (Mini, 1K, 4K, Plus in SL1) a MAD
/// card with NDEF sectors; another storage card (a memory card) has no NDEF procedure here;
/// anything else may carry the Type 4 NDEF application and is asked for it with SELECT.
/// - Parameters:
///   - transport: the channel to the card, with its transmission policy.
///   - atr: the card's answer to reset.
///   - tolerant: a tag whose TLV area or attribute block does not parse is still returned (to restore it).
///   - commands: the reader's tag-command channel, for Types 2, 5 and 3 (nil: storage
///     pseudo-APDUs only; Type 3 then cannot be reached).
///   - classicKeys: MIFARE Classic keys to try after the public MAD and NDEF keys.
///   - password: a Type 2 password, sent with PWD_AUTH before anything else.
/// - Throws: `TagError` (`.notNDEF` when the card has no NDEF support), `TagCommandError`, or
///   the channel's errors.
public func detectNDEFTag(_ transport: APDUTransport, atr: [UInt8], tolerant: Bool = false, commands: TagCommandChannel? = nil,
                          classicKeys: [MifareClassicKeyCandidate] = [], password: Type2Password? = nil) throws -> any NDEFTag {
    guard let family = NDEFTagFamilies.family(of: atr) else {
        let storage = (try? ATR(bytes: atr))?.storageCard
        let name = storage.map { $0.name ?? "storage card \(Hex.encode([UInt8($0.cardName >> 8), UInt8($0.cardName & 0xFF)]))" } ?? "this card"
        throw TagError(.notNDEF, "no NDEF support for this card: \(name) is not an NFC Forum Type 1, 2, 3, 4 or 5 tag nor a MIFARE Classic")
    }
    if password != nil && !(family is Type2Tag.Type) {
        throw TagCommandError(.noRawPath, "a password is for NTAG21x / Ultralight EV1 tags; this is not one")
    }
    let detection = NDEFDetection(transport: transport, atr: atr, tolerant: tolerant, commands: commands, classicKeys: classicKeys, password: password)
    do {
        return try family.detectNDEF(detection)
    } catch let e as TransmitError where family is Type4Tag.Type {
        // A one-byte answer to the SELECT probe is a native status (a MIFARE Plus in SL3 answers
        // 0B), not ISO 7816: not a Type 4 tag, so the families that speak native frames are next
        // (issue 48).
        guard case let .malformedResponse(bytes) = e, bytes.count == 1 else { throw e }
        do {
            return try MifarePlusNDEFTag.detectNDEF(detection)
        } catch let plus as TagError {
            throw TagError(.notNDEF, "the card answered SELECT of the NDEF application with one byte (\(bytes.hexString)), a native status: not a Type 4 tag; as a MIFARE Plus: \(plus.message)")
        } catch let plus as MifarePlusError where plus.kind == .malformed || plus.kind == .readerRefused {
            // Answers that fit neither family: the card misbehaves, and the first error stands.
            throw e
        } catch let plus as MifarePlusError {
            throw TagError(.notNDEF, "the card answered SELECT of the NDEF application with one byte (\(bytes.hexString)), a native status: not a Type 4 tag, nor a MIFARE Plus in SL3 (\(plus.message))")
        }
    }
}

/// Whether a card needs the reader's tag-command channel for its NDEF procedures (Type 2, 3, 5).
public func usesTagCommands(atr: [UInt8]) -> Bool {
    NDEFTagFamilies.family(of: atr)?.usesTagCommands ?? false
}
