/// What the ndef-* commands need from any NFC Forum tag type.
public protocol NDEFTag: AnyObject {
    /// `type4` or `type2`.
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
}

extension Type4Tag: NDEFTag {
    public var kind: String { "type4" }
    public var mappingVersion: String { capabilityContainer.versionString }
    public var uid: [UInt8]? { readerUID }
    public var capacity: Int { capabilityContainer.capacity }
}
