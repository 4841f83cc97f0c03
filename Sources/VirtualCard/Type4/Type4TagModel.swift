// An emulated Type 4 tag: the NDEF application's CC and NDEF file, strict about MLe and MLc.
import ISO7816

/// An emulated NFC Forum Type 4 tag (T4T 2.0/3.0, and 1.0 for detection tests): the NDEF
/// application with its capability container (E103) and NDEF file, served by SELECT, READ
/// BINARY (B0, and B1 with an offset data object) and UPDATE BINARY (D6, D7).
///
/// It is strict where tags are: Le above MLe and data above MLc are refused with 6700, so a
/// reader that ignores the CC's limits fails here as it would on a real tag.
public final class Type4TagModel: CardApplication, @unchecked Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Mapping version byte: 0x10, 0x20 or 0x30 (or anything, to test refusal).
        public var version: UInt8 = 0x20
        /// Maximum R-APDU data size (MLe).
        public var mle = 0xFF
        /// Maximum C-APDU data size (MLc).
        public var mlc = 0xFF
        /// The NDEF file's size, NLEN (or ENLEN) included.
        public var fileSize = 2048
        public var readAccess: UInt8 = 0x00
        public var writeAccess: UInt8 = 0x00
        public var fileID: [UInt8] = [0xE1, 0x04]
        /// Use the Extended NDEF File Control TLV (06) and a 4-byte ENLEN (mapping 3.0).
        public var extendedFile = false
        /// TLVs appended to the CC after the NDEF file control TLV (a CC longer than 15 bytes).
        public var extraCCTLVs: [UInt8] = []
        /// Whether UPDATE BINARY may change the CC's write-access byte (lock).
        public var ccWritable = true
        /// Override the file size the CC announces (a lying CC).
        public var announcedFileSize: Int?

        public init() {}
    }

    public let configuration: Configuration

    /// The ATR a PC/SC contactless reader builds for an ISO 14443-4 card (PC/SC Part 3):
    /// 3B 8n 80 01 + historical bytes + TCK; here with no historical bytes beyond "apdu".
    public static let contactlessATR: [UInt8] = {
        let historical = Array("T4T".utf8)
        var atr: [UInt8] = [0x3B, 0x80 | UInt8(historical.count), 0x80, 0x01] + historical
        atr.append(atr.dropFirst().reduce(0, ^))
        return atr
    }()
    public var aid: [UInt8] { configuration.version >> 4 == 1 ? [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00] : [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01] }

    struct Memory {
        var cc: [UInt8]
        var file: [UInt8]
        var selected: [UInt8]? = nil
        var commands = 0
    }
    private let memory: Locked<Memory>
    /// Called with the NDEF file after every successful UPDATE BINARY (to save it back).
    public var onChange: (@Sendable ([UInt8]) -> Void)?

    var nlenSize: Int { configuration.extendedFile ? 4 : 2 }

    /// A tag holding `message` (an encoded NDEF message), or `fileContents` exactly when given.
    public init(configuration: Configuration = Configuration(), message: [UInt8] = [], fileContents: [UInt8]? = nil) {
        self.configuration = configuration
        let c = configuration
        var file = [UInt8](repeating: 0, count: c.fileSize)
        if let fileContents {
            for (i, b) in fileContents.prefix(c.fileSize).enumerated() { file[i] = b }
        } else {
            let n = min(message.count, c.fileSize - (c.extendedFile ? 4 : 2))
            if c.extendedFile {
                file[0] = UInt8(n >> 24 & 0xFF); file[1] = UInt8(n >> 16 & 0xFF); file[2] = UInt8(n >> 8 & 0xFF); file[3] = UInt8(n & 0xFF)
                for i in 0..<n { file[4 + i] = message[i] }
            } else {
                file[0] = UInt8(n >> 8 & 0xFF); file[1] = UInt8(n & 0xFF)
                for i in 0..<n { file[2 + i] = message[i] }
            }
        }
        let size = c.announcedFileSize ?? c.fileSize
        var tlv: [UInt8]
        if c.extendedFile {
            tlv = [0x06, 0x08] + c.fileID + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), c.readAccess, c.writeAccess]
        } else {
            tlv = [0x04, 0x06] + c.fileID + [UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), c.readAccess, c.writeAccess]
        }
        var cc: [UInt8] = [0, 0, c.version, UInt8(c.mle >> 8 & 0xFF), UInt8(c.mle & 0xFF), UInt8(c.mlc >> 8 & 0xFF), UInt8(c.mlc & 0xFF)] + tlv + c.extraCCTLVs
        cc[0] = UInt8(cc.count >> 8); cc[1] = UInt8(cc.count & 0xFF)
        memory = Locked(Memory(cc: cc, file: file))
    }

    /// The NDEF file as it is now (NLEN/ENLEN and the message).
    public var fileContents: [UInt8] { memory.current.file }
    public var capabilityContainer: [UInt8] { memory.current.cc }
    /// The current NDEF message, per NLEN/ENLEN.
    public var message: [UInt8] {
        let f = fileContents
        let n = nlenSize == 4 ? Int(f[0]) << 24 | Int(f[1]) << 16 | Int(f[2]) << 8 | Int(f[3]) : Int(f[0]) << 8 | Int(f[1])
        return Array(f[nlenSize..<min(f.count, nlenSize + n)])
    }

    public func select(_ command: CommandAPDU) -> ResponseAPDU {
        memory.withLock { $0.selected = nil }
        return ResponseAPDU(statusWord: .success)
    }

    public func deselect() { memory.withLock { $0.selected = nil } }

    public func process(_ command: CommandAPDU) -> ResponseAPDU {
        switch command.ins {
        case 0xA4: return selectFile(command)
        case 0xB0, 0xB1: return read(command)
        case 0xD6, 0xD7: return update(command)
        default: return ResponseAPDU(statusWord: .insNotSupported)
        }
    }

    private func selectFile(_ command: CommandAPDU) -> ResponseAPDU {
        guard command.p1 == 0x00 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        // Mapping 2.0+ selects by file identifier with P2 0C (no FCI); 1.0 tags use P2 00.
        guard command.p2 == 0x0C || command.p2 == 0x00 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        guard command.data.count == 2 else { return ResponseAPDU(statusWord: .wrongLength) }
        let fid = command.data
        return memory.withLock { m in
            if fid == [0xE1, 0x03] || fid == configuration.fileID {
                m.selected = fid
                return ResponseAPDU(statusWord: .success)
            }
            return ResponseAPDU(statusWord: .fileNotFound)
        }
    }

    /// Offset and data from B1/D7's offset data object 54 03 xx xx xx (and 53 L data for D7).
    private func oddOffset(_ data: [UInt8]) -> (Int, [UInt8])? {
        guard data.count >= 5, data[0] == 0x54, data[1] == 0x03 else { return nil }
        let offset = Int(data[2]) << 16 | Int(data[3]) << 8 | Int(data[4])
        if data.count == 5 { return (offset, []) }
        guard let objects = try? BERTLV.decode(Array(data[5...])), let d = objects.first, d.tag == [0x53] else { return nil }
        return (offset, d.value)
    }

    private func read(_ command: CommandAPDU) -> ResponseAPDU {
        memory.withLock { m in
            m.commands += 1
            guard let selected = m.selected else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)) }
            let isCC = selected == [0xE1, 0x03]
            if !isCC && configuration.readAccess != 0x00 { return ResponseAPDU(statusWord: .securityStatusNotSatisfied) }
            let offset: Int
            if command.ins == 0xB0 {
                guard command.p1 & 0x80 == 0 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
                offset = Int(command.p1) << 8 | Int(command.p2)
            } else {
                guard let (o, _) = oddOffset(command.data) else { return ResponseAPDU(statusWord: .wrongData) }
                offset = o
            }
            let ne = command.ne ?? 256
            guard ne <= configuration.mle || isCC else { return ResponseAPDU(statusWord: .wrongLength) }
            let contents = isCC ? m.cc : m.file
            guard offset <= contents.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
            let end = min(contents.count, offset + ne)
            let data = Array(contents[offset..<end])
            if command.ins == 0xB1 {
                return ResponseAPDU(data: [0x53] + BERTLV.encodeLength(data.count) + data, statusWord: end - offset < ne ? .endOfFileReached : .success)
            }
            // ISO 7816-4: fewer bytes than Ne because the file ends is 62 82 with the bytes there
            // are; an offset past the end, 6B 00.
            guard end - offset < ne else { return ResponseAPDU(data: data, statusWord: .success) }
            return ResponseAPDU(data: data, statusWord: data.isEmpty ? .wrongP1P2 : .endOfFileReached)
        }
    }

    private func update(_ command: CommandAPDU) -> ResponseAPDU {
        let result: (ResponseAPDU, [UInt8]?) = memory.withLock { m in
            m.commands += 1
            guard let selected = m.selected else { return (ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)), nil) }
            let offset: Int
            let data: [UInt8]
            if command.ins == 0xD6 {
                guard command.p1 & 0x80 == 0 else { return (ResponseAPDU(statusWord: .incorrectP1P2), nil) }
                offset = Int(command.p1) << 8 | Int(command.p2)
                data = command.data
            } else {
                guard let (o, d) = oddOffset(command.data) else { return (ResponseAPDU(statusWord: .wrongData), nil) }
                offset = o
                data = d
            }
            guard command.data.count <= configuration.mlc else { return (ResponseAPDU(statusWord: .wrongLength), nil) }
            if selected == [0xE1, 0x03] {
                // Only the NDEF file control TLV's write-access byte may change (locking).
                let writeAccessOffset = configuration.extendedFile ? 16 : 14
                guard configuration.ccWritable, offset == writeAccessOffset, data.count == 1 else {
                    return (ResponseAPDU(statusWord: .securityStatusNotSatisfied), nil)
                }
                m.cc[offset] = data[0]
                return (ResponseAPDU(statusWord: .success), nil)
            }
            let writeAccess = m.cc[configuration.extendedFile ? 16 : 14]
            guard writeAccess == 0x00 else { return (ResponseAPDU(statusWord: .securityStatusNotSatisfied), nil) }
            guard offset + data.count <= m.file.count else { return (ResponseAPDU(statusWord: .wrongP1P2), nil) }
            for (i, b) in data.enumerated() { m.file[offset + i] = b }
            return (ResponseAPDU(statusWord: .success), m.file)
        }
        if let file = result.1 { onChange?(file) }
        return result.0
    }
}
