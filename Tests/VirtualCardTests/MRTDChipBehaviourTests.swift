import CardCrypto
import ISO7816
import Testing
@testable import VirtualCard

/// What the chip refuses and how: every status word of ICAO 9303 Part 11 the emulator promises,
/// the end of a session after an SM error, the two ways of answering too large an Le, a pulled
/// card, and PACE, chip and active authentication on the specimen with fresh random numbers.
@Suite("eMRTD chip: access conditions, refusals and protocols")
struct MRTDChipBehaviourTests {
    static let specimen: MRTDSpecimen = {
        var options = MRTDSpecimen.Options()
        options.seed = Array("behaviour".utf8)
        options.pace = [
            .init(mapping: .genericECDH, cipher: .aes128, parameterID: 13),
            .init(mapping: .genericECDH, cipher: .aes256, parameterID: 12),
            .init(mapping: .genericECDH, cipher: .tdes2, parameterID: 15),
            .init(mapping: .genericDH, cipher: .aes128, parameterID: 2),
            .init(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13),
        ]
        return try! MRTDSpecimen.generate(options)
    }()
    static let key = (number: "L898902C<", birth: "690806", expiry: "340623")

    func chip(_ configure: (inout MRTDChip.Configuration) -> Void = { _ in }) -> MRTDChip {
        var c = MRTDChip.Configuration()
        configure(&c)
        return MRTDChip(document: Self.specimen.document, configuration: c)
    }

    func openedWithBAC(_ chip: MRTDChip) throws -> TestReader<MRTDChip> {
        var reader = TestReader(chip)
        try reader.selectApplication()
        try reader.openBAC(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry)
        return reader
    }

    static func hex(_ s: String) -> [UInt8] { (try? Hex.decode(s)) ?? [] }

    // MARK: Before access control

    @Test("before access control: the application's EFs answer 6982 (present or not), the MF's are free")
    func beforeAccessControl() {
        let c = chip()
        // The MF: EF.CardAccess selected without Le, read.
        #expect(c.process(Self.hex("00A4020C02011C")) == [0x90, 0x00])
        let cardAccess = c.process(Self.hex("00B0000000"))
        #expect(Array(cardAccess.dropLast(2)) == Self.specimen.document.files[.cardAccess])
        #expect(c.process(Self.hex("00B09C0000")).suffix(2) == [0x62, 0x82])
        // The application: selected with Le absent, P2 0C.
        #expect(c.process(Self.hex("00A4040C07A0000002471001")) == [0x90, 0x00])
        #expect(c.process(Self.hex("00A4020C02011E")) == [0x69, 0x82])
        #expect(c.process(Self.hex("00A4020C020105")) == [0x69, 0x82])        // DG5: absent, and not told
        #expect(c.process(Self.hex("00B09E0000")) == [0x69, 0x82])            // EF.COM by short identifier
        #expect(c.process(Self.hex("00B0810004")) == [0x69, 0x82])            // DG1
        #expect(c.process(Self.hex("00B1010103540100 00")) == [0x69, 0x82])    // DG1 by FID, odd INS
        #expect(c.process(Self.hex("00B1010105540100 00")) == [0x67, 0x00])    // Lc says 5, 4 bytes follow
        #expect(c.process(Self.hex("0088000008 0102030405060708 00")) == [0x69, 0x82])
        #expect(c.access == nil)
    }

