import NDEF
import Testing
import TestSupport

func bytes(_ hex: String) -> [UInt8] {
    let clean = hex.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var i = clean.startIndex
    while i < clean.endIndex {
        let j = clean.index(i, offsetBy: 2)
        out.append(UInt8(clean[i..<j], radix: 16)!)
        i = j
    }
    return out
}

@Suite("NDEF codec: NFC Forum layouts")
struct NDEFCodecTests {
    @Test("an empty record is D0 00 00")
    func emptyRecord() throws {
        let m = try NDEFMessage(decoding: bytes("D0 00 00"))
        #expect(m.records == [NDEFRecord(tnf: .empty)])
        #expect(try m.encoded() == bytes("D0 00 00"))
    }

    @Test("URI record with identifier code: https://www. + nfc.com")
    func uri() throws {
        let wire = bytes("D1 01 08 55 02 6E 66 63 2E 63 6F 6D")
        let m = try NDEFMessage(decoding: wire)
        #expect(try m.records[0].content() == .uri("https://www.nfc.com"))
        #expect(try NDEFMessage(records: [.uri("https://www.nfc.com")]).encoded() == wire)
    }

    @Test("longest prefix wins on encode", arguments: [
        ("https://www.example.com", 0x02), ("https://example.com", 0x04), ("tel:+123", 0x05),
        ("urn:epc:id:sgtin:1", 0x1E), ("urn:epc:x", 0x22), ("urn:nfc:sn:x", 0x23), ("urn:x", 0x13), ("custom:x", 0x00),
    ] as [(String, UInt8)])
    func prefixes(uri: String, code: UInt8) throws {
        let record = NDEFRecord.uri(uri)
        #expect(record.payload.first == code)
        #expect(try record.content() == .uri(uri))
    }

    @Test("URI code 0x24 and beyond: an error when strict, the bare rest when relaxed")
    func reservedURICode() throws {
        let record = NDEFRecord(tnf: .wellKnown, type: Array("U".utf8), payload: [0x24] + Array("x.org".utf8))
        #expect(throws: NDEFError.self) { try record.content() }
        #expect(try record.content(strict: false) == .uri("x.org"))
    }

    @Test("Text: UTF-8, UTF-16 with and without BOM, little-endian BOM")
    func text() throws {
        let utf8 = try NDEFMessage(decoding: bytes("D1 01 08 54 02 65 6E 48 65 6C 6C 6F"))
        #expect(try utf8.records[0].content() == .text("Hello", language: "en", encoding: .utf8))
        let be = NDEFRecord(tnf: .wellKnown, type: [0x54], payload: bytes("82 65 6E FE FF 00 48 00 69"))
        #expect(try be.content() == .text("Hi", language: "en", encoding: .utf16))
        let noBOM = NDEFRecord(tnf: .wellKnown, type: [0x54], payload: bytes("82 64 65 00 48 00 69"))
        #expect(try noBOM.content() == .text("Hi", language: "de", encoding: .utf16))
        let le = NDEFRecord(tnf: .wellKnown, type: [0x54], payload: bytes("82 65 6E FF FE 48 00 69 00"))
        #expect(try le.content() == .text("Hi", language: "en", encoding: .utf16))
        let built = try NDEFRecord.text("Grüße 👋", language: "de-CH", encoding: .utf16)
        #expect(try built.content() == .text("Grüße 👋", language: "de-CH", encoding: .utf16))
        #expect(throws: NDEFError.self) { try NDEFRecord.text("x", language: "") }
        #expect(throws: NDEFError.self) { try NDEFRecord.text("x", language: String(repeating: "a", count: 64)) }
        #expect(throws: NDEFError.self) { try NDEFRecord(tnf: .wellKnown, type: [0x54], payload: [0x05, 0x65]).content() }
    }

    @Test("a chunk sequence is joined into one record; encode chunks on request")
    func chunks() throws {
        let wire = bytes("B1 01 03 54 02 65 6E  36 00 02 48 65  56 00 03 6C 6C 6F")
        let m = try NDEFMessage(decoding: wire)
        #expect(m.records.count == 1)
        #expect(try m.records[0].content() == .text("Hello", language: "en", encoding: .utf8))
        let rechunked = try m.encoded(chunkSize: 3)
        #expect(rechunked.count > wire.count - 2)
        #expect(try NDEFMessage(decoding: rechunked) == m)
        #expect(try NDEFMessage(decoding: try m.encoded()) == m)
    }

