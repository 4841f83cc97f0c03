// What a card says of itself before any authentication: CPLC (9F7F), card recognition data (66),
// the key information template (E0), IIN (42) and CIN (45). Card Specification §11.3 (GET DATA),
// Appendix H (card recognition data), §11.3.3.1 (key information).
import ISO7816

/// The card production life cycle data (GlobalPlatform / Visa, 42 bytes).
public struct CPLC: Sendable, Hashable {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: [UInt8]
    }
    public var fields: [Field]

    static let layout: [(String, Int)] = [
        ("IC fabricator", 2), ("IC type", 2), ("operating system ID", 2), ("operating system release date", 2),
        ("operating system release level", 2), ("IC fabrication date", 2), ("IC serial number", 4), ("IC batch identifier", 2),
        ("IC module fabricator", 2), ("IC module packaging date", 2), ("ICC manufacturer", 2), ("IC embedding date", 2),
        ("IC pre-personalizer", 2), ("IC pre-personalization date", 2), ("IC pre-personalization equipment", 4),
        ("IC personalizer", 2), ("IC personalization date", 2), ("IC personalization equipment", 4),
    ]

    /// `data`: GET DATA 9F7F's answer, with or without its 9F7F tag.
    public init(_ data: [UInt8]) throws(GlobalPlatformError) {
        var body = data
        if body.count >= 3, body[0] == 0x9F, body[1] == 0x7F { body = Array(body[3...]) }
        guard body.count >= 42 else { throw GlobalPlatformError(.malformed, "CPLC is 42 bytes, the card sent \(body.count)") }
        var offset = 0
        fields = Self.layout.map { name, size in
            defer { offset += size }
            return Field(name: name, value: Array(body[offset..<(offset + size)]))
        }
    }
}

/// Card recognition data (tag 66, Appendix H): the GlobalPlatform version and the secure
/// channel protocols the card offers.
public struct CardRecognitionData: Sendable, Hashable {
    /// "2.2.1".
    public var globalPlatformVersion: String?
    public var protocols: [SecureChannelProtocol]

    static let gpOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xFC, 0x6B]

    public init(_ data: [UInt8]) throws(GlobalPlatformError) {
        let objects: [TLV]
        do { objects = try BERTLV.decode(data) } catch { throw GlobalPlatformError(.malformed, "card recognition data: \(error)") }
        var version: String?
        var protocols: [SecureChannelProtocol] = []
        func walk(_ list: [TLV], _ parent: [UInt8]) {
            for object in list {
                if let children = object.children { walk(children, object.tag); continue }
                guard object.tag == [0x06], object.value.starts(with: Self.gpOID), object.value.count > 7 else { continue }
                let arc = object.value[6]
                let rest = Array(object.value[7...])
                if parent == [0x60], arc == 2 { version = rest.map(String.init).joined(separator: ".") }
                if parent == [0x64], arc == 4, rest.count >= 2 { protocols.append(SecureChannelProtocol(version: rest[0], i: rest[1])) }
            }
        }
        walk(objects, [])
        globalPlatformVersion = version
        self.protocols = protocols
    }
}

/// One key of the key information template (E0).
public struct KeyInformation: Sendable, Hashable, CustomStringConvertible {
    public var id: UInt8
    public var version: UInt8
    /// Key type and length pairs: 80 DES (triple DES), 88 AES, others as the card names them.
    public var components: [(type: UInt8, length: Int)]

    public static func == (a: KeyInformation, b: KeyInformation) -> Bool {
        a.id == b.id && a.version == b.version && a.components.map(\.type) == b.components.map(\.type) && a.components.map(\.length) == b.components.map(\.length)
    }
    public func hash(into h: inout Hasher) { h.combine(id); h.combine(version) }

    public var typeName: String {
        guard let first = components.first else { return "?" }
        switch first.type {
        case 0x80: return "3DES"
        case 0x88: return "AES-\(first.length * 8)"
        case 0xA1, 0xA0: return "RSA"
        default: return "type \(hex(first.type))"
        }
    }

    public var description: String { "key \(hex(id)) version \(hex(version)) \(typeName) (\(components.first?.length ?? 0) bytes)" }

    /// GET DATA 00E0's answer: E0 { C0 { id, version, (type, length)… } … }.
    public static func parse(_ data: [UInt8]) throws(GlobalPlatformError) -> [KeyInformation] {
        let objects: [TLV]
        do { objects = try BERTLV.decode(data) } catch { throw GlobalPlatformError(.malformed, "key information: \(error)") }
        let entries = objects.first(where: { $0.tag == [0xE0] })?.children ?? objects
        return entries.filter { $0.tag == [0xC0] && $0.value.count >= 2 }.map { entry in
            var components: [(UInt8, Int)] = []
            var i = 2
            while i + 1 < entry.value.count {
                // The extended format (FF type) uses two-byte lengths; the basic one a byte.
                if entry.value[i] == 0xFF, i + 3 < entry.value.count {
                    components.append((entry.value[i + 1], Int(entry.value[i + 2]) << 8 | Int(entry.value[i + 3])))
                    i += 4
                } else {
                    components.append((entry.value[i], Int(entry.value[i + 1])))
                    i += 2
                }
            }
            return KeyInformation(id: entry.value[0], version: entry.value[1], components: components)
        }
    }
}

/// Everything `apdu gp info` shows, read without authenticating.
public struct CardInformation: Sendable, Hashable {
    /// The AID of the Security Domain SELECT found.
    public var isdAID: [UInt8]
    /// Whether `isdAID` is the one the card named in its SELECT answer (the FCI's tag 84), or
    /// only the AID the SELECT asked for (a card that answers with no FCI).
    public var isdAIDFromFCI: Bool
    /// Key diversification data (GET DATA 00CF) and the sequence counter of the default key
    /// version (00C1), when the card gives them without authentication.
    public var keyDiversificationData: [UInt8]?
    public var sequenceCounter: [UInt8]?
    public var cplc: CPLC?
    public var recognition: CardRecognitionData?
    public var keys: [KeyInformation]
    public var iin: [UInt8]?
    public var cin: [UInt8]?
    /// The ISD's life cycle from the FCI's 9F6E, when the card puts it there.
    public var selectAnswer: [UInt8]
}
