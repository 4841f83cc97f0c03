// Certification Authority public keys: the schemes' published keys, each checked against its
// SHA-1 checksum when loaded, and keys added from a file in proxmark3's capk.txt line format.
import CardCrypto
import ISO7816

/// A payment scheme's CA public key (EMV Book 2 §11.2.2).
public struct CAPublicKey: Sendable, Hashable {
    /// The scheme's RID (5 bytes).
    public var rid: [UInt8]
    /// The CA public key index (8F).
    public var index: UInt8
    public var key: EMVPublicKey
    /// The last day the key is valid, as YYMMDD (BCD; 000000 when the source gives none). After
    /// it, ODA under the key fails: the schemes withdraw expired keys (issue 48).
    public var expiry: [UInt8]
    /// SHA-1 over RID ‖ index ‖ modulus ‖ exponent.
    public var checksum: [UInt8]
    /// A scheme's test key (test cards and terminals only), not a live one.
    public var test: Bool

    /// The checksum the key's values give (Book 2 §11.2.2).
    public static func checksum(rid: [UInt8], index: UInt8, key: EMVPublicKey) -> [UInt8] {
        Digest.sha1.hash(rid + [index] + key.modulus + key.exponent)
    }

    /// A key whose checksum is checked now: a key with a wrong checksum is refused.
    public init(rid: [UInt8], index: UInt8, modulus: [UInt8], exponent: [UInt8], expiry: [UInt8], checksum: [UInt8], test: Bool = false) throws(EMVFormatError) {
        let key = EMVPublicKey(modulus: modulus, exponent: exponent)
        guard rid.count == 5 else { throw EMVFormatError("a RID is 5 bytes, \(rid.hexString) is \(rid.count)") }
        guard !modulus.isEmpty, modulus.count <= 248, [[0x03], [0x01, 0x00, 0x01]].contains(exponent) else {
            throw EMVFormatError("CA key \(rid.hexString) \(Hex.encode([index])): modulus of \(modulus.count) bytes, exponent \(exponent.hexString) (EMV allows up to 248 bytes, exponent 03 or 010001)")
        }
        let computed = Self.checksum(rid: rid, index: index, key: key)
        guard computed == checksum else {
            throw EMVFormatError("CA key \(rid.hexString) \(Hex.encode([index])): its checksum \(checksum.hexString) is not the SHA-1 of its values (\(computed.hexString))")
        }
        self.rid = rid
        self.index = index
        self.key = key
        self.expiry = expiry
        self.checksum = checksum
        self.test = test
    }
}

/// A set of CA keys, looked up by RID and index.
public struct CAPublicKeys: Sendable {
    public private(set) var keys: [CAPublicKey]

    public init(_ keys: [CAPublicKey] = []) { self.keys = keys }

    /// The key for a card's RID and index (8F), live keys before test keys.
    public func key(rid: [UInt8], index: UInt8) -> CAPublicKey? {
        keys.filter { $0.rid == rid && $0.index == index }.sorted { !$0.test && $1.test }.first
    }

    /// The indexes held for a RID, sorted (empty: no key of that scheme at all).
    public func indexes(rid: [UInt8]) -> [UInt8] {
        Array(Set(keys.filter { $0.rid == rid }.map(\.index))).sorted()
    }

    public mutating func add(_ more: [CAPublicKey]) { keys += more }

    /// Parses keys in proxmark3's `client/resources/capk.txt` line format:
    /// `a0:00:00:00:03 94 311231 rsa 03 <modulus> sha1 <checksum>`, `#` comments, blank lines;
    /// CRLF and a BOM are fine. Every checksum is checked.
    /// - Throws: `EMVFormatError` naming the line.
    public static func parse(capkFile text: String, test: Bool = false) throws(EMVFormatError) -> [CAPublicKey] {
        var out: [CAPublicKey] = []
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        for (n, raw) in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)?
                .trimmingCharacters(in: " \t\r") ?? ""
            guard !line.isEmpty else { continue }
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            func bad(_ why: String) -> EMVFormatError { EMVFormatError("CA key file line \(n + 1): \(why)") }
            guard f.count == 8, f[3].lowercased() == "rsa", f[6].lowercased() == "sha1" else {
                throw bad("expected `RID INDEX YYMMDD rsa EXPONENT MODULUS sha1 CHECKSUM`, got \(f.count) fields")
            }
            guard let rid = try? Hex.decode(f[0].replacingOccurrences(of: ":", with: "")), rid.count == 5 else { throw bad("the RID '\(f[0])' is not 5 bytes of hex") }
            guard let index = try? Hex.decode(f[1]), index.count == 1 else { throw bad("the index '\(f[1])' is not one byte of hex") }
            guard let expiry = try? Hex.decode(f[2]), expiry.count == 3 else { throw bad("the expiry '\(f[2])' is not YYMMDD") }
            guard let exponent = try? Hex.decode(f[4]) else { throw bad("the exponent '\(f[4])' is not hex") }
            guard let modulus = try? Hex.decode(f[5]) else { throw bad("the modulus is not hex") }
            guard let checksum = try? Hex.decode(f[7]), checksum.count == 20 else { throw bad("the checksum is not 20 bytes of hex") }
            do {
                out.append(try CAPublicKey(rid: rid, index: index[0], modulus: modulus, exponent: exponent, expiry: expiry, checksum: checksum, test: test))
            } catch {
                throw bad(error.message)
            }
        }
        return out
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return String(s)
    }

    fileprivate func replacingOccurrences(of a: String, with b: String) -> String {
        split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
