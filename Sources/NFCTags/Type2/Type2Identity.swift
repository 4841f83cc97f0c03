// Who a Type 2 tag is for `apdu tag-info`: UID, chip, originality signature and NFC counter,
// as far as the reader's path can ask.
import ISO7816

/// Who a Type 2 tag is: UID, chip (GET_VERSION), originality signature and NFC counter, as far
/// as the reader's path lets us ask (`apdu tag-info`).
public struct Type2Identity: Sendable {
    public var uid: [UInt8]?
    /// The PC/SC Part 3 card name from the ATR.
    public var cardName: UInt16?
    public var version: Type2Version?
    /// The chip's name: from GET_VERSION, else from the ATR.
    public var chipName: String
    public var signature: OriginalitySignature?
    /// The NXP key the signature verifies with; nil: it does not verify (or there is none).
    public var signatureKey: OriginalitySignature.PublicKey?
    /// The NFC counter, when enabled and readable.
    public var counter: Int?
    /// What could not be asked, and why (a storage-only reader, a tag without the command).
    public var notes: [String]

    /// Asks the tag, through `commands` where the reader has a native path. Errors of the
    /// channel (a pulled card) are thrown; a tag that does not know a command is a note.
    public static func read(_ transport: APDUTransport, atr: [UInt8], commands: TagCommandChannel?) throws -> Type2Identity {
        let uidAnswer = try transport.send(.getUID)
        let uid = uidAnswer.statusWord == .success && !uidAnswer.data.isEmpty ? uidAnswer.data : nil
        let storage = (try? ATR(bytes: atr))?.storageCard
        var identity = Type2Identity(uid: uid, cardName: storage?.cardName, version: nil,
                                     chipName: storage.map { "unknown (ATR card name \(Hex.encode([UInt8($0.cardName >> 8), UInt8($0.cardName & 0xFF)])): \($0.name ?? "storage card"))" } ?? "unknown",
                                     signature: nil, signatureKey: nil, counter: nil, notes: [])
        guard let commands, commands.dialect != .storageOnly else {
            identity.notes.append("\(commands?.readerName ?? "the reader") offers no raw tag-command path: no GET_VERSION, signature or counter (storage pseudo-APDUs only)")
            return identity
        }
        if storage?.cardName == 0x003A {
            identity.notes.append("MIFARE Ultralight C has no GET_VERSION or originality signature")
            return identity
        }
        identity.version = try commands.getVersion()
        guard let version = identity.version else {
            try commands.reactivate()
            identity.notes.append("the tag does not answer GET_VERSION (MIFARE Ultralight or another Type 2 chip): no signature to read")
            return identity
        }
        identity.chipName = version.productName
        if let bytes = try commands.readSignature() {
            let signature = OriginalitySignature(uid: uid ?? [], signature: bytes)
            identity.signature = signature
            let keys = version.productType == 0x03 ? [OriginalitySignature.PublicKey.ultralightEV1] : [.ntag21x, .ultralightEV1]
            identity.signatureKey = signature.verifyingKey(among: keys)
        } else {
            try commands.reactivate()
            identity.notes.append("the tag returned no originality signature")
        }
        if [0x0F, 0x11, 0x13].contains(version.storageSizeByte), version.productType == 0x04, version.productSubtype == 0x02 {
            identity.counter = try commands.readCounter()
            if identity.counter == nil {
                try commands.reactivate()
                identity.notes.append("NFC counter disabled (NFC_CNT_EN) or password-protected")
            }
        }
        return identity
    }
}
