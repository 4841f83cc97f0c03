// The NFC Forum Type 1 tag's own commands (T1TOP §5; Broadcom Topaz data sheets): their frames
// as the specification writes them (without CRC), their answers, and the frames parsed back.
import ISO7816

/// One Type 1 tag command. Every command but RID carries the tag's UID0-3; the reader adds the
/// CRC. Addresses: `ADD` is block << 3 | byte (00-7F), `ADD8` a block (00-FF), `ADDS` a
/// segment << 4.
public enum Type1Command: Hashable, Sendable, CustomStringConvertible {
    /// `78 00 00 00 00 00 00` → HR0 HR1 UID0-3.
    case rid
    /// `00 00 00 UID` → HR0 HR1 and bytes 00-77 (static memory, blocks 0-E).
    case rall
    /// `01 ADD 00 UID` → ADD DATA.
    case read(address: UInt8)
    /// `53 ADD DATA UID` (erase, then write) → ADD DATA.
    case writeErase(address: UInt8, byte: UInt8)
    /// `1A ADD DATA UID` (the bits of DATA ORed in) → ADD DATA.
    case writeNoErase(address: UInt8, byte: UInt8)
    /// `10 ADDS 00×8 UID` → ADDS and the segment's 128 bytes (dynamic memory only).
    case readSegment(UInt8)
    /// `02 ADD8 00×8 UID` → ADD8 and the block's 8 bytes (dynamic memory only).
    case read8(block: UInt8)
    /// `54 ADD8 D×8 UID` → ADD8 and the 8 bytes written (dynamic memory only).
    case writeErase8(block: UInt8, bytes: [UInt8])
    /// `1B ADD8 D×8 UID` (ORed in) → ADD8 and the block (dynamic memory only).
    case writeNoErase8(block: UInt8, bytes: [UInt8])

    /// The command code, as T1TOP names it.
    public var code: UInt8 {
        switch self {
        case .rid: return 0x78
        case .rall: return 0x00
        case .read: return 0x01
        case .writeErase: return 0x53
        case .writeNoErase: return 0x1A
        case .readSegment: return 0x10
        case .read8: return 0x02
        case .writeErase8: return 0x54
        case .writeNoErase8: return 0x1B
        }
    }

    public var name: String {
        switch self {
        case .rid: return "RID"
        case .rall: return "RALL"
        case .read: return "READ"
        case .writeErase: return "WRITE-E"
        case .writeNoErase: return "WRITE-NE"
        case .readSegment: return "RSEG"
        case .read8: return "READ8"
        case .writeErase8: return "WRITE-E8"
        case .writeNoErase8: return "WRITE-NE8"
        }
    }

    public var description: String {
        switch self {
        case .rid, .rall: return name
        case let .read(a), let .writeErase(a, _), let .writeNoErase(a, _): return "\(name) of byte \(Hex.encode([a]))"
        case let .readSegment(s): return "RSEG of segment \(s >> 4)"
        case let .read8(b), let .writeErase8(b, _), let .writeNoErase8(b, _): return "\(name) of block \(Hex.encode([b]))"
        }
    }

    /// The commands only dynamic-memory tags (Topaz 512) have.
    public var needsDynamicMemory: Bool {
        switch self {
        case .readSegment, .read8, .writeErase8, .writeNoErase8: return true
        default: return false
        }
    }

    /// Writes change the tag.
    public var writes: Bool {
        switch self {
        case .writeErase, .writeNoErase, .writeErase8, .writeNoErase8: return true
        default: return false
        }
    }

    /// The bytes between the command code and the UID: ADD and DATA, or ADD8/ADDS and 8 bytes.
    public var operands: [UInt8] {
        switch self {
        case .rid, .rall: return [0x00, 0x00]
        case let .read(a): return [a, 0x00]
        case let .writeErase(a, d), let .writeNoErase(a, d): return [a, d]
        case let .readSegment(s): return [s] + [UInt8](repeating: 0, count: 8)
        case let .read8(b): return [b] + [UInt8](repeating: 0, count: 8)
        case let .writeErase8(b, d), let .writeNoErase8(b, d): return [b] + d
        }
    }

    /// The frame T1TOP writes (without CRC): code, operands, UID0-3 (zeros for RID).
    public func frame(uid: [UInt8]) -> [UInt8] {
        [code] + operands + (self == .rid ? [0, 0, 0, 0] : Array(uid.prefix(4)))
    }

