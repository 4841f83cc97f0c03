import ISO7816
import NDEF
import NFCTags
import TagReader
import Testing
import TestSupport
import VirtualCard

/// A MIFARE Plus through pcscd, as a Swift program sees it: delivered as an `NFCMiFareTag` of
/// family `.plus`, identified with evidence by `plus()`, its SL3 blocks read and written under
/// AES secure messaging, its NDEF read through the side every tag has, typed errors.
@Suite("public API: a MIFARE Plus through pcscd")
struct MifarePlusPublicAPITests {
    @Test("plus(): identity, SL3 read and write, NDEF, a typed refusal")
    func plus() async throws {
        let model = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
        try await withInsertedCard(model) { inserted in
            let tag = try await TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore()).firstTag(timeout: .seconds(10))
            guard case let .miFare(mifare) = tag, mifare.mifareFamily == .plus, let plus = try await mifare.plus() else {
                Issue.record("a MIFARE Plus in SL3 is delivered as .miFare(.plus)")
                return
            }
            #expect(plus.identity.generation == .ev1 && plus.identity.level == .sl3 && plus.identity.storage == 2048)
            #expect(try await plus.identifier() == model.uid)
            let keyB = try #require(MifarePlusKey(MifarePlusModel.sl3KeyB))
            let before = try await plus.read(blocks: 4..<8, key: keyB, type: .b)
            #expect(before.count == 64 && before[0] == 0x03)
            let data = [UInt8](repeating: 0x3C, count: 16)
            try await plus.write(block: 9, data: data, key: keyB, type: .b)
            #expect(model.block(9) == data)
            do {
                try await plus.write(block: 11, data: data, key: keyB, type: .b)
                Issue.record("a trailer written without confirmation")
            } catch let e as MifarePlusError {
                #expect(e.kind == .needsConfirmation)
            }
            do {
                _ = try await plus.read(blocks: 4..<5, key: .factory, type: .a)
                Issue.record("a wrong key read")
            } catch let e as MifarePlusError {
                #expect(e.kind == .authenticationFailed && e.status == .accessDenied)
            }
            #expect(try await mifare.readNDEF() == NDEFMessage(records: [.uri("https://example.com/plus")]))
            #expect(try await mifare.queryNDEFStatus().status == .readWrite)
        }
    }
}
