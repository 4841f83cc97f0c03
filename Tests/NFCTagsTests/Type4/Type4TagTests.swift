import ISO7816
import NDEF
import NFCTags
import Testing
import VirtualCard

/// Type 4 procedures over an emulated tag, no pcscd: exact APDU counts and memory images.
@Suite("Type 4 tag procedures")
struct Type4TagTests {
    func setup(_ configure: (inout Type4TagModel.Configuration) -> Void = { _ in }, message: [UInt8] = [], extended: Bool = true)
        -> (Type4Tag, Type4TagModel, ApplicationHost, Locked<[Exchange]>) {
        var c = Type4TagModel.Configuration()
        configure(&c)
        let model = Type4TagModel(configuration: c, message: message)
        let host = ApplicationHost(applications: [model])
        let seen = Locked([Exchange]())
        let transport = APDUTransport(channel: EmulatedChannel(card: host, supportsExtendedLength: extended)) { e in seen.withLock { $0.append(e) } }
        let tag = try! Type4Tag.detect(transport)
        return (tag, model, host, seen)
    }

    func message(_ size: Int) -> [UInt8] {
        // A MIME record "x/y": 6 bytes of header and type with a short payload, 9 with a long one.
        let payloadLength = size - 6 < 256 ? size - 6 : size - 9
        let payload = (0..<max(0, payloadLength)).map { UInt8($0 % 251) }
        let m = try! NDEFMessage(records: [.mime("x/y", payload)]).encoded()
        precondition(m.count == size, "helper made \(m.count) bytes for \(size)")
        return m
    }

    @Test("MLe 15: the read takes exactly the minimum number of READ BINARY", arguments: [0, 10, 13, 14, 100, 1000])
    func minimumReads(size: Int) throws {
        let m = size == 0 ? [] : message(size)
        let (tag, _, _, seen) = setup({ $0.mle = 15 }, message: m)
        seen.withLock { $0 = [] }
        #expect(try tag.readNDEF() == m)
        let reads = seen.current.filter { $0.command[1] == 0xB0 }.count
        // NLEN and data come in one stream: ceil((2 + NLEN) / MLe) reads, at least one.
        let minimum = max(1, (2 + m.count + 14) / 15)
        #expect(reads == minimum, "\(reads) reads for \(m.count) bytes")
    }

    @Test("a 32 KiB file read with extended Le in few APDUs, exact")
    func large() throws {
        let m = message(32_000)
        let (tag, _, _, seen) = setup({ $0.mle = 0xFFFF; $0.fileSize = 32_768 }, message: m)
        seen.withLock { $0 = [] }
        #expect(try tag.readNDEF() == m)
        #expect(seen.current.filter { $0.command[1] == 0xB0 }.count == 1)
    }

    @Test("mapping 3.0 beyond 0x7FFF: READ BINARY B1 and UPDATE BINARY D7 with offset data objects")
    func beyond7FFF() throws {
        let m = message(40_000)
        let (tag, model, _, seen) = setup({ $0.version = 0x30; $0.fileSize = 45_000; $0.mle = 0xFF; $0.mlc = 0xFF }, message: m)
        #expect(try tag.readNDEF() == m)
        #expect(seen.current.contains { $0.command[1] == 0xB1 })
        let new = message(39_000)
        try tag.writeNDEF(new)
        #expect(seen.current.contains { $0.command[1] == 0xD7 })
        #expect(model.message == new)
    }

    @Test("the extended NDEF file control TLV (ENLEN) for files of 64 KiB and more")
    func extendedFile() throws {
        let m = message(70_000)
        let (tag, model, _, _) = setup({ $0.version = 0x30; $0.fileSize = 80_000; $0.extendedFile = true; $0.mle = 0xFFFF; $0.mlc = 0xFFFF }, message: m)
        #expect(tag.capabilityContainer.isExtended)
        #expect(tag.capabilityContainer.capacity == 80_000 - 4)
        #expect(try tag.readNDEF() == m)
        try tag.writeNDEF(message(100))
        #expect(Array(model.fileContents.prefix(4)) == [0, 0, 0, 100])
    }

    @Test("writes follow the NFC Forum order and leave the file exact to the byte")
    func writeOrder() throws {
        let old = message(50)
        let (tag, model, _, seen) = setup({ $0.mlc = 20; $0.fileSize = 128 }, message: old)
        seen.withLock { $0 = [] }
        let new = message(45)
        try tag.writeNDEF(new)
        let updates = seen.current.filter { $0.command[1] == 0xD6 }
        #expect(updates.first?.command == [0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, 0x00])
        #expect(updates.last?.command == [0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, UInt8(new.count)])
        #expect(updates.count == 2 + (new.count + 19) / 20)
        var expected = [UInt8(0), UInt8(new.count)] + new
        // Bytes past the new message keep the old message's tail (NFC Forum leaves them as they are).
        expected += Array(([0, UInt8(old.count)] + old).dropFirst(expected.count))
        expected += [UInt8](repeating: 0, count: 128 - expected.count)
        #expect(model.fileContents == expected)
    }

