// The key file: its JSON read and checked whole into tag groups, each with its SDM keys and
// URL template.
import Foundation
import SUN

/// Why the key file cannot be used. The message names the file, the group and the field,
/// never a key's value.
public struct KeyFileError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable { case missing, invalid }
    public var kind: Kind
    public var message: String
    public var description: String { message }
    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// One tag group's keys and URL template: the tags a brand or a batch provisioned alike.
public struct KeyGroup: Sendable {
    public var name: String
    public var keys: SDMKeys
    /// The group's own URL template; nil: the server's (`--template`, or the common names).
    public var template: SUNTemplate?
    /// A key of the group is all zero, a factory key anyone can use to forge taps.
    public var usesFactoryKey = false
    /// The key that signs this group's verdicts for `--redirect` (`redirectKey`); nil: the
    /// file's own.
    public var redirectKey: [UInt8]? = nil
    /// The group's look on the verdict page (`page`: brand, productURL, colour).
    public var look: PageLook? = nil
    /// Where the group's tags mirror their TagTamper status (`tamper`): nil, none.
    public var tamper: SUNTamperPlacement? = nil
}

/// The key file, read: tag groups by name, and the group `GET /` uses.
///
/// JSON, UTF-8 (a byte order mark and CRLF line ends are fine):
///
/// ```json
/// {
///   "default": "factory",
///   "groups": {
///     "factory": { "metaReadKey": "00…00", "fileReadKey": "00…00" },
///     "brand":   { "metaReadKey": "…", "fileReadMasterKey": "…", "systemIdentifier": "4272616E64",
///                  "template": "https://t.example/brand?p={picc}&s={mac}" }
///   }
/// }
/// ```
///
/// A group has `metaReadKey` (SDMMetaReadKey, shared by the group: it decrypts the UID) and
/// either `fileReadKey` (one SDMFileReadKey for every tag) or `fileReadMasterKey` (each tag's
/// key diversified from it and its UID by AN10922 with M = UID ‖ `systemIdentifier`, hex, 0 to
/// 24 bytes). `template` names the URL's parameters when they are not the common ones.
public struct KeyRing: Sendable {
    public var groups: [String: KeyGroup]
    /// The group of `GET /`: the file's `default`, or its only group.
    public var defaultGroup: String?
    /// The file's `redirectKey`: signs the verdicts of groups without their own, and those
    /// that name no group (malformed, unknown group).
    public var redirectKey: [UInt8]? = nil

    /// The key that signs a verdict of `group` (nil: one that names no group).
    public func redirectKey(group: String?) -> [UInt8]? {
        if let group, let key = groups[group]?.redirectKey { return key }
        if let key = redirectKey { return key }
        if group == nil, let d = defaultGroup { return groups[d]?.redirectKey }
        return nil
    }

    public init(groups: [String: KeyGroup], defaultGroup: String?) {
        self.groups = groups
        self.defaultGroup = defaultGroup
    }

