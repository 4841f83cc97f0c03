// Reading the BER of SecurityInfos through swift-asn1's node tree, without trapping on any input.
internal import SwiftASN1

/// Small readers over `ASN1Node`s that throw `.malformed` with what was expected.
enum SecurityInfoASN1 {
    static func fail(_ message: String) -> MRTDProtocolError { MRTDProtocolError(.malformed, message) }

    /// The children of a constructed node with the given identifier.
    static func children(_ node: ASN1Node, _ identifier: ASN1Identifier, _ what: String) throws(MRTDProtocolError) -> [ASN1Node] {
        guard node.identifier == identifier, case let .constructed(nodes) = node.content else { throw fail("\(what) is not a \(identifier == .set ? "SET" : "SEQUENCE")") }
        return Array(nodes)
    }

    static func primitive(_ node: ASN1Node, _ identifier: ASN1Identifier, _ what: String) throws(MRTDProtocolError) -> [UInt8] {
        guard node.identifier == identifier, case let .primitive(bytes) = node.content else { throw fail("\(what) has the wrong type") }
        return Array(bytes)
    }

    static func oid(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> ObjectIdentifier9303 {
        let bytes = try primitive(node, .objectIdentifier, what)
        let oid = ObjectIdentifier9303(encoded: bytes)
        guard !oid.dotted.isEmpty else { throw fail("\(what) is not a valid object identifier") }
        return oid
    }

    /// A small INTEGER (versions, ids): non-negative and at most 4 bytes of value.
    static func smallInteger(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> Int {
        let bytes = try primitive(node, .integer, what)
        guard let first = bytes.first, first & 0x80 == 0 else { throw fail("\(what) is empty or negative") }
        let significant = bytes.drop { $0 == 0 }
        guard significant.count <= 4 else { throw fail("\(what) is too large") }
        return significant.reduce(0) { $0 << 8 | Int($1) }
    }

    /// An unsigned big INTEGER (p, q, a generator), its leading zero dropped.
    static func unsignedInteger(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> [UInt8] {
        let bytes = try primitive(node, .integer, what)
        guard let first = bytes.first, first & 0x80 == 0 else { throw fail("\(what) is empty or negative") }
        let trimmed = Array(bytes.drop { $0 == 0 })
        return trimmed.isEmpty ? [0] : trimmed
    }

    static func octetString(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> [UInt8] {
        try primitive(node, .octetString, what)
    }

    /// A BIT STRING's bytes (whole bytes only: the unused-bits count must be 0).
    static func bitString(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> [UInt8] {
        let bytes = try primitive(node, .bitString, what)
        guard bytes.first == 0 else { throw fail("\(what) is not a whole number of bytes") }
        return Array(bytes.dropFirst())
    }

    /// `bytes` cut after the first object when its length is definite (files padded to a size).
    static func firstObject(_ bytes: [UInt8]) -> [UInt8] {
        guard case let .known(length) = MRTDReader.objectLength(bytes), length > 0, length < bytes.count else { return bytes }
        return Array(bytes.prefix(length))
    }

    static func parse(_ bytes: [UInt8], _ what: String) throws(MRTDProtocolError) -> ASN1Node {
        do { return try BER.parse(bytes) } catch { throw fail("\(what) is not BER: \(error)") }
    }
}