    @Test("too large is refused with the excess; read-only refused; nothing written")
    func refusals() throws {
        let (tag, model, host, _) = setup({ $0.fileSize = 40 }, message: message(20))
        let before = model.fileContents
        let logBefore = host.log.count
        #expect(throws: TagError.self) { try tag.writeNDEF(message(39)) }
        do { try tag.writeNDEF(message(39)) } catch let e as TagError { #expect(e.message.contains("1 bytes over")) }
        #expect(model.fileContents == before)
        #expect(host.log.count == logBefore)
        let (ro, _, _, _) = setup({ $0.writeAccess = 0xFF }, message: message(20))
        #expect(ro.status == .readOnly)
        #expect(throws: TagError.self) { try ro.writeNDEF(message(10)) }
        let (prop, _, _, _) = setup({ $0.writeAccess = 0x80 }, message: message(20))
        #expect(prop.capabilityContainer.writeAccess == .proprietary(0x80))
        #expect(prop.status == .readOnly)
        let (noRead, _, _, _) = setup({ $0.readAccess = 0x81 }, message: message(20))
        #expect(noRead.status == .notSupported)
        #expect(throws: TagError.self) { try noRead.readNDEF() }
    }

    @Test("a CC longer than 15 bytes (proprietary TLVs) is fine")
    func longCC() throws {
        let (tag, _, _, _) = setup({ $0.extraCCTLVs = [0x05, 0x06, 0xE1, 0x05, 0x00, 0x80, 0x00, 0x00, 0xFD, 0x02, 0xAA, 0xBB] }, message: message(30))
        #expect(tag.capabilityContainer.length == 27)
        #expect(try tag.readNDEF().count == 30)
    }

    @Test("lying tags: NLEN beyond the file, CC claiming more than the tag holds, unknown version")
    func lies() throws {
        var c = Type4TagModel.Configuration()
        c.fileSize = 64
        let nlenLies = Type4TagModel(configuration: c, fileContents: [0x7F, 0xFF, 0xD0, 0x00, 0x00])
        let t1 = try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [nlenLies]))))
        do { _ = try t1.readNDEF(); Issue.record("read a lying NLEN") } catch let e as TagError {
            #expect(e.kind == .lengthLies)
            #expect(e.message.contains("32767-byte message"))
        }
        c.announcedFileSize = 0xFFFE
        let ccLies = Type4TagModel(configuration: c, fileContents: [0x01, 0x00] + [UInt8](repeating: 0xAB, count: 62))
        let t2 = try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [ccLies]))))
        do { _ = try t2.readNDEF(); Issue.record("read past the real file") } catch let e as TagError {
            #expect(e.kind == .lengthLies || e.kind == .readFailed, "\(e)")
        }
        var v = Type4TagModel.Configuration()
        v.version = 0x40
        let future = Type4TagModel(configuration: v)
        do { _ = try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [future])))) ; Issue.record("accepted 4.0") } catch let e as TagError {
            #expect(e.kind == .unsupportedVersion)
            #expect(e.message.contains("4.0"))
        }
    }

    @Test("mapping 1.0 tags are found by the 1.0 AID and read")
    func version1() throws {
        let (tag, _, _, _) = setup({ $0.version = 0x10 }, message: message(40))
        #expect(tag.isVersion1)
        #expect(try tag.readNDEF().count == 40)
    }

    @Test("T=0-style tags (61xx, GET RESPONSE) read the same")
    func t0() throws {
        var c = Type4TagModel.Configuration()
        c.mle = 100
        let m = message(300)
        let model = Type4TagModel(configuration: c, message: m)
        var b = HostBehaviour()
        b.usesGetResponse = true
        b.getResponseChunk = 32
        let tag = try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], behaviour: b))))
        #expect(try tag.readNDEF() == m)
    }

    @Test("lock: FF into the CC write access, then writes are refused")
    func lock() throws {
        let (tag, model, _, _) = setup(message: message(20))
        #expect(try tag.makeReadOnly())
        #expect(tag.status == .readOnly)
        #expect(model.capabilityContainer[14] == 0xFF)
        #expect(throws: TagError.self) { try tag.writeNDEF(message(10)) }
        let (stubborn, _, _, _) = setup({ $0.ccWritable = false }, message: message(20))
        #expect(throws: TagError.self) { try stubborn.makeReadOnly() }
    }

    @Test("no NDEF application: a clear notNDEF error")
    func notNDEF() {
        let host = ApplicationHost(applications: [DemoApplication()])
        do { _ = try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: host))); Issue.record("detected") } catch let e as TagError {
            #expect(e.kind == .notNDEF)
        } catch { Issue.record("\(error)") }
    }
}
