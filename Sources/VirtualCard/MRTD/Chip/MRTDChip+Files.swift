// The emulated eMRTD chip's SELECT and READ BINARY, with the access conditions of each file.
import ISO7816

/// SELECT and READ BINARY (ICAO 9303 Part 10 §3.5–3.6, ISO/IEC 7816-4 §7.1–7.2), with the access
/// conditions of Part 11: the master file's EFs are free, the application's need BAC or PACE,
/// EF.CardSecurity needs PACE, and the EAC-protected data groups stay closed.
extension MRTDChip {
    /// A file's bytes as this chip serves it: the document's, or EF.ATR/INFO made from the
    /// configuration.
    func contents(of file: MRTDFile) -> [UInt8]? {
        if file == .cardAccess && configuration.accessControl == .bac { return nil }
        if let bytes = document.files[file] { return bytes }
        if file == .atrInfo && configuration.extendedLength {
            // Extended length information (ISO 7816-4 §12.7.1, DO 7F66): the largest command and
            // answer, each an INTEGER.
            let n = min(configuration.largestLe, 0xFFFF)
            let size: [UInt8] = [0x02, 0x02, UInt8(n >> 8), UInt8(n & 0xFF)]
            return [0x7F, 0x66, 0x08] + size + size
        }
        return nil
    }

    enum Readability { case free, afterAccessControl, afterPACE, never }

    func readability(_ file: MRTDFile) -> Readability {
        switch file {
        case .cardAccess, .dir, .atrInfo: return .free
        case .cardSecurity: return .afterPACE
        case .com, .sod: return .afterAccessControl
        case .dataGroup(let n): return configuration.eacProtectedDataGroups.contains(n) ? .never : .afterAccessControl
        }
    }

    /// The files the current directory holds: the master file's when no application is
    /// selected, the application's when it is.
    func filesInCurrentDirectory(_ s: State) -> [MRTDFile] {
        MRTDFile.all.filter { $0.inMasterFile != s.applicationSelected }
    }

    // MARK: SELECT

    func select(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        // P2: 0C no answer data; 00 FCI, 04 FCP (given only when Le asks). Le may be absent:
        // German documents refuse an Le on SELECT (NFCPassportReader PR #153), and readers
        // following them send none.
        guard c.p2 == 0x0C || c.p2 == 0x00 || c.p2 == 0x04 else { return Outcome(.incorrectP1P2) }
        let wantsData = c.p2 != 0x0C && c.ne != nil
        switch c.p1 {
        case 0x04:
            guard c.data == Self.applicationIdentifier else { return Outcome(.fileNotFound) }
            s.applicationSelected = true
            s.currentFile = nil
            let fci = [0x6F, UInt8(2 + c.data.count), 0x84, UInt8(c.data.count)] + c.data
            return wantsData ? Outcome(data: fci) : Outcome(.success)
        case 0x00 where c.data.isEmpty || c.data == [0x3F, 0x00]:
            s.applicationSelected = false
            s.currentFile = nil
            return Outcome(.success)
        case 0x00, 0x02:
            guard c.data.count == 2 else { return Outcome(.wrongLength) }
            let fid = UInt16(c.data[0]) << 8 | UInt16(c.data[1])
            // An EF of the current directory; from the application, the master file's own EFs
            // (their identifiers differ from the application's but for 011D) are found too.
            var candidates = filesInCurrentDirectory(s)
            if s.applicationSelected { candidates += MRTDFile.all.filter(\.inMasterFile) }
            guard let file = candidates.first(where: { $0.fileIdentifier == fid }) else {
                // Before access control the application tells nothing, not even what is absent.
                if s.applicationSelected && s.session == nil { return Outcome(.securityStatusNotSatisfied) }
                return Outcome(.fileNotFound)
            }
            if !file.inMasterFile && s.session == nil { return Outcome(.securityStatusNotSatisfied) }
            guard let bytes = contents(of: file) else { return Outcome(.fileNotFound) }
            s.currentFile = file
            guard wantsData else { return Outcome(.success) }
            // FCP (ISO 7816-4 §7.4.3): file size, descriptor (transparent EF), identifier.
            let fcp: [UInt8] = [0x80, 0x02, UInt8(bytes.count >> 8 & 0xFF), UInt8(bytes.count & 0xFF), 0x82, 0x01, 0x01, 0x83, 0x02] + c.data
            return Outcome(data: [0x62, UInt8(fcp.count)] + fcp)
        case 0x01:
            // No DF below the master file has a file identifier here.
            return Outcome(.fileNotFound)
        default:
            return Outcome(.incorrectP1P2)
        }
    }

