// Walking SwiftASN1's BER parse of CMS structures with typed errors: every child is reached by
// iteration, never by index, so a hostile structure ends in an error, not a trap. BER (not
// DER) because US passports encode EF.SOD with indefinite lengths (proxmark3 PR #1145).
internal import SwiftASN1

enum ASN1Tree {
    /// The one BER value in `bytes` (SwiftASN1 limits nesting to 50 and refuses trailing bytes).
    static func parse(_ bytes: ArraySlice<UInt8>, _ what: String) throws(SecurityObjectError) -> ASN1Node {
        do {
            return try BER.parse(bytes)
        } catch {
            throw SecurityObjectError(.format, "\(what) is not BER: \(reason(error))")
        }
    }

    /// SwiftASN1's error without the source location it appends (`ASN1Error.code: reason file:line`).
    static func reason(_ error: any Error) -> String {
        var text = Substring(String(describing: error))
        if text.hasPrefix("ASN1Error.") { text = text.dropFirst("ASN1Error.".count) }
        if let space = text.lastIndex(of: " "), text[space...].contains(".swift:") { text = text[..<space] }
        return String(text)
    }

    static func children(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> [ASN1Node] {
        guard case let .constructed(nodes) = node.content else {
            throw SecurityObjectError(.format, "\(what) is primitive where a constructed value belongs")
        }
        return Array(nodes)
    }

    static func sequence(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> [ASN1Node] {
        guard node.identifier == .sequence else { throw SecurityObjectError(.format, "\(what) is not a SEQUENCE") }
        return try children(node, what)
    }

    static func set(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> [ASN1Node] {
        guard node.identifier == .set else { throw SecurityObjectError(.format, "\(what) is not a SET") }
        return try children(node, what)
    }

    static func isContext(_ node: ASN1Node, _ number: UInt) -> Bool {
        node.identifier.tagClass == .contextSpecific && node.identifier.tagNumber == number
    }

    /// An OBJECT IDENTIFIER in dotted form.
    static func oid(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> String {
        do {
            return try ASN1ObjectIdentifier(berEncoded: node).description
        } catch {
            throw SecurityObjectError(.format, "\(what) is not an object identifier")
        }
    }

    /// A small INTEGER (versions, data group numbers, salt lengths).
    static func integer(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> Int {
        do {
            return try Int(berEncoded: node)
        } catch {
            throw SecurityObjectError(.format, "\(what) is not a small INTEGER")
        }
    }

    /// An INTEGER's content bytes as stored (serial numbers).
    static func integerBytes(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) -> [UInt8] {
        guard node.identifier == .integer, case let .primitive(content) = node.content, !content.isEmpty else {
            throw SecurityObjectError(.format, "\(what) is not an INTEGER")
        }
        return Array(content)
    }

    /// An OCTET STRING's content; BER's constructed (segmented) form is joined.
    static func octets(_ node: ASN1Node, _ what: String, identifier: ASN1Identifier = .octetString) throws(SecurityObjectError) -> [UInt8] {
        do {
            return Array(try ASN1OctetString(berEncoded: node, withIdentifier: identifier).bytes)
        } catch {
            throw SecurityObjectError(.format, "\(what) is not an OCTET STRING")
        }
    }

    /// A string of any ASN.1 string type, as UTF-8 (LDS version info is a PrintableString).
    static func text(_ node: ASN1Node) -> String? {
        guard case let .primitive(content) = node.content else { return nil }
        return String(decoding: content, as: UTF8.self)
    }

    /// UTCTime or GeneralizedTime as a moment.
    static func time(_ node: ASN1Node) -> Timestamp? {
        if let t = try? UTCTime(berEncoded: node) {
            return Timestamp(year: t.year, month: t.month, day: t.day, hour: t.hours, minute: t.minutes, second: t.seconds)
        }
        if let t = try? GeneralizedTime(berEncoded: node) {
            return Timestamp(year: t.year, month: t.month, day: t.day, hour: t.hours, minute: t.minutes, second: t.seconds)
        }
        return nil
    }

    /// The DER encoding of `node`: definite lengths in their shortest form, whatever the BER
    /// said. Tags are kept as they were written.
    static func derEncoding(_ node: ASN1Node) -> [UInt8] {
        let raw = node.encodedBytes
        var tagLength = 1
        if let first = raw.first, first & 0x1F == 0x1F {
            var i = raw.startIndex + 1
            while i < raw.endIndex, raw[i] & 0x80 != 0 { i += 1 }
            tagLength = min(raw.count, i - raw.startIndex + 1)
        }
        let tag = Array(raw.prefix(tagLength))
        let content: [UInt8]
        switch node.content {
        case let .primitive(bytes): content = Array(bytes)
        case let .constructed(nodes): content = nodes.flatMap { derEncoding($0) }
        }
        return tag + derLength(content.count) + content
    }

    static func derLength(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var rest = n
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
