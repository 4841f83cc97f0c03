// What a tag model offers the reader models: native frames in, a native answer out.

/// A tag's answer to a native command, as an emulated tag gives it to its reader.
public enum NativeAnswer: Sendable, Hashable {
    case data([UInt8])
    /// 4-bit ACK (`A`).
    case ack
    /// 4-bit NAK (0: invalid argument, 1: CRC, 4: authentication counter, 5: EEPROM).
    case nak(UInt8)
    /// Nothing within the reader's timeout.
    case silence

    public var isNAK: Bool { if case .nak = self { return true } else { return false } }
}

/// A tag model that answers native frames (the reader has checked and removed the CRC), for the
/// reader models in `ContactlessReader`.
public protocol NativeTagModel: EmulatedCard {
    func transceive(_ frame: [UInt8]) -> NativeAnswer
    /// The UID the reader reports on activation.
    var uid: [UInt8] { get }
    /// The radio protocol the tag speaks.
    var air: AirInterface { get }
    /// Bytes one storage READ BINARY block holds (what a reader wanting the exact Le asks for).
    var storageBlockSize: Int { get }
}

/// A tag's radio protocol, as a reader's switch-protocol object names it (PC/SC Part 3 DO 8F:
/// 00 ISO 14443 A, 02 ISO 15693, 03 FeliCa).
public enum AirInterface: UInt8, Sendable, Hashable {
    case iso14443A = 0x00
    case iso15693 = 0x02
    case felica = 0x03
}

extension NativeTagModel {
    public var air: AirInterface { .iso14443A }
    /// 16: a Type 2 READ brings four pages, a MIFARE Classic or FeliCa block is 16 bytes.
    public var storageBlockSize: Int { 16 }
}