    @Test("strict rules, each named with its offset", arguments: [
        ("50 00 00", NDEFError.Rule.messageBeginMissing, 0),
        ("90 00 00", .messageEndMissing, 3),
        ("D0 01 00 55", .emptyRecordNotEmpty, 0),
        ("D5 01 00 55", .typeForbidden, 0),
        ("D1 00 00", .typeRequired, 0),
        ("D7 00 00", .reservedTNF, 0),
        ("D6 00 00", .unchangedOutsideChunk, 0),
        ("91 01 00 55  D1 01 00 55", .messageBeginRepeated, 4),
        ("D1 01 00 55 00", .trailingBytes, 4),
        ("B1 01 01 54 02  51 01 01 54 02", .chunkContinuationExpected, 5),
        ("B1 01 01 54 02", .chunkEndMissing, 0),
        ("D1 01 05 55 00", .payloadTooLarge, 0),
        ("C1 01 FF FF FF FF 55", .payloadTooLarge, 0),
        ("D1 01", .truncated, 0),
        ("", .emptyMessage, 0),
    ] as [(String, NDEFError.Rule, Int)])
    func strict(hex: String, rule: NDEFError.Rule, offset: Int) {
        do {
            _ = try NDEFMessage(decoding: bytes(hex))
            Issue.record("decoded \(hex)")
        } catch {
            #expect(error.rule == rule, "\(error)")
            #expect(error.offset == offset, "\(error)")
        }
    }

    @Test("relaxed decoding keeps what it can and says what it skipped")
    func relaxed() {
        let (m, skipped) = NDEFMessage.decodeRelaxed(bytes("51 01 01 55 00  11 01 01 55 00  D7 00 00"))
        #expect(m.records.count == 3)
        #expect(skipped.count >= 2)
        #expect(skipped.contains { $0.what.contains("MB") })
        let truncated = NDEFMessage.decodeRelaxed(bytes("91 01 04 55 04 61 2E 62  51 01 09 55 04"))
        #expect(truncated.message.records.count == 1)
        #expect(truncated.skipped.contains { $0.what.contains("exceeds") })
    }

    @Test("a long (non-SR) record of 300 bytes and an ID field")
    func longRecord() throws {
        let payload = (0..<300).map { UInt8($0 & 0xFF) }
        let m = NDEFMessage(records: [NDEFRecord(tnf: .media, type: Array("application/octet-stream".utf8), id: Array("id1".utf8), payload: payload)])
        let wire = try m.encoded()
        #expect(wire[0] == 0xCA) // MB ME IL TNF 2, SR clear
        #expect(Array(wire[2..<6]) == [0, 0, 1, 44])
        #expect(try NDEFMessage(decoding: wire) == m)
    }

    @Test("Smart Poster with URI, titles, action")
    func smartPoster() throws {
        let record = try NDEFRecord.smartPoster(uri: "https://example.com/sp", titles: [("en", "Example"), ("fr", "Exemple")], action: 0)
        guard case let .smartPoster(p) = try record.content() else { Issue.record("not a poster"); return }
        #expect(p.uri == "https://example.com/sp")
        #expect(p.titles.map(\.text) == ["Example", "Exemple"])
        #expect(p.action == 0)
        let noURI = NDEFRecord(tnf: .wellKnown, type: Array("Sp".utf8), payload: try NDEFMessage(records: [try .text("x")]).encoded())
        #expect(throws: NDEFError.self) { try noURI.content() }
    }

    @Test("deeply nested Smart Posters are refused, not a stack overflow")
    func nesting() throws {
        var record = NDEFRecord.uri("https://a.b")
        for _ in 0..<40 {
            record = NDEFRecord(tnf: .wellKnown, type: Array("Sp".utf8), payload: try NDEFMessage(records: [record]).encoded())
        }
        #expect(throws: NDEFError.self) { try record.content() }
        #expect((try? record.content(strict: false)) != nil)
    }

    @Test("MIME JSON and text shown as text; AAR; external; absolute URI")
    func otherTypes() throws {
        #expect(try NDEFRecord.mime("application/json", Array("{\"a\":1}".utf8)).content() == .mime(type: "application/json", text: "{\"a\":1}"))
        #expect(try NDEFRecord.mime("image/png", [0x89]).content() == .mime(type: "image/png", text: nil))
        #expect(try NDEFRecord.androidApplication("com.example.app").content() == .androidApplication(package: "com.example.app"))
        #expect(try NDEFRecord.external("Example.com:Thing", [1]).content() == .external(type: "example.com:thing"))
        #expect(try NDEFRecord(tnf: .absoluteURI, type: Array("https://x.y".utf8)).content() == .absoluteURI("https://x.y"))
    }

