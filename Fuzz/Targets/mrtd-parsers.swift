// libFuzzer target: every parser of what a passport, a dump or a trust file says — the MRZ,
// EF.COM, the data groups (DG1, DG2, DG5/DG7, DG11, DG12, any other), EF.SOD, master lists and
// trust files, SecurityInfos (EF.CardAccess, DG14, EF.CardSecurity), DG15's key and active
// authentication's signature, secure-messaging answers (as sent, and MACed correctly around
// hostile content), PACE's 7C templates, TLV lengths, the card capabilities — and whole reads by
// MRTDReader from a chip that answers whatever the input says, in the clear and under secure
// messaging with valid MACs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 14 {
    case 0: MachineReadableZone.fuzz(bytes)
    case 1: EFCOM.fuzz(bytes)
    case 2: LDSDataGroup.fuzz(bytes)
    case 3: DataGroup2.fuzz(bytes)
    case 4: DataGroup11.fuzz(bytes); DataGroup12.fuzz(bytes)
    case 5: DocumentSecurityObject.fuzz(bytes)
    case 6: CSCAMasterList.fuzz(bytes)
    case 7: TrustStore.fuzz(bytes)
    case 8:
        // EF.CardAccess, DG14 and EF.CardSecurity, and what a reader does with them.
        for infos in [try? SecurityInfos(encoded: bytes), try? SecurityInfos(cardSecurity: bytes)] {
            guard let infos else { continue }
            for info in infos.paceInfos { _ = try? infos.domainParameters(for: info) }
            for key in infos.chipAuthenticationPublicKeyInfos { _ = try? key.publicKey.specification.domain() }
            _ = MRTDReader.preferredPACEInfo(infos)
        }
    case 9:
        // DG15 and a signature over a fixed challenge: the key, then the signature, from the input.
        let split = Int(bytes.first ?? 0) * 2
        let rest = Array(bytes.dropFirst())
        if let key = try? ChipPublicKey(encoded: Array(rest.prefix(split))) {
            _ = try? ActiveAuthentication.verify(signature: Array(rest.dropFirst(split)), challenge: [1, 2, 3, 4, 5, 6, 7, 8], publicKey: key)
        }
    case 10:
        // A secure-messaging answer as sent by a chip that does not hold the keys, and the same
        // content correctly MACed (decryption, padding and the status under a valid MAC).
        let aes = bytes.first.map { $0 & 1 == 1 } ?? true
        if let sm = FuzzChip.session(aes: aes), bytes.count >= 2, let raw = try? ResponseAPDU(bytes: Array(bytes.dropFirst())) {
            _ = try? sm.unprotect(raw)
        }
        if let sm = FuzzChip.session(aes: aes), let chip = FuzzChip(aes: aes) {
            // The reader's counter moved for the command it protected; the chip's moves for the
            // command and the answer, as the reader's will when it checks the answer.
            sm.incrementCounter()
            chip.step()
            chip.step()
            let answer = chip.wrap(plain: Array(bytes.dropFirst(3)), status: [bytes.count > 1 ? bytes[1] : 0x90, bytes.count > 2 ? bytes[2] : 0x00],
                                   odd: bytes.first.map { $0 & 2 == 2 } ?? false, rawBody: bytes.first.map { $0 & 4 == 4 } ?? false)
            _ = try? sm.unprotect(answer)
        }
    case 11:
        // A whole chip-info read and file reads from a chip that answers what the input says.
        guard let chip = FuzzChip(script: bytes, secured: false) else { return 0 }
        let reader = MRTDReader(transport: APDUTransport(channel: chip))
        reader.options.chipSupportsExtendedLength = bytes.first.map { $0 & 1 == 1 }
        _ = try? reader.readChipInfo(historicalBytes: Array(bytes.prefix(8)))
        for file in [MRTDFile.com, .sod, MRTDFile.dataGroup(2)!, .dir] { _ = try? reader.readFile(file) }
    case 12:
        // The same under secure messaging: every answer MACed correctly, its content hostile.
        guard let chip = FuzzChip(script: bytes, secured: true), let sm = FuzzChip.session(aes: true) else { return 0 }
        let reader = MRTDReader(transport: APDUTransport(channel: chip))
        reader.options.chipSupportsExtendedLength = bytes.first.map { $0 & 1 == 1 }
        reader.channel.secureMessaging = sm
        for file in [MRTDFile.dataGroup(1)!, MRTDFile.dataGroup(2)!, .sod] { _ = try? reader.readFile(file) }
    default:
        _ = try? PACE.dynamicAuthenticationData(bytes, what: "fuzz")
        _ = MRTDReader.objectLength(bytes)
        _ = ChipCapabilities.extendedLength(historicalBytes: bytes)
        _ = ChipCapabilities.extendedLength(atrInfo: bytes)
        _ = MRTDChipInfo(cardAccess: nil, securityInfos: nil, cardAccessError: nil, directory: bytes, atrInfo: nil, extendedLength: nil,
                         hasApplication: false).directoryApplications
    }
    return 0
}

