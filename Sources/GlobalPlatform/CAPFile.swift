// Java Card CAP files (Java Card VM specification 3.0.5 §6): a ZIP of components, loaded in the
// VM's order, which is not the ZIP's (the card refuses a load file out of order with 6A 80).
// The ZIP reader takes stored entries, which is how the Java Card converter writes them; a
// deflated entry is named in a clear error.
import CardCrypto

/// A CAP file: its package, applets, imports and the load file data block the card is sent.
public struct CAPFile: Sendable, Hashable {
    public struct Package: Sendable, Hashable {
        public var aid: [UInt8]
        public var version: (major: UInt8, minor: UInt8)
        public static func == (a: Package, b: Package) -> Bool { a.aid == b.aid && a.version == b.version }
        public func hash(into h: inout Hasher) { h.combine(aid) }
    }

    public var package: Package
    /// The applet classes (modules) an application can be installed from.
    public var applets: [[UInt8]]
    public var imports: [Package]
    /// Components by name ("Header", "Method", …), as the ZIP holds them.
    public var components: [String: [UInt8]]

    /// The Java Card VM's load order (JCVM 3.0.5 §6.2); Descriptor last and optional.
    public static let loadOrder = ["Header", "Directory", "Import", "Applet", "Class", "Method", "StaticField", "Export", "ConstantPool", "RefLocation", "Descriptor"]

    public init(zip: [UInt8]) throws(GlobalPlatformError) {
        var components: [String: [UInt8]] = [:]
        for (name, data) in try ZIPReader.entries(zip) where name.hasSuffix(".cap") && name.contains("javacard/") {
            let base = String(name.split(separator: "/").last!.dropLast(4))
            components[base] = data
        }
        try self.init(components: components)
    }

    public init(components: [String: [UInt8]]) throws(GlobalPlatformError) {
        self.components = components
        guard let header = components["Header"], header.count >= 3 + 10, header[0] == 1, header[3..<7] == [0xDE, 0xCA, 0xFF, 0xED] else {
            throw GlobalPlatformError(.malformed, "the CAP file has no Header component with the DECAFFED magic")
        }
        // tag, size(2), magic(4), minor, major, flags, then package: minor, major, AID length, AID.
        let n = Int(header[12])
        guard n >= 5, n <= 16, header.count >= 13 + n else { throw GlobalPlatformError(.malformed, "the Header component's package AID is cut") }
        package = Package(aid: Array(header[13..<(13 + n)]), version: (header[11], header[10]))
        var applets: [[UInt8]] = []
        if let applet = components["Applet"], applet.count >= 4 {
            var i = 4
            for _ in 0..<Int(applet[3]) {
                guard i < applet.count else { throw GlobalPlatformError(.malformed, "the Applet component is cut") }
                let n = Int(applet[i])
                guard i + 1 + n + 2 <= applet.count else { throw GlobalPlatformError(.malformed, "the Applet component is cut") }
                applets.append(Array(applet[(i + 1)..<(i + 1 + n)]))
                i += 1 + n + 2
            }
        }
        self.applets = applets
        var imports: [Package] = []
        if let imp = components["Import"], imp.count >= 4 {
            var i = 4
            for _ in 0..<Int(imp[3]) {
                guard i + 3 <= imp.count else { throw GlobalPlatformError(.malformed, "the Import component is cut") }
                let n = Int(imp[i + 2])
                guard i + 3 + n <= imp.count else { throw GlobalPlatformError(.malformed, "the Import component is cut") }
                imports.append(Package(aid: Array(imp[(i + 3)..<(i + 3 + n)]), version: (imp[i + 1], imp[i])))
                i += 3 + n
            }
        }
        self.imports = imports
    }

    /// The components in load order, each as the ZIP holds it (tag, size, body).
    public func loadFile(includeDescriptor: Bool = false) -> [UInt8] {
        Self.loadOrder.filter { includeDescriptor || $0 != "Descriptor" }.flatMap { components[$0] ?? [] }
    }

