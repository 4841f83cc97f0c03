// The signed verdict a landing page receives from `apdu-sun-server --redirect` (issue 51): a JWS
// in compact form (RFC 7515) with HS256 (RFC 7518 §3.2), so that any JWT library can check it,
// and the HMAC-SHA256 under it (RFC 2104) written over libcrypto's SHA-256.
internal import CardCrypto
import FoundationEssentials

/// Why a verdict token was refused. Never carries the key.
public struct SUNTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// Not three base64url parts, a header or payload that is not the JSON of a verdict.
        case malformed
        /// The header names another algorithm than HS256 (`none` among them).
        case algorithm
        /// The signature does not verify: another key, or a changed byte.
        case signature
        /// Past its `exp`.
        case expired
        /// A key shorter than 32 bytes.
        case badKey
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// A tap's verdict as the landing page of `--redirect` receives it: signed with HMAC-SHA256
/// under a key the server and the landing site share, so that the page can tell a verdict the
/// server gave from a query string anyone can type.
///
/// The token is a JWT (RFC 7519): header `{"alg":"HS256","typ":"JWT"}`, the claims below, the
/// signature over `BASE64URL(header) . BASE64URL(claims)`.
public struct SUNVerdictToken: Sendable, Hashable {
    /// What the server concluded: `genuine` (MAC valid, counter fresh), `replay`, `invalid`,
    /// `malformed`, `unknownGroup`.
    public var verdict: String
    /// The answer's code (`invalidMAC`, `replay`, `malformed`, …); nil for `genuine`.
    public var code: String?
    /// The UID in hex, when the MAC verified.
    public var uid: String?
    public var counter: Int?
    /// The TagTamper status letters the MAC covered, when the tag mirrors them.
    public var tamper: SUNTagTamperStatus?
    /// The key file's group that verified the tap.
    public var group: String?
    /// Issued at and expires at, seconds since 1970 (UTC).
    public var issuedAt: Int
    public var expires: Int

    public init(verdict: String, code: String? = nil, uid: String? = nil, counter: Int? = nil, tamper: SUNTagTamperStatus? = nil, group: String? = nil, issuedAt: Int, expires: Int) {
        self.verdict = verdict
        self.code = code
        self.uid = uid
        self.counter = counter
        self.tamper = tamper
        self.group = group
        self.issuedAt = issuedAt
        self.expires = expires
    }

    /// True only for the verdict a genuine, first-seen tap gets.
    public var isGenuine: Bool { verdict == "genuine" }

    /// The issuer the server writes (`iss`).
    public static let issuer = "apdu-sun-server"
    /// The shortest key accepted: HS256 wants at least the hash's size (RFC 7518 §3.2).
    public static let minimumKeyBytes = 32

    static let header = Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)

    /// The compact JWS: `header.claims.signature`, base64url without padding.
    public func signed(key: [UInt8]) throws(SUNTokenError) -> String {
        guard key.count >= Self.minimumKeyBytes else { throw SUNTokenError(.badKey, "a redirect key is at least \(Self.minimumKeyBytes) bytes, not \(key.count)") }
        let input = Base64URL.encode(Self.header) + "." + Base64URL.encode(Array(claimsJSON.utf8))
        return input + "." + Base64URL.encode(HMACSHA256.mac(key: key, message: Array(input.utf8)))
    }

    /// The claims, written by hand in a fixed order (no reflection on the answer's path).
    var claimsJSON: String {
        var s = "{\"iss\":\"\(Self.issuer)\",\"verdict\":" + Self.quoted(verdict) + ",\"valid\":" + (isGenuine ? "true" : "false")
        if let code { s += ",\"code\":" + Self.quoted(code) }
        if let uid { s += ",\"uid\":" + Self.quoted(uid) }
        if let counter { s += ",\"counter\":\(counter)" }
        if let tamper { s += ",\"tamper\":{\"permanent\":" + Self.quoted(tamper.permanent.name) + ",\"current\":" + Self.quoted(tamper.current.name) + "}" }
        if let group { s += ",\"group\":" + Self.quoted(group) }
        s += ",\"iat\":\(issuedAt),\"exp\":\(expires)}"
        return s
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20:
                let hex = Array("0123456789abcdef")
                out += "\\u00" + String(hex[Int(u.value >> 4)]) + String(hex[Int(u.value & 0xF)])
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// Checks a token: exactly HS256, the signature in constant time under `key`, then not
    /// expired at `now` (seconds since 1970). The claims are read only after the signature holds.
    public init(verifying token: String, key: [UInt8], now: Int) throws(SUNTokenError) {
        guard key.count >= Self.minimumKeyBytes else { throw SUNTokenError(.badKey, "a redirect key is at least \(Self.minimumKeyBytes) bytes, not \(key.count)") }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]) else {
            throw SUNTokenError(.malformed, "not a JWT: three base64url parts separated by '.'")
        }
        struct Header: Decodable { var alg: String }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)) else {
            throw SUNTokenError(.malformed, "the token's header is not JSON with \"alg\"")
        }
        guard header.alg == "HS256" else { throw SUNTokenError(.algorithm, "the token is signed with \(header.alg.prefix(16)), not HS256") }
        let input = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
        guard constantTimeEquals(HMACSHA256.mac(key: key, message: input), signature) else {
            throw SUNTokenError(.signature, "the token's signature does not verify: another key, or the token was changed")
        }
        struct Tamper: Decodable { var permanent: String, current: String }
        struct Claims: Decodable {
            var verdict: String, code: String?, uid: String?, counter: Int?, tamper: Tamper?, group: String?, iat: Int, exp: Int
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes)) else {
            throw SUNTokenError(.malformed, "the token's claims are not a verdict (verdict, iat, exp)")
        }
        guard now < claims.exp else { throw SUNTokenError(.expired, "the token expired \(now.subtractingReportingOverflow(claims.exp).partialValue &+ 1) s ago") }
        var tamper: SUNTagTamperStatus?
        if let t = claims.tamper {
            guard let p = SUNTagTamperStatus.State(name: t.permanent), let c = SUNTagTamperStatus.State(name: t.current) else {
                throw SUNTokenError(.malformed, "the token's tamper status is not closed, open or notEnabled")
            }
            tamper = SUNTagTamperStatus(permanent: p, current: c)
        }
        self.init(verdict: claims.verdict, code: claims.code, uid: claims.uid, counter: claims.counter, tamper: tamper, group: claims.group, issuedAt: claims.iat, expires: claims.exp)
    }
}

/// HMAC (RFC 2104) with SHA-256, for the verdict token.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? Digest.sha256.hash(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = Digest.sha256.hash(k.map { $0 ^ 0x36 } + message)
        return Digest.sha256.hash(k.map { $0 ^ 0x5C } + inner)
    }
}

/// Base64url without padding (RFC 4648 §5), as JWS writes it.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil for a character outside the alphabet, padding, or a length no encoding has.
    public static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var acc: UInt32 = 0, bits = 0
        for c in text {
            let v: UInt32
            switch c {
            case 0x41...0x5A: v = UInt32(c - 0x41)
            case 0x61...0x7A: v = UInt32(c - 0x61 + 26)
            case 0x30...0x39: v = UInt32(c - 0x30 + 52)
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(acc >> UInt32(bits) & 0xFF))
            }
        }
        // Leftover bits must be zero: one string per byte sequence.
        guard acc & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
