import ISO7816

// The ISO/IEC 7816-4 commands a DESFire takes (CLA 00): SELECT by DF name or file identifier,
// READ BINARY and UPDATE BINARY on standard files with ISO file identifiers. Enough for an
// NXP AN11004 NDEF application to be read and written as an NFC Forum Type 4 tag.

extension DESFireCard {
    /// DF name of the PICC level: selecting it is SelectApplication(000000) (libfreefare's
    /// mifare_desfire_connect selects it first).
    static let piccDFName: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00]

    func iso(_ apdu: [UInt8], _ s: inout State) -> ResponseAPDU {
        guard let c = try? CommandAPDU(bytes: apdu) else { return ResponseAPDU(statusWord: .wrongLength) }
        guard !c.isExtended else { return ResponseAPDU(statusWord: .wrongLength) }
        switch c.ins {
        case 0xA4: return isoSelect(c, &s)
        case 0xB0: return isoReadBinary(c, &s)
        case 0xD6: return isoUpdateBinary(c, &s)
        default: return ResponseAPDU(statusWord: .insNotSupported)
        }
    }

    /// Selecting an application the ISO way ends the native session and the transaction, as
    /// SelectApplication does.
    func enter(_ aid: UInt32?, _ s: inout State) {
        s.selected = aid
        s.dropSession()
        s.transaction = nil
        s.isoFile = nil
    }

    func isoSelect(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        // P2: 00 return FCI (none here), 0C no response data; both answer 9000 alone.
        guard c.p2 == 0x00 || c.p2 == 0x0C else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        switch c.p1 {
        case 0x04:
            guard !c.data.isEmpty, c.data.count <= 16 else { return ResponseAPDU(statusWord: .wrongLength) }
            if c.data == Self.piccDFName {
                enter(nil, &s)
                return ResponseAPDU(statusWord: .success)
            }
            guard let app = s.image.applications.first(where: { $0.dfName == c.data }) else { return ResponseAPDU(statusWord: .fileNotFound) }
            enter(app.aid, &s)
            return ResponseAPDU(statusWord: .success)
        case 0x00, 0x01, 0x02:
            guard c.data.count == 2 else { return ResponseAPDU(statusWord: .wrongLength) }
            let fid = UInt16(c.data[0]) << 8 | UInt16(c.data[1])
            if fid == 0x3F00 {
                enter(nil, &s)
                return ResponseAPDU(statusWord: .success)
            }
            if let app = s.application, let f = app.files.first(where: { $0.isoFileID == fid }) {
                s.isoFile = f.number
                return ResponseAPDU(statusWord: .success)
            }
            if let app = s.image.applications.first(where: { $0.isoFileID == fid }) {
                enter(app.aid, &s)
                return ResponseAPDU(statusWord: .success)
            }
            return ResponseAPDU(statusWord: .fileNotFound)
        default:
            return ResponseAPDU(statusWord: .incorrectP1P2)
        }
    }

    /// The standard file ISO SELECT chose, if plain and free for `operation` (ISO commands run
    /// without native secure messaging, so only plain data with free access is served).
    func isoFile(_ operation: FileOperation, _ s: State) -> Result<(index: Int, file: File), ISOError> {
        guard let index = s.applicationIndex, let number = s.isoFile, let f = s.image.applications[index].file(number) else {
            return .failure(ISOError(StatusWord(rawValue: 0x6986)))
        }
        guard case .standard = f.content else { return .failure(ISOError(StatusWord(rawValue: 0x6981))) }
        let a = f.access
        let rights = operation == .read ? [a.read, a.readWrite] : [a.write, a.readWrite]
        guard rights.contains(AccessRights.free) else { return .failure(ISOError(.securityStatusNotSatisfied)) }
        return .success((index, f))
    }

    struct ISOError: Error { let statusWord: StatusWord; init(_ sw: StatusWord) { statusWord = sw } }

    func isoReadBinary(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard c.p1 & 0x80 == 0 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        let found = isoFile(.read, s)
        guard case let .success((_, f)) = found, case .standard(let content) = f.content else {
            if case let .failure(e) = found { return ResponseAPDU(statusWord: e.statusWord) }
            return ResponseAPDU(statusWord: .noPreciseDiagnosis)
        }
        let offset = Int(c.p1) << 8 | Int(c.p2)
        guard offset <= content.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        let wanted = c.ne ?? 256
        let end = min(content.count, offset + wanted)
        return ResponseAPDU(data: Array(content[offset..<end]), statusWord: end - offset < wanted ? .endOfFileReached : .success)
    }

    func isoUpdateBinary(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard c.p1 & 0x80 == 0 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        let found = isoFile(.write, s)
        guard case let .success((index, f)) = found, case .standard(var content) = f.content else {
            if case let .failure(e) = found { return ResponseAPDU(statusWord: e.statusWord) }
            return ResponseAPDU(statusWord: .noPreciseDiagnosis)
        }
        let offset = Int(c.p1) << 8 | Int(c.p2)
        guard offset <= content.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        guard !c.data.isEmpty, offset + c.data.count <= content.count else { return ResponseAPDU(statusWord: .wrongLength) }
        content.replaceSubrange(offset..<(offset + c.data.count), with: c.data)
        do {
            try s.persist { image in
                guard let i = image.applications[index].files.firstIndex(where: { $0.number == f.number }) else { return }
                image.applications[index].files[i].content = .standard(content)
            }
        } catch {
            return ResponseAPDU(statusWord: .memoryFailure)
        }
        return ResponseAPDU(statusWord: .success)
    }
}
