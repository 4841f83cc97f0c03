// The GlobalPlatform registry as GET STATUS returns it (Card Specification §11.4), in the tag
// format (E3, P2 02) and the legacy one (P2 00), life cycles and privileges in words.
import ISO7816

/// One entry of the registry.
public struct RegistryEntry: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case issuerSecurityDomain = "ISD", securityDomain = "SD", application = "APP", loadFile = "PKG"
    }
    public var kind: Kind
    public var aid: [UInt8]
    public var lifeCycle: UInt8
    public var privileges: [UInt8]
    public var associatedSecurityDomain: [UInt8]?
    public var loadFile: [UInt8]?
    public var version: [UInt8]?
    /// A load file's executable modules (the applet classes an application can be made from).
    public var modules: [[UInt8]]

    public init(kind: Kind, aid: [UInt8], lifeCycle: UInt8, privileges: [UInt8] = [], associatedSecurityDomain: [UInt8]? = nil,
                loadFile: [UInt8]? = nil, version: [UInt8]? = nil, modules: [[UInt8]] = []) {
        self.kind = kind
        self.aid = aid
        self.lifeCycle = lifeCycle
        self.privileges = privileges
        self.associatedSecurityDomain = associatedSecurityDomain
        self.loadFile = loadFile
        self.version = version
        self.modules = modules
    }

    /// The life cycle in the words of Card Specification §5.1.
    public var lifeCycleName: String {
        switch kind {
        case .issuerSecurityDomain:
            switch lifeCycle {
            case 0x01: return "OP_READY"
            case 0x07: return "INITIALIZED"
            case 0x0F: return "SECURED"
            case 0x7F: return "CARD_LOCKED"
            case 0xFF: return "TERMINATED"
            default: return "unknown (\(hex(lifeCycle)))"
            }
        case .loadFile:
            return lifeCycle == 0x01 ? "LOADED" : "unknown (\(hex(lifeCycle)))"
        case .securityDomain, .application:
            if lifeCycle & 0x80 != 0 { return "LOCKED" }
            switch lifeCycle {
            case 0x03: return "INSTALLED"
            case 0x07: return "SELECTABLE"
            case 0x0F: return kind == .securityDomain ? "PERSONALIZED" : "SELECTABLE (application state 0F)"
            default: return lifeCycle & 0x07 == 0x07 ? "SELECTABLE (application state \(hex(lifeCycle)))" : "unknown (\(hex(lifeCycle)))"
            }
        }
    }

    public var isLocked: Bool {
        kind == .issuerSecurityDomain ? lifeCycle == 0x7F || lifeCycle == 0xFF : kind != .loadFile && lifeCycle & 0x80 != 0
    }

    /// The privileges in words (Card Specification Table 11-7).
    public var privilegeNames: [String] {
        var names: [String] = []
        let b1 = privileges.first ?? 0
        let table: [(UInt8, String)] = [(0x80, "SecurityDomain"), (0x40, "DAPVerification"), (0x20, "DelegatedManagement"), (0x10, "CardLock"),
                                        (0x08, "CardTerminate"), (0x04, "CardReset"), (0x02, "CVMManagement"), (0x01, "MandatedDAPVerification")]
        for (bit, name) in table where b1 & bit != 0 { names.append(name) }
        if privileges.count >= 3 {
            let more: [(Int, UInt8, String)] = [(1, 0x80, "TrustedPath"), (1, 0x40, "AuthorizedManagement"), (1, 0x20, "TokenVerification"),
                                                (1, 0x10, "GlobalDelete"), (1, 0x08, "GlobalLock"), (1, 0x04, "GlobalRegistry"),
                                                (1, 0x02, "FinalApplication"), (1, 0x01, "GlobalService"), (2, 0x80, "ReceiptGeneration"),
                                                (2, 0x40, "CipheredLoadFileDataBlock"), (2, 0x20, "ContactlessActivation"),
                                                (2, 0x10, "ContactlessSelfActivation")]
            for (byte, bit, name) in more where privileges[byte] & bit != 0 { names.append(name) }
        }
        return names
    }
}

/// GET STATUS's answers, parsed.
public enum RegistryParser {
    /// One answer in the tag format: E3 entries.
    public static func tagFormat(_ data: [UInt8], kind: RegistryEntry.Kind) throws(GlobalPlatformError) -> [RegistryEntry] {
        let objects: [TLV]
        do { objects = try BERTLV.decode(data) } catch { throw GlobalPlatformError(.malformed, "GET STATUS answer: \(error)") }
        var out: [RegistryEntry] = []
        for object in objects {
            guard object.tag == [0xE3], let children = object.children else {
                throw GlobalPlatformError(.malformed, "GET STATUS answer: tag \(object.tagHex) where E3 was expected")
            }
            func value(_ tag: [UInt8]) -> [UInt8]? { children.first { $0.tag == tag }?.value }
            guard let aid = value([0x4F]), (5...16).contains(aid.count), let life = value([0x9F, 0x70]), !life.isEmpty else {
                throw GlobalPlatformError(.malformed, "GET STATUS answer: an E3 entry without its AID (4F) or life cycle (9F70)")
            }
            var entry = RegistryEntry(kind: kind, aid: aid, lifeCycle: life[0], privileges: value([0xC5]) ?? [])
            if kind == .application, entry.privileges.first.map({ $0 & 0x80 != 0 }) == true { entry.kind = .securityDomain }
            entry.associatedSecurityDomain = value([0xCC])
            entry.loadFile = value([0xC4])
            entry.version = value([0xCE])
            entry.modules = children.filter { $0.tag == [0x84] }.map(\.value)
            out.append(entry)
        }
        return out
    }

    /// One answer in the legacy format: length, AID, life cycle, privileges; load files with
    /// modules (P1 10) add a count and each module's length and AID.
    public static func legacyFormat(_ data: [UInt8], kind: RegistryEntry.Kind, withModules: Bool) throws(GlobalPlatformError) -> [RegistryEntry] {
        var out: [RegistryEntry] = []
        var i = 0
        func take(_ n: Int) throws(GlobalPlatformError) -> [UInt8] {
            guard n >= 0, i + n <= data.count else { throw GlobalPlatformError(.malformed, "GET STATUS answer (legacy format) ends inside an entry at byte \(i)") }
            defer { i += n }
            return Array(data[i..<(i + n)])
        }
        while i < data.count {
            let length = Int(try take(1)[0])
            guard (5...16).contains(length) else { throw GlobalPlatformError(.malformed, "GET STATUS answer (legacy format): an AID of \(length) bytes") }
            let aid = try take(length)
            let life = try take(1)[0]
            let privileges = try take(1)
            var entry = RegistryEntry(kind: kind, aid: aid, lifeCycle: life, privileges: kind == .loadFile ? [] : privileges)
            if kind == .application, privileges[0] & 0x80 != 0 { entry.kind = .securityDomain }
            if withModules {
                let count = Int(try take(1)[0])
                for _ in 0..<count {
                    let n = Int(try take(1)[0])
                    entry.modules.append(try take(n))
                }
            }
            out.append(entry)
        }
        return out
    }
}
