import Foundation
import ISO7816
import NDEF
import NFCTags
import Testing
import TestSupport
import VirtualCard

@Suite("apdu watch")
struct CLIWatchTests {
    @Test("JSON lines for readers, a card inserted and removed")
    func events() async throws {
        try await withEmptySlot { slot in
            let watch = try StreamingAPDU(["watch", "--json"])
            defer { watch.stop() }
            #expect(watch.waitForLine { $0.contains("\"reader-added\"") && $0.contains("\"\(slot.reader)\"") } != nil)
            let client = VPCDClient(port: slot.port, card: ApplicationHost(applications: []))
            client.start()
            // A card that arrives before watch's first look is reported as already present.
            let inserted = watch.waitForLine {
                ($0.contains("\"card-inserted\"") || $0.contains("\"card-present\"")) && $0.contains("\"\(slot.reader)\"")
            }
            #expect(inserted != nil, "\(watch.output)")
            #expect(inserted?.contains("\"atr\":\"\(ApplicationHost.defaultATR.hexString)\"") == true)
            client.stop()
            #expect(watch.waitForLine { $0.contains("\"card-removed\"") && $0.contains("\"\(slot.reader)\"") } != nil)
            // Every line is a JSON object.
            for line in watch.output {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
            }
        }
    }

    @Test("--count ends the stream after N events")
    func count() throws {
        let r = try runAPDU(["watch", "--json", "--count", "2"])
        #expect(r.status == 0)
        #expect(r.stdout.split(separator: "\n").count == 2)
    }
}

@Suite("apdu watch --ndef")
struct CLIWatchNDEFTests {
    @Test("every tag presented is read and printed as one JSON event")
    func ndefEvents() async throws {
        try await withEmptySlot { slot in
            let watch = try StreamingAPDU(["watch", "--ndef", "--json", "-r", slot.reader])
            defer { watch.stop() }
            #expect(watch.waitForLine { $0.contains("\"reader-added\"") && $0.contains("\"\(slot.reader)\"") } != nil)
            for uri in ["https://example.com/one", "https://example.com/two"] {
                let message = try NDEFMessage(records: [.uri(uri)]).encoded()
                let (host, _) = type4Host(message: message)
                let client = VPCDClient(port: slot.port, card: host)
                client.start()
                let line = watch.waitForLine { $0.contains("\"event\":\"ndef\"") && $0.contains(uri) }
                #expect(line != nil, "\(watch.output)")
                if let line {
                    let doc = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(doc["reader"] as? String == slot.reader)
                    #expect((doc["backgroundReading"] as? [String: Any])?["uri"] as? String == uri)
                }
                client.stop()
                try waitForCard(in: slot.reader, present: false)
            }
        }
    }

    @Test("a Type 5 and a Type 3 tag presented are read as Type 2 and 4 are")
    func type5AndType3() async throws {
        try await withEmptySlot { slot in
            let watch = try StreamingAPDU(["watch", "--ndef", "--json", "-r", slot.reader])
            defer { watch.stop() }
            #expect(watch.waitForLine { $0.contains("\"reader-added\"") && $0.contains("\"\(slot.reader)\"") } != nil)
            let five = ISO15693TagModel(chip: .icodeSlix)
            let three = FeliCaTagModel(chip: .liteS)
            for (model, kind, uri) in [(five as any NativeTagModel, "type5", "https://example.com/v"), (three, "type3", "https://example.com/f")] {
                let reader = ContactlessReader(.transparent, tag: model)
                // Write the message through the library first, on the model alone.
                let transport = APDUTransport(channel: EmulatedChannel(card: reader))
                let commands = TagCommandChannel(transport: transport, dialect: .transparent)
                try detectNDEFTag(transport, atr: model.atr, commands: commands).writeNDEF(try NDEFMessage(records: [.uri(uri)]).encoded())
                commands.endSession()
                let client = VPCDClient(port: slot.port, card: reader)
                client.start()
                let line = watch.waitForLine { $0.contains("\"event\":\"ndef\"") && $0.contains(uri) }
                #expect(line != nil, "\(watch.output)")
                #expect(line?.contains("\"kind\":\"\(kind)\"") == true)
                client.stop()
                try waitForCard(in: slot.reader, present: false)
            }
        }
    }
}
