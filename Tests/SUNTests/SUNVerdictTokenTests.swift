import Foundation
@testable import SUN
import Testing

/// The signed verdict of `--redirect` (issue 51): HMAC-SHA256 against RFC 4231, base64url
/// against RFC 4648, and the JWS made and checked; a changed byte, another key, an expired token
/// and `alg: none` refused.
@Suite("SUN: the signed verdict token (JWS HS256)")
struct SUNVerdictTokenTests {
    let key = [UInt8](repeating: 0x5A, count: 32)

    @Test("HMAC-SHA256: RFC 4231 test cases 1, 2 and 6 (a key longer than the block)")
    func hmac() {
        #expect(HMACSHA256.mac(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)) == hex("B0344C61D8DB38535CA8AFCEAF0BF12B881DC200C9833DA726E9376C2E32CFF7"))
        #expect(HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)) == hex("5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843"))
        #expect(HMACSHA256.mac(key: [UInt8](repeating: 0xAA, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)) == hex("60E431591EE0B67F0D8A26AACBF5B77F8E0BC6213728C5140546040F0EE37F54"))
    }

    @Test("base64url: RFC 4648 §10 vectors without padding, and what no encoder writes is refused")
    func base64url() {
        for (plain, coded) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")] {
            #expect(Base64URL.encode(Array(plain.utf8)) == coded)
            #expect(Base64URL.decode(Array(coded.utf8)) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode(Array("Zg==".utf8)) == nil)
        #expect(Base64URL.decode(Array("Zh".utf8)) == nil)
        #expect(Base64URL.decode(Array("Z".utf8)) == nil)
    }

    @Test("a token signed and checked: the claims come back; the header is HS256")
    func roundTrip() throws {
        let token = SUNVerdictToken(verdict: "genuine", uid: "04DE5F1EACC040", counter: 61,
                                    tamper: SUNTagTamperStatus(permanent: .open, current: .closed), group: "factory", issuedAt: 1000, expires: 1300)
        let text = try token.signed(key: key)
        let parts = text.split(separator: ".")
        #expect(parts.count == 3)
        #expect(Base64URL.decode(Array(parts[0].utf8)) == Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let back = try SUNVerdictToken(verifying: text, key: key, now: 1299)
        #expect(back == token && back.isGenuine)
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(Array(parts[1].utf8))!)) as? [String: Any])
        #expect(claims["valid"] as? Bool == true && claims["verdict"] as? String == "genuine" && claims["exp"] as? Int == 1300)
        #expect((claims["tamper"] as? [String: String]) == ["permanent": "open", "current": "closed"])
    }

    @Test("refused: each changed character, another key, expired, alg none, a short key, not a JWT")
    func refusals() throws {
        let text = try SUNVerdictToken(verdict: "replay", code: "replay", uid: "04DE5F1EACC040", counter: 61, issuedAt: 1000, expires: 1300).signed(key: key)
        var chars = Array(text)
        for i in chars.indices where chars[i] != "." {
            let saved = chars[i]
            chars[i] = saved == "A" ? "B" : "A"
            #expect(throws: SUNTokenError.self) { try SUNVerdictToken(verifying: String(chars), key: key, now: 1100) }
            chars[i] = saved
        }
        var other = key
        other[31] ^= 1
        #expect { try SUNVerdictToken(verifying: text, key: other, now: 1100) } throws: { ($0 as? SUNTokenError)?.kind == .signature }
        #expect { try SUNVerdictToken(verifying: text, key: key, now: 1300) } throws: { ($0 as? SUNTokenError)?.kind == .expired }
        let parts = text.split(separator: ".")
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + parts[1] + "."
        #expect { try SUNVerdictToken(verifying: none, key: key, now: 1100) } throws: { ($0 as? SUNTokenError)?.kind == .algorithm }
        #expect { try SUNVerdictToken(verifying: text, key: Array(key.prefix(16)), now: 1100) } throws: { ($0 as? SUNTokenError)?.kind == .badKey }
        #expect { try SUNVerdictToken(verifying: "abc", key: key, now: 1100) } throws: { ($0 as? SUNTokenError)?.kind == .malformed }
        #expect(try SUNVerdictToken(verifying: text, key: key, now: 1100).isGenuine == false)
    }
}

/// TagTamper in the SUN message (issue 51): nfc-developer/sdm-backend's public examples of its
/// `/tagtt` route (templates/sdm_main.html, "NTAG 424 DNA TagTamper", TTStatusOffset =
/// ENCDataOffset, factory keys: config.dist.py's MASTER_KEY of zeros, which its legacy
/// derivation maps to all-zero keys). The AES example is UID 0469879A226880, counter 2, CC; the
/// LRP example ("NTAG 424 DNA TagTamper (LRP mode)") is another tag: UID 04940E2A2F7080,
/// counter 1, OO.
@Suite("SUN: TagTamper status mirrored in the encrypted file data (sdm-backend /tagtt)")
struct SUNTagTamperTests {
    let aes = "https://sdm.nfcdeveloper.com/tagtt?picc_data=FDD387BF32A33A7C40CF259675B3A1E2&enc=EA050C282D8E9043E28F7A171464D697&cmac=758110182134ECE9"
    let lrp = "https://sdm.nfcdeveloper.com/tagtt?picc_data=8EE8E27DE3974FFE245F96C71087129B2E8449C9FF346F65&enc=48987A0D55638C017D1F4DC3D8ADD910&cmac=862E781E52244A75"

    @Test("AES: UID 0469879A226880, counter 2, TagTamper CC (intact); LRP: UID 04940E2A2F7080, counter 1, OO (open)", arguments: [
        (0, SDMEncryption.aes, "0469879A226880", 2, "CC", SUNTagTamperStatus.Seal.intact),
        (1, .lrp, "04940E2A2F7080", 1, "OO", .open),
    ])
    func sdmBackend(index: Int, encryption: SDMEncryption, uid: String, counter: Int, letters: String, seal: SUNTagTamperStatus.Seal) throws {
        let zero = [UInt8](repeating: 0, count: 16)
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let result = try SUNMessage(url: [aes, lrp][index]).verify(keys: keys, tamper: .fileData(offset: 0))
        #expect(result.uid == hex(uid) && result.counter == counter && result.encryption == encryption)
        // The rest of the file data is the '-' filler the tag was provisioned with.
        #expect(result.fileData == Array(letters.utf8) + [UInt8](repeating: 0x2D, count: 14))
        #expect(result.tamper?.bytes == Array(letters.utf8) && result.tamper?.seal == seal)
    }

    @Test("altered encrypted file data (where the letters are) fails the MAC")
    func altered() throws {
        let zero = [UInt8](repeating: 0, count: 16)
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let changed = aes.replacingOccurrences(of: "enc=EA05", with: "enc=EB05")
        #expect { try SUNMessage(url: changed).verify(keys: keys, tamper: .fileData(offset: 0)) } throws: { ($0 as? SUNError)?.kind == .invalidMAC }
    }

    @Test("the letters: CC intact, OC reclosed, OO open, II not enabled; unknown bytes kept")
    func seal() {
        func s(_ t: String) -> SUNTagTamperStatus { SUNTagTamperStatus(bytes: Array(t.utf8))! }
        #expect(s("CC").seal == .intact && s("OC").seal == .reclosed && s("OO").seal == .open && s("II").seal == .notEnabled)
        #expect(s("XY").seal == .unknown && s("XY").bytes == Array("XY".utf8))
        #expect(SUNTagTamperStatus(bytes: Array("C".utf8)) == nil)
    }
}