    /// Bytes of a whole answer: 6 (RID), 122 (RALL), 2 (READ, WRITE-E/NE), 129 (RSEG), 9 (8-byte commands).
    public var answerLength: Int {
        switch self {
        case .rid: return 6
        case .rall: return 122
        case .read, .writeErase, .writeNoErase: return 2
        case .readSegment: return 129
        case .read8, .writeErase8, .writeNoErase8: return 9
        }
    }

    /// A frame as `apdu transceive` takes it (T1TOP's form, without CRC), and the UID in it.
    /// - Throws: `TagCommandError` `.malformed` for an unknown code or a frame of the wrong length.
    public static func parse(_ frame: [UInt8]) throws(TagCommandError) -> (command: Type1Command, uid: [UInt8]) {
        guard let code = frame.first else { throw TagCommandError(.malformed, "an empty Type 1 frame") }
        let long: Set<UInt8> = [0x10, 0x02, 0x54, 0x1B]
        let expected = long.contains(code) ? 14 : 7
        guard [0x78, 0x00, 0x01, 0x53, 0x1A, 0x10, 0x02, 0x54, 0x1B].contains(code) else {
            throw TagCommandError(.malformed, "\(Hex.encode([code])) is not a Type 1 command (RID 78, RALL 00, READ 01, WRITE-E 53, WRITE-NE 1A, RSEG 10, READ8 02, WRITE-E8 54, WRITE-NE8 1B)")
        }
        guard frame.count == expected else {
            throw TagCommandError(.malformed, "a Type 1 \(Hex.encode([code])) frame is \(expected) bytes (command, operands, UID0-3), this one is \(frame.count)")
        }
        let uid = Array(frame.suffix(4))
        let a = frame[1], d = frame[2], eight = frame.count == 14 ? Array(frame[2..<10]) : []
        switch code {
        case 0x78: return (.rid, uid)
        case 0x00: return (.rall, uid)
        case 0x01: return (.read(address: a), uid)
        case 0x53: return (.writeErase(address: a, byte: d), uid)
        case 0x1A: return (.writeNoErase(address: a, byte: d), uid)
        case 0x10: return (.readSegment(a), uid)
        case 0x02: return (.read8(block: a), uid)
        case 0x54: return (.writeErase8(block: a, bytes: eight), uid)
        default: return (.writeNoErase8(block: a, bytes: eight), uid)
        }
    }
}

/// What RID says: the header ROM (HR0, HR1) and the first four UID bytes.
public struct Type1HeaderROM: Hashable, Sendable {
    public var hr0: UInt8
    public var hr1: UInt8
    public var uid4: [UInt8]

    public init(hr0: UInt8, hr1: UInt8, uid4: [UInt8]) {
        self.hr0 = hr0
        self.hr1 = hr1
        self.uid4 = uid4
    }

    public init(rid answer: [UInt8]) throws(TagCommandError) {
        guard answer.count == 6 else { throw TagCommandError(.malformed, "RID answered \(answer.count) bytes (\(answer.hexString)), 6 expected (HR0 HR1 UID0-3)") }
        self.init(hr0: answer[0], hr1: answer[1], uid4: Array(answer[2...]))
    }

    /// HR0's high nibble 1: the tag is NDEF-capable (T1TOP §2.1).
    public var ndefCapable: Bool { hr0 >> 4 == 1 }
    /// HR0's low nibble 1: static memory (120 bytes); otherwise dynamic.
    public var staticMemory: Bool { hr0 & 0x0F == 1 }

    /// The chip the header ROM names, when it is one of Broadcom's: Topaz 96 (`11 48`), Topaz 512 (`12 4C`).
    public var chip: Type1Chip? { Type1Chip.all.first { $0.hr0 == hr0 && $0.hr1 == hr1 } }

    public var bytes: [UInt8] { [hr0, hr1] }
}

/// A Type 1 chip proved by its header ROM.
public struct Type1Chip: Hashable, Sendable {
    public var name: String
    public var hr0: UInt8
    public var hr1: UInt8
    /// Bytes of memory: 120 (blocks 0-E) or 512 (blocks 0-3F).
    public var memorySize: Int
    public var dynamic: Bool { memorySize > 120 }

    /// Broadcom (Innovision) Topaz 96, BCM20203T96: static memory, RID RALL READ WRITE-E WRITE-NE.
    public static let topaz96 = Type1Chip(name: "Topaz 96", hr0: 0x11, hr1: 0x48, memorySize: 120)
    /// Topaz 512, BCM20203T512: dynamic memory, with RSEG, READ8, WRITE-E8, WRITE-NE8.
    public static let topaz512 = Type1Chip(name: "Topaz 512", hr0: 0x12, hr1: 0x4C, memorySize: 512)
    public static let all = [topaz96, topaz512]
}