    /// The load file data block: C4, its BER length, the load file.
    public func loadFileDataBlock(includeDescriptor: Bool = false) throws(GlobalPlatformError) -> [UInt8] {
        let file = loadFile(includeDescriptor: includeDescriptor)
        let n = file.count
        // C4's length in at most three bytes (GlobalPlatform's 83 form): 16 MiB less one.
        guard n < 0x100_0000 else { throw GlobalPlatformError(.policy, "the load file is \(n) bytes; a load file data block holds at most 16,777,215") }
        let length: [UInt8] = n < 0x80 ? [UInt8(n)] : n < 0x100 ? [0x81, UInt8(n)] : n < 0x10000 ? [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
                                                                : [0x83, UInt8(n >> 16), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        return [0xC4] + length + file
    }
}

/// The ZIP format's stored entries (PKWARE APPNOTE 6.3: the central directory, local headers,
/// CRC-32 checked).
enum ZIPReader {
    static func u16(_ d: [UInt8], _ i: Int) -> Int { Int(d[i]) | Int(d[i + 1]) << 8 }
    static func u32(_ d: [UInt8], _ i: Int) -> Int { u16(d, i) | u16(d, i + 2) << 16 }

    static func entries(_ zip: [UInt8]) throws(GlobalPlatformError) -> [(String, [UInt8])] {
        guard zip.count >= 22 else { throw GlobalPlatformError(.malformed, "not a ZIP file (too short)") }
        var end = -1
        var i = zip.count - 22
        while i >= max(0, zip.count - 22 - 0xFFFF) {
            if zip[i] == 0x50, zip[i + 1] == 0x4B, zip[i + 2] == 0x05, zip[i + 3] == 0x06 { end = i; break }
            i -= 1
        }
        guard end >= 0 else { throw GlobalPlatformError(.malformed, "not a ZIP file (no end of central directory)") }
        let count = u16(zip, end + 10)
        var p = u32(zip, end + 16)
        var out: [(String, [UInt8])] = []
        for _ in 0..<count {
            guard p + 46 <= zip.count, u32(zip, p) == 0x0201_4B50 else { throw GlobalPlatformError(.malformed, "the ZIP's central directory is cut") }
            let method = u16(zip, p + 10), crc = u32(zip, p + 16), size = u32(zip, p + 20), stored = u32(zip, p + 24)
            let nameLength = u16(zip, p + 28), extra = u16(zip, p + 30), comment = u16(zip, p + 32), local = u32(zip, p + 42)
            guard p + 46 + nameLength <= zip.count else { throw GlobalPlatformError(.malformed, "the ZIP's central directory is cut") }
            let name = String(decoding: zip[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self)
            p += 46 + nameLength + extra + comment
            guard local + 30 <= zip.count, u32(zip, local) == 0x0403_4B50 else { throw GlobalPlatformError(.malformed, "the ZIP entry \(name) has no local header") }
            let start = local + 30 + u16(zip, local + 26) + u16(zip, local + 28)
            guard start + size <= zip.count else { throw GlobalPlatformError(.malformed, "the ZIP entry \(name) is cut") }
            guard name.hasSuffix(".cap") else { continue }
            guard method == 0, size == stored else {
                throw GlobalPlatformError(.malformed, "the ZIP entry \(name) is compressed (method \(method)); only stored entries are read, as the Java Card converter writes them")
            }
            let data = Array(zip[start..<(start + size)])
            let c = CRC.crc32(data)
            let value = ~(UInt32(c[0]) | UInt32(c[1]) << 8 | UInt32(c[2]) << 16 | UInt32(c[3]) << 24)
            guard Int(value) == crc else { throw GlobalPlatformError(.malformed, "the ZIP entry \(name) fails its CRC-32") }
            out.append((name, data))
        }
        return out
    }
}
