import CardCrypto
import Foundation
import Synchronization
@testable import SUN
import Testing

/// AN10922 key diversification (the published AES-128 example), per-tag file-read keys in
/// `SDMKeys`, simulated taps, and keys shared between threads.
@Suite("SUN: AN10922 diversification, simulated taps, shared keys")
struct DiversificationTests {
    let zero = [UInt8](repeating: 0, count: 16)

    @Test("AN10922 §2.2.1: UID 04782E21801D80 ‖ AID 3042F5 ‖ 'NXP Abu' → A8DD63A3B89D54B37CA802473FDA9175")
    func publishedVector() throws {
        let key = try AN10922.diversify(masterKey: hex("00112233445566778899AABBCCDDEEFF"), input: hex("04782E21801D803042F54E585020416275"))
        #expect(key == hex("A8DD63A3B89D54B37CA802473FDA9175"))
    }

    @Test("AN10922 pads to 32 bytes, not to CMAC's next block: a 7-byte input differs from CMAC(01 ‖ M)")
    func shortInputIsPaddedToTwoBlocks() throws {
        let master = hex("00112233445566778899AABBCCDDEEFF")
        let uid = hex("04782E21801D80")
        let diversified = try AN10922.diversify(masterKey: master, input: uid)
        let aes = try AES128(key: master)
        #expect(diversified != aes.cmac([0x01] + uid))
        // The same as CMAC with K2 over 01 ‖ M ‖ 80 00… (32 bytes) written out by hand.
        var d: [UInt8] = [0x01] + uid + [0x80]
        d += [UInt8](repeating: 0, count: 32 - d.count)
        let l = aes.encrypt(block: zero)
        let k2 = CMAC.double(CMAC.double(l))
        let x = aes.encrypt(block: Array(d[0..<16]))
        #expect(diversified == aes.encrypt(block: (0..<16).map { d[16 + $0] ^ k2[$0] ^ x[$0] }))
        // 31 bytes: no padding, K1 — the same as plain CMAC of the 32 bytes.
        let m31 = [UInt8](repeating: 0xA5, count: 31)
        #expect(try AN10922.diversify(masterKey: master, input: m31) == aes.cmac([0x01] + m31))
        #expect(throws: SUNError.self) { try AN10922.diversify(masterKey: master, input: []) }
        #expect(throws: SUNError.self) { try AN10922.diversify(masterKey: master, input: [UInt8](repeating: 0, count: 32)) }
    }

    @Test("A simulated tap is byte for byte what AN12196's tag served (UID 04DE5F1EACC040, counter 61)")
    func simulatedTapMatchesAN12196() throws {
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let plain = try AES128(key: zero).cbcDecrypt(hex("EF963FF7828658A599F3041510671E88"))
        let url = try keys.simulatedTap(uid: hex("04DE5F1EACC040"), counter: 61, padding: Array(plain[11..<16]), base: "https://ntag.nxp.com/424")
        #expect(url == "https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
    }

    @Test("Diversified file-read keys: each tag's own key verifies, the master key itself does not")
    func diversifiedKeys() throws {
        let meta = hex("42AFF114F2CB3B6141BE6DC95DFC5416"), master = hex("B62A9BAF092439BD43C62AEE96B970C5")
        let system = Array("swift-apdu".utf8)
        let keys = try SDMKeys(metaRead: meta, fileReadMaster: master, systemIdentifier: system)
        #expect(keys.isDiversified)
        for (i, uid) in [hex("04DE5F1EACC040"), hex("04958CAA5C5E80")].enumerated() {
            let url = try keys.simulatedTap(uid: uid, counter: i + 1, base: "https://x.example/t")
            let r = try SUNMessage(url: url).verify(keys: keys)
            #expect(r.uid == uid && r.counter == i + 1)
            // The tag's key, written out: the same tap verifies with it as a plain key.
            let own = try AN10922.diversify(masterKey: master, input: uid + system)
            #expect(try SUNMessage(url: url).verify(keys: try SDMKeys(metaRead: meta, fileRead: own)).uid == uid)
            #expect(throws: SUNError.self) { try SUNMessage(url: url).verify(keys: try SDMKeys(metaRead: meta, fileRead: master)) }
        }
        #expect(throws: SUNError.self) { try SDMKeys(metaRead: meta, fileReadMaster: master, systemIdentifier: [UInt8](repeating: 0, count: 25)) }
    }

    @Test("One SDMKeys verifies from many threads at once (a service shares its keys)")
    func sharedBetweenThreads() throws {
        let keys = try SDMKeys(metaRead: zero, fileReadMaster: hex("00112233445566778899AABBCCDDEEFF"), systemIdentifier: [])
        let urls = try (0..<64).map { i in try keys.simulatedTap(uid: [0x04, 0, 0, 0, 0, 0, UInt8(i)], counter: i, base: "https://x.example/") }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for (i, url) in urls.enumerated() {
                let ok = (try? SUNMessage(url: url).verify(keys: keys))?.counter == i
                if !ok { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}
