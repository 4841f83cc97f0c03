import Foundation
import SUN
@testable import SUNService
import Testing

@Suite("Key file: groups, diversified keys, and errors that never show a key")
struct KeyRingTests {
    @Test("Groups, the default group, diversified keys and templates are read")
    func parse() throws {
        let ring = try KeyRing.parse(Array(keyFileText.utf8), source: "keys.json")
        #expect(ring.defaultGroup == "factory")
        #expect(Set(ring.groups.keys) == ["factory", "brand", "nxp"])
        #expect(ring.groups["brand"]?.keys.isDiversified == true)
        #expect(ring.groups["factory"]?.keys.isDiversified == false)
        #expect(ring.groups["nxp"]?.template?.pattern?.placeholders == [.picc, .file, .mac])
        #expect(ring.groups["factory"]?.template == nil)
        // The brand group verifies its own tags' taps (file-read key diversified by UID).
        let keys = ring.groups["brand"]!.keys
        let tap = try keys.simulatedTap(uid: [0x04, 1, 2, 3, 4, 5, 6], counter: 9, base: "/brand")
        #expect(try SUNMessage(url: tap).verify(keys: keys).counter == 9)
    }

    @Test("A byte order mark and CRLF line ends are accepted; one group is the default by itself")
    func bomAndCRLF() throws {
        let text = "{\r\n  \"groups\": {\r\n    \"only\": { \"metaReadKey\": \"\(zeroKey)\", \"fileReadKey\": \"\(zeroKey)\" }\r\n  }\r\n}\r\n"
        let ring = try KeyRing.parse([0xEF, 0xBB, 0xBF] + Array(text.utf8), source: "k")
        #expect(ring.defaultGroup == "only")
    }

    @Test("Bad files are refused with the field named and no key value in the message", arguments: [
        ("{", "not valid JSON"),
        ("{\"groups\": {}}", "at least one group"),
        ("{\"groups\": {\"a b\": {}}}", "group name"),
        ("{\"groups\": {\"g\": {\"fileReadKey\": \"\(masterKey)\"}}}", "no \"metaReadKey\""),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)0\", \"fileReadKey\": \"\(masterKey)\"}}}", "\"metaReadKey\" must be 32 hex digits"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\", \"fileReadMasterKey\": \"\(masterKey)\"}}}", "exactly one of"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\", \"systemIdentifier\": \"00\"}}}", "goes with"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadMasterKey\": \"\(masterKey)\", \"systemIdentifier\": \"\(String(repeating: "00", count: 25))\"}}}", "0 to 48 hex digits"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\", \"mac\": 1}}}", "unknown field \"mac\""),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\"}}, \"default\": \"h\"}", "\"default\" must name"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\", \"template\": \"https://x/?a={picc}\"}}}", "template: the template has no {mac}"),
        ("{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\", \"template\": \"https://x/{mac}/{file}/{picc}\"}}}", "comes after {mac}"),
    ])
    func refused(text: String, expected: String) {
        do {
            _ = try KeyRing.parse(Array(text.utf8), source: "keys.json")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains(metaKey) && !error.message.contains(masterKey) && !error.message.contains("\n"))
            #expect(error.kind == .invalid)
        }
    }

    @Test("A missing file is its own kind (exit 66 at start)")
    func missing() {
        #expect(throws: KeyFileError.self) { try KeyRing.load(path: "/nonexistent/keys.json") }
        do { _ = try KeyRing.load(path: "/nonexistent/keys.json") } catch { #expect(error.kind == .missing) }
    }
}

@Suite("Rate limiter: a token bucket per client address")
struct RateLimiterTests {
    @Test("The burst passes, the next request waits for the rate, addresses are apart")
    func bucket() {
        let limiter = RateLimiter(rate: 10, burst: 3)
        let t0 = ContinuousClock.now
        #expect((0..<3).allSatisfy { _ in limiter.allow("a", now: t0) })
        #expect(!limiter.allow("a", now: t0))
        #expect(limiter.allow("b", now: t0))
        #expect(!limiter.allow("a", now: t0 + .milliseconds(50)))
        #expect(limiter.allow("a", now: t0 + .milliseconds(160)))
    }

    @Test("Rates and bursts out of bounds are held to them: a flood of addresses never traps (1e-30 once overflowed the refill)")
    func boundedArithmetic() {
        for (rate, burst) in [(1e-30, 1e30), (0, 1), (.nan, .nan), (.infinity, .infinity), (-1, -5), (1e300, 1e-300)] {
            let limiter = RateLimiter(rate: rate, burst: burst, maximumAddresses: 10)
            #expect(RateLimiter.rates.contains(limiter.rate) && RateLimiter.bursts.contains(limiter.burst))
            let t0 = ContinuousClock.now
            for i in 0..<50 { _ = limiter.allow("a\(i)", now: t0 + .milliseconds(i)) }
            #expect(limiter.allow("fresh", now: t0 + .seconds(1)), "a fresh address has its burst")
        }
    }

    @Test("A flood of addresses is bounded: quiet buckets are dropped")
    func bounded() {
        let limiter = RateLimiter(rate: 1000, burst: 1, maximumAddresses: 100)
        let t0 = ContinuousClock.now
        for i in 0..<1000 { _ = limiter.allow("10.0.\(i / 256).\(i % 256)", now: t0 + .milliseconds(i)) }
        #expect(limiter.allow("fresh", now: t0 + .seconds(2)))
    }
}
