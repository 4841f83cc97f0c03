// The demo application of emulated cards: GET DATA, ECHO and a PIN VERIFY, for demos, tests and
// benchmarks.
import ISO7816

/// A small application for demos, tests and benchmarks, selected by `F0 61 70 64 75 01`
/// ("\u{F0}apdu\u{01}").
///
/// - `CA` GET DATA: a fixed serial number.
/// - `EE` ECHO: answers its data back; with no data and an Le, answers Ne bytes 00 01 02 ….
///   With P1P2 set, answers that many pattern bytes whatever Le says (long-response tests).
/// - `20` VERIFY (P2 81): PIN "1234", three tries, `63Cx` on a wrong PIN, `6983` when blocked;
///   with no data, reports the tries left.
public final class DemoApplication: CardApplication, @unchecked Sendable {
    public static let defaultAID: [UInt8] = [0xF0, 0x61, 0x70, 0x64, 0x75, 0x01]
    public let aid: [UInt8]
    public let label: String
    private let tries = Locked(3)
    public let pin: [UInt8]

    public init(aid: [UInt8] = DemoApplication.defaultAID, label: String = "swift-apdu demo", pin: String = "1234") {
        self.aid = aid
        self.label = label
        self.pin = Array(pin.utf8)
    }

    public func select(_ command: CommandAPDU) -> ResponseAPDU {
        // FCI template 6F: DF name 84 and proprietary A5 carrying an application label 50.
        let labelBytes = Array(label.utf8)
        let a5: [UInt8] = [0x50, UInt8(labelBytes.count)] + labelBytes
        let inner: [UInt8] = [0x84, UInt8(aid.count)] + aid + [0xA5, UInt8(a5.count)] + a5
        return ResponseAPDU(data: [0x6F, UInt8(inner.count)] + inner, statusWord: .success)
    }

    public func process(_ command: CommandAPDU) -> ResponseAPDU {
        switch command.ins {
        case 0xCA:
            return ResponseAPDU(data: Array("SN-0001".utf8), statusWord: .success)
        case 0xEE:
            let count = Int(command.p1) << 8 | Int(command.p2)
            if count > 0 {
                return ResponseAPDU(data: (0..<count).map { UInt8($0 & 0xFF) }, statusWord: .success)
            }
            if !command.data.isEmpty {
                return ResponseAPDU(data: command.data, statusWord: .success)
            }
            if let ne = command.ne {
                return ResponseAPDU(data: (0..<ne).map { UInt8($0 & 0xFF) }, statusWord: .success)
            }
            return ResponseAPDU(statusWord: .success)
        case 0x20:
            guard command.p2 == 0x81 else { return ResponseAPDU(statusWord: .fileNotFound) }
            return tries.withLock { left in
                if left == 0 { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6983)) }
                if command.data.isEmpty { return ResponseAPDU(statusWord: StatusWord(0x63, 0xC0 | UInt8(left))) }
                if command.data == pin {
                    left = 3
                    return ResponseAPDU(statusWord: .success)
                }
                left -= 1
                return ResponseAPDU(statusWord: left == 0 ? StatusWord(rawValue: 0x6983) : StatusWord(0x63, 0xC0 | UInt8(left)))
            }
        default:
            return ResponseAPDU(statusWord: .insNotSupported)
        }
    }
}