    // MARK: READ BINARY

    func readBinary(_ c: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        guard let ne = c.ne else { return Outcome(.wrongLength) }
        let file: MRTDFile
        let offset: Int
        if c.ins == 0xB0 {
            guard c.data.isEmpty else { return Outcome(.wrongLength) }
            if c.p1 & 0x80 != 0 {
                // Short EF identifier in P1 b5–b1, offset in P2 (Part 10 §3.5.2).
                guard c.p1 & 0x60 == 0 else { return Outcome(.incorrectP1P2) }
                switch resolve(shortIdentifier: c.p1 & 0x1F, s) {
                case .file(let f): file = f
                case .refused(let sw): return Outcome(sw)
                }
                offset = Int(c.p2)
            } else {
                guard let f = s.currentFile else { return Outcome(StatusWord(rawValue: 0x6986)) }
                file = f
                offset = Int(c.p1) << 8 | Int(c.p2)
            }
        } else {
            // Odd INS: the offset in DO 54 (ISO 7816-4 §7.2.2), up to three bytes, for files of
            // 32 KB and more; P1-P2 the current EF (0000), a short identifier, or a FID.
            guard let objects = try? BERTLV.decode(c.data), objects.count == 1, objects[0].tag == [0x54],
                  (1...3).contains(objects[0].value.count) else { return Outcome(.wrongData) }
            offset = objects[0].value.reduce(0) { $0 << 8 | Int($1) }
            let reference = Int(c.p1) << 8 | Int(c.p2)
            if reference == 0 {
                guard let f = s.currentFile else { return Outcome(StatusWord(rawValue: 0x6986)) }
                file = f
            } else if reference < 0x20 {
                switch resolve(shortIdentifier: UInt8(reference), s) {
                case .file(let f): file = f
                case .refused(let sw): return Outcome(sw)
                }
            } else {
                guard let f = filesInCurrentDirectory(s).first(where: { $0.fileIdentifier == UInt16(reference) }) else {
                    return Outcome(s.applicationSelected && s.session == nil ? .securityStatusNotSatisfied : .fileNotFound)
                }
                file = f
            }
        }

        switch readability(file) {
        case .free: break
        case .afterAccessControl: guard s.session != nil else { return Outcome(.securityStatusNotSatisfied) }
        case .afterPACE: guard s.session?.openedByPACE == true else { return Outcome(.securityStatusNotSatisfied) }
        case .never: return Outcome(.securityStatusNotSatisfied)
        }
        guard let bytes = contents(of: file) else { return Outcome(.fileNotFound) }
        s.currentFile = file
        guard ne <= configuration.largestLe else { return .oversized() }
        guard offset < bytes.count else { return Outcome(.wrongP1P2) }

        // What one answer carries: Ne, the file's rest, and what the APDU can frame (less the
        // DO 53 around the data for the odd INS).
        var room = exchange.capacity
        if c.ins == 0xB1 {
            while room > 0 && 1 + BERTLV.encodeLength(room).count + room > exchange.capacity { room -= 1 }
        }
        let count = min(ne, bytes.count - offset, room)
        let data = Array(bytes[offset..<(offset + count)])
        let status: StatusWord = count < ne && offset + count == bytes.count && configuration.endOfFileWarning ? .endOfFileReached : .success
        if c.ins == 0xB1 { return Outcome(data: [0x53] + BERTLV.encodeLength(data.count) + data, status) }
        return Outcome(data: data, status)
    }

    enum Resolution { case file(MRTDFile), refused(StatusWord) }

    /// The EF a short identifier names in the current directory. Before access control the
    /// application's EFs answer `6982` whether or not they exist.
    func resolve(shortIdentifier sfi: UInt8, _ s: State) -> Resolution {
        if let file = filesInCurrentDirectory(s).first(where: { $0.shortIdentifier == sfi }) {
            if !file.inMasterFile && s.session == nil { return .refused(.securityStatusNotSatisfied) }
            return .file(file)
        }
        if s.applicationSelected && s.session == nil { return .refused(.securityStatusNotSatisfied) }
        return .refused(.fileNotFound)
    }
}
