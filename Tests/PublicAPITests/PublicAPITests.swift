// What a Swift program that adds our package can do, through a real pcscd with vpcd virtual
// readers: only public API here (no @testable), as an app would use it.
import ISO7816
import NDEF
import NFCTags
import SUN
import TagReader
import Testing
import TestSupport
import VirtualCard

private func type4Tag(message: [UInt8] = []) -> (ApplicationHost, Type4TagModel) {
    let model = Type4TagModel(configuration: Type4TagModel.Configuration(), message: message)
    return (ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [model], uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]), model)
}

@Suite("public API: sessions and tags through pcscd")
struct PublicAPITests {
    let hello = NDEFMessage(records: [.uri("https://example.com/hello")])

    @Test("an NTAG 424 DNA: delivered as ISO 7816, typed access through ntag424(), SUN provisioned, and each tap read with readNDEF verifies")
    func ntag424() async throws {
        let model = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [model], uid: model.uid)) { inserted in
            let tag = try await TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore()).firstTag(timeout: .seconds(10))
            guard case let .iso7816(iso) = tag, let card = try await iso.ntag424() else { Issue.record("an NTAG 424 DNA is delivered as .iso7816 and found by ntag424()"); return }
            #expect(card.version.productName == "NTAG 424 DNA")
            #expect(try await card.fileSettings(2).sdm == nil)
            let zero = [UInt8](repeating: 0, count: 16)
            let provisioned = try await card.provisionSDM(try SUNURLTemplate("https://example.com/t?e={picc}&c={mac}"), key: zero)
            // The emulator's signature is all zeros unless given one: recorded, and not valid.
            #expect(provisioned.originality.uid == model.uid && !provisioned.originality.isValid && provisioned.originality.uidSource == .getCardUID)
            #expect(try await card.originality().signature.isBlank)
            let keys = try SDMKeys(metaRead: zero, fileRead: zero)
            var counters = [try SUNMessage(url: provisioned.served).verify(keys: keys).counter ?? 0]
            for _ in 0..<2 {
                guard case let .uri(url)? = try await tag.ndef.readNDEF().records.first?.content() else { Issue.record("no URI"); return }
                counters.append(try SUNMessage(url: url).verify(keys: keys).counter ?? 0)
            }
            #expect(counters[1] == counters[0] + 1 && counters[2] == counters[1] + 1, "\(counters)")
            try await card.authenticate(keyNumber: 0, key: zero)
            try await card.changeKey(3, to: [UInt8](repeating: 0x33, count: 16), from: zero, version: 1)
            #expect(model.keys[3] == [UInt8](repeating: 0x33, count: 16))
        }
    }

    @Test("a Type 2 tag (NTAG213): query, write, read back, lock, and the lock holds")
    func type2ReadWriteLock() async throws {
        let model = Type2TagModel(chip: .ntag213)
        try await withInsertedCard(model) { inserted in
            let backups = MemoryBackupStore()
            let session = TagReaderSession(reader: inserted.reader, backups: backups)
            let tag = try await session.firstTag(timeout: .seconds(10))
            guard case let .miFare(mifare) = tag else { Issue.record("an NTAG213 is delivered as .miFare"); return }
            #expect(mifare.mifareFamily == .ultralight)
            #expect(try await mifare.identifier() == model.uid)

            let (status, capacity) = try await tag.ndef.queryNDEFStatus()
            #expect(status == .readWrite)
            // NTAG213 as shipped: the 144-byte data area minus its lock control TLV (5 bytes) and
            // the NDEF TLV's own 2-byte header.
            #expect(capacity == 137)

            let receipt = try await tag.ndef.writeNDEF(hello)
            #expect(receipt.written == (try hello.encoded()).count)
            #expect(try await tag.ndef.readNDEF() == hello)
            // The old (empty) message went to the store before the tag changed.
            #expect(backups.backups.count == 1)
            #expect(backups.backups.first?.message == [])

            let lock = try await tag.ndef.writeLock()
            #expect(!lock.done.isEmpty)
            #expect(try await tag.ndef.queryNDEFStatus().status == .readOnly)
            await #expect(throws: TagError.self) { try await tag.ndef.writeNDEF(NDEFMessage(records: [.uri("https://example.com/other")])) }
            #expect(try await tag.ndef.readNDEF() == hello)
            await #expect(throws: TagError.self) { try await tag.ndef.writeLock() }
        }
    }

    @Test("a Type 5 tag (ICODE SLIX): delivered as .iso15693, system info, blocks, NDEF write/read, lock")
    func type5() async throws {
        let model = ISO15693TagModel(chip: .icodeSlix)
        try await withInsertedCard(ContactlessReader(.transparent, tag: model)) { inserted in
            let tag = try await TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore()).firstTag(timeout: .seconds(10))
            guard case let .iso15693(iso) = tag else { Issue.record("an ICODE SLIX is delivered as .iso15693"); return }
            let info = try await iso.systemInfo()
            #expect(info.blockCount == 28 && info.blockSize == 4 && info.displayUID.first == 0xE0)
            #expect(try await tag.ndef.queryNDEFStatus() == (.readWrite, 106))
            try await tag.ndef.writeNDEF(hello)
            #expect(try await tag.ndef.readNDEF() == hello)
            #expect(try await iso.readBlocks(0..<2).prefix(4) == [0xE1, 0x40, 0x0E, 0x01])
            try await iso.writeSingleBlock(27, data: [1, 2, 3, 4])
            try await iso.lockBlock(27)
            await #expect(throws: ISO15693Error.self) { try await iso.writeSingleBlock(27, data: [0, 0, 0, 0]) }
            #expect(try await iso.customCommand(code: 0xB2).count == 2)
            _ = try await tag.ndef.writeLock()
            #expect(try await tag.ndef.queryNDEFStatus().status == .readOnly)
        }
    }

    @Test("a Type 3 tag (FeliCa Lite-S): delivered as .feliCa, polling, services, blocks, NDEF write/read")
    func type3() async throws {
        let model = FeliCaTagModel(chip: .liteS)
        try await withInsertedCard(ContactlessReader(.acr122u, tag: model)) { inserted in
            let tag = try await TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore()).firstTag(timeout: .seconds(10))
            guard case let .feliCa(felica) = tag else { Issue.record("a FeliCa Lite-S is delivered as .feliCa"); return }
            #expect(try await felica.polling(systemCode: 0x12FC)?.idm == model.idm)
            #expect(try await felica.requestService([.ndefRead, FeliCaServiceCode(0x4321)]) == [0, 0xFFFF])
            #expect(try await felica.requestSystemCode() == [0x12FC])
            try await tag.ndef.writeNDEF(hello)
            #expect(try await tag.ndef.readNDEF() == hello)
            #expect(try await felica.readWithoutEncryption(blocks: [0]).prefix(3) == [0x10, 0x04, 0x01])
            try await felica.writeWithoutEncryption(blocks: [13], data: [UInt8](repeating: 7, count: 16))
            #expect(model.contents[13] == [UInt8](repeating: 7, count: 16))
        }
    }

    @Test("a MIFARE Classic card: delivered as .miFare (classic), formatted with the public API, NDEF write/read through the session, blocks through MifareClassicSession")
    func classic() async throws {
        let model = MifareClassicModel(.classic1K)
        _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model))), atr: model.atr)
        try await withInsertedCard(ContactlessReader(.storageOnly, tag: model)) { inserted in
            let backups = MemoryBackupStore()
            let tag = try await TagReaderSession(reader: inserted.reader, backups: backups).firstTag(timeout: .seconds(10))
            guard case let .miFare(mifare) = tag else { Issue.record("a Classic 1K is delivered as .miFare"); return }
            #expect(mifare.mifareFamily == .classic)
            #expect(try await tag.ndef.queryNDEFStatus() == (.readWrite, 716))
            try await tag.ndef.writeNDEF(hello)
            #expect(try await tag.ndef.readNDEF() == hello)
            #expect(backups.backups.first?.kind == "classic")
        }
        try await withInsertedCard(ContactlessReader(.storageOnly, tag: model)) { inserted in
            let sectors = try MifareClassicSession.run(reader: inserted.reader, wait: nil) { _, card, uid in
                #expect(uid == model.uid)
                return try card.dump(keys: MifareClassicKeyCandidate.publicKeys).sectors.filter { $0.keyType != nil }.count
            }
            #expect(sectors == 16)
        }
    }

    @Test("a Type 4 tag: write, read back, restore the backup, lock")
    func type4WriteRestoreLock() async throws {
        let old = NDEFMessage(records: [.uri("https://example.com/old")])
        let (host, _) = type4Tag(message: try old.encoded())
        try await withInsertedCard(host) { inserted in
            let backups = MemoryBackupStore()
            let tag = try await TagReaderSession(reader: inserted.reader, backups: backups).firstTag(timeout: .seconds(10))
            guard case let .iso7816(iso) = tag else { Issue.record("a Type 4 tag is delivered as .iso7816"); return }
            #expect(try await iso.readNDEF() == old)
            try await iso.writeNDEF(hello)
            #expect(try await iso.readNDEF() == hello)
            let backup = try #require(backups.backups.first)
            #expect(backup.message == (try old.encoded()))
            try await iso.restore(backup)
            #expect(try await iso.readNDEF() == old)
            try await iso.writeLock()
            #expect(try await iso.queryNDEFStatus().status == .readOnly)
        }
    }

    @Test("sendCommand: GET RESPONSE handled, a SELECT outside selectIdentifiers never reaches the card")
    func iso7816Allowlist() async throws {
        var behaviour = HostBehaviour()
        behaviour.usesGetResponse = true
        let host = ApplicationHost(applications: [DemoApplication()], behaviour: behaviour)
        try await withInsertedCard(host) { inserted in
            let policy = SelectPolicy(entries: [.init(aid: DemoApplication.defaultAID)])
            let sent = Locked<[Exchange]>([])
            let session = TagReaderSession(reader: inserted.reader, selectIdentifiers: policy, observer: { e in sent.withLock { $0.append(e) } })
            let tag = try await session.firstTag(timeout: .seconds(10))
            guard case let .iso7816(card) = tag else { Issue.record("a smart card is delivered as .iso7816"); return }
            #expect(try await card.queryNDEFStatus().status == .notSupported)
            let select = try await card.sendCommand(.select(aid: DemoApplication.defaultAID))
            #expect(select.statusWord == .success)
            let data = try await card.sendCommand(CommandAPDU(cla: 0x00, ins: 0xCA, p1: 0x5F, p2: 0x50, ne: 256))
            #expect(data.data == Array("SN-0001".utf8))
            // The card answered 61xx: the observer saw the GET RESPONSE round.
            #expect(sent.withLock { $0.contains { $0.purpose == .getResponse } })
            let before = sent.withLock { $0.count }
            await #expect(throws: TransmitError.refusedSelect(aid: [0xA0, 0x00, 0x00, 0x00, 0x03])) {
                try await card.sendCommand(.select(aid: [0xA0, 0x00, 0x00, 0x00, 0x03]))
            }
            #expect(sent.withLock { $0.count } == before)
        }
    }

    @Test("events: a card inserted and removed, seen through the AsyncSequence")
    func events() async throws {
        try await withEmptySlot { slot in
            let session = TagReaderSession(reader: slot.reader)
            var iterator = session.events().makeAsyncIterator()
            #expect(try await iterator.next() == .readerAdded(slot.reader))
            let client = VPCDClient(port: slot.port, card: ApplicationHost(applications: []))
            client.start()
            let inserted = try await iterator.next()
            #expect(inserted == .cardInserted(reader: slot.reader, atr: ApplicationHost.defaultATR)
                || inserted == .cardPresent(reader: slot.reader, atr: ApplicationHost.defaultATR))
            client.stop()
            #expect(try await iterator.next() == .cardRemoved(reader: slot.reader))
        }
    }

    @Test("firstTag with a timeout and no card: ReaderError.noCardWithin")
    func timeout() async throws {
        try await withEmptySlot { slot in
            await #expect(throws: ReaderError.noCardWithin(.milliseconds(300), reader: slot.reader)) {
                try await TagReaderSession(reader: slot.reader).firstTag(timeout: .milliseconds(300))
            }
        }
    }
}

/// Timing claims, measured where no other test competes for the two cores and the cooperative
/// pool: Scripts/test runs suites whose names end in ExclusiveTests one at a time.
@Suite("public API, alone: cancellation", .serialized, .enabled(if: PCSCDControl.isExclusive, "timing: Scripts/test runs it in the exclusive phase"))
struct PublicAPIExclusiveTests {
    @Test("cancelling a wait for a tag ends it promptly (SCardCancel) and leaves the reader usable")
    func cancellation() async throws {
        try await withEmptySlot { slot in
            let session = TagReaderSession(reader: slot.reader)
            let waiting = Task { try await session.firstTag() }
            try await Task.sleep(for: .milliseconds(300))
            let start = ContinuousClock.now
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(ContinuousClock.now - start < .seconds(2))
            // The reader is clean: the next tag presented is delivered.
            let client = VPCDClient(port: slot.port, card: Type2TagModel(chip: .ntag213))
            client.start()
            defer {
                client.stop()
                try? waitForCard(in: slot.reader, present: false)
            }
            let tag = try await session.firstTag(timeout: .seconds(10))
            #expect(try await tag.ndef.queryNDEFStatus().status == .readWrite)
        }
    }
}