/// A chip that answers each command with the next answer the fuzz input holds, in the clear or
/// wrapped in secure messaging with the keys `session(aes:)` gives the reader (so the reader's
/// MAC check passes and the content is what is tested).
final class FuzzChip: CardChannel {
    static let encryptionKey = [UInt8](repeating: 0x11, count: 16)
    static let macKey = [UInt8](repeating: 0x22, count: 16)

    static func session(aes: Bool) -> SecureMessaging? {
        let cipher: CipherAlgorithm = aes ? .aes128 : .tdes2
        return try? SecureMessaging(keys: SessionKeys(cipher: cipher, encryption: encryptionKey, mac: macKey,
                                                      sendSequenceCounter: [UInt8](repeating: 0, count: cipher.blockSize)))
    }

    let cipher: CipherAlgorithm
    let encryption: BlockCipher
    let cmac: CMAC?
    var ssc: [UInt8]
    var script: [UInt8] = []
    var cursor = 0
    var secured = false

    init?(aes: Bool) {
        cipher = aes ? .aes128 : .tdes2
        guard let e = try? BlockCipher(cipher, key: Self.encryptionKey) else { return nil }
        encryption = e
        cmac = aes ? try? CMAC(cipher, key: Self.macKey) : nil
        ssc = [UInt8](repeating: 0, count: cipher.blockSize)
    }

    convenience init?(script: [UInt8], secured: Bool) {
        self.init(aes: true)
        self.script = script
        self.secured = secured
    }

    var supportsExtendedLength: Bool { true }

    func step() {
        for i in stride(from: ssc.count - 1, through: 0, by: -1) {
            ssc[i] &+= 1
            if ssc[i] != 0 { break }
        }
    }

    func next() -> UInt8? {
        guard cursor < script.count else { return nil }
        defer { cursor += 1 }
        return script[cursor]
    }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        // An answer: a length (one byte, times 1-4 with the top bits of the next), the data, a status.
        guard let n = next(), let scale = next() else { return [0x6A, 0x82] }
        let length = Int(n) * (Int(scale >> 6) + 1)
        var plain: [UInt8] = []
        while plain.count < length, let b = next() { plain.append(b) }
        let status: [UInt8] = scale & 1 == 1 ? [0x90, 0x00] : [next() ?? 0x90, next() ?? 0x00]
        guard secured else { return plain + status }
        // The reader protected a command (its SSC moved): ours moves for the command, then the answer.
        step()
        step()
        return wrap(plain: plain, status: status, odd: command.count > 1 && command[1] & 1 == 1, rawBody: scale & 2 == 2).bytes
    }

    /// DO 87/85 (encrypted, padded), DO 99 and DO 8E with a valid MAC over the current SSC;
    /// `rawBody` skips the padding, so the decrypted block's padding is whatever it is.
    func wrap(plain: [UInt8], status: [UInt8], odd: Bool, rawBody: Bool) -> ResponseAPDU {
        var objects: [UInt8] = []
        if !plain.isEmpty {
            let iv = cipher.isAES ? (try? encryption.encrypt(block: ssc)) : nil
            var body = rawBody ? plain : Padding.pad(plain, blockSize: cipher.blockSize)
            if body.count % cipher.blockSize != 0 { body += [UInt8](repeating: 0, count: cipher.blockSize - body.count % cipher.blockSize) }
            let cryptogram = (try? encryption.encrypt(cbc: body, iv: iv)) ?? []
            objects += odd ? [0x85] + BERTLV.encodeLength(cryptogram.count) + cryptogram
                           : [0x87] + BERTLV.encodeLength(cryptogram.count + 1) + [0x01] + cryptogram
        }
        objects += [0x99, 0x02] + status.prefix(2)
        let input = Padding.pad(ssc + objects, blockSize: cipher.blockSize)
        let mac: [UInt8]
        if let cmac { mac = Array(((try? cmac.mac(input)) ?? []).prefix(8)) } else { mac = (try? RetailMAC.mac(key: Self.macKey, data: input)) ?? [] }
        objects += [0x8E, 0x08] + mac
        return ResponseAPDU(data: objects, statusWord: StatusWord(status.first ?? 0x90, status.count > 1 ? status[1] : 0))
    }
}