    @Test("encode refuses fields that cannot be encoded")
    func encodeLimits() {
        #expect(throws: NDEFError.self) { try NDEFMessage(records: [NDEFRecord(tnf: .media, type: [UInt8](repeating: 0x61, count: 256))]).encoded() }
        #expect(throws: NDEFError.self) { try NDEFMessage(records: []).encoded() }
    }
}

@Suite("iOS background reading verdict")
struct BackgroundReadingTests {
    @Test("the first URI decides", arguments: [
        ([NDEFRecord.uri("https://example.com/x")], true, "universal link"),
        ([NDEFRecord.uri("http://example.com")], true, "Safari"),
        ([NDEFRecord.uri("mailto:a@b.c")], true, "Mail"),
        ([NDEFRecord.uri("tel:+4912345")], true, "phone"),
        ([NDEFRecord.uri("sms:+4912345")], true, "Messages"),
        ([NDEFRecord.uri("facetime-audio:a@b.c")], true, "FaceTime audio"),
        ([NDEFRecord.uri("X-HM://0023ABCD")], true, "HomeKit"),
        ([NDEFRecord.uri("https://maps.apple.com/?q=cafe")], true, "Maps"),
        ([NDEFRecord.uri("myapp://open")], false, "custom scheme 'myapp:'"),
        ([NDEFRecord.uri("")], false, "empty"),
        ([NDEFRecord.mime("application/json", [0x7B, 0x7D])], false, "no URI record"),
        ([NDEFRecord.uri("myapp://x"), NDEFRecord.uri("https://a.b")], false, "custom scheme"),
        ([NDEFRecord.mime("text/plain", [0x61]), NDEFRecord.uri("https://a.b")], true, "universal link"),
    ] as [([NDEFRecord], Bool, String)])
    func verdict(records: [NDEFRecord], eligible: Bool, reason: String) {
        let v = BackgroundReadingVerdict(message: NDEFMessage(records: records))
        #expect(v.eligible == eligible)
        #expect(v.reason.contains(reason), "\(v.reason)")
    }

    @Test("a Smart Poster's URI counts")
    func poster() throws {
        let v = BackgroundReadingVerdict(message: NDEFMessage(records: [try .smartPoster(uri: "https://a.b/c", titles: [("en", "t")])]))
        #expect(v.eligible && v.uri == "https://a.b/c")
    }
}

@Suite("NDEF properties")
struct NDEFPropertyTests {
    func randomRecord(_ g: inout SplitMix) -> NDEFRecord {
        let tnf = [TNF.empty, .wellKnown, .media, .absoluteURI, .external, .unknown].randomElement(using: &g)!
        if tnf == .empty { return NDEFRecord(tnf: .empty) }
        let typeLength = tnf == .unknown ? 0 : Int.random(in: 1...20, using: &g)
        let idLength = Bool.random(using: &g) ? Int.random(in: 1...10, using: &g) : 0
        let payloadLength = [0, 1, 255, 256, Int.random(in: 0...700, using: &g)].randomElement(using: &g)!
        return NDEFRecord(
            tnf: tnf,
            type: (0..<typeLength).map { _ in UInt8.random(in: 0x21...0x7E, using: &g) },
            id: (0..<idLength).map { _ in UInt8.random(in: 0...255, using: &g) },
            payload: (0..<payloadLength).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    @Test("encode then decode is the identity on 2,000 random messages, chunked or not")
    func roundTrip() throws {
        var g = SplitMix(seed: 0x5EED)
        for _ in 0..<2000 {
            let m = NDEFMessage(records: (0..<Int.random(in: 1...8, using: &g)).map { _ in randomRecord(&g) })
            let chunk: Int? = Bool.random(using: &g) ? Int.random(in: 1...300, using: &g) : nil
            let wire = try m.encoded(chunkSize: chunk)
            #expect(try NDEFMessage(decoding: wire) == m)
        }
    }

    @Test("decoding random and mutated bytes never traps, strict or relaxed")
    func noTraps() throws {
        var g = SplitMix(seed: 42)
        for _ in 0..<3000 {
            var wire = try NDEFMessage(records: [randomRecord(&g), randomRecord(&g)]).encoded()
            for _ in 0..<Int.random(in: 1...4, using: &g) where !wire.isEmpty {
                wire[Int.random(in: 0..<wire.count, using: &g)] = UInt8.random(in: 0...255, using: &g)
            }
            if Bool.random(using: &g) { wire = Array(wire.prefix(Int.random(in: 0...wire.count, using: &g))) }
            if let m = try? NDEFMessage(decoding: wire) { for r in m.records { _ = try? r.content() } }
            let relaxed = NDEFMessage.decodeRelaxed(wire)
            for r in relaxed.message.records { _ = try? r.content(strict: false) }
        }
    }
}
