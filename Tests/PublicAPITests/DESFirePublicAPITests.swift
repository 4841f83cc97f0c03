import ISO7816
import NDEF
import NFCTags
import TagReader
import Testing
import TestSupport
import VirtualCard

/// A MIFARE DESFire through pcscd, as a Swift program sees it: delivered as ISO 7816, proved a
/// DESFire by `desfire()` (an `NFCMiFareTag` of family `.desfire`), surveyed without keys, a file
/// changed and committed, a key changed and proved, then formatted for NDEF and written through
/// the NDEF side every tag has.
@Suite("public API: a MIFARE DESFire through pcscd")
struct DESFirePublicAPITests {
    @Test("desfire(): typed access, survey, change with commit, ChangeKey, AN11004 and NDEF")
    func desfire() async throws {
        var image = VirtualCard.DESFireCard.Image.factory()
        image.applications = [VirtualCard.DESFireCard.Application(aid: 0xF00001, keyType: .aes, keyCount: 2, files: [
            .init(number: 1, commMode: .full, access: .init(0x0000), content: .backup([UInt8](repeating: 0, count: 16))),
        ])]
        let model = VirtualCard.DESFireCard(image: image)
        try await withInsertedCard(model) { inserted in
            let tag = try await TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore()).firstTag(timeout: .seconds(10))
            guard case let .iso7816(iso) = tag, let card = try await iso.desfire() else {
                Issue.record("a DESFire is delivered as .iso7816 and proved by desfire()")
                return
            }
            let mifare: any NFCMiFareTag = card
            #expect(mifare.mifareFamily == .desfire && card.version.generation == .ev1)
            #expect(try await card.identifier() == model.image.chip.uid)
            let aid = try #require(DESFireApplicationID(hex: "F00001"))
            let survey = try await card.survey()
            #expect(survey.applications.map(\.aid) == [aid])
            let key = (number: UInt8(0), key: DESFireKey.zero(.aes))
            let receipt = try await card.change(1, in: aid, key: key, .data([1, 2, 3], offset: 0))
            let contents = try await card.read(1, in: aid, key: key)
            #expect(receipt.committed && contents == .data([1, 2, 3] + [UInt8](repeating: 0, count: 13)))
            let new = try DESFireKey(.aes, [UInt8](repeating: 0x42, count: 16), version: 2)
            let change = try await card.changeKey(1, in: aid, authorizing: key, to: new, from: .zero(.aes))
            #expect(change.proved && model.image.application(0xF00001)?.keys[1].bytes == [UInt8](repeating: 0x42, count: 16))
            do {
                try await card.changeKey(0, in: aid, authorizing: key, to: new, from: nil)
                Issue.record("the application master key changed without confirmation")
            } catch let e as DESFireError {
                #expect(e.kind == .needsConfirmation)
            }
            let format = try await card.formatForNDEF()
            #expect(format.capacity > 1000)
            let hello = NDEFMessage(records: [.uri("https://example.com/desfire")])
            try await card.writeNDEF(hello)
            #expect(try await card.readNDEF() == hello)
        }
    }
}