    /// Group names: letters, digits, `-`, `_` and `.`, 1 to 64 characters (they are URL path
    /// segments and metric-free log values).
    static func validName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E
        }
    }

    /// Reads and checks the whole file; nothing of it is used unless all of it is valid.
    public static func load(path: String) throws(KeyFileError) -> KeyRing {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeyFileError(.missing, "cannot read the key file \(path)")
        }
        return try parse(Array(data), source: path)
    }

    public static func parse(_ bytes: [UInt8], source: String) throws(KeyFileError) -> KeyRing {
        var bytes = bytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            throw KeyFileError(.invalid, "the key file \(source) is not valid JSON")
        }
        guard let root = object as? [String: Any], let groupsObject = root["groups"] as? [String: Any], !groupsObject.isEmpty else {
            throw KeyFileError(.invalid, "the key file \(source) needs a \"groups\" object with at least one group")
        }
        for key in root.keys where !["groups", "default", "redirectKey"].contains(key) {
            throw KeyFileError(.invalid, "the key file \(source) has an unknown field \"\(safe(key))\" (known: groups, default, redirectKey)")
        }
        let redirectKey = try Self.redirectKey(root["redirectKey"], what: "the key file \(source): \"redirectKey\"")
        var groups: [String: KeyGroup] = [:]
        for (name, value) in groupsObject {
            guard validName(name) else {
                throw KeyFileError(.invalid, "the key file \(source): group name \"\(safe(name))\" must be 1 to 64 letters, digits, '-', '_' or '.'")
            }
            guard let fields = value as? [String: Any] else {
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" must be an object")
            }
            groups[name] = try group(name, fields, source: source)
        }
        var defaultGroup: String?
        if let d = root["default"] {
            guard let d = d as? String, groups[d] != nil else {
                throw KeyFileError(.invalid, "the key file \(source): \"default\" must name one of its groups")
            }
            defaultGroup = d
        } else if groups.count == 1 {
            defaultGroup = groups.keys.first
        }
        var ring = KeyRing(groups: groups, defaultGroup: defaultGroup)
        ring.redirectKey = redirectKey
        return ring
    }

    /// A redirect key: 64 to 128 hex digits (32 to 64 bytes; HS256 wants at least the hash's
    /// size, RFC 7518 §3.2). The value is never repeated in a message.
    static func redirectKey(_ value: Any?, what: String) throws(KeyFileError) -> [UInt8]? {
        guard let value else { return nil }
        guard let text = value as? String, let key = decodeHex(text), (32...64).contains(key.count) else {
            throw KeyFileError(.invalid, "\(what) must be 64 to 128 hex digits (32 to 64 bytes)")
        }
        return key
    }

    static func group(_ name: String, _ fields: [String: Any], source: String) throws(KeyFileError) -> KeyGroup {
        let known = ["metaReadKey", "fileReadKey", "fileReadMasterKey", "systemIdentifier", "template", "redirectKey", "page", "tamper"]
        for key in fields.keys where !known.contains(key) {
            throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" has an unknown field \"\(safe(key))\" (known: \(known.joined(separator: ", ")))")
        }
        func bytes(_ field: String, lengths: ClosedRange<Int>) throws(KeyFileError) -> [UInt8]? {
            guard let value = fields[field] else { return nil }
            // The value is never repeated in a message: it may be a key.
            guard let text = value as? String, let decoded = decodeHex(text), lengths.contains(decoded.count) else {
                let what = lengths.lowerBound == lengths.upperBound ? "\(lengths.lowerBound * 2) hex digits" : "\(lengths.lowerBound * 2) to \(lengths.upperBound * 2) hex digits"
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" field \"\(field)\" must be \(what)")
            }
            return decoded
        }
        guard let meta = try bytes("metaReadKey", lengths: 16...16) else {
            throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" has no \"metaReadKey\"")
        }
        let file = try bytes("fileReadKey", lengths: 16...16)
        let master = try bytes("fileReadMasterKey", lengths: 16...16)
        let system = try bytes("systemIdentifier", lengths: 0...24)
        let keys: SDMKeys
        do {
            switch (file, master) {
            case (let file?, nil):
                guard system == nil else {
                    throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\": \"systemIdentifier\" goes with \"fileReadMasterKey\", not \"fileReadKey\"")
                }
                keys = try SDMKeys(metaRead: meta, fileRead: file)
            case (nil, let master?):
                keys = try SDMKeys(metaRead: meta, fileReadMaster: master, systemIdentifier: system ?? [])
            default:
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" needs exactly one of \"fileReadKey\" and \"fileReadMasterKey\"")
            }
        } catch let error as KeyFileError {
            throw error
        } catch {
            throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\": \(error)")
        }
        var template: SUNTemplate?
        if let t = fields["template"] {
            guard let t = t as? String else { throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" field \"template\" must be a string") }
            do { template = try SUNTemplate(url: t) } catch {
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" template: \(error.message)")
            }
        }
        let zero = [UInt8](repeating: 0, count: 16)
        var group = KeyGroup(name: name, keys: keys, template: template, usesFactoryKey: [meta, file, master].contains { $0 == zero })
        group.redirectKey = try redirectKey(fields["redirectKey"], what: "the key file \(source): group \"\(name)\" field \"redirectKey\"")
        if let page = fields["page"] {
            guard let page = page as? [String: Any], page.keys.allSatisfy({ ["brand", "productURL", "colour"].contains($0) }),
                  page.values.allSatisfy({ $0 is String })
            else {
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" field \"page\" must be an object of strings: brand, productURL, colour")
            }
            let look = PageLook(brand: page["brand"] as? String, productURL: page["productURL"] as? String, colour: page["colour"] as? String)
            if let b = look.brand, b.isEmpty || b.count > 64 { throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\": page.brand is 1 to 64 characters") }
            if let u = look.productURL, !PageLook.validURL(u) {
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\": page.productURL must be an http(s) URL of printable ASCII, at most 512 bytes")
            }
            if let c = look.colour, !PageLook.validColour(c) { throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\": page.colour must be #RGB or #RRGGBB") }
            group.look = look
        }
        if let tamper = fields["tamper"] {
            switch tamper {
            case let t as String where t == "clear": group.tamper = .clear
            case let t as String where t == "file": group.tamper = .fileData(offset: 0)
            case let t as String where t.hasPrefix("file:") && Int(t.dropFirst(5)).map({ (0...254).contains($0) }) == true:
                group.tamper = .fileData(offset: Int(t.dropFirst(5))!)
            default:
                throw KeyFileError(.invalid, "the key file \(source): group \"\(name)\" field \"tamper\" must be \"file\", \"file:OFFSET\" (the status's byte in the decrypted file data) or \"clear\" (the tt parameter)")
            }
        }
        return group
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// A name from the file, for a message: printable ASCII, at most 64 characters.
    static func safe(_ s: String) -> String {
        String(s.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" ? Character($0) : "?" })
    }
}
