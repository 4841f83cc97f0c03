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
    /// Reads the current message, hands it to `keep` (a backup must be safe before the tag
    /// changes), then writes `message`. Run it inside one transaction.
    func replaceNDEF(with message: [UInt8], keepingOld keep: ([UInt8]) throws -> Void) throws
}

extension NDEFTag {
    public func replaceNDEF(with message: [UInt8], keepingOld keep: ([UInt8]) throws -> Void) throws {
        try keep(try readNDEF())
        try writeNDEF(message)
    }
}

extension Type4Tag: NDEFTag {
    public var kind: String { "type4" }
    public var mappingVersion: String { capabilityContainer.versionString }
    public var uid: [UInt8]? { readerUID }
    public var capacity: Int { capabilityContainer.capacity }
}