    @Test("BAC-only hides EF.CardAccess and refuses MSE:Set AT for PACE; PACE-only refuses BAC")
    func accessControlConfigurations() throws {
        let bacOnly = chip { $0.accessControl = .bac }
        #expect(bacOnly.process(Self.hex("00A4020C02011C")) == [0x6A, 0x82])
        #expect(bacOnly.process(Self.hex("0022C1A40F800A04007F00070202040202830101")) == [0x6A, 0x86])
        _ = try openedWithBAC(bacOnly)

        let paceOnly = chip { $0.accessControl = .pace }
        var reader = TestReader(paceOnly)
        try reader.selectApplication()
        #expect(throws: TestReader<MRTDChip>.Failure.status(.securityStatusNotSatisfied)) {
            try reader.openBAC(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry)
        }
        try reader.openPACE(mapping: 2, cipher: .aes128, parameterID: 13, password: .mrz(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry))
        #expect(paceOnly.access == .pace)
    }

    // MARK: Secure messaging

    @Test("a wrong MAC or a missing DO 8E: bare 6988, and every later command is as before access control")
    func smErrorsEndTheSession() throws {
        for breakIt in [0, 1, 2] {
            let c = chip()
            var reader = try openedWithBAC(c)
            var sm = reader.sm!
            var command = sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
            switch breakIt {
            case 0: command[command.count - 2] ^= 0x01                                 // the MAC
            case 1: command = Array(command.prefix(5 + 11)) + [0x00]; command[4] = 11   // DO 8E cut off
            default: command[9] ^= 0x80                                                // a byte of the cryptogram
            }
            #expect(c.process(command) == [0x69, 0x88])
            #expect(c.access == nil)
            // The terminal's next command, right in every way, finds no keys.
            reader.sm = sm
            #expect(throws: TestReader<MRTDChip>.Failure.status(StatusWord(rawValue: 0x6988))) {
                _ = try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0x9E, p2: 0, ne: 4))
            }
            #expect(c.process(Self.hex("00B09E0004")) == [0x69, 0x82])
        }
    }

    @Test("a plain command inside a session ends it; BAC can run again")
    func plainCommandEndsSession() throws {
        let c = chip()
        var reader = try openedWithBAC(c)
        #expect(c.process(Self.hex("00A4040C07A0000002471001")) == [0x90, 0x00])
        #expect(c.access == nil)
        #expect(throws: TestReader<MRTDChip>.Failure.self) { _ = try reader.read(fileIdentifier: 0x011E) }
        reader = try openedWithBAC(c)
        #expect(try reader.read(fileIdentifier: 0x011E) == Self.specimen.document.files[.com])
    }

    @Test("DG3 and DG4 are there after BAC and PACE, and closed: SELECT 9000, READ 6982")
    func eacDataGroups() throws {
        var reader = try openedWithBAC(chip())
        for fid: UInt16 in [0x0103, 0x0104] {
            #expect(try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, UInt8(fid & 0xFF)])).statusWord == .success)
            #expect(try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4)).statusWord == .securityStatusNotSatisfied)
        }
        #expect(try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x05])).statusWord == .fileNotFound)
    }

    @Test("Le above the largest the chip takes: 6700 inside secure messaging, the session goes on")
    func oversizedLeProtected() throws {
        var reader = try openedWithBAC(chip { $0.largestLe = 192 })
        _ = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x02]))
        #expect(try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 193)).statusWord == .wrongLength)
        let r = try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 192))
        #expect(r.statusWord == .success && r.data.count == 192)
    }

    @Test("Le above the largest, the bare way: 6700 unprotected, the chip's counter where it was (gmrtd #457)")
    func oversizedLeUnprotected() throws {
        let c = chip { $0.largestLe = 192; $0.oversizedLe = .unprotected }
        var reader = try openedWithBAC(c)
        _ = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x02]))
        var sm = reader.sm!
        #expect(sm.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 193), to: c) == .unprotected(.wrongLength))
        // A terminal that counted the bare answer is out of step…
        var counted = sm
        #expect(counted.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 16), to: c) == .unprotected(StatusWord(rawValue: 0x6988)))
        // …one that did not count the refused command is in step (a new session: the last
        // command ended the old one).
        reader = try openedWithBAC(c)
        _ = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x02]))
        sm = reader.sm!
        let kept = sm.ssc
        #expect(sm.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 193), to: c) == .unprotected(.wrongLength))
        sm.ssc = kept
        guard case .success(let r) = sm.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 16), to: c) else {
            Issue.record("the read after a bare 6700 failed")
            return
        }
        #expect(r.data.count == 16)
    }

    @Test("without extended length: an extended APDU gets a bare 6700 and leaves the session as it was")
    func noExtendedLength() throws {
        let c = chip { $0.extendedLength = false }
        #expect(c.process(Self.hex("00A4020C02011C")) == [0x90, 0x00])
        #expect(c.process(Self.hex("00B00000000100")) == [0x67, 0x00])
        #expect(c.process(Self.hex("00A40000022F01")) == [0x6A, 0x82])       // no EF.ATR/INFO either
        var reader = try openedWithBAC(c)
        _ = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x02]))
        var sm = reader.sm!
        let kept = sm.ssc
        #expect(sm.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 1000), to: c, extended: true) == .unprotected(.wrongLength))
        sm.ssc = kept
        // Le 00 in a short APDU: the chip sends what a protected short answer can carry, 231
        // bytes under 3DES (as the passport of NFCPassportReader #86 did).
        guard case .success(let r) = sm.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 256), to: c) else {
            Issue.record("the short read failed")
            return
        }
        #expect(r.data.count == 231 && r.statusWord == .success)
    }

    @Test("EF.ATR/INFO announces extended length; READ BINARY with odd INS and DO 54; FCP on request")
    func fileForms() throws {
        let c = chip { $0.largestLe = 4096 }
        #expect(c.process(Self.hex("00A4020C022F01")) == [0x90, 0x00])
        #expect(c.process(Self.hex("00B0000000")) == Self.hex("7F6608020210000202100062 82"))
        var reader = try openedWithBAC(c)
        let fcp = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x04, data: [0x01, 0x01], ne: 256))
        let dg1 = Self.specimen.document.files[.dataGroup(1)]!
        #expect(fcp.data == [0x62, 0x0B, 0x80, 0x02, 0x00, UInt8(dg1.count), 0x82, 0x01, 0x01, 0x83, 0x02, 0x01, 0x01])
        let odd = try reader.send(CommandAPDU(cla: 0, ins: 0xB1, p1: 0, p2: 0, data: [0x54, 0x01, 0x05], ne: 20))
        #expect(odd.data == [0x53, 0x14] + Array(dg1[5..<25]))
        let bySFI = try reader.send(CommandAPDU(cla: 0, ins: 0xB1, p1: 0, p2: 0x0F, data: [0x54, 0x02, 0x00, 0x00], ne: 8))
        #expect(bySFI.data.prefix(2) == [0x53, 0x08] && bySFI.data[2] == 0x6F)
        let past = try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0x81, p2: UInt8(dg1.count), ne: 1))
        #expect(past.statusWord == .wrongP1P2)
        let tail = try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0x81, p2: UInt8(dg1.count - 3), ne: 10))
        #expect(tail.data == Array(dg1.suffix(3)) && tail.statusWord == .endOfFileReached)
    }

    // MARK: PACE, CA, AA on the specimen

    @Test("PACE on the specimen with fresh randoms: ECDH brainpoolP256r1, P-256/AES-256, P-384/3DES, DH 2048/256; MRZ and CAN; then reads")
    func paceVariants() throws {
        let runs: [(UInt8, CipherAlgorithm, Int, Bool)] = [(2, .aes128, 13, false), (2, .aes256, 12, true), (2, .tdes2, 15, false), (1, .aes128, 2, true)]
        for (mapping, cipher, id, useCAN) in runs {
            let c = chip()
            var reader = TestReader(c)
            let password: TestReader<MRTDChip>.PACEPassword = useCAN ? .can("123456") : .mrz(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry)
            try reader.openPACE(mapping: mapping, cipher: cipher, parameterID: id, password: password)
            #expect(c.access == .pace && c.sessionCipher == cipher)
            _ = try reader.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0x0C, data: MRTDChip.applicationIdentifier))
            #expect(try reader.read(fileIdentifier: 0x0101) == Self.specimen.document.files[.dataGroup(1)])
        }
        // A wrong CAN: 6300 at the tokens.
        var wrong = TestReader(chip())
        #expect(throws: TestReader<MRTDChip>.Failure.status(.verificationFailed)) {
            try wrong.openPACE(mapping: 2, cipher: .aes128, parameterID: 13, password: .can("123457"))
        }
        // Several PACEInfos and no DO 84, on a chip that insists (gmrtd #108).
        var strict = TestReader(chip { $0.requiresParameterIDWhenSeveral = true })
        #expect(throws: TestReader<MRTDChip>.Failure.status(StatusWord(rawValue: 0x6A87))) {
            try strict.openPACE(mapping: 2, cipher: .aes128, parameterID: 13, password: .can("123456"), sendParameterID: false)
        }
    }

    @Test("PACE-CAM: the chip's CA_IC maps its static key onto its mapping key, and EF.CardSecurity opens after PACE only")
    func chipAuthenticationMapping() throws {
        let c = chip()
        var reader = TestReader(c)
        let ca = try #require(try reader.openPACE(mapping: 6, cipher: .aes128, parameterID: 13, password: .can("123456")))
        let key = try #require(Self.specimen.document.chipAuthenticationKey)
        let curve = try #require(key.curve)
        let staticKey = try #require(curve.point(key.publicValue))
        #expect(curve.multiply(generatorBy: nil, point: staticKey, by: BigNumber(bytes: ca))?.uncompressed == reader.lastChipMappingKey)
        // EF.CardSecurity in the MF: readable now, refused under BAC.
        let cardSecurity = try reader.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0x9D, p2: 0, ne: 4))
        #expect(cardSecurity.data.first == 0x30)
        var bac = try openedWithBAC(chip())
        _ = try bac.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0, p2: 0x0C))
        #expect(try bac.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0x9D, p2: 0, ne: 4)).statusWord == .securityStatusNotSatisfied)
    }

    static func dg14Key() throws -> (EVPKey, [UInt8]) {
        let dg14 = try #require(specimen.document.files[.dataGroup(14)])
        let set = try #require(try BERTLV.decode(dg14).first?.children?.first?.children)
        var protocolOID: [UInt8] = []
        var spki: [UInt8] = []
        for info in set {
            guard let fields = info.children, fields.count >= 2, fields[0].tag == [0x06] else { continue }
            if fields[0].value.starts(with: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x03]) { protocolOID = fields[0].value }
            if fields[0].value.starts(with: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x01]) {
                spki = fields[1].tag + BERTLV.encodeLength(fields[1].value.count) + fields[1].value
            }
        }
        return (try #require(EVPKey(subjectPublicKeyInfo: spki)), protocolOID)
    }

    @Test("chip authentication with DG14's key (explicit curve parameters, as libcrypto reads them): new keys, SSC 0, reads go on")
    func chipAuthentication() throws {
        let (key, oid) = try Self.dg14Key()
        #expect(key.publicBytes == Self.specimen.document.chipAuthenticationKey?.publicValue)
        let c = chip()
        var reader = try openedWithBAC(c)
        try reader.chipAuthenticate(chipKey: key, protocolOID: oid, cipher: .aes128, viaKAT: false)
        #expect(c.access == .chipAuthentication && c.sessionCipher == .aes128)
        #expect(try reader.read(fileIdentifier: 0x010F) == Self.specimen.document.files[.dataGroup(15)])
        // MSE:Set KAT is the 3DES way only.
        var other = try openedWithBAC(chip())
        #expect(throws: TestReader<MRTDChip>.Failure.status(.conditionsNotSatisfied)) { try other.chipAuthenticate(chipKey: key, protocolOID: oid, cipher: .aes128, viaKAT: true) }
    }

    @Test("chip authentication with 3DES through MSE:Set KAT, and with DH")
    func chipAuthenticationVariants() throws {
        for (id, cipher) in [(12, CipherAlgorithm.tdes2), (2, .aes128)] {
            var options = MRTDSpecimen.Options()
            options.seed = Array("ca \(id)".utf8)
            options.activeAuthentication = nil
            options.chipAuthentication = .init(parameterID: id, cipher: cipher)
            options.explicitCurveParameters = false
            let s = try MRTDSpecimen.generate(options)
            let dg14 = try #require(s.document.files[.dataGroup(14)])
            let set = try #require(try BERTLV.decode(dg14).first?.children?.first?.children)
            let spkiObject = try #require(set.compactMap(\.children).first { $0.count >= 2 && $0[0].value.starts(with: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x01]) })
            let key = try #require(EVPKey(subjectPublicKeyInfo: spkiObject[1].tag + BERTLV.encodeLength(spkiObject[1].value.count) + spkiObject[1].value))
            let oid = try #require(set.compactMap(\.children).first { $0[0].value.starts(with: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x03]) })[0].value
            let c = MRTDChip(document: s.document)
            var reader = TestReader(c)
            try reader.selectApplication()
            try reader.openBAC(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry)
            try reader.chipAuthenticate(chipKey: key, protocolOID: oid, cipher: cipher, viaKAT: cipher == .tdes2)
            #expect(c.access == .chipAuthentication)
            #expect(try reader.read(fileIdentifier: 0x0101) == s.document.files[.dataGroup(1)])
        }
    }

    @Test("active authentication: RSA ISO 9796-2 over the challenge, and ECDSA; a wrong challenge does not verify")
    func activeAuthentication() throws {
        var reader = try openedWithBAC(chip())
        let challenge = secureRandomBytes(8)
        let rsa = try reader.send(CommandAPDU(cla: 0, ins: 0x88, p1: 0, p2: 0, data: challenge, ne: 256))
        let dg15 = try #require(Self.specimen.document.files[.dataGroup(15)])
        let dg15Object = try #require(try BERTLV.decode(dg15).first)
        let key = try #require(EVPKey(subjectPublicKeyInfo: dg15Object.value))
        #expect(rsa.data.count == 128)
        #expect(key.verifiesISO9796(rsa.data, challenge: challenge))
        #expect(!key.verifiesISO9796(rsa.data, challenge: challenge.reversed()))

        var options = MRTDSpecimen.Options()
        options.seed = Array("aa ecdsa".utf8)
        options.activeAuthentication = .ecdsa(parameterID: 12)
        options.chipAuthentication = nil
        let s = try MRTDSpecimen.generate(options)
        var ec = TestReader(MRTDChip(document: s.document))
        try ec.selectApplication()
        try ec.openBAC(number: Self.key.number, birth: Self.key.birth, expiry: Self.key.expiry)
        let sig = try ec.send(CommandAPDU(cla: 0, ins: 0x88, p1: 0, p2: 0, data: challenge, ne: 256))
        let ecObject = try #require(try BERTLV.decode(s.document.files[.dataGroup(15)] ?? []).first)
        let ecKey = try #require(EVPKey(subjectPublicKeyInfo: ecObject.value))
        #expect(sig.data.count == 64)
        #expect(ecKey.verifiesPlainECDSA(sig.data, message: challenge))
        #expect(!ecKey.verifiesPlainECDSA(sig.data, message: challenge.reversed()))
        // A 16-byte challenge is a length error.
        #expect(try ec.send(CommandAPDU(cla: 0, ins: 0x88, p1: 0, p2: 0, data: challenge + challenge, ne: 256)).statusWord == .wrongLength)
    }

    // MARK: Power and hostile input

    @Test("a reset or power-off ends the session: the keys are gone")
    func powerLosesSession() throws {
        for cut in [{ (c: MRTDChip) in c.reset() }, { (c: MRTDChip) in c.powerOff() }] {
            let c = chip()
            var reader = try openedWithBAC(c)
            cut(c)
            #expect(c.access == nil && !c.applicationSelected)
            #expect(throws: TestReader<MRTDChip>.Failure.status(StatusWord(rawValue: 0x6988))) { _ = try reader.read(fileIdentifier: 0x0101) }
        }
    }

    @Test("hostile commands: short, lying Lc and Le, garbage data objects, in every state; each gets a status word")
    func hostileCommands() throws {
        let stream = SeededStream(Array("hostile".utf8))
        let templates: [[UInt8]] = [
            Self.hex("00A4040C07A0000002471001"), Self.hex("0084000008"), Self.hex("00B0000004"), Self.hex("00B10000035401"),
            Self.hex("0022C1A40F800A04007F00070202040202830101"), Self.hex("10860000027C0000"), Self.hex("0C B0 00 00 0D 97 01 04 8E 08 00 00 00 00 00 00 00 00 00"),
            Self.hex("00860000047C02810000"), Self.hex("0C860000"), Self.hex("0088000008"), Self.hex("002241A4037C0100"),
        ]
        var answered = 0
        for state in 0..<3 {
            let c = chip()
            if state == 1 { _ = try openedWithBAC(c) }
            if state == 2 { var r = TestReader(c); try r.openPACE(mapping: 2, cipher: .aes128, parameterID: 13, password: .can("123456")) }
            for i in 0..<1500 {
                var apdu: [UInt8]
                if i % 3 == 0 {
                    apdu = stream.next(Int(stream.next(1)[0]) % 24)
                } else {
                    apdu = templates[i % templates.count]
                    for _ in 0..<(1 + i % 4) where !apdu.isEmpty {
                        let at = Int(stream.next(2).reduce(0) { $0 << 8 | Int($1) }) % apdu.count
                        apdu[at] = stream.next(1)[0]
                    }
                    if i % 5 == 0 { apdu += stream.next(i % 7) }
                    if i % 7 == 0 { apdu = Array(apdu.dropLast(i % 4)) }
                }
                let answer = c.process(apdu)
                #expect(answer.count >= 2)
                answered += 1
            }
        }
        #expect(answered == 4500)
    }
}
